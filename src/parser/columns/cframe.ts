/**
 * CFrame and OptionalCFrame columns: per value a rotation id byte (0 = nine raw
 * little-endian floats follow), then three interleaved position planes.
 */
import type { Column } from '../dom.js';
import { DecodeError } from '../errors.js';
import { checkCount, need, readU8, type Cursor } from '../reader.js';
import type { CFrameValue, Matrix3, Vec3 } from '../values.js';
import { TYPE_IDS } from '../types.js';
import { diffPlaneBytes, diffRows, f32At, f32BitsAt, f32le, sameBytes, u32le, ViewColumn, type ColumnContext, type RowBits, type RowDiff, type RowNumbers, type RowReader } from './column.js';

/** Unit normals in Roblox NormalId-style order: +X, +Y, +Z, -X, -Y, -Z. */
const NORMALS: readonly Vec3[] = [[1, 0, 0], [0, 1, 0], [0, 0, 1], [-1, 0, 0], [0, -1, 0], [0, 0, -1]];

/**
 * The 24 axis-aligned rotations: id = 6 * a + b + 1, where the matrix's first column
 * is normal a, its second normal b, and its third their cross product. Returns the
 * nine entries row-major, or undefined for an id that is not such a rotation.
 */
export function basicRotation(id: number): number[] | undefined {
  const a = Math.floor((id - 1) / 6), b = (id - 1) % 6;
  if (id < 1 || a > 5 || a % 3 === b % 3) return undefined;
  const x = NORMALS[a]!, y = NORMALS[b]!;
  const z: Vec3 = [x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0]];
  // Negative zero would not deep-equal the spec's 0.
  return [x[0], y[0], z[0], x[1], y[1], z[1], x[2], y[2], z[2]].map((v) => v + 0);
}

const ROTATIONS: (number[] | undefined)[] = Array.from({ length: 36 }, (_, id) => basicRotation(id));

/** The same rotations' nine entries as float32 bit patterns (for RowBits). */
const ROTATION_BITS: (Uint32Array | undefined)[] = ROTATIONS.map((r) => r && new Uint32Array(new Float32Array(r).buffer));

/**
 * Checks the rotation ids (one byte each; 0 is followed by nine raw floats) and how
 * many rows carry a full matrix: without any, row r's rotation is byte `at + r`.
 */
function checkRotations(c: Cursor, count: number, what: string): number {
  checkCount(c, count, 1, what);
  let full = 0;
  for (let i = 0; i < count; i++) {
    const id = readU8(c);
    if (id === 0) {
      need(c, 36, `${what} rotation matrix`);
      full++;
    } else if (!ROTATIONS[id]) {
      throw new DecodeError(`${what} has invalid rotation id ${id} at data offset ${c.pos - 1 - c.base}`);
    }
  }
  return full;
}

/** Where row `row`'s rotation id is: `at + row` unless some rows carry a full matrix, then from offsets worked out once. */
function rotationAt(col: ViewColumn, start: number, full: boolean, row: number): number {
  if (!full) return start + row;
  let offsets = col.cache;
  if (!offsets) {
    offsets = col.cache = new Uint32Array(col.length);
    for (let i = 0, at = start; i < col.length; i++) {
      offsets[i] = at;
      at += col.data[at] === 0 ? 37 : 1;
    }
  }
  return offsets[row]!;
}

function cframeAt(col: ViewColumn, rotationStart: number, full: boolean, positions: number, row: number): CFrameValue {
  const b = col.data, n = col.length;
  const at = rotationAt(col, rotationStart, full, row);
  const id = b[at]!;
  let orientation: Matrix3;
  if (id === 0) {
    const f = (k: number) => f32le(b, at + 1 + 4 * k);
    orientation = [[f(0), f(1), f(2)], [f(3), f(4), f(5)], [f(6), f(7), f(8)]];
  } else {
    const r = ROTATIONS[id]!;
    orientation = [[r[0]!, r[1]!, r[2]!], [r[3]!, r[4]!, r[5]!], [r[6]!, r[7]!, r[8]!]];
  }
  const position: Vec3 = [f32At(b, positions, n, row), f32At(b, positions + 4 * n, n, row), f32At(b, positions + 8 * n, n, row)];
  return { position, orientation };
}

