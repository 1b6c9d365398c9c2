/**
 * Columns are views over the decompressed PROP chunk: a reader checks that every
 * row's bytes are there (and well formed) when the file is decoded, then keeps only
 * where the column starts and ends. A value is read from those bytes when asked, so
 * decoding a place allocates one small object per column and nothing per row.
 *
 * Fixed-width families read a row straight from the interleaved byte planes. Where
 * rows vary in size (strings, sequences, CFrames with a full matrix) or need the rows
 * before them (referents are running sums), the row offsets or values are worked out
 * on the first read and kept (`cache`).
 */
import type { Column } from '../dom.js';
import type { PropType, Value } from '../values.js';

/** What every column decoder receives: the class's instance count and the limits it must respect. */
export interface ColumnContext {
  count: number;
  maxStringBytes: number;
  maxSequenceLength: number;
}

/** How a family reads one row of a view column. */
export type RowReader = (column: ViewColumn, row: number) => Value;

/** A column over chunk bytes [at, end): the bytes it was read from, checked when decoded. */
export class ViewColumn implements Column {
  /** Row offsets or values worked out on first read, for the families that need them. */
  cache: Uint32Array | Int32Array | undefined = undefined;

  constructor(
    readonly type: PropType,
    readonly length: number,
    readonly data: Uint8Array,
    readonly at: number,
    readonly end: number,
    readonly read: RowReader,
  ) {}

  get(row: number): Value {
    return this.read(this, row);
  }
}

/** A column over values already materialised (rare families, XML properties). Its length follows the array, so a decoder may still append rows. */
class ArrayColumn implements Column {
  constructor(readonly type: PropType, private readonly values: Value[]) {}
  get length(): number {
    return this.values.length;
  }
  get(row: number): Value {
    return this.values[row]!;
  }
}

export function arrayColumn(type: PropType, values: Value[]): Column {
  return new ArrayColumn(type, values);
}

// Reading values out of byte planes. Floats go through one scratch DataView, so the
// result does not depend on the host's byte order.
const scratch = new DataView(new ArrayBuffer(8));

/** Row `row` of four big-endian byte planes of `count` bytes starting at `at`, as a u32. */
export function u32At(b: Uint8Array, at: number, count: number, row: number): number {
  const i = at + row;
  return ((b[i]! << 24) | (b[i + count]! << 16) | (b[i + 2 * count]! << 8) | b[i + 3 * count]!) >>> 0;
}

/** The same, zigzag-decoded: Int32, UDim offsets, referent deltas. */
export function i32At(b: Uint8Array, at: number, count: number, row: number): number {
  const u = u32At(b, at, count, row);
  return (u >>> 1) ^ -(u & 1);
}

/** The same, a Roblox float: the sign bit moved to the end, rotated back here. */
export function f32At(b: Uint8Array, at: number, count: number, row: number): number {
  const u = u32At(b, at, count, row);
  scratch.setUint32(0, (u >>> 1) | (u << 31));
  return scratch.getFloat32(0);
}

/** A little-endian f32 at a byte offset. */
export function f32le(b: Uint8Array, at: number): number {
  scratch.setUint32(0, (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0);
  return scratch.getFloat32(0);
}

/** A little-endian f64 at a byte offset. */
export function f64le(b: Uint8Array, at: number): number {
  for (let k = 0; k < 8; k++) scratch.setUint8(7 - k, b[at + k]!);
  return scratch.getFloat64(0);
}

/** A little-endian u32 at a byte offset. */
export function u32le(b: Uint8Array, at: number): number {
  return (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
}
