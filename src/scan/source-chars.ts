/**
 * The source being scanned as UTF-16 code units in a typed array that is
 * reused from call to call. Reading a typed array in the tokenizer's loops is
 * about twice as fast as `String.prototype.charCodeAt` (which re-checks the
 * string's representation on every call), and the copy itself is a native
 * memcpy-like write that costs a few percent of the scan.
 *
 * Code units, not bytes: token offsets stay string indices, and every
 * character (lone surrogates included) reads exactly as `charCodeAt` would.
 * The array is padded with zeros after the source, so lookahead a few
 * characters past the end reads a control character that matches nothing.
 */
import { Buffer } from 'node:buffer';

/**
 * Zero code units after the source: lookahead reads up to three past a
 * position below the end, and a word key (words.ts) reads eight from an
 * identifier's start.
 */
export const PADDING = 8;

/**
 * At most this many characters of one source are read (64 MB of buffer). A
 * longer Source (the decoder allows strings of 256 MB) is scanned up to here
 * and reported as truncated, like a source with too many tokens.
 */
export const MAX_SOURCE_CHARS = 1 << 25;

/** Buffers above this many characters are not kept between calls. */
const RETAINED_CHARS = 1 << 20;
const INITIAL_CHARS = 1 << 16;

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

let chars = new Uint16Array(INITIAL_CHARS);
let bytes = Buffer.from(chars.buffer);

/**
 * Copies the first `length` characters of `source` (at most MAX_SOURCE_CHARS)
 * into the shared buffer, followed by PADDING zeros; the buffer is valid until
 * the next call.
 */
export function loadChars(source: string, length: number): Uint16Array {
  if (length + PADDING > chars.length) {
    let size = chars.length;
    while (size < length + PADDING) size *= 2;
    chars = new Uint16Array(size);
    bytes = Buffer.from(chars.buffer);
  }
  if (LITTLE_ENDIAN) {
    bytes.write(source, 0, length * 2, 'utf16le');
  } else {
    // 'utf16le' would land byte-swapped in a big-endian Uint16Array.
    for (let i = 0; i < length; i++) chars[i] = source.charCodeAt(i);
  }
  chars.fill(0, length, length + PADDING);
  return chars;
}

/** Lets go of a buffer grown for an unusually large script. */
export function releaseLargeCharBuffer(): void {
  if (chars.length > RETAINED_CHARS) {
    chars = new Uint16Array(INITIAL_CHARS);
    bytes = Buffer.from(chars.buffer);
  }
}