/** Row `row`'s twelve numbers (position, then the rotation row by row) into `out`, as cframeAt reads them. */
function cframeNumbers(col: ViewColumn, rotationStart: number, full: boolean, positions: number, row: number, out: Float64Array): number {
  const b = col.data, n = col.length;
  const at = rotationAt(col, rotationStart, full, row);
  const id = b[at]!;
  out[0] = f32At(b, positions, n, row);
  out[1] = f32At(b, positions + 4 * n, n, row);
  out[2] = f32At(b, positions + 8 * n, n, row);
  if (id === 0) {
    for (let k = 0; k < 9; k++) out[3 + k] = f32le(b, at + 1 + 4 * k);
  } else {
    const r = ROTATIONS[id]!;
    for (let k = 0; k < 9; k++) out[3 + k] = r[k]!;
  }
  return 12;
}

/** Row `row`'s twelve numbers as float32 bit patterns, in cframeNumbers' order. */
function cframeBits(col: ViewColumn, rotationStart: number, full: boolean, positions: number, row: number, out: Uint32Array): number {
  const b = col.data, n = col.length;
  const at = rotationAt(col, rotationStart, full, row);
  const id = b[at]!;
  out[0] = f32BitsAt(b, positions, n, row);
  out[1] = f32BitsAt(b, positions + 4 * n, n, row);
  out[2] = f32BitsAt(b, positions + 8 * n, n, row);
  if (id === 0) {
    for (let k = 0; k < 9; k++) out[3 + k] = u32le(b, at + 1 + 4 * k);
  } else {
    out.set(ROTATION_BITS[id]!, 3);
  }
  return 12;
}

/** Rows a and b hold the same rotation bytes (an id, or id 0 and the same nine floats) and the same 12 position plane bytes. */
function sameCFrame(col: ViewColumn, rotationStart: number, full: boolean, positions: number, a: number, b: number): boolean {
  const d = col.data, n = col.length;
  const i = rotationAt(col, rotationStart, full, a), j = rotationAt(col, rotationStart, full, b);
  if (!sameBytes(d, i, j, d[i] === 0 ? 37 : 1)) return false;
  for (let k = 0, at = positions; k < 12; k++, at += n) if (d[at + a] !== d[at + b]) return false;
  return true;
}

// A CFrame column's bytes: rotations from `at`, then three float plane sets that end the column.
const CFRAME: Record<'compact' | 'full', RowReader> = {
  compact: (col, row) => cframeAt(col, col.at, false, col.end - 12 * col.length, row),
  full: (col, row) => cframeAt(col, col.at, true, col.end - 12 * col.length, row),
};
const CFRAME_NUMBERS: Record<'compact' | 'full', RowNumbers> = {
  compact: (col, row, out) => cframeNumbers(col, col.at, false, col.end - 12 * col.length, row, out),
  full: (col, row, out) => cframeNumbers(col, col.at, true, col.end - 12 * col.length, row, out),
};
const CFRAME_BITS: Record<'compact' | 'full', RowBits> = {
  compact: (col, row, out) => cframeBits(col, col.at, false, col.end - 12 * col.length, row, out),
  full: (col, row, out) => cframeBits(col, col.at, true, col.end - 12 * col.length, row, out),
};
const DIFF_CFRAME: Record<'compact' | 'full', RowDiff> = {
  // One rotation id byte per row, then the twelve position planes: thirteen planes in a row.
  compact: (col, reference, bits) => diffPlaneBytes(col.data, col.at, col.length, 13, reference, bits),
  full: (col, reference, bits) => {
    const d = col.data, n = col.length;
    diffPlaneBytes(d, col.end - 12 * n, n, 12, reference, bits);
    const expected = rotationAt(col, col.at, true, reference);
    const length = d[expected] === 0 ? 37 : 1;
    for (let r = 0; r < n; r++) {
      if (!sameBytes(d, rotationAt(col, col.at, true, r), expected, length)) bits[r >> 3]! |= 1 << (r & 7);
    }
  },
};

