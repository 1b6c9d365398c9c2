/**
 * Part geometry: the world-space box of a rotated part, accumulated into the
 * bounds of a whole map, and the compact number form the project document uses.
 */
import type { Column } from '../parser/dom.js';
import type { CFrameValue, Value, Vec3 } from '../parser/values.js';

export interface Bounds {
  min: Vec3;
  max: Vec3;
}

/** Running min x,y,z then max x,y,z; empty while min > max. */
export type BoundsAccumulator = Float64Array;

export function newBounds(): BoundsAccumulator {
  return Float64Array.of(Infinity, Infinity, Infinity, -Infinity, -Infinity, -Infinity);
}

/**
 * Adds the axis-aligned box around a part: its centre is the CFrame position, and
 * along world axis i it reaches sum_j |R[i][j]| * size[j] / 2 (R's rows as stored,
 * its columns the part's own axes). Without a usable size only the centre counts.
 * Returns false (adding nothing) when the position is not finite.
 */
export function addPartBox(bounds: BoundsAccumulator, cframe: CFrameValue, size: Vec3 | null): boolean {
  const p = cframe.position;
  const r = cframe.orientation;
  if (!Number.isFinite(p[0]) || !Number.isFinite(p[1]) || !Number.isFinite(p[2])) return false;
  const hx = size ? Math.abs(size[0]) / 2 : 0;
  const hy = size ? Math.abs(size[1]) / 2 : 0;
  const hz = size ? Math.abs(size[2]) / 2 : 0;
  for (let i = 0; i < 3; i++) {
    const row = r[i]!;
    let reach = Math.abs(row[0]) * hx + Math.abs(row[1]) * hy + Math.abs(row[2]) * hz;
    if (!Number.isFinite(reach)) reach = 0;
    const centre = p[i]!;
    if (centre - reach < bounds[i]!) bounds[i] = centre - reach;
    if (centre + reach > bounds[i + 3]!) bounds[i + 3] = centre + reach;
  }
  return true;
}

export function finishBounds(bounds: BoundsAccumulator): Bounds | null {
  if (!(bounds[0]! <= bounds[3]!)) return null;
  return { min: [bounds[0]!, bounds[1]!, bounds[2]!], max: [bounds[3]!, bounds[4]!, bounds[5]!] };
}

export function asCFrame(value: Value | undefined): CFrameValue | null {
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && 'position' in value && 'orientation' in value) {
    return value;
  }
  return null;
}

export function asVec3(value: Value | undefined): Vec3 | null {
  if (Array.isArray(value) && value.length === 3 && typeof value[0] === 'number' && typeof value[1] === 'number' && typeof value[2] === 'number') {
    return value as Vec3;
  }
  return null;
}

/**
 * Row `at` of a CFrame column as twelve numbers in `out` (the position, then the
 * rotation row by row: GetComponents order): straight from the column in binary
 * files, else from its value. False when the row holds no CFrame.
 */
export function cframeNumbersOf(column: Column | undefined, at: number, out: Float64Array): boolean {
  if (!column) return false;
  if (column.type === 'CFrame' && column.numbers) return column.numbers(at, out) === 12;
  const cframe = asCFrame(column.get(at));
  if (!cframe) return false;
  const { position: p, orientation: r } = cframe;
  for (let i = 0; i < 3; i++) {
    out[i] = p[i]!;
    for (let j = 0; j < 3; j++) out[3 + 3 * i + j] = r[i]![j]!;
  }
  return true;
}

/** Row `at` of a Vector3 column as three numbers in `out`, as cframeNumbersOf reads a CFrame; false when the row holds none. */
export function vec3NumbersOf(column: Column | undefined, at: number, out: Float64Array): boolean {
  if (!column) return false;
  if (column.type === 'Vector3' && column.numbers) return column.numbers(at, out) === 3;
  const v = asVec3(column.get(at));
  if (!v) return false;
  out[0] = v[0]; out[1] = v[1]; out[2] = v[2];
  return true;
}

/**
 * Rounds to 6 decimals: enough for studs and rotation entries read from 32-bit
 * floats, and it turns 0.30000001192092896 back into 0.3, halving the JSON.
 * Non-finite numbers become null in JSON anyway; they are passed through.
 */
export function round6(x: number): number {
  return Number.isFinite(x) ? Math.round(x * 1e6) / 1e6 : x;
}

export function roundVec3(v: Vec3): Vec3 {
  return [round6(v[0]), round6(v[1]), round6(v[2])];
}
