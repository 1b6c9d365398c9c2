/**
 * A tiny bounds-checked cursor over bytes, in the style of hyparquet's { view, offset }.
 * Every read checks what is left first, so a truncated or lying file raises a
 * DecodeError instead of reading past the end or allocating from a bogus count.
 */
import { Buffer, isUtf8 } from 'node:buffer';
import { DecodeError } from './errors.js';
import type { DecodeLimits } from './limits.js';
import type { StringValue } from './values.js';

export interface Cursor {
  readonly bytes: Uint8Array;
  readonly view: DataView;
  pos: number;
  readonly end: number;
  /** Where the data being read starts in `bytes` (messages give offsets from here). */
  readonly base: number;
}

/** A cursor over bytes[pos, end): one chunk's data, possibly inside a larger buffer. */
export function cursor(bytes: Uint8Array, pos = 0, end = bytes.length): Cursor {
  return { bytes, view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), pos, end, base: pos };
}

export function remaining(c: Cursor): number {
  return c.end - c.pos;
}

/** Throws unless `count` bytes are left; returns the position they start at. */
export function need(c: Cursor, count: number, what = 'data'): number {
  if (!(count >= 0) || count > c.end - c.pos) {
    throw new DecodeError(`unexpected end of data reading ${what}: need ${count} bytes at data offset ${c.pos - c.base}, ${c.end - c.pos} left`);
  }
  const at = c.pos;
  c.pos += count;
  return at;
}

/**
 * Checks a declared element count against the bytes that must follow (and an optional
 * cap) before allocating. `limit` names a cap that is one of DecodeLimits; a cap the
 * file's own structure sets (a column's row count) makes the error a malformed file's.
 */
export function checkCount(c: Cursor, count: number, bytesEach: number, what: string, cap = Infinity, limit?: keyof DecodeLimits): void {
  if (count > cap) throw new DecodeError(`${what} count ${count} exceeds the limit of ${cap}`, limit ? { limit } : {});
  if (count * bytesEach > c.end - c.pos) {
    throw new DecodeError(`${what} count ${count} needs ${count * bytesEach} bytes at data offset ${c.pos - c.base}, only ${c.end - c.pos} left`);
  }
}

export function readU8(c: Cursor): number {
  return c.bytes[need(c, 1, 'u8')]!;
}

export function readU16(c: Cursor): number {
  return c.view.getUint16(need(c, 2, 'u16'), true);
}

export function readU32(c: Cursor): number {
  return c.view.getUint32(need(c, 4, 'u32'), true);
}

export function readI32(c: Cursor): number {
  return c.view.getInt32(need(c, 4, 'i32'), true);
}

export function readF32(c: Cursor): number {
  return c.view.getFloat32(need(c, 4, 'f32'), true);
}

/** A u32-length-prefixed byte string, as a view into the data (no copy); `maxBytes` is the string cap (DecodeLimits.maxStringBytes). */
export function readBytes(c: Cursor, maxBytes: number, what = 'string'): Uint8Array {
  const length = readU32(c);
  if (length > maxBytes) throw new DecodeError(`${what} length ${length} exceeds the limit of ${maxBytes} bytes`, { limit: 'maxStringBytes' });
  const at = need(c, length, what);
  return c.bytes.subarray(at, at + length);
}

/**
 * Text when the bytes are valid UTF-8, else the bytes in base64 (the chunk view's
 * shape). The decoder's columns hold their chunk data as Buffers, which turn a byte
 * range into a string natively without a view per value.
 */
export function bytesToStringValue(bytes: Uint8Array, start = 0, end = bytes.length): StringValue {
  const length = end - start;
  if (length <= 0) return '';
  // Most strings (names, tags, asset URIs) are ASCII: decode those without a validation pass.
  let ascii = true;
  for (let i = start; i < end; i++) {
    if (bytes[i]! > 0x7f) { ascii = false; break; }
  }
  if (ascii) {
    if (length <= 12) {
      // Short enough for += to make flat strings (longer ones would be chains of cons strings).
      let text = '';
      for (let i = start; i < end; i++) text += String.fromCharCode(bytes[i]!);
      return text;
    }
    if (Buffer.isBuffer(bytes)) return bytes.toString('latin1', start, end);
    if (length > 64) return latin1.decode(bytes.subarray(start, end));
    return String.fromCharCode.apply(null, bytes.subarray(start, end) as unknown as number[]);
  }
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset + start, length);
  return isUtf8(buffer) ? buffer.toString('utf8') : { base64: buffer.toString('base64') };
}

const latin1 = new TextDecoder('latin1');

/** A string that must be text (class and property names, META entries). */
export function readText(c: Cursor, maxBytes: number, what = 'string'): string {
  const value = bytesToStringValue(readBytes(c, maxBytes, what));
  if (typeof value !== 'string') throw new DecodeError(`${what} is not valid UTF-8`);
  return value;
}
