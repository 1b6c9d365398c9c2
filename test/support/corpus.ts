/** Corpus file lists and a seeded PRNG for the malformed-input tests. */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CORPUS_DIR, PLACES_DIR, TEST_FILES_DIR } from './paths.js';

export function corpusFiles(pattern: RegExp): string[] {
  const dirs = [PLACES_DIR, TEST_FILES_DIR, join(CORPUS_DIR, 'rbx-dom-bench')];
  return dirs.flatMap((dir) => readdirSync(dir).filter((name) => pattern.test(name)).map((name) => join(dir, name))).sort();
}

export const BINARY = /\.rbx[lm]$/;
export const XML = /\.rbx[lm]x$/;

/** mulberry32 (the generator's PRNG): small, seedable, good enough to pick offsets. */
export { mulberry32 as prng } from '../../bench/generate.js';

/** File offsets of each chunk header of a binary file (and of its end). */
export function chunkBoundaries(bytes: Uint8Array): number[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const offsets: number[] = [];
  let pos = 32;
  while (pos + 16 <= bytes.length) {
    offsets.push(pos);
    const compressed = view.getUint32(pos + 4, true);
    const uncompressed = view.getUint32(pos + 8, true);
    pos += 16 + (compressed || uncompressed);
  }
  offsets.push(Math.min(pos, bytes.length));
  return offsets;
}
