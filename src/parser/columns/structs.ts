/** Bit sets and variable-length structs: Faces, Axes, sequences, PhysicalProperties, UniqueId, Font, Content. */
import type { Column } from '../dom.js';
import { DecodeError } from '../errors.js';
import { readInterleavedBytes, readInterleavedI32, readReferents } from '../interleave.js';
import { checkCount, need, readF32, readText, readU16, readU32, readU8, type Cursor } from '../reader.js';
import { AXIS_NAMES, FACE_NAMES, FONT_STYLES, FONT_WEIGHTS, type ColorKeypoint, type ContentValue, type FontValue, type NumberKeypoint, type Value } from '../values.js';
import { arrayColumn, column, type ColumnContext } from './column.js';

function bitNames(names: readonly string[], bits: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < names.length; i++) if (bits & (1 << i)) out.push(names[i]!);
  return out;
}

export function readBitSetColumn(c: Cursor, { count }: ColumnContext, type: 'Faces' | 'Axes'): Column {
  checkCount(c, count, 1, type);
  const at = need(c, count, type);
  const values = c.bytes.slice(at, at + count);
  const names = type === 'Faces' ? FACE_NAMES : AXIS_NAMES;
  return column(type, count, (row) => bitNames(names, values[row]!));
}

function readKeypointCount(c: Cursor, ctx: ColumnContext, bytesEach: number, what: string): number {
  const keypoints = readU32(c);
  checkCount(c, keypoints, bytesEach, `${what} keypoint`, ctx.maxSequenceLength);
  return keypoints;
}

export function readNumberSequenceColumn(c: Cursor, ctx: ColumnContext): Column {
  checkCount(c, ctx.count, 4, 'NumberSequence');
  const values: Value[] = new Array(ctx.count);
  for (let i = 0; i < ctx.count; i++) {
    const keypoints: NumberKeypoint[] = new Array(readKeypointCount(c, ctx, 12, 'NumberSequence'));
    for (let k = 0; k < keypoints.length; k++) keypoints[k] = { time: readF32(c), value: readF32(c), envelope: readF32(c) };
    values[i] = { keypoints };
  }
  return arrayColumn('NumberSequence', values);
}

export function readColorSequenceColumn(c: Cursor, ctx: ColumnContext): Column {
  checkCount(c, ctx.count, 4, 'ColorSequence');
  const values: Value[] = new Array(ctx.count);
  for (let i = 0; i < ctx.count; i++) {
    const keypoints: ColorKeypoint[] = new Array(readKeypointCount(c, ctx, 20, 'ColorSequence'));
    for (let k = 0; k < keypoints.length; k++) {
      const time = readF32(c);
      keypoints[k] = { time, color: [readF32(c), readF32(c), readF32(c)] };
      readF32(c); // envelope: serialized, unused
    }
    values[i] = { keypoints };
  }
  return arrayColumn('ColorSequence', values);
}

/** Flag byte: bit 0 custom values follow, bit 1 they include AcousticAbsorption (else 1). */
export function readPhysicalPropertiesColumn(c: Cursor, { count }: ColumnContext): Column {
  checkCount(c, count, 1, 'PhysicalProperties');
  const values: Value[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const flags = readU8(c);
    if (!(flags & 1)) { values[i] = 'Default'; continue; }
    values[i] = {
      density: readF32(c), friction: readF32(c), elasticity: readF32(c),
      frictionWeight: readF32(c), elasticityWeight: readF32(c),
      acousticAbsorption: flags & 2 ? readF32(c) : 1,
    };
  }
  return arrayColumn('PhysicalProperties', values);
}

const hex8 = (n: number): string => (n >>> 0).toString(16).padStart(8, '0');

/**
 * 16 interleaved bytes per value: index u32 BE, time u32 BE, random i64 BE. Printed
 * as random (rotated right by one bit), time, index: the XML/rbx-dom text form.
 */
export function readUniqueIdColumn(c: Cursor, { count }: ColumnContext): Column {
  const rows = readInterleavedBytes(c, count, 16, 'UniqueId');
  const view = new DataView(rows.buffer);
  return column('UniqueId', count, (row) => {
    const o = row * 16;
    const index = view.getUint32(o), time = view.getUint32(o + 4);
    const hi = view.getUint32(o + 8), lo = view.getUint32(o + 12);
    const rotatedHi = (hi >>> 1) | (lo << 31);
    const rotatedLo = (lo >>> 1) | (hi << 31);
    return hex8(rotatedHi) + hex8(rotatedLo) + hex8(time) + hex8(index);
  });
}

export function readFontColumn(c: Cursor, ctx: ColumnContext): Column {
  checkCount(c, ctx.count, 11, 'Font');
  const values: FontValue[] = new Array(ctx.count);
  for (let i = 0; i < ctx.count; i++) {
    const family = readText(c, ctx.maxStringBytes, 'Font family');
    const weight = readU16(c);
    const style = readU8(c);
    const cachedFaceId = readText(c, ctx.maxStringBytes, 'Font cached face id');
    values[i] = {
      family,
      weight: FONT_WEIGHTS[weight] ?? 'Regular',
      style: FONT_STYLES[style] ?? 'Normal',
      cachedFaceId: cachedFaceId === '' ? null : cachedFaceId,
    };
  }
  return arrayColumn('Font', values);
}

/** Source types (0 None, 1 Uri, 2 Object), then the Uris and Object referents they consume in order. */
export function readContentColumn(c: Cursor, ctx: ColumnContext): Column {
  const sourceTypes = readInterleavedI32(c, ctx.count, 'Content source types');
  const uriCount = readU32(c);
  checkCount(c, uriCount, 4, 'Content uri', ctx.count);
  const uris: string[] = new Array(uriCount);
  for (let i = 0; i < uriCount; i++) uris[i] = readText(c, ctx.maxStringBytes, 'Content uri');
  const objectCount = readU32(c);
  checkCount(c, objectCount, 4, 'Content object', ctx.count);
  const objects = readReferents(c, objectCount, 'Content objects');
  const externalCount = readU32(c);
  checkCount(c, externalCount, 4, 'Content external object', ctx.count);
  readReferents(c, externalCount, 'Content external objects'); // referents outside the file: meaningless here
  let nextUri = 0, nextObject = 0;
  const values: ContentValue[] = new Array(ctx.count);
  for (let i = 0; i < ctx.count; i++) {
    const kind = sourceTypes[i];
    if (kind === 0) values[i] = 'None';
    else if (kind === 1 && nextUri < uriCount) values[i] = { Uri: uris[nextUri++]! };
    else if (kind === 2 && nextObject < objectCount) values[i] = { Object: objects[nextObject++]! };
    else throw new DecodeError(`Content value ${i} has source type ${kind} with no matching entry`);
  }
  return arrayColumn('Content', values);
}
