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
import { valuesEqual, type PropType, type Value } from '../values.js';

/** What every column decoder receives: the class's instance count and the limits it must respect. */
export interface ColumnContext {
  count: number;
  maxStringBytes: number;
  maxSequenceLength: number;
}

/** How a family reads one row of a view column. */
export type RowReader = (column: ViewColumn, row: number) => Value;

/** How a numeric family reads one row's numbers into `out` (see Column.numbers). */
export type RowNumbers = (column: ViewColumn, row: number, out: Float64Array) => number;

/**
 * How a float family reads one row's float32 values as their IEEE bit patterns into
 * `out` (the same values, in the same order, as RowNumbers): a writer that keys its
 * text by bit pattern needs no float in between (see ViewColumn.floatBits).
 */
export type RowBits = (column: ViewColumn, row: number, out: Uint32Array) => number;

/** How a family tells whether two rows hold the same value, without reading either. */
export type RowSame = (column: ViewColumn, a: number, b: number) => boolean;

/**
 * How a family marks the rows whose value may differ from row `reference`'s: sets bit
 * r of `bits` (byte r >> 3, bit r & 7). See Column.differing.
 */
export type RowDiff = (column: ViewColumn, reference: number, bits: Uint8Array) => void;

/** Two rows compared as values: for families whose bytes do not say it directly. */
export const sameValues: RowSame = (column, a, b) => a === b || valuesEqual(column.get(a), column.get(b));

/** Whether bytes [a, a + length) and [b, b + length) of `data` are equal. */
export function sameBytes(data: Uint8Array, a: number, b: number, length: number): boolean {
  if (a === b) return true;
  for (let k = 0; k < length; k++) if (data[a + k] !== data[b + k]) return false;
  return true;
}

/** Row by row, through a family's RowSame. */
export const diffRows = (same: RowSame): RowDiff => (col, reference, bits) => {
  for (let r = 0; r < col.length; r++) if (!same(col, r, reference)) bits[r >> 3]! |= 1 << (r & 7);
};

const PLANES: RowDiff[] = [];
/**
 * Rows of `width` bytes spread over `width` byte planes of `length` bytes each (the
 * interleaved families): one pass per plane over its bytes, eight rows (one byte of
 * `bits`) at a time without a branch per row. The document's instance tree asks this
 * of every column of every class: on a 200k-part place, forty million bytes.
 */
export function diffPlanes(width: number): RowDiff {
  return (PLANES[width] ??= (col, reference, bits) => diffPlaneBytes(col.data, col.at, col.length, width, reference, bits));
}

/** diffPlanes over `width` planes of `n` bytes from `at` of `d` (also a CFrame's position planes). */
export function diffPlaneBytes(d: Uint8Array, at: number, n: number, width: number, reference: number, bits: Uint8Array): void {
  const whole = n & ~7;
  // Eight bytes read as two words first: most planes hold one byte throughout (a class default).
  const words = new DataView(d.buffer, d.byteOffset, d.byteLength);
  for (let k = 0; k < width; k++, at += n) {
    const e = d[at + reference]!;
    const run = Math.imul(e, 0x01010101);
    let r = 0;
    for (; r < whole; r += 8) {
      const p = at + r;
      if (words.getInt32(p, true) === run && words.getInt32(p + 4, true) === run) continue;
      const byte = (+(d[p] !== e)) | (+(d[p + 1] !== e) << 1) | (+(d[p + 2] !== e) << 2) | (+(d[p + 3] !== e) << 3)
        | (+(d[p + 4] !== e) << 4) | (+(d[p + 5] !== e) << 5) | (+(d[p + 6] !== e) << 6) | (+(d[p + 7] !== e) << 7);
      if (byte !== 0) bits[r >> 3]! |= byte;
    }
    for (; r < n; r++) if (d[at + r] !== e) bits[r >> 3]! |= 1 << (r & 7);
  }
}

const RECORDS: RowDiff[] = [];
/** Rows of `width` bytes stored one after another (Float64, Ray, NumberRange, Vector3int16). */
export function diffRecords(width: number): RowDiff {
  return (RECORDS[width] ??= (col, reference, bits) => {
    const d = col.data, n = col.length, start = col.at + reference * width;
    for (let r = 0, at = col.at; r < n; r++, at += width) {
      for (let k = 0; k < width; k++) {
        if (d[at + k] !== d[start + k]) { bits[r >> 3]! |= 1 << (r & 7); break; }
      }
    }
  });
}

/** The bit set `differing` returns: bit r for row r. */
export function rowBits(rows: number): Uint8Array {
  return new Uint8Array((rows + 7) >> 3);
}

/** A column over chunk bytes [at, end): the bytes it was read from, checked when decoded. */
export class ViewColumn implements Column {
  /** Row offsets or values worked out on first read, for the families that need them. */
  cache: Uint32Array | Int32Array | undefined = undefined;
  readonly numbers: ((row: number, out: Float64Array) => number) | undefined;
  /** Float families (Float32, Vector2/3, Color3, CFrames): a row's float32 bit patterns, as `numbers` reads its values. */
  readonly floatBits: ((row: number, out: Uint32Array) => number) | undefined;

  constructor(
    readonly type: PropType,
    readonly length: number,
    readonly data: Uint8Array,
    readonly at: number,
    readonly end: number,
    readonly read: RowReader,
    readonly diff: RowDiff = diffRows(sameValues),
    rowNumbers?: RowNumbers,
    rowBits?: RowBits,
  ) {
    this.numbers = rowNumbers && ((row, out) => rowNumbers(this, row, out));
    this.floatBits = rowBits && ((row, out) => rowBits(this, row, out));
  }

  get(row: number): Value {
    return this.read(this, row);
  }

  differing(reference: number): Uint8Array {
    const bits = rowBits(this.length);
    this.diff(this, reference, bits);
    return bits;
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
  differing(reference: number): Uint8Array {
    const bits = rowBits(this.values.length);
    const expected = this.values[reference];
    for (let r = 0; r < this.values.length; r++) if (!valuesEqual(this.values[r], expected)) bits[r >> 3]! |= 1 << (r & 7);
    return bits;
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

/** The same float's IEEE bit pattern (as a u32, or the i32 with the same bits: for a Uint32Array). */
export function f32BitsAt(b: Uint8Array, at: number, count: number, row: number): number {
  const u = u32At(b, at, count, row);
  return (u >>> 1) | (u << 31);
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
