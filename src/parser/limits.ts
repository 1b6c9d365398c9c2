/**
 * Caps that untrusted bytes meet before anything is allocated. Every declared
 * length or count in a file is checked against what the file can still hold and
 * against these caps.
 */
export interface DecodeLimits {
  /** Largest uncompressed size of one chunk. */
  maxChunkBytes: number;
  /** Largest sum of uncompressed chunk sizes (the decompressed file). */
  maxTotalBytes: number;
  /**
   * Largest ratio of decompressed to file size (plus 1 MiB): real places stay under
   * ~110×, so a few KB can never stand for gigabytes of columns and instances.
   */
  maxExpansion: number;
  /** Most instances in one file (header count, INST counts, XML Items). */
  maxInstances: number;
  /** Most classes (INST chunks). */
  maxClasses: number;
  /** Longest single string value. */
  maxStringBytes: number;
  /** Most keypoints in one NumberSequence/ColorSequence. */
  maxSequenceLength: number;
  /** Deepest XML element nesting. */
  maxXmlDepth: number;
}

export const DEFAULT_LIMITS: DecodeLimits = Object.freeze({
  maxChunkBytes: 1 << 30,
  maxTotalBytes: 2 ** 31 - 1,
  maxExpansion: 256,
  maxInstances: 10_000_000,
  maxClasses: 100_000,
  maxStringBytes: 256 << 20,
  maxSequenceLength: 1 << 20,
  maxXmlDepth: 2_000,
});

export function resolveLimits(partial?: Partial<DecodeLimits>): DecodeLimits {
  return withDefaults(DEFAULT_LIMITS, partial);
}

/**
 * `defaults` with the caps `partial` sets. A cap given as undefined keeps its default:
 * limits built from optional settings (`{ maxInstances: config.maxInstances }`)
 * must not lose a cap because one setting is absent, as a plain spread would.
 */
export function withDefaults<T extends object>(defaults: T, partial: Partial<T> | undefined): T {
  if (!partial) return defaults;
  const out = { ...defaults };
  for (const key of Object.keys(partial) as (keyof T)[]) {
    const value = partial[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}
