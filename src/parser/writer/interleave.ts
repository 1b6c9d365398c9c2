/**
 * The writing side of binary.md's "Data Storage Notes": zigzag integers, the Roblox
 * float layout (sign bit last) and byte interleaving (all first bytes of an array,
 * then all second bytes...). Values are first turned into big-endian words, then
 * written as byte planes.
 */
import type { ByteWriter } from './bytes.js';

const scratch = new DataView(new ArrayBuffer(8));

export function zigzag32(value: number): number {
  return ((value << 1) ^ (value >> 31)) >>> 0;
}

/** IEEE-754 single bits rotated left by one, so the sign bit ends up last. */
export function robloxFloatBits(value: number): number {
  scratch.setFloat32(0, value);
  const bits = scratch.getUint32(0);
  return ((bits << 1) | (bits >>> 31)) >>> 0;
}

/** Writes u32 words big-endian as four byte planes. */
export function writeInterleavedWords(w: ByteWriter, words: Uint32Array): void {
  const n = words.length;
  const at = w.claim(n * 4);
  const b = w.bytes;
  const p1 = at + n, p2 = p1 + n, p3 = p2 + n;
  for (let i = 0; i < n; i++) {
    const v = words[i]!;
    b[at + i] = v >>> 24;
    b[p1 + i] = (v >>> 16) & 0xff;
    b[p2 + i] = (v >>> 8) & 0xff;
    b[p3 + i] = v & 0xff;
  }
}

/** Writes `rows` (row-major, `width` bytes per value) as `width` byte planes. */
export function writeInterleavedRows(w: ByteWriter, rows: Uint8Array, width: number): void {
  const n = rows.length / width;
  const at = w.claim(rows.length);
  const b = w.bytes;
  for (let plane = 0; plane < width; plane++) {
    const to = at + plane * n;
    for (let i = 0; i < n; i++) b[to + i] = rows[i * width + plane]!;
  }
}

export function writeInterleavedFloats(w: ByteWriter, values: ArrayLike<number>): void {
  const words = new Uint32Array(values.length);
  for (let i = 0; i < words.length; i++) words[i] = robloxFloatBits(values[i]!);
  writeInterleavedWords(w, words);
}

export function writeInterleavedInt32(w: ByteWriter, values: ArrayLike<number>): void {
  const words = new Uint32Array(values.length);
  for (let i = 0; i < words.length; i++) words[i] = zigzag32(values[i]!);
  writeInterleavedWords(w, words);
}

export function writeInterleavedUint32(w: ByteWriter, values: ArrayLike<number>): void {
  writeInterleavedWords(w, Uint32Array.from(values));
}

/** Referent arrays: each value stored as the zigzag difference from the one before. */
export function writeReferents(w: ByteWriter, referents: ArrayLike<number>): void {
  const words = new Uint32Array(referents.length);
  let last = 0;
  for (let i = 0; i < words.length; i++) {
    const referent = referents[i]!;
    words[i] = zigzag32((referent - last) | 0);
    last = referent;
  }
  writeInterleavedWords(w, words);
}

/** Signed 64-bit values, zigzag-transformed, big-endian, as eight byte planes. */
export function writeInterleavedInt64(w: ByteWriter, values: readonly bigint[]): void {
  const rows = new Uint8Array(values.length * 8);
  const view = new DataView(rows.buffer);
  for (let i = 0; i < values.length; i++) {
    const v = BigInt.asIntN(64, values[i]!);
    view.setBigUint64(i * 8, BigInt.asUintN(64, (v << 1n) ^ (v >> 63n)));
  }
  writeInterleavedRows(w, rows, 8);
}
