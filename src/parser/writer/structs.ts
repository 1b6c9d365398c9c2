/** Bit sets and variable-length structs: Faces, Axes, sequences, PhysicalProperties, UniqueId, Font, Content. */
import { AXIS_NAMES, FACE_NAMES, FONT_STYLES, FONT_WEIGHTS, type Value } from '../values.js';
import { utf8, type ByteWriter } from './bytes.js';
import { writeInterleavedInt32, writeInterleavedRows, writeReferents } from './interleave.js';
import { fail, fields, float, floats, int32, integer, text } from './shape.js';

/** Faces and Axes: one byte per value, bit i set when names[i] is listed. */
export function bitSetWriter(names: readonly string[], what: string) {
  return (w: ByteWriter, values: readonly Value[]): void => {
    values.forEach((value, row) => {
      if (!Array.isArray(value)) fail(`${what} (a list of ${names.join('/')})`, value, row);
      let bits = 0;
      for (const name of value) {
        const bit = names.indexOf(name as string);
        if (bit < 0) fail(`${what} names (${names.join('/')})`, value, row);
        bits |= 1 << bit;
      }
      w.u8(bits);
    });
  };
}

export const writeFaces = bitSetWriter(FACE_NAMES, 'Faces');
export const writeAxes = bitSetWriter(AXIS_NAMES, 'Axes');

function keypoints(value: unknown, row: number, what: string): unknown[] {
  const points = fields(value)?.keypoints;
  if (!Array.isArray(points)) fail(`a ${what} { keypoints }`, value, row);
  return points;
}

export function writeNumberSequences(w: ByteWriter, values: readonly Value[]): void {
  values.forEach((value, row) => {
    const points = keypoints(value, row, 'NumberSequence');
    w.u32(points.length);
    for (const entry of points) {
      const point = fields(entry) ?? fail('a NumberSequence keypoint { time, value, envelope }', entry, row);
      w.f32(float(point.time, row, 'a keypoint time'));
      w.f32(float(point.value, row, 'a keypoint value'));
      w.f32(float(point.envelope, row, 'a keypoint envelope'));
    }
  });
}

/** Keypoints of time, r, g, b and an envelope that Roblox serializes but never uses (written as 0). */
export function writeColorSequences(w: ByteWriter, values: readonly Value[]): void {
  values.forEach((value, row) => {
    const points = keypoints(value, row, 'ColorSequence');
    w.u32(points.length);
    for (const entry of points) {
      const point = fields(entry) ?? fail('a ColorSequence keypoint { time, color }', entry, row);
      w.f32(float(point.time, row, 'a keypoint time'));
      for (const c of floats(point.color, 3, row, 'a keypoint color [r, g, b]')) w.f32(c);
      w.f32(0);
    }
  });
}

const PHYSICS_FIELDS = ['density', 'friction', 'elasticity', 'frictionWeight', 'elasticityWeight', 'acousticAbsorption'] as const;

/**
 * "Default" is flag 0. Custom values are flag 1 and five floats when AcousticAbsorption
 * is 1 (what a reader assumes when it is absent), else flag 3 and all six floats.
 */
export function writePhysicalProperties(w: ByteWriter, values: readonly Value[]): void {
  values.forEach((value, row) => {
    if (value === 'Default') { w.u8(0); return; }
    const custom = fields(value) ?? fail('"Default" or custom PhysicalProperties', value, row);
    const written = custom.acousticAbsorption === 1 ? PHYSICS_FIELDS.slice(0, 5) : PHYSICS_FIELDS;
    w.u8(written.length === 5 ? 1 : 3);
    for (const field of written) w.f32(float(custom[field], row, `PhysicalProperties.${field}`));
  });
}

const UNIQUE_ID = /^[0-9a-f]{32}$/i;

/**
 * The printed form is random (16 hex), time (8), index (8), where random is the
 * stored i64 rotated right by one bit. Stored per value: index u32 BE, time u32 BE,
 * random rotated back left, as 16 byte planes.
 */
export function writeUniqueIds(w: ByteWriter, values: readonly Value[]): void {
  const rows = new Uint8Array(values.length * 16);
  const view = new DataView(rows.buffer);
  values.forEach((value, row) => {
    if (typeof value !== 'string' || !UNIQUE_ID.test(value)) fail('a UniqueId of 32 hex digits', value, row);
    const hi = parseInt(value.slice(0, 8), 16), lo = parseInt(value.slice(8, 16), 16);
    const o = row * 16;
    view.setUint32(o, parseInt(value.slice(24, 32), 16));
    view.setUint32(o + 4, parseInt(value.slice(16, 24), 16));
    view.setUint32(o + 8, ((hi << 1) | (lo >>> 31)) >>> 0);
    view.setUint32(o + 12, ((lo << 1) | (hi >>> 31)) >>> 0);
  });
  writeInterleavedRows(w, rows, 16);
}

const WEIGHT_NUMBERS = new Map(Object.entries(FONT_WEIGHTS).map(([number, name]) => [name, Number(number)]));

/** A weight name (Regular, Bold...) or its number as a string. */
function fontWeight(value: unknown, row: number): number {
  const known = WEIGHT_NUMBERS.get(value as string);
  if (known !== undefined) return known;
  return integer(typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN, row, 0, 0xffff, 'a Font weight name or number');
}

function fontStyle(value: unknown, row: number): number {
  const known = (FONT_STYLES as readonly string[]).indexOf(value as string);
  if (known >= 0) return known;
  return integer(typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN, row, 0, 0xff, 'a Font style name or number');
}

/** Family, weight u16, style u8, cached face id ("" when null). */
export function writeFonts(w: ByteWriter, values: readonly Value[]): void {
  values.forEach((value, row) => {
    const font = fields(value) ?? fail('a Font { family, weight, style, cachedFaceId }', value, row);
    w.text(text(font.family, row, 'a Font family string'));
    w.u16(fontWeight(font.weight, row));
    w.u8(fontStyle(font.style, row));
    const face = font.cachedFaceId;
    w.text(face === null || face === undefined ? '' : text(face, row, 'a Font cachedFaceId string or null'));
  });
}

/**
 * Source types (0 None, 1 Uri, 2 Object) as interleaved i32s, then the Uris and the
 * Object referents in value order, then no external objects.
 */
export function writeContents(w: ByteWriter, values: readonly Value[]): void {
  const kinds: number[] = [];
  const uris: Uint8Array[] = [];
  const objects: number[] = [];
  values.forEach((value, row) => {
    const content = fields(value);
    if (value === 'None') kinds.push(0);
    else if (typeof content?.Uri === 'string') { kinds.push(1); uris.push(utf8(content.Uri)); }
    else if (content && 'Object' in content) { kinds.push(2); objects.push(int32(content.Object, row, 'a Content Object referent')); }
    else fail('"None", { Uri } or { Object }', value, row);
  });
  writeInterleavedInt32(w, kinds);
  w.u32(uris.length);
  for (const uri of uris) w.string(uri);
  w.u32(objects.length);
  writeReferents(w, objects);
  w.u32(0);
}
