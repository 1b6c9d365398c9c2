/** Bit sets and variable-length structs: Faces, Axes, sequences, PhysicalProperties, UniqueId, Font, Content. */
import { Buffer } from 'node:buffer';
import type { Column } from '../dom.js';
import { DecodeError } from '../errors.js';
import { readInterleavedI32, readReferents } from '../interleave.js';
import { checkCount, need, readText, readU16, readU32, readU8, type Cursor } from '../reader.js';
import { AXIS_NAMES, FACE_NAMES, FONT_STYLES, FONT_WEIGHTS, type ColorKeypoint, type ContentValue, type FontValue, type NumberKeypoint, type Value } from '../values.js';
import { arrayColumn, diffPlanes, diffRows, f32le, sameBytes, u32At, u32le, ViewColumn, type ColumnContext, type RowDiff, type RowNumbers, type RowReader } from './column.js';
import { fixedColumn } from './numbers.js';

function bitNames(names: readonly string[], bits: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < names.length; i++) if (bits & (1 << i)) out.push(names[i]!);
  return out;
}

const faces: RowReader = (col, row) => bitNames(FACE_NAMES, col.data[col.at + row]!);
const axes: RowReader = (col, row) => bitNames(AXIS_NAMES, col.data[col.at + row]!);

export function readBitSetColumn(c: Cursor, { count }: ColumnContext, type: 'Faces' | 'Axes'): Column {
  return fixedColumn(c, type, count, 1, type === 'Faces' ? faces : axes);
}

/**
 * Sequences and PhysicalProperties vary in size per row: every row's size is checked
 * when the file is decoded; where each row starts is worked out on the first read.
 */
function rowStart(col: ViewColumn, row: number, size: (data: Uint8Array, at: number) => number): number {
  let starts = col.cache;
  if (!starts) {
    starts = col.cache = new Uint32Array(col.length);
    for (let i = 0, at = col.at; i < col.length; i++) {
      starts[i] = at;
      at += size(col.data, at);
    }
  }
  return starts[row]!;
}

/** Rows of a variable-size family compared by their bytes. */
function diffSized(size: (data: Uint8Array, at: number) => number): RowDiff {
  return diffRows((col, a, b) => {
    const i = rowStart(col, a, size), j = rowStart(col, b, size);
    const length = size(col.data, i);
    return length === size(col.data, j) && sameBytes(col.data, i, j, length);
  });
}

function checkSequences(c: Cursor, ctx: ColumnContext, type: 'NumberSequence' | 'ColorSequence', bytesEach: number, read: RowReader, diff: RowDiff): Column {
  checkCount(c, ctx.count, 4, type);
  const at = c.pos;
  for (let i = 0; i < ctx.count; i++) {
    const keypoints = readU32(c);
    checkCount(c, keypoints, bytesEach, `${type} keypoint`, ctx.maxSequenceLength, 'maxSequenceLength');
    c.pos += keypoints * bytesEach;
  }
  return new ViewColumn(type, ctx.count, c.bytes, at, c.pos, read, diff);
}

const numberSequenceSize = (data: Uint8Array, at: number) => 4 + 12 * u32le(data, at);
const colorSequenceSize = (data: Uint8Array, at: number) => 4 + 20 * u32le(data, at);
const diffNumberSequence = diffSized(numberSequenceSize);
const diffColorSequence = diffSized(colorSequenceSize);

const numberSequence: RowReader = (col, row) => {
  const b = col.data;
  let at = rowStart(col, row, numberSequenceSize);
  const keypoints: NumberKeypoint[] = new Array<NumberKeypoint>(u32le(b, at));
  for (let k = 0; k < keypoints.length; k++, at += 12) {
    keypoints[k] = { time: f32le(b, at + 4), value: f32le(b, at + 8), envelope: f32le(b, at + 12) };
  }
  return { keypoints };
};

// time, r, g, b, then an envelope that is serialized but unused.
const colorSequence: RowReader = (col, row) => {
  const b = col.data;
  let at = rowStart(col, row, colorSequenceSize);
  const keypoints: ColorKeypoint[] = new Array<ColorKeypoint>(u32le(b, at));
  for (let k = 0; k < keypoints.length; k++, at += 20) {
    keypoints[k] = { time: f32le(b, at + 4), color: [f32le(b, at + 8), f32le(b, at + 12), f32le(b, at + 16)] };
  }
  return { keypoints };
};

export const readNumberSequenceColumn = (c: Cursor, ctx: ColumnContext): Column => checkSequences(c, ctx, 'NumberSequence', 12, numberSequence, diffNumberSequence);
export const readColorSequenceColumn = (c: Cursor, ctx: ColumnContext): Column => checkSequences(c, ctx, 'ColorSequence', 20, colorSequence, diffColorSequence);