export function readCFrameColumn(c: Cursor, { count }: ColumnContext): Column {
  const at = c.pos;
  const full = checkRotations(c, count, 'CFrame') > 0;
  checkCount(c, count, 12, 'CFrame position');
  need(c, count * 12, 'CFrame position');
  const kind = full ? 'full' : 'compact';
  return new ViewColumn('CFrame', count, c.bytes, at, c.pos, CFRAME[kind], DIFF_CFRAME[kind], CFRAME_NUMBERS[kind], CFRAME_BITS[kind]);
}

/**
 * Like CFrame, led by the CFrame type byte and followed by a Bool-typed presence
 * array: [type byte][rotations][positions][Bool type byte][presence].
 */
function optionalCFrameAt(col: ViewColumn, full: boolean, row: number): CFrameValue | null {
  const n = col.length;
  if (col.data[col.end - n + row] === 0) return null;
  return cframeAt(col, col.at + 1, full, col.end - n - 1 - 12 * n, row);
}

const OPTIONAL_CFRAME: Record<'compact' | 'full', RowReader> = {
  compact: (col, row) => optionalCFrameAt(col, false, row),
  full: (col, row) => optionalCFrameAt(col, true, row),
};

function sameOptionalCFrame(col: ViewColumn, full: boolean, a: number, b: number): boolean {
  const n = col.length, present = col.end - n;
  const hasA = col.data[present + a] !== 0;
  if (hasA !== (col.data[present + b] !== 0)) return false;
  return !hasA || sameCFrame(col, col.at + 1, full, col.end - n - 1 - 12 * n, a, b);
}

/** An OptionalCFrame row's twelve numbers, or none (0) when the row holds no CFrame. */
function optionalCFrameNumbers(col: ViewColumn, full: boolean, row: number, out: Float64Array): number {
  const n = col.length;
  if (col.data[col.end - n + row] === 0) return 0;
  return cframeNumbers(col, col.at + 1, full, col.end - n - 1 - 12 * n, row, out);
}

const OPTIONAL_CFRAME_NUMBERS: Record<'compact' | 'full', RowNumbers> = {
  compact: (col, row, out) => optionalCFrameNumbers(col, false, row, out),
  full: (col, row, out) => optionalCFrameNumbers(col, true, row, out),
};

/** An OptionalCFrame row's twelve bit patterns, or none (0). */
function optionalCFrameBits(col: ViewColumn, full: boolean, row: number, out: Uint32Array): number {
  const n = col.length;
  if (col.data[col.end - n + row] === 0) return 0;
  return cframeBits(col, col.at + 1, full, col.end - n - 1 - 12 * n, row, out);
}

const OPTIONAL_CFRAME_BITS: Record<'compact' | 'full', RowBits> = {
  compact: (col, row, out) => optionalCFrameBits(col, false, row, out),
  full: (col, row, out) => optionalCFrameBits(col, true, row, out),
};

const DIFF_OPTIONAL_CFRAME: Record<'compact' | 'full', RowDiff> = {
  compact: diffRows((col, a, b) => sameOptionalCFrame(col, false, a, b)),
  full: diffRows((col, a, b) => sameOptionalCFrame(col, true, a, b)),
};

export function readOptionalCFrameColumn(c: Cursor, { count }: ColumnContext): Column {
  const at = c.pos;
  const inner = readU8(c);
  if (inner !== TYPE_IDS.CFrame) throw new DecodeError(`OptionalCFrame expected inner type 0x10, got 0x${inner.toString(16)}`);
  const full = checkRotations(c, count, 'OptionalCFrame') > 0;
  checkCount(c, count, 12, 'OptionalCFrame position');
  need(c, count * 12, 'OptionalCFrame position');
  const flagType = readU8(c);
  if (flagType !== TYPE_IDS.Bool) throw new DecodeError(`OptionalCFrame expected presence type 0x02, got 0x${flagType.toString(16)}`);
  need(c, count, 'OptionalCFrame presence');
  const kind = full ? 'full' : 'compact';
  return new ViewColumn('OptionalCFrame', count, c.bytes, at, c.pos, OPTIONAL_CFRAME[kind], DIFF_OPTIONAL_CFRAME[kind], OPTIONAL_CFRAME_NUMBERS[kind], OPTIONAL_CFRAME_BITS[kind]);
}
