/** String and Bytecode: u32 length and bytes, one value after another. */
import type { Value } from '../values.js';
import { utf8, type ByteWriter } from './bytes.js';
import { fail, fields } from './shape.js';

/** A String value's bytes: UTF-8 text, or the bytes of `{ base64 }` (non-UTF-8 data). */
export function stringBytes(value: Value, row: number): Uint8Array {
  if (typeof value === 'string') return utf8(value);
  const base64 = fields(value)?.base64;
  if (typeof base64 === 'string') return Buffer.from(base64, 'base64');
  return fail('a string or { base64 }', value, row);
}

export function writeStrings(w: ByteWriter, values: readonly Value[]): void {
  values.forEach((value, row) => {
    if (typeof value === 'string') w.text(value);
    else w.string(stringBytes(value, row));
  });
}
