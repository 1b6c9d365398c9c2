import type { MeshLimits } from './limits.js';

/**
 * The one error type for a malformed mesh or union blob. It says which format was
 * being read (e.g. "mesh 4.01", "CSGMDL 2", "CSGPHS 8"), the byte offset in the
 * file where reading failed, and what was wrong. Decoders never throw anything
 * else for bad bytes: a caller reports `asset not converted: <message>`.
 */
export class MeshDecodeError extends Error {
  /** The format and version being read, or "unknown" before the bytes were recognised. */
  readonly format: string;
  /** Byte offset in the input where the failing read started. */
  readonly offset: number;
  /** What was wrong, without the location. */
  readonly what: string;
  /**
   * The cap a declared count passed, where a caller may have lowered it (the scene
   * assembly lowers `maxTriangles` to what is left of a place's hull budget): set by
   * the union physics decoders, so such a refusal is never told apart from a malformed
   * blob by its wording.
   */
  readonly limit?: keyof MeshLimits;

  constructor(format: string, offset: number, what: string, limit?: keyof MeshLimits) {
    super(`${format}: ${what} (byte offset ${offset})`);
    this.name = 'MeshDecodeError';
    this.format = format;
    this.offset = offset;
    this.what = what;
    if (limit) this.limit = limit;
  }
}

export function isMeshDecodeError(error: unknown): error is MeshDecodeError {
  return error instanceof MeshDecodeError;
}
