/**
 * Properties the decoder read past without keeping a value (a binary type it does not
 * know, an XML element it cannot read), counted per class, property and reason: what
 * the import report names as not imported. Distinct entries are capped, so a hostile
 * file cannot turn them into millions of records; the rest are summed in one entry.
 */
export interface SkippedProperty {
  className: string;
  property: string;
  /** Instances whose value was skipped. */
  count: number;
  reason: string;
}

/** Distinct class/property/reason entries kept before the rest are summed up. */
export const MAX_SKIPPED_ENTRIES = 256;

export class SkipLog {
  readonly #entries = new Map<string, SkippedProperty>();
  #overflow: SkippedProperty | undefined;

  add(className: string, property: string, reason: string, count = 1): void {
    if (count <= 0) return;
    const key = `${className}\u0000${property}\u0000${reason}`;
    const entry = this.#entries.get(key);
    if (entry) entry.count += count;
    else if (this.#entries.size < MAX_SKIPPED_ENTRIES) this.#entries.set(key, { className, property, count, reason });
    else if (this.#overflow) this.#overflow.count += count;
    else this.#overflow = { className: '*', property: '*', count, reason: 'more skipped properties of other classes and names' };
  }

  list(): SkippedProperty[] {
    const entries = [...this.#entries.values()];
    return this.#overflow ? [...entries, this.#overflow] : entries;
  }
}
