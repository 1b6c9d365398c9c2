/** Scalar columns: Bool, Int32, Float32, Float64, Enum, BrickColor, Ref, SharedString, Int64, SecurityCapabilities. */
import type { Column } from '../dom.js';
import { int64ToValue, uint64ToValue } from '../interleave.js';
import { checkCount, need, type Cursor } from '../reader.js';
import type { PropType } from '../values.js';
import { diffPlanes, diffRecords, diffRows, f32At, f32BitsAt, f64le, i32At, sameValues, u32At, ViewColumn, type ColumnContext, type RowBits, type RowDiff, type RowNumbers, type RowReader } from './column.js';

/**
 * Checks that `count` values of `width` bytes are there and returns a view column over
 * them. Rows are byte planes (interleaved) unless `same` says otherwise.
 */
export function fixedColumn(
  c: Cursor, type: PropType, count: number, width: number, read: RowReader,
  what: string = type, diff: RowDiff = diffPlanes(width), numbers?: RowNumbers, bits?: RowBits,
): ViewColumn {
  checkCount(c, count, width, what);
  const at = need(c, count * width, what);
  return new ViewColumn(type, count, c.bytes, at, c.pos, read, diff, numbers, bits);
}

/** A one-number family's RowNumbers from its reader. */
const single = (read: (col: ViewColumn, row: number) => number): RowNumbers => (col, row, out) => {
  out[0] = read(col, row);
  return 1;
};

const bool: RowReader = (col, row) => col.data[col.at + row] !== 0;
const int32 = (col: ViewColumn, row: number): number => i32At(col.data, col.at, col.length, row);
const float32 = (col: ViewColumn, row: number): number => f32At(col.data, col.at, col.length, row);
const float64: RowReader = (col, row) => f64le(col.data, col.at + row * 8);
const uint32 = (col: ViewColumn, row: number): number => u32At(col.data, col.at, col.length, row);

export const readBoolColumn = (c: Cursor, { count }: ColumnContext): Column => fixedColumn(c, 'Bool', count, 1, bool, 'bool');
export const readInt32Column = (c: Cursor, { count }: ColumnContext): Column =>
  fixedColumn(c, 'Int32', count, 4, int32, 'Int32', diffPlanes(4), single(int32));
const float32Bits: RowBits = (col, row, out) => {
  out[0] = f32BitsAt(col.data, col.at, col.length, row);
  return 1;
};

export const readFloat32Column = (c: Cursor, { count }: ColumnContext): Column =>
  fixedColumn(c, 'Float32', count, 4, float32, 'Float32', diffPlanes(4), single(float32), float32Bits);
export const readFloat64Column = (c: Cursor, { count }: ColumnContext): Column => fixedColumn(c, 'Float64', count, 8, float64, 'Float64', diffRecords(8));

/** Enum, BrickColor and SharedString: big-endian u32, interleaved, no transformation. */
export function readUint32Column(c: Cursor, { count }: ColumnContext, type: PropType): Column {
  return fixedColumn(c, type, count, 4, uint32, type, diffPlanes(4), single(uint32));
}

/** Referents are zigzag deltas: the running sums are worked out on the first read. */
const ref: RowReader = (col, row) => {
  let values = col.cache;
  if (!values) {
    values = col.cache = new Int32Array(col.length);
    let last = 0;
    for (let i = 0; i < col.length; i++) values[i] = last = (last + i32At(col.data, col.at, col.length, i)) | 0;
  }
  return values[row]!;
};

export const readRefColumn = (c: Cursor, { count }: ColumnContext): Column => fixedColumn(c, 'Ref', count, 4, ref, 'Ref', diffRows(sameValues)); // deltas: equal bytes are not equal referents

/**
 * Int64 rows are eight big-endian byte planes, zigzag-encoded: read as two 32-bit
 * halves (high signed, low unsigned), so values never become BigInts unless they
 * must (int64ToValue).
 */
function int64Halves(col: ViewColumn, row: number): [hi: number, lo: number] {
  const b = col.data, n = col.length, i = col.at + row;
  let h = ((b[i]! << 24) | (b[i + n]! << 16) | (b[i + 2 * n]! << 8) | b[i + 3 * n]!) >>> 0;
  let l = ((b[i + 4 * n]! << 24) | (b[i + 5 * n]! << 16) | (b[i + 6 * n]! << 8) | b[i + 7 * n]!) >>> 0;
  const negative = l & 1;
  l = ((l >>> 1) | (h << 31)) >>> 0;
  h = h >>> 1;
  if (negative) { l = ~l >>> 0; h = ~h; }
  return [h, l];
}

const int64: RowReader = (col, row) => {
  const [hi, lo] = int64Halves(col, row);
  return int64ToValue(hi, lo);
};

/** Stored like Int64 (zigzag), read back as the unsigned bit set. */
const securityCapabilities: RowReader = (col, row) => {
  const [hi, lo] = int64Halves(col, row);
  return uint64ToValue(hi, lo);
};

export const readInt64Column = (c: Cursor, { count }: ColumnContext): Column => fixedColumn(c, 'Int64', count, 8, int64);
export const readSecurityCapabilitiesColumn = (c: Cursor, { count }: ColumnContext): Column =>
  fixedColumn(c, 'SecurityCapabilities', count, 8, securityCapabilities);
