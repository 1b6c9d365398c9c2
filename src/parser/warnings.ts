/** Decoder warnings, counted by kind: a hostile file cannot turn them into millions of strings. */
export type WarningLog = Map<string, { count: number; example: string }>;

export function warn(log: WarningLog, kind: string, example: string): void {
  const entry = log.get(kind);
  if (entry) entry.count++;
  else log.set(kind, { count: 1, example });
}

export function warningLines(log: WarningLog): string[] {
  return [...log].map(([kind, { count, example }]) => (count === 1 ? `${kind}: ${example}` : `${kind}: ${count} times, e.g. ${example}`));
}
