/** Fixed-size numeric structs: UDim, UDim2, Ray, Color3, Vector2, Vector3, Vector3int16, NumberRange, Rect, Color3uint8. */
import type { Value } from '../values.js';
import type { ByteWriter } from './bytes.js';
import { writeInterleavedFloats, writeInterleavedInt32 } from './interleave.js';
import { fail, fields, floats, int32, integer } from './shape.js';

/** Each component as its own interleaved Roblox-float array, in component order. */
function writeFloatPlanes(w: ByteWriter, components: number[][]): void {
  const count = components.length;
  const width = components[0]?.length ?? 0;
  for (let k = 0; k < width; k++) {
    const plane = new Float32Array(count);
    for (let i = 0; i < count; i++) plane[i] = components[i]![k]!;
    writeInterleavedFloats(w, plane);
  }
}

/** Color3, Vector2, Vector3: `[x, y(, z)]`, one float plane per component. */
export function floatStructWriter(what: string, width: number) {
  return (w: ByteWriter, values: readonly Value[]): void => {
    if (values.length === 0) return;
    writeFloatPlanes(w, values.map((value, row) => floats(value, width, row, what)));
  };
}

function udim(value: unknown, row: number): [number, number] {
  if (!Array.isArray(value) || value.length !== 2 || typeof value[0] !== 'number') fail('a UDim [scale, offset]', value, row);
  return [value[0], int32(value[1], row, 'a UDim [scale, offset] with an Int32 offset')];
}

export function writeUDims(w: ByteWriter, values: readonly Value[]): void {
  const parts = values.map((value, row) => udim(value, row));
  writeInterleavedFloats(w, parts.map((p) => p[0]));
  writeInterleavedInt32(w, parts.map((p) => p[1]));
}

/** Planes in the order X.Scale, Y.Scale, X.Offset, Y.Offset. */
export function writeUDim2s(w: ByteWriter, values: readonly Value[]): void {
  const parts = values.map((value, row) => {
    if (!Array.isArray(value) || value.length !== 2) fail('a UDim2 [[xScale, xOffset], [yScale, yOffset]]', value, row);
    return [udim(value[0], row), udim(value[1], row)] as const;
  });
  writeInterleavedFloats(w, parts.map((p) => p[0][0]));
  writeInterleavedFloats(w, parts.map((p) => p[1][0]));
  writeInterleavedInt32(w, parts.map((p) => p[0][1]));
  writeInterleavedInt32(w, parts.map((p) => p[1][1]));
}

/** Six plain little-endian floats per value: origin, then direction. */
export function writeRays(w: ByteWriter, values: readonly Value[]): void {
  values.forEach((value, row) => {
    const ray = fields(value) ?? fail('a Ray { origin, direction }', value, row);
    for (const f of floats(ray.origin, 3, row, 'a Ray origin [x, y, z]')) w.f32(f);
    for (const f of floats(ray.direction, 3, row, 'a Ray direction [x, y, z]')) w.f32(f);
  });
}

export function writeVector3int16s(w: ByteWriter, values: readonly Value[]): void {
  values.forEach((value, row) => {
    const xyz = floats(value, 3, row, 'a Vector3int16 [x, y, z]');
    for (const v of xyz) w.i16(integer(v, row, -0x8000, 0x7fff, 'a Vector3int16 of i16 components'));
  });
}

export function writeNumberRanges(w: ByteWriter, values: readonly Value[]): void {
  values.forEach((value, row) => {
    for (const f of floats(value, 2, row, 'a NumberRange [min, max]')) w.f32(f);
  });
}

/** Planes in the order Min.X, Min.Y, Max.X, Max.Y. */
export function writeRects(w: ByteWriter, values: readonly Value[]): void {
  if (values.length === 0) return;
  writeFloatPlanes(w, values.map((value, row) => {
    if (!Array.isArray(value) || value.length !== 2) fail('a Rect [[minX, minY], [maxX, maxY]]', value, row);
    return [...floats(value[0], 2, row, 'a Rect min [x, y]'), ...floats(value[1], 2, row, 'a Rect max [x, y]')];
  }));
}

/** Three plain byte arrays: all R, all G, all B. */
export function writeColor3uint8s(w: ByteWriter, values: readonly Value[]): void {
  const n = values.length;
  const at = w.claim(n * 3);
  values.forEach((value, row) => {
    const rgb = floats(value, 3, row, 'a Color3uint8 [r, g, b]');
    for (let k = 0; k < 3; k++) w.bytes[at + k * n + row] = integer(rgb[k], row, 0, 255, 'a Color3uint8 of bytes');
  });
}
