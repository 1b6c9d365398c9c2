/**
 * CFrame and OptionalCFrame: per value a rotation id byte (a basic rotation id when
 * the matrix is exactly one of the 24 axis-aligned rotations, else 0 followed by the
 * nine matrix entries as plain little-endian floats), then three interleaved
 * position planes.
 */
import type { CFrameValue, Value } from '../values.js';
import { TYPE_IDS } from '../types.js';
import type { ByteWriter } from './bytes.js';
import { writeInterleavedFloats } from './interleave.js';
import { fail, fields, floats } from './shape.js';

/** Which NormalId (+X, +Y, +Z, -X, -Y, -Z) a column is, or -1. Zeros must be +0 so -0 survives a round trip. */
function normalId(x: number, y: number, z: number): number {
  const zero = (v: number) => Object.is(v, 0);
  if (zero(y) && zero(z)) return x === 1 ? 0 : x === -1 ? 3 : -1;
  if (zero(x) && zero(z)) return y === 1 ? 1 : y === -1 ? 4 : -1;
  if (zero(x) && zero(y)) return z === 1 ? 2 : z === -1 ? 5 : -1;
  return -1;
}

/**
 * The basic rotation id (6 * a + b + 1, a and b the NormalIds of the first two
 * columns, the third their cross product) of a row-major matrix, or 0.
 */
export function basicRotationId(m: readonly (readonly number[])[]): number {
  const a = normalId(m[0]![0]!, m[1]![0]!, m[2]![0]!);
  const b = normalId(m[0]![1]!, m[1]![1]!, m[2]![1]!);
  if (a < 0 || b < 0 || a % 3 === b % 3) return 0;
  const sign = (id: number) => (id < 3 ? 1 : -1);
  // The third column: +-(the remaining axis), its sign from the cross product.
  const axisA = a % 3, axisB = b % 3, axisC = 3 - axisA - axisB;
  const handed = (axisB - axisA + 3) % 3 === 1 ? 1 : -1;
  const c = [0, 0, 0];
  c[axisC] = sign(a) * sign(b) * handed;
  const expected = c[axisC] > 0 ? axisC : axisC + 3;
  return normalId(m[0]![2]!, m[1]![2]!, m[2]![2]!) === expected ? 6 * a + b + 1 : 0;
}

function cframe(value: unknown, row: number): CFrameValue {
  const { position, orientation } = fields(value) ?? fail('a CFrame { position, orientation }', value, row);
  floats(position, 3, row, 'a CFrame position [x, y, z]');
  if (!Array.isArray(orientation) || orientation.length !== 3) fail('a CFrame orientation of three rows', orientation, row);
  for (const r of orientation) floats(r, 3, row, 'a CFrame orientation row [x, y, z]');
  return value as CFrameValue;
}

const IDENTITY: CFrameValue = { position: [0, 0, 0], orientation: [[1, 0, 0], [0, 1, 0], [0, 0, 1]] };

function writeCFrameData(w: ByteWriter, cframes: readonly CFrameValue[]): void {
  for (const { orientation } of cframes) {
    const id = basicRotationId(orientation);
    w.u8(id);
    if (id === 0) for (const r of orientation) for (const v of r) w.f32(v);
  }
  for (let k = 0; k < 3; k++) writeInterleavedFloats(w, cframes.map((c) => c.position[k]!));
}

export function writeCFrames(w: ByteWriter, values: readonly Value[]): void {
  writeCFrameData(w, values.map((value, row) => cframe(value, row)));
}

/** Led by the CFrame type byte; a missing value is the identity with presence 0 in the trailing Bool array. */
export function writeOptionalCFrames(w: ByteWriter, values: readonly Value[]): void {
  w.u8(TYPE_IDS.CFrame);
  writeCFrameData(w, values.map((value, row) => (value === null ? IDENTITY : cframe(value, row))));
  w.u8(TYPE_IDS.Bool);
  for (const value of values) w.u8(value === null ? 0 : 1);
}
