/** Decoder warnings, counted by kind: a hostile file cannot turn them into millions of strings. */
export type WarningLog = Map<string, { count: number; example: string }>;

/**
 * Names a file gives (classes, properties, tags) as reports show them: at most this
 * many characters. A report repeats a name in each entry that concerns it, so a
 * 100,000-character class name with 256 unknown properties made a 26 MB report of a
 * 105 KB upload, and a summary too large to be read back.
 */
export const MAX_SHOWN_NAME_CHARS = 200;

/** `text` cut to `max` characters (never inside a surrogate pair), ending in "…" when cut. */
export function shortened(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}\u2026`;
}

/** A name from the file as a report shows it. */
export const shownName = (name: string): string => shortened(name, MAX_SHOWN_NAME_CHARS);

export function warn(log: WarningLog, kind: string, example: string): void {
  // Both may quote the file (a tag, a class and a property name): shown bounded.
  const key = shownName(kind);
  const entry = log.get(key);
  if (entry) entry.count++;
  else log.set(key, { count: 1, example: shortened(example, 2 * MAX_SHOWN_NAME_CHARS) });
}

export function warningLines(log: WarningLog): string[] {
  return [...log].map(([kind, { count, example }]) => (count === 1 ? `${kind}: ${example}` : `${kind}: ${count} times, e.g. ${example}`));
}