/** Flag byte: bit 0 custom values follow, bit 1 they include AcousticAbsorption (else 1). */
const physicalSize = (data: Uint8Array, at: number) => (data[at]! & 1 ? (data[at]! & 2 ? 25 : 21) : 1);

const diffPhysical = diffSized(physicalSize);

const physicalProperties: RowReader = (col, row): Value => {
  const b = col.data;
  const at = rowStart(col, row, physicalSize);
  const flags = b[at]!;
  if (!(flags & 1)) return 'Default';
  const f = (k: number) => f32le(b, at + 1 + 4 * k);
  return { density: f(0), friction: f(1), elasticity: f(2), frictionWeight: f(3), elasticityWeight: f(4), acousticAbsorption: flags & 2 ? f(5) : 1 };
};

export function readPhysicalPropertiesColumn(c: Cursor, { count }: ColumnContext): Column {
  checkCount(c, count, 1, 'PhysicalProperties');
  const at = c.pos;
  for (let i = 0; i < count; i++) {
    const flags = readU8(c);
    if (flags & 1) need(c, flags & 2 ? 24 : 20, 'PhysicalProperties');
  }
  return new ViewColumn('PhysicalProperties', count, c.bytes, at, c.pos, physicalProperties, diffPhysical);
}

/** Lower-case hex digits of four u32 words, as one flat string: the digits are put in a scratch buffer, read back natively. */
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');
const hexChars = Buffer.alloc(32);
function putHex(word: number, at: number): void {
  for (let k = 0; k < 8; k++) hexChars[at + k] = HEX_DIGITS[(word >>> (28 - 4 * k)) & 15]!;
}
function hexWords(a: number, b: number, c: number, d: number): string {
  putHex(a, 0);
  putHex(b, 8);
  putHex(c, 16);
  putHex(d, 24);
  return hexChars.toString('latin1', 0, 32);
}

/**
 * 16 interleaved bytes per value: index u32 BE, time u32 BE, random i64 BE. Printed
 * as random (rotated right by one bit), time, index: the XML/rbx-dom text form.
 */
const uniqueId: RowReader = (col, row) => {
  const n = col.length;
  const word = (k: number) => u32At(col.data, col.at + 4 * k * n, n, row);
  const index = word(0), time = word(1), hi = word(2), lo = word(3);
  return hexWords((hi >>> 1) | (lo << 31), (lo >>> 1) | (hi << 31), time, index);
};

/** The four 32-bit words a UniqueId prints, in print order (Column.numbers). */
const uniqueIdNumbers: RowNumbers = (col, row, out) => {
  const b = col.data, n = col.length, at = col.at;
  const index = u32At(b, at, n, row), time = u32At(b, at + 4 * n, n, row), hi = u32At(b, at + 8 * n, n, row), lo = u32At(b, at + 12 * n, n, row);
  out[0] = ((hi >>> 1) | (lo << 31)) >>> 0;
  out[1] = ((lo >>> 1) | (hi << 31)) >>> 0;
  out[2] = time;
  out[3] = index;
  return 4;
};

export const readUniqueIdColumn = (c: Cursor, { count }: ColumnContext): Column =>
  fixedColumn(c, 'UniqueId', count, 16, uniqueId, 'UniqueId', diffPlanes(16), uniqueIdNumbers);

export function readFontColumn(c: Cursor, ctx: ColumnContext): Column {
  checkCount(c, ctx.count, 11, 'Font');
  const values: FontValue[] = new Array<FontValue>(ctx.count);
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
  const uris: string[] = new Array<string>(uriCount);
  for (let i = 0; i < uriCount; i++) uris[i] = readText(c, ctx.maxStringBytes, 'Content uri');
  const objectCount = readU32(c);
  checkCount(c, objectCount, 4, 'Content object', ctx.count);
  const objects = readReferents(c, objectCount, 'Content objects');
  const externalCount = readU32(c);
  checkCount(c, externalCount, 4, 'Content external object', ctx.count);
  readReferents(c, externalCount, 'Content external objects'); // referents outside the file: meaningless here
  let nextUri = 0, nextObject = 0;
  const values: ContentValue[] = new Array<ContentValue>(ctx.count);
  for (let i = 0; i < ctx.count; i++) {
    const kind = sourceTypes[i];
    if (kind === 0) values[i] = 'None';
    else if (kind === 1 && nextUri < uriCount) values[i] = { Uri: uris[nextUri++]! };
    else if (kind === 2 && nextObject < objectCount) values[i] = { Object: objects[nextObject++]! };
    else throw new DecodeError(`Content value ${i} has source type ${kind} with no matching entry`);
  }
  return arrayColumn('Content', values);
}
