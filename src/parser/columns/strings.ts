/** String and Bytecode columns: u32-length-prefixed byte strings, stored in sequence. */
import type { Column } from '../dom.js';
import { DecodeError } from '../errors.js';
import { bytesToStringValue, checkCount, need, readU32, type Cursor } from '../reader.js';
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
  // Lengths are read straight off the view: a subarray per string would allocate a Buffer each.
  for (let i = 0; i < ctx.count; i++) {
    const length = readU32(c);
    if (length > ctx.maxStringBytes) throw new DecodeError(`string length ${length} exceeds the limit of ${ctx.maxStringBytes} bytes`);
    const at = need(c, length, 'string');
    starts[i] = at;
    ends[i] = at + length;
  }
  const data = c.bytes;
  return {
    ...column(type, ctx.count, (row) => bytesToStringValue(data, starts[row], ends[row])),
    bytes: (row) => data.subarray(starts[row], ends[row]),
  };
}
