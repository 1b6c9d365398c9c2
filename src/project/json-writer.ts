/**
 * JSON text written straight into byte chunks: the project document and the dump
 * are hundreds of thousands of small values, and building them as JavaScript strings
 * (one per number, concatenated, then encoded to UTF-8) cost more than everything
 * else together. Numbers are formatted from their digits into the buffer; ASCII
 * strings are copied byte by byte with JSON's escapes; anything else goes through
 * Buffer.write. Full chunks are handed out with `take()`, so a writer's memory is one
 * chunk plus what the caller has not taken yet.
 *
 * Numbers follow encoding.ts: float32 values in the shortest decimal that reads back
 * as the same float32, float64 values as JavaScript prints them, -0 as -0, NaN and
 * the infinities as the strings "NaN", "Infinity", "-Infinity".
 */
import { Buffer } from 'node:buffer';

/** 10^k for k = 0..22, every one an exact double: a table, as Math.pow is slow. */
const POWERS_OF_TEN = Array.from({ length: 23 }, (_, k) => Number(`1e${k}`));
const QUOTE = 0x22, BACKSLASH = 0x5c, MINUS = 0x2d, DOT = 0x2e, ZERO = 0x30;
const HEX = '0123456789abcdef';
/** Each byte's two lower-case hex digits (high digit in the high byte). */
const HEX_PAIRS = Uint16Array.from({ length: 256 }, (_, b) => (HEX.charCodeAt(b >> 4) << 8) | HEX.charCodeAt(b & 15));
const TRUE = Buffer.from('true', 'latin1'), FALSE = Buffer.from('false', 'latin1');
/** Characters of a long string escaped at a time (JsonWriter's #longString): at most 384 KiB of JSON. */
const LONG_STRING_SLICE = 1 << 16;
/** Bytes of a source escaped at a time at least (JsonWriter.utf8String): six times it reserved. */
const UTF8_STRING_SLICE = 1 << 12;
const isHighSurrogate = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;

/** What a writer with a cap throws when a write would take it past the cap (its text is then discarded). */
export class JsonCapError extends Error {
  constructor(readonly maxBytes: number) {
    super(`JSON text past ${maxBytes} bytes`);
  }
}

export class JsonWriter {
  #buffer: Buffer;
  #at = 0;
  readonly #chunkBytes: number;
  readonly #maxBytes: number;
  readonly #full: Buffer[] = [];
  /** Bytes in `#full`, not taken yet. */
  #fullBytes = 0;
  /** Bytes written so far (taken or not). */
  written = 0;

  /**
   * `maxBytes` caps the text a scratch writer may hold (about: checked as each chunk fills,
   * a write that needs a chunk past it throws JsonCapError before the chunk is made), so a
   * value's text is never made in full only to be compared.
   */
  constructor(chunkBytes = 1 << 16, maxBytes = Infinity) {
    this.#chunkBytes = chunkBytes;
    this.#maxBytes = maxBytes;
    this.#buffer = Buffer.allocUnsafe(chunkBytes);
  }

  /** Whether full chunks are waiting to be taken. */
  get ready(): boolean {
    return this.#full.length > 0;
  }

  /** The full chunks written so far (the caller owns them). */
  take(): Buffer[] {
    this.#fullBytes = 0;
    return this.#full.splice(0);
  }

  /** Everything not taken yet, the current partial chunk included; the writer starts a new chunk. */
  flush(): Buffer[] {
    if (this.#at > 0) {
      this.#full.push(this.#buffer.subarray(0, this.#at));
      this.#fullBytes += this.#at;
      this.#buffer = Buffer.allocUnsafe(this.#chunkBytes);
      this.#at = 0;
    }
    return this.take();
  }

  /** Everything written since the last take, as text; the writer starts over (for small scratch values). */
  takeText(): string {
    if (this.#full.length === 0) {
      const text = this.#buffer.toString('utf8', 0, this.#at);
      this.#at = 0;
      return text;
    }
    return Buffer.concat(this.flush()).toString('utf8');
  }

