/**
 * Character data: XML's predefined and numeric entities, base64 payloads and the
 * text-or-base64 shape of String values. Only these entities are known: a DOCTYPE
 * cannot declare more, so no document can make the decoder expand anything.
 */
import { isUtf8 } from 'node:buffer';
import type { StringValue } from '../values.js';

const ENTITY = /&(#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|lt|gt|amp|quot|apos);/g;
const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

function replaceEntity(whole: string, body: string): string {
  if (body.charCodeAt(0) !== 35 /* # */) return NAMED[body]!;
  const code = body.charCodeAt(1) === 120 || body.charCodeAt(1) === 88 ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
  // NUL, surrogates (half a UTF-16 pair, which no JSON reader takes alone) and out-of-range
  // code points are not characters: keep the reference as written.
  return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : whole;
}

/** Replaces entity references; an undeclared named entity stays as written. */
export function decodeEntities(text: string): string {
  return text.indexOf('&') === -1 ? text : text.replace(ENTITY, replaceEntity);
}

const WHITESPACE = /\s/;
const WHITESPACE_RUNS = /\s+/g;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Decoded base64 bytes (line breaks allowed, padding optional), or undefined when the text is not base64. */
export function decodeBase64(text: string): Uint8Array | undefined {
  const compact = WHITESPACE.test(text) ? text.replace(WHITESPACE_RUNS, '') : text;
  if (!BASE64.test(compact) || compact.length % 4 === 1) return undefined;
  const buffer = Buffer.from(compact, 'base64');
  // A plain Uint8Array that owns its bytes, not a view into Buffer's shared pool.
  const bytes = new Uint8Array(buffer.length);
  bytes.set(buffer);
  return bytes;
}

/** Upper bound of the decoded size of a base64 text, before decoding it. */
export function base64Size(text: string): number {
  return Math.floor((text.length * 3) / 4);
}

/** The String value shape: text when the bytes are valid UTF-8 (a BOM is kept, as in binary files), else base64. */
export function bytesToStringValue(bytes: Uint8Array): StringValue {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return isUtf8(buffer) ? buffer.toString('utf8') : { base64: buffer.toString('base64') };
}

/** UTF-8 size of a string, computed only when the cheap bounds cannot decide. */
export function exceedsBytes(text: string, max: number): boolean {
  if (text.length > max) return true; // a UTF-16 unit is at least one UTF-8 byte
  if (text.length * 3 <= max) return false;
  return Buffer.byteLength(text, 'utf8') > max;
}
