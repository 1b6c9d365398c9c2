/** String and Bytecode columns: u32-length-prefixed byte strings, stored in sequence. */
import { DecodeError } from '../errors.js';
import { bytesToStringValue, checkCount, need, readU32, type Cursor } from '../reader.js';
import type { PropType, StringValue } from '../values.js';
import { sameBytes, u32le, ViewColumn, type ColumnContext, type RowDiff } from './column.js';

/**
 * Checks every length when the file is decoded; where each string starts is worked
 * out on the first read, and a value is decoded only when read, so a place's
 * hundreds of thousands of names and attribute blobs are not all turned into strings.
 */
export class StringColumn extends ViewColumn {
  /** A row's bytes as the file holds them: a view into the chunk data, not a copy. */
  bytes(row: number): Uint8Array {
    const at = stringStart(this, row);
    return this.data.subarray(at, at + u32le(this.data, at - 4));
  }

  /** Where a row's bytes start in `data` (no view made: for writers that copy them). */
  byteStart(row: number): number {
    return stringStart(this, row);
  }

  /** Where a row's bytes end in `data`. */
  byteEnd(row: number): number {
    const at = stringStart(this, row);
    return at + u32le(this.data, at - 4);
  }
}

/** Row by row in file order, each row's length read where the previous row ends (no look-up of where it starts). */
const diffString: RowDiff = (col, reference, bits) => {
  const d = col.data;
  const expected = stringStart(col, reference), length = u32le(d, expected - 4);
  for (let r = 0, at = col.at; r < col.length; r++) {
    const rowLength = u32le(d, at);
    at += 4;
    if (rowLength !== length || !sameBytes(d, at, expected, length)) bits[r >> 3]! |= 1 << (r & 7);
    at += rowLength;
  }
};

function stringStart(col: ViewColumn, row: number): number {
  let starts = col.cache;
  if (!starts) {
    starts = col.cache = new Uint32Array(col.length);
    for (let i = 0, at = col.at; i < col.length; i++) {
      starts[i] = at + 4;
      at += 4 + u32le(col.data, at);
    }
  }
  return starts[row]!;
}

const text = (col: ViewColumn, row: number): StringValue => {
  const at = stringStart(col, row);
  return bytesToStringValue(col.data, at, at + u32le(col.data, at - 4));
};

export function readStringColumn(c: Cursor, ctx: ColumnContext, type: PropType = 'String'): StringColumn {
  checkCount(c, ctx.count, 4, 'string');
  const at = c.pos;
  for (let i = 0; i < ctx.count; i++) {
    const length = readU32(c);
    if (length > ctx.maxStringBytes) throw new DecodeError(`string length ${length} exceeds the limit of ${ctx.maxStringBytes} bytes`, { limit: 'maxStringBytes' });
    need(c, length, 'string');
  }
  return new StringColumn(type, ctx.count, c.bytes, at, c.pos, text, diffString);
}