  /** Everything written since the last take is dropped; the writer starts over (after a JsonCapError). */
  discard(): void {
    this.#full.length = 0;
    this.#fullBytes = 0;
    if (this.#buffer.length > this.#chunkBytes) this.#buffer = Buffer.allocUnsafe(this.#chunkBytes);
    this.#at = 0;
  }

  /** Room for `bytes` more bytes in the current chunk (a new chunk when it has not). */
  #room(bytes: number): void {
    if (this.#at + bytes <= this.#buffer.length) return;
    // Checked when a chunk fills (not on every write: this is the document's hot path), before a larger one is made.
    if (this.#fullBytes + this.#at + bytes > this.#maxBytes) throw new JsonCapError(this.#maxBytes);
    if (this.#at > 0) {
      this.#full.push(this.#buffer.subarray(0, this.#at));
      this.#fullBytes += this.#at;
    }
    this.#buffer = Buffer.allocUnsafe(Math.max(this.#chunkBytes, bytes));
    this.#at = 0;
  }

  byte(c: number): void {
    if (this.#at === this.#buffer.length) this.#room(1);
    this.#buffer[this.#at++] = c;
    this.written++;
  }

  /** Text that is ASCII and needs no escaping (punctuation, keys known in advance). */
  ascii(text: string): void {
    const length = text.length;
    this.#room(length);
    const buffer = this.#buffer;
    let at = this.#at;
    for (let i = 0; i < length; i++) buffer[at++] = text.charCodeAt(i);
    this.#at = at;
    this.written += length;
  }

  /** Bytes that are already JSON (keys and punctuation encoded once in advance). */
  bytes(data: Uint8Array): void {
    const length = data.length;
    this.#room(length);
    const buffer = this.#buffer;
    let at = this.#at;
    if (length > 24) { buffer.set(data, at); at += length; }
    else for (let i = 0; i < length; i++) buffer[at++] = data[i]!;
    this.#at = at;
    this.written += length;
  }

  /** A JSON string of the lower-case hex digits of four 32-bit words (a UniqueId). */
  hexWords(words: Float64Array): void {
    this.#room(34);
    const buffer = this.#buffer;
    let at = this.#at;
    buffer[at++] = QUOTE;
    for (let w = 0; w < 4; w++) {
      const word = words[w]! >>> 0;
      for (let shift = 24; shift >= 0; shift -= 8) {
        const pair = HEX_PAIRS[(word >>> shift) & 0xff]!;
        buffer[at++] = pair >> 8;
        buffer[at++] = pair & 0xff;
      }
    }
    buffer[at++] = QUOTE;
    this.#at = at;
    this.written += 34;
  }

  /** Any text, UTF-8 encoded as is (already JSON, e.g. from JSON.stringify). */
  text(text: string): void {
    const bytes = Buffer.byteLength(text, 'utf8');
    this.#room(bytes);
    this.#at += this.#buffer.write(text, this.#at, 'utf8');
    this.written += bytes;
  }

  /** A JSON string. */
  string(value: string): void {
    const length = value.length;
    // Worst case for ASCII: every character escaped as \u00XX (6 bytes), plus quotes.
    if (length > 256) { this.#longString(value); return; }
    this.#room(length * 6 + 2);
    const buffer = this.#buffer;
    const start = this.#at;
    let at = start;
    buffer[at++] = QUOTE;
    for (let i = 0; i < length; i++) {
      const c = value.charCodeAt(i);
      if (c >= 0x20 && c < 0x7f) {
        if (c === QUOTE || c === BACKSLASH) buffer[at++] = BACKSLASH;
        buffer[at++] = c;
      } else if (c < 0x20) {
        at = escapeControl(buffer, at, c);
      } else {
        // Not ASCII (or DEL): JSON.stringify handles lone surrogates as JSON.stringify does.
        this.#at = start;
        this.text(JSON.stringify(value));
        return;
      }
    }
    buffer[at++] = QUOTE;
    this.written += at - start;
    this.#at = at;
  }

  /**
   * A long string's JSON, JSON.stringify's text, made and written a slice at a time: the
   * whole escaped at once can pass the longest string V8 makes (2^29 - 24 characters: a
   * control character is six, \u00XX, so a 95 MB value of them, from a 373 KB file, made
   * `project` and `dump` fail with "Invalid string length") and takes a buffer its size.
   * A slice never ends between the halves of a surrogate pair, so nothing is escaped
   * that the whole would not escape.
   */
  #longString(value: string): void {
    const length = value.length;
    if (length <= LONG_STRING_SLICE) { this.text(JSON.stringify(value)); return; }
    this.byte(QUOTE);
    for (let from = 0; from < length;) {
      let to = Math.min(length, from + LONG_STRING_SLICE);
      if (to < length && isHighSurrogate(value.charCodeAt(to - 1))) to--;
      const json = JSON.stringify(value.slice(from, to));
      this.text(json.slice(1, -1));
      from = to;
    }
    this.byte(QUOTE);
  }

  /**
   * A JSON string from bytes [start, end) of `bytes` when they are all ASCII (the
   * same text `string` writes for them); returns false, writing nothing, otherwise.
   */
  asciiString(bytes: Uint8Array, start: number, end: number): boolean {
    const length = end - start;
    if (length > 4096) return false; // long text (sources, attribute blobs): not worth six times its size in room
    this.#room(length * 6 + 2);
    const buffer = this.#buffer;
    const from = this.#at;
    let at = from;
    buffer[at++] = QUOTE;
    for (let i = start; i < end; i++) {
      const c = bytes[i]!;
      if (c >= 0x20 && c <= 0x7f) {
        // DEL stays as it is, as JSON.stringify leaves it.
        if (c === QUOTE || c === BACKSLASH) buffer[at++] = BACKSLASH;
        buffer[at++] = c;
      } else if (c < 0x20) {
        at = escapeControl(buffer, at, c);
      } else {
        return false;
      }
    }
    buffer[at++] = QUOTE;
    this.written += at - from;
    this.#at = at;
    return true;
  }

  /**
   * A JSON string of `head` followed by the text of `bytes`, which must be valid UTF-8
   * (isUtf8): the text `string(head + text)` writes, without making either string. JSON
   * escapes only the quote, the backslash and control characters; everything else,
   * DEL, U+2028/U+2029 and every multi-byte character included, stays as it is, and
   * valid UTF-8 holds no lone surrogates, so the bytes are copied but for those escapes.
   */
  utf8String(head: string, bytes: Uint8Array): void {
    // The head's JSON without its closing quote (a head ending in a lone high surrogate is
    // escaped as in the whole: valid UTF-8 cannot begin with the low half of a pair).
    const json = JSON.stringify(head);
    const headBytes = Buffer.byteLength(json, 'utf8') - 1;
    this.#room(headBytes + 1);
    this.#buffer.write(json, this.#at, 'utf8');
    this.#at += headBytes;
    this.written += headBytes;
    const length = bytes.length;
    for (let i = 0; i < length;) {
      // Room for the worst case (every byte six) of as many bytes as fit, at least UTF8_STRING_SLICE.
      if (this.#buffer.length - this.#at < 6 * UTF8_STRING_SLICE) this.#room(6 * Math.min(length - i, UTF8_STRING_SLICE));
      const buffer = this.#buffer;
      const from = this.#at;
      let at = from;
      const stop = Math.min(length, i + Math.floor((buffer.length - at) / 6));
      for (; i < stop; i++) {
        const c = bytes[i]!;
        if (c >= 0x20 && c !== QUOTE && c !== BACKSLASH) buffer[at++] = c;
        else if (c < 0x20) at = escapeControl(buffer, at, c);
        else { buffer[at++] = BACKSLASH; buffer[at++] = c; }
      }
      this.#at = at;
      this.written += at - from;
    }
    this.byte(QUOTE);
  }

  /** An integer (any safe integer; other numbers as JavaScript prints them). */
  int(value: number): void {
    if (!Number.isSafeInteger(value)) { this.float64(value); return; }
    this.#room(24);
    const from = this.#at;
    this.#at = writeInteger(this.#buffer, from, value);
    this.written += this.#at - from;
  }

  /** A non-negative safe integer as a JSON string (`"123"`: a map instance's id). */
  quotedInt(value: number): void {
    if (!(Number.isSafeInteger(value) && value >= 0)) { this.string(String(value)); return; }
    this.#room(24);
    const buffer = this.#buffer;
    const from = this.#at;
    buffer[from] = QUOTE;
    const at = writeDigits(buffer, from + 1, value, 0);
    buffer[at] = QUOTE;
    this.#at = at + 1;
    this.written += at + 1 - from;
  }

  /** `[a,b,...]`: `count` values of `values` from index `from`, as `int` writes each, in room reserved once (a part's Color3uint8). */
  intArray(values: ArrayLike<number>, from: number, count: number): void {
    this.#room(count * 24 + 2);
    const buffer = this.#buffer;
    const start = this.#at;
    let at = start;
    buffer[at++] = 0x5b;
    for (let i = 0; i < count; i++) {
      if (i) buffer[at++] = 0x2c;
      const value = values[from + i]!;
      if (!Number.isSafeInteger(value)) {
        // As `int` writes it (JavaScript's text), after what is written so far.
        this.#at = at;
        this.written += at - start;
        this.float64(value);
        for (let k = i + 1; k < count; k++) { this.byte(0x2c); this.int(values[from + k]!); }
        this.byte(0x5d);
        return;
      }
      at = writeInteger(buffer, at, value);
    }
    buffer[at++] = 0x5d;
    this.#at = at;
    this.written += at - start;
  }

  /**
   * A float32 in the shortest decimal that reads back as the same float32 (see
   * writeFloat32). Everything is written into room reserved once: a float32's text is
   * at most 15 bytes (the slow path's, for values that are not float32, at most 25).
   */
  float32(x: number): void {
    this.#room(32);
    const from = this.#at;
    const at = float32Into(this.#buffer, from, x);
    if (at < 0) { this.ascii(slowFloat32(x)); return; }
    this.#at = at;
    this.written += at - from;
  }

  /**
   * `[a,b,...]`: `count` float32 values of `values` from index `from`, as `float32`
   * writes each, in room reserved once for the array (a CFrame's twelve numbers on
   * every part).
   */
  float32Array(values: ArrayLike<number>, from: number, count: number): void {
    this.#room(count * 32 + 2);
    const buffer = this.#buffer;
    const start = this.#at;
    let at = start;
    buffer[at++] = 0x5b;
    for (let i = 0; i < count; i++) {
      if (i) buffer[at++] = 0x2c;
      const x = values[from + i]!;
      const end = float32Into(buffer, at, x);
      if (end >= 0) { at = end; continue; }
      const text = slowFloat32(x);
      for (let k = 0; k < text.length; k++) buffer[at++] = text.charCodeAt(k);
    }
    buffer[at++] = 0x5d;
    this.#at = at;
    this.written += at - start;
  }

  /** A float32 given as its bit pattern (ViewColumn.floatBits): the text `float32` writes for that float. */
  float32Bits(bits: number): void {
    this.#room(32);
    const from = this.#at;
    const at = float32BitsInto(this.#buffer, from, bits);
    if (at < 0) { this.ascii(slowFloat32(floatOfBits(bits))); return; }
    this.#at = at;
    this.written += at - from;
  }

  /** `[a,b,...]` of `count` float32 bit patterns from index `from`: the text `float32Array` writes for those floats. */
  float32BitsArray(bits: Uint32Array, from: number, count: number): void {
    this.#room(count * 32 + 2);
    const buffer = this.#buffer;
    const start = this.#at;
    let at = start;
    buffer[at++] = 0x5b;
    for (let i = 0; i < count; i++) {
      if (i) buffer[at++] = 0x2c;
      const pattern = bits[from + i]!;
      const end = float32BitsInto(buffer, at, pattern);
      if (end >= 0) { at = end; continue; }
      const text = slowFloat32(floatOfBits(pattern));
      for (let k = 0; k < text.length; k++) buffer[at++] = text.charCodeAt(k);
    }
    buffer[at++] = 0x5d;
    this.#at = at;
    this.written += at - start;
  }

  float64(x: number): void {
    if (x === 0) { this.ascii(Object.is(x, -0) ? '-0' : '0'); return; }
    if (x !== x || x === Infinity || x === -Infinity) { this.ascii(nonFinite(x)); return; }
    this.ascii(String(x));
  }

  bool(value: boolean): void {
    this.bytes(value ? TRUE : FALSE);
  }
}

// The float32 text cache: 2^CACHE_BITS slots of a key (the float's bits), a length
// (0 = empty) and up to CACHED_BYTES bytes of text. FLOAT_BITS also checks that the
// number is a float32 at all (a double that is not reads back different).
const CACHE_BITS = 14;
const CACHED_BYTES = 16;
const CACHED_KEYS = new Uint32Array(1 << CACHE_BITS);
const CACHED_LENGTHS = new Uint8Array(1 << CACHE_BITS);
const CACHED_TEXT = new Uint8Array((1 << CACHE_BITS) * CACHED_BYTES);
const FLOAT_BITS = new Float32Array(1);
const FLOAT_KEY = new Uint32Array(FLOAT_BITS.buffer);

/**
 * Writes a float32's text at `at` (room for 32 bytes reserved); returns where it
 * ends, or -1 when the value needs slowFloat32. A map repeats its sizes, offsets,
 * positions and rotations, so their text is kept by bit pattern in a small
 * direct-mapped cache (float32BitsInto).
 */
function float32Into(buffer: Uint8Array, from: number, x: number): number {
  FLOAT_BITS[0] = x;
  // A number that is not a float32 (a double between two, NaN) reads back different: never cached.
  if (FLOAT_BITS[0] !== x) return writeFloat32(buffer, from, x);
  return float32BitsInto(buffer, from, FLOAT_KEY[0]!);
}

/** The float32 with bit pattern `bits`. */
function floatOfBits(bits: number): number {
  FLOAT_KEY[0] = bits;
  return FLOAT_BITS[0]!;
}

const ONE_BITS = 0x3f800000, MINUS_ONE_BITS = 0xbf800000;

/**
 * float32Into for a float given as its bit pattern: the cache is keyed by the pattern,
 * so a hit needs no float at all, and it keeps whole numbers too (a position's digits
 * cost a division each); 0, 1 and -1 (most of a rotation's entries) are written
 * without a look-up.
 */
function float32BitsInto(buffer: Uint8Array, from: number, bits: number): number {
  if (bits === 0) { buffer[from] = ZERO; return from + 1; }
  if (bits === ONE_BITS) { buffer[from] = ZERO + 1; return from + 1; }
  if (bits === MINUS_ONE_BITS) { buffer[from] = MINUS; buffer[from + 1] = ZERO + 1; return from + 2; }
  const slot = Math.imul(bits, 0x9e3779b1) >>> (32 - CACHE_BITS);
  const length = CACHED_LENGTHS[slot]!;
  if (length !== 0 && CACHED_KEYS[slot] === bits) {
    const text = slot * CACHED_BYTES;
    for (let i = 0; i < length; i++) buffer[from + i] = CACHED_TEXT[text + i]!;
    return from + length;
  }
  const at = writeFloat32(buffer, from, floatOfBits(bits));
  if (at >= 0 && at - from <= CACHED_BYTES) {
    CACHED_KEYS[slot] = bits;
    CACHED_LENGTHS[slot] = at - from;
    for (let i = from, to = slot * CACHED_BYTES; i < at; i++, to++) CACHED_TEXT[to] = buffer[i]!;
  }
  return at;
}

/** Writes the integer n (a safe integer) at `at`; returns where it ends. */
function writeInteger(buffer: Uint8Array, at: number, n: number): number {
  if (n < 0) { buffer[at++] = MINUS; n = -n; }
  return writeDigits(buffer, at, n, 0);
}

/**
 * Writes the digits of a non-negative safe integer at `at`, with a decimal point
 * before the last `decimals` of them (0.00ddd when there are fewer); returns where
 * the text ends. The digits are counted first, then written from the right.
 */
function writeDigits(buffer: Uint8Array, at: number, n: number, decimals: number): number {
  let count = 1;
  for (let p = 10; p <= n; p *= 10) count++;
  if (count <= decimals) count = decimals + 1;
  const end = at + count + (decimals > 0 ? 1 : 0);
  let i = end;
  let written = 0;
  if (n < 4294967296) {
    while (written < count) {
      const q = (n / 10) >>> 0;
      buffer[--i] = ZERO + (n - q * 10);
      n = q;
      if (++written === decimals) buffer[--i] = DOT;
    }
  } else {
    while (written < count) {
      const q = Math.floor(n / 10);
      buffer[--i] = ZERO + (n - q * 10);
      n = q;
      if (++written === decimals) buffer[--i] = DOT;
    }
  }
  return end;
}

/**
 * Writes a float32 at `at` in the shortest decimal that reads back as the same
 * float32; returns where it ends, or -1 when the value needs slowFloat32 (not a
 * float32, non-finite, magnitudes of 10^7 and more or below about 1e-13, or too
 * many digits). Whole numbers are written as integers. Otherwise the fewest
 * decimals k are found by rounding |x|·10^k (from the first significant digit on)
 * and checking the quotient reads back as x; the digits of that integer (at most
 * nine, no trailing zero) are written with the point k places from the right, or in
 * exponent form when more than four zeros would follow the point.
 */
function writeFloat32(buffer: Uint8Array, at: number, x: number): number {
  if ((x | 0) === x) {
    // Whole numbers (positions on the grid, sizes, rotations' 0 and 1); -0 stays -0.
    if (x === 0 && 1 / x < 0) buffer[at++] = MINUS;
    return writeInteger(buffer, at, x);
  }
  if (Math.fround(x) !== x) return -1; // NaN too
  const magnitude = x < 0 ? -x : x;
  if (!(magnitude < 1e7)) return -1;
  const first = magnitude >= 0.1 ? 0 : -Math.floor(Math.log10(magnitude));
  // Past 10^22 a power of ten is not a double, and the read-back check could pass text
  // that parses to a neighbouring float32 (7.0385307e-26 as 7.038531e-26): magnitudes
  // that need such decimals, below about 1e-13, take slowFloat32, which checks the text itself.
  const last = Math.min(first + 10, POWERS_OF_TEN.length);
  if (first >= last) return -1;
  // The fewest decimals that read back: short decimals (28.5, 0.25) are tried first;
  // past them, as once k decimals read back k + 1 do too, the least k is found by
  // bisection (a float32 with noise in its last digits takes three or four tries,
  // not eight).
  let lo = first, hi = last;
  if (readsBack(x, magnitude, first)) hi = first;
  else if (readsBack(x, magnitude, first + 1)) hi = lo = first + 1;
  else lo = first + 2;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (readsBack(x, magnitude, mid)) hi = mid; else lo = mid + 1;
  }
  if (lo >= last) return -1;
  let k = lo;
  let scaled = Math.round(magnitude * POWERS_OF_TEN[k]!);
  // The first digit's place comes from log10, which a value just under a power of ten
  // (the float32 0.01 is 0.0099999998) puts one place too far: its digits round up to
  // 10 and end in a zero that is not needed (0.010, 1.0e-13). Fewer decimals say the same.
  while (k > 0 && scaled % 10 === 0) { scaled /= 10; k--; }
  if (x < 0) buffer[at++] = MINUS;
  let digits = 1;
  for (let p = 10; p <= scaled; p *= 10) digits++;
  if (k - digits <= 4) return writeDigits(buffer, at, scaled, k);
  // d.ddde-n: the first digit, the rest after a point, the exponent (two digits at most).
  at = writeDigits(buffer, at, scaled, digits - 1);
  buffer[at++] = 0x65; // e
  buffer[at++] = MINUS;
  return writeDigits(buffer, at, k - digits + 1, 0);
}

/** JSON's escape of a control character (below 0x20) at `at`; returns where it ends. */
function escapeControl(buffer: Uint8Array, at: number, c: number): number {
  buffer[at++] = BACKSLASH;
  switch (c) {
    case 0x08: buffer[at++] = 0x62; break; // \b
    case 0x09: buffer[at++] = 0x74; break; // \t
    case 0x0a: buffer[at++] = 0x6e; break; // \n
    case 0x0c: buffer[at++] = 0x66; break; // \f
    case 0x0d: buffer[at++] = 0x72; break; // \r
    default:
      buffer[at++] = 0x75; buffer[at++] = ZERO; buffer[at++] = ZERO;
      buffer[at++] = HEX.charCodeAt(c >> 4); buffer[at++] = HEX.charCodeAt(c & 15);
  }
  return at;
}

/** Whether |x| rounded to k decimals reads back as the float32 x. */
function readsBack(x: number, magnitude: number, k: number): boolean {
  const power = POWERS_OF_TEN[k]!;
  const scaled = Math.round(magnitude * power);
  return Math.fround((x < 0 ? -scaled : scaled) / power) === x;
}

function nonFinite(x: number): string {
  return x !== x ? '"NaN"' : x > 0 ? '"Infinity"' : '"-Infinity"';
}

/** A float32's text where writeFloat32 declines: non-finite values, values that are not float32, and very large or small magnitudes. */
function slowFloat32(x: number): string {
  if (x !== x || x === Infinity || x === -Infinity) return nonFinite(x);
  if (Math.fround(x) !== x) return String(x);
  return shortFloat32(x);
}

/** The shortest float32 text by toPrecision (the slow path, for very large and very small magnitudes). */
function shortFloat32(x: number): string {
  for (let digits = 1; digits < 9; digits++) {
    const candidate = Number(x.toPrecision(digits));
    if (Math.fround(candidate) === x) return String(candidate);
  }
  return String(Number(x.toPrecision(9)));
}

/** A float32's text as the writer writes it (for tests and the rare caller that needs a string). */
export function float32Text(x: number): string {
  const writer = new JsonWriter(64);
  writer.float32(x);
  return Buffer.concat(writer.flush()).toString('latin1');
}
