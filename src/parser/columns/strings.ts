/** String and Bytecode columns: u32-length-prefixed byte strings, stored in sequence. */
import type { Column } from '../dom.js';
import { bytesToStringValue, checkCount, readBytes, type Cursor } from '../reader.js';
import type { PropType } from '../values.js';
import { column, type ColumnContext } from './column.js';

/**
 * Keeps offsets into the chunk data and decodes a value only when read, so a place's
 * hundreds of thousands of names and attribute blobs are not all turned into strings.
 */
export function readStringColumn(c: Cursor, ctx: ColumnContext, type: PropType = 'String'): Column {
  checkCount(c, ctx.count, 4, 'string');
  const starts = new Uint32Array(ctx.count);
  const ends = new Uint32Array(ctx.count);
  for (let i = 0; i < ctx.count; i++) {
    const bytes = readBytes(c, ctx.maxStringBytes);
    starts[i] = bytes.byteOffset - c.bytes.byteOffset;
    ends[i] = starts[i]! + bytes.length;
  }
  const data = c.bytes;
  return column(type, ctx.count, (row) => bytesToStringValue(data.subarray(starts[row], ends[row])));
}
