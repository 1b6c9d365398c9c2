/**
 * Character data: XML's predefined and numeric entities, base64 payloads and the
 * text-or-base64 shape of String values. Only these entities are known: a DOCTYPE
 * cannot declare more, so no document can make the decoder expand anything.
 */
import { isUtf8 } from 'node:buffer';
import type { StringValue } from '../values.js';

const ENTITY = /&(#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|lt|gt|amp|quot|apos);/;
const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** The code point a numeric reference's body (`#x41`, `#65`) names; -1 for a named entity. */
function codeOf(body: string): number {
  if (body.charCodeAt(0) !== 35 /* # */) return -1;
  return body.charCodeAt(1) === 120 || body.charCodeAt(1) === 88 ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;
/** A reference right where the previous one ended. */
const NEXT_ENTITY = new RegExp(ENTITY.source, 'y');

/**
 * Replaces entity references; an undeclared named entity stays as written. A pair of
 * references to a high and a low surrogate (how tools that escape UTF-16 units write
 * 😀) is the one character they make; NUL, a surrogate on its own (which no JSON reader
 * takes) and code points past U+10FFFF are not characters, and stay as written.
 */
export function decodeEntities(text: string): string {
  if (text.indexOf('&') === -1) return text;
  const entities = new RegExp(ENTITY.source, 'g');
  let out = '';
  let last = 0;
  for (let match = entities.exec(text); match !== null; match = entities.exec(text)) {
    out += text.slice(last, match.index);
    last = entities.lastIndex;
    const body = match[1]!;
    const code = codeOf(body);
    if (code === -1) { out += NAMED[body]!; continue; }
    if (isHighSurrogate(code)) {
      NEXT_ENTITY.lastIndex = last;
      const next = NEXT_ENTITY.exec(text);
      const low = next === null ? -1 : codeOf(next[1]!);
      if (isLowSurrogate(low)) {
        out += String.fromCharCode(code, low);
        last = entities.lastIndex = NEXT_ENTITY.lastIndex;
        continue;
      }
    }
    out += code > 0 && code <= 0x10ffff && !isHighSurrogate(code) && !isLowSurrogate(code) ? String.fromCodePoint(code) : match[0];
  }
  return out + text.slice(last);
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
