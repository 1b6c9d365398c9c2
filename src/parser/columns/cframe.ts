/**
 * CFrame and OptionalCFrame columns: per value a rotation id byte (0 = nine raw
 * little-endian floats follow), then three interleaved position planes.
 */
import type { Column } from '../dom.js';
import { DecodeError } from '../errors.js';
import { readInterleavedF32 } from '../interleave.js';
import { checkCount, need, readU8, type Cursor } from '../reader.js';
import type { CFrameValue, Matrix3, Vec3 } from '../values.js';
import { TYPE_IDS } from '../types.js';
import { column, type ColumnContext } from './column.js';

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

function readRotations(c: Cursor, count: number, what: string): Float32Array {
  checkCount(c, count, 1, what);
  const rotations = new Float32Array(count * 9);
  for (let i = 0; i < count; i++) {
    const id = readU8(c);
    if (id === 0) {
      const at = need(c, 36, `${what} rotation matrix`);
      for (let k = 0; k < 9; k++) rotations[i * 9 + k] = c.view.getFloat32(at + k * 4, true);
    } else {
      const basic = ROTATIONS[id];
      if (!basic) throw new DecodeError(`${what} has invalid rotation id ${id} at data offset ${c.pos - 1}`);
      rotations.set(basic, i * 9);
    }
  }
  return rotations;
}

function cframeAt(rotations: Float32Array, x: Float32Array, y: Float32Array, z: Float32Array, row: number): CFrameValue {
  const r = row * 9;
  const orientation: Matrix3 = [
    [rotations[r]!, rotations[r + 1]!, rotations[r + 2]!],
    [rotations[r + 3]!, rotations[r + 4]!, rotations[r + 5]!],
    [rotations[r + 6]!, rotations[r + 7]!, rotations[r + 8]!],
  ];
  return { position: [x[row]!, y[row]!, z[row]!], orientation };
}

export function readCFrameColumn(c: Cursor, { count }: ColumnContext): Column {
  const rotations = readRotations(c, count, 'CFrame');
  const x = readInterleavedF32(c, count, 'CFrame position');
  const y = readInterleavedF32(c, count, 'CFrame position');
  const z = readInterleavedF32(c, count, 'CFrame position');
  return column('CFrame', count, (row) => cframeAt(rotations, x, y, z, row));
}

/** Like CFrame, led by the CFrame type byte and followed by a Bool-typed presence array. */
export function readOptionalCFrameColumn(c: Cursor, { count }: ColumnContext): Column {
  const inner = readU8(c);
  if (inner !== TYPE_IDS.CFrame) throw new DecodeError(`OptionalCFrame expected inner type 0x10, got 0x${inner.toString(16)}`);
  const rotations = readRotations(c, count, 'OptionalCFrame');
  const x = readInterleavedF32(c, count, 'OptionalCFrame position');
  const y = readInterleavedF32(c, count, 'OptionalCFrame position');
  const z = readInterleavedF32(c, count, 'OptionalCFrame position');
  const flagType = readU8(c);
  if (flagType !== TYPE_IDS.Bool) throw new DecodeError(`OptionalCFrame expected presence type 0x02, got 0x${flagType.toString(16)}`);
  const at = need(c, count, 'OptionalCFrame presence');
  const present = c.bytes.slice(at, at + count);
  return column('OptionalCFrame', count, (row) => (present[row] ? cframeAt(rotations, x, y, z, row) : null));
}
