/** Fixed-size struct columns built from float/int planes: UDim(2), Ray, Vector2/3, Color3, Vector3int16, Color3uint8, NumberRange, Rect. */
import type { Column } from '../dom.js';
import type { Cursor } from '../reader.js';
import type { PropType, Value } from '../values.js';
import { f32At, f32BitsAt, f32le, i32At, diffPlanes, diffRecords, type ColumnContext, type RowBits, type RowNumbers, type RowReader } from './column.js';
import { fixedColumn } from './numbers.js';

/** Float plane set `plane` (each is four byte planes of `length` bytes) of row `row`. */
const plane = (col: { data: Uint8Array; at: number; length: number }, index: number, row: number) =>
  f32At(col.data, col.at + index * 4 * col.length, col.length, row);

const udim: RowReader = (col, row) => [plane(col, 0, row), i32At(col.data, col.at + 4 * col.length, col.length, row)];

const udim2: RowReader = (col, row) => {
  const n = col.length;
  return [
    [plane(col, 0, row), i32At(col.data, col.at + 8 * n, n, row)],
    [plane(col, 1, row), i32At(col.data, col.at + 12 * n, n, row)],
  ];
};

const vec2: RowReader = (col, row) => [plane(col, 0, row), plane(col, 1, row)];
const vec3: RowReader = (col, row) => [plane(col, 0, row), plane(col, 1, row), plane(col, 2, row)];
const rect: RowReader = (col, row) => [[plane(col, 0, row), plane(col, 1, row)], [plane(col, 2, row), plane(col, 3, row)]];

export const readUDimColumn = (c: Cursor, { count }: ColumnContext): Column => fixedColumn(c, 'UDim', count, 8, udim);
export const readUDim2Column = (c: Cursor, { count }: ColumnContext): Column => fixedColumn(c, 'UDim2', count, 16, udim2);
export const readRectColumn = (c: Cursor, { count }: ColumnContext): Column => fixedColumn(c, 'Rect', count, 16, rect);

const vec2Numbers: RowNumbers = (col, row, out) => {
  out[0] = plane(col, 0, row); out[1] = plane(col, 1, row);
  return 2;
};
const vec3Numbers: RowNumbers = (col, row, out) => {
  out[0] = plane(col, 0, row); out[1] = plane(col, 1, row); out[2] = plane(col, 2, row);
  return 3;
};

/** Float plane set `index` of row `row`, as its bit pattern. */
const planeBits = (col: { data: Uint8Array; at: number; length: number }, index: number, row: number) =>
  f32BitsAt(col.data, col.at + index * 4 * col.length, col.length, row);

const vec2Bits: RowBits = (col, row, out) => {
  out[0] = planeBits(col, 0, row); out[1] = planeBits(col, 1, row);
  return 2;
};
const vec3Bits: RowBits = (col, row, out) => {
  out[0] = planeBits(col, 0, row); out[1] = planeBits(col, 1, row); out[2] = planeBits(col, 2, row);
  return 3;
};

/** Vector2, Vector3 and Color3: one interleaved float plane set per component. */
export function readFloatStructColumn(c: Cursor, { count }: ColumnContext, type: PropType, components: 2 | 3): Column {
  return components === 2
    ? fixedColumn(c, type, count, 8, vec2, type, diffPlanes(8), vec2Numbers, vec2Bits)
    : fixedColumn(c, type, count, 12, vec3, type, diffPlanes(12), vec3Numbers, vec3Bits);
}

/** Ray and NumberRange: little-endian f32 values in sequence, no interleaving. */
const numberRange: RowReader = (col, row) => {
  const at = col.at + row * 8;
  return [f32le(col.data, at), f32le(col.data, at + 4)];
};
const ray: RowReader = (col, row): Value => {
  const at = col.at + row * 24;
  const f = (k: number) => f32le(col.data, at + 4 * k);
  return { origin: [f(0), f(1), f(2)], direction: [f(3), f(4), f(5)] };
};

export function readPlainFloatColumn(c: Cursor, { count }: ColumnContext, type: 'Ray' | 'NumberRange'): Column {
  return type === 'Ray' ? fixedColumn(c, type, count, 24, ray, type, diffRecords(24)) : fixedColumn(c, type, count, 8, numberRange, type, diffRecords(8));
}

/** Little-endian i16 triples in sequence. */
const vector3int16: RowReader = (col, row) => {
  const b = col.data, at = col.at + row * 6;
  const i16 = (k: number) => ((b[at + k]! | (b[at + k + 1]! << 8)) << 16) >> 16;
  return [i16(0), i16(2), i16(4)];
};

const vector3int16Numbers: RowNumbers = (col, row, out) => {
  const b = col.data, at = col.at + row * 6;
  out[0] = ((b[at]! | (b[at + 1]! << 8)) << 16) >> 16;
  out[1] = ((b[at + 2]! | (b[at + 3]! << 8)) << 16) >> 16;
  out[2] = ((b[at + 4]! | (b[at + 5]! << 8)) << 16) >> 16;
  return 3;
};

export const readVector3int16Column = (c: Cursor, { count }: ColumnContext): Column =>
  fixedColumn(c, 'Vector3int16', count, 6, vector3int16, 'Vector3int16', diffRecords(6), vector3int16Numbers);

/** Three consecutive byte arrays: all R, all G, all B. */
const color3uint8: RowReader = (col, row) => {
  const b = col.data, i = col.at + row, n = col.length;
  return [b[i]!, b[i + n]!, b[i + 2 * n]!];
};

const color3uint8Numbers: RowNumbers = (col, row, out) => {
  const b = col.data, i = col.at + row, n = col.length;
  out[0] = b[i]!; out[1] = b[i + n]!; out[2] = b[i + 2 * n]!;
  return 3;
};

export const readColor3uint8Column = (c: Cursor, { count }: ColumnContext): Column =>
  fixedColumn(c, 'Color3uint8', count, 3, color3uint8, 'Color3uint8', diffPlanes(3), color3uint8Numbers);
