/**
 * Byte interleaving, zigzag integers and the Roblox float layout (binary.md,
 * "Data Storage Notes"). Arrays are stored as byte planes: all first bytes, then all
 * second bytes... These read whole arrays (INST and PRNT referents, Content source
 * types), checking the whole plane set fits before allocating; property columns read
 * one row at a time from the planes in place (columns/column.ts).
 */
import { checkCount, need, type Cursor } from './reader.js';

/** Big-endian u32 values from four byte planes of `count` bytes each. */
export function readInterleavedU32(c: Cursor, count: number, what = 'u32 array'): Uint32Array {
  checkCount(c, count, 4, what);
  const at = need(c, count * 4, what);
  const b = c.bytes;
  const out = new Uint32Array(count);
  const p1 = at + count, p2 = p1 + count, p3 = p2 + count;
  for (let i = 0; i < count; i++) {
    out[i] = (b[at + i]! << 24) | (b[p1 + i]! << 16) | (b[p2 + i]! << 8) | b[p3 + i]!;
  }
  return out;
}

/** Zigzag-transformed i32 values (Int32, UDim offsets, referents before accumulation). */
export function readInterleavedI32(c: Cursor, count: number, what = 'i32 array'): Int32Array {
  const raw = readInterleavedU32(c, count, what);
  const out = new Int32Array(raw.buffer);
  for (let i = 0; i < count; i++) {
    const u = raw[i]!;
    out[i] = (u >>> 1) ^ -(u & 1);
  }
  return out;
}

/** Referent arrays: zigzag i32 deltas, accumulated. */
export function readReferents(c: Cursor, count: number, what = 'referents'): Int32Array {
  const out = readInterleavedI32(c, count, what);
  let last = 0;
  for (let i = 0; i < count; i++) {
    last = (last + out[i]!) | 0;
    out[i] = last;
  }
  return out;
}

const TWO_32 = 2 ** 32;

/** A signed 64-bit value as a number when exactly representable, else its decimal string. */
export function int64ToValue(hi: number, lo: number): number | string {
  const value = hi * TWO_32 + lo;
  if (Number.isSafeInteger(value)) return value;
  return ((BigInt(hi) << 32n) | BigInt(lo >>> 0)).toString();
}

/** An unsigned 64-bit value (SecurityCapabilities bits) from the same halves. */
export function uint64ToValue(hi: number, lo: number): number | string {
  const value = (hi >>> 0) * TWO_32 + lo;
  if (Number.isSafeInteger(value)) return value;
  return ((BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0)).toString();
}
