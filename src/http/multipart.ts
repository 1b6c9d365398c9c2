/**
 * A streaming multipart/form-data parser (RFC 7578 over RFC 2046), push style and
 * transport independent: feed it the body chunk by chunk with `write`, then `end`.
 *
 * Memory is bounded by the limits, never by the body: part data is handed on as it
 * arrives, and at most one delimiter's worth of bytes is carried between chunks.
 * Finding the delimiter is linear: Buffer#indexOf (Boyer-Moore-Horspool, escalating
 * to full Boyer-Moore) over each chunk, plus a carried partial match whose length is
 * all that needs remembering, because the delimiter "\r\n--boundary" has no border
 * (a boundary cannot contain "\r"), so a failed partial match never hides another.
 */
import { withDefaults } from '../parser/limits.js';

export type MultipartErrorCode =
  /** Content-Type is not multipart/form-data. */
  | 'not_multipart'
  /** Content-Type has no boundary, or one outside RFC 2046's grammar. */
  | 'invalid_boundary'
  /** Bytes that do not follow the multipart grammar. */
  | 'malformed_multipart'
  /** A part's header block exceeds `maxHeaderBytes`. */
  | 'header_too_large'
  /** More parts than `maxParts`. */
  | 'too_many_parts'
  /** Non-file fields together exceed `maxFieldBytes`. */
  | 'field_too_large'
  /** File parts together exceed `maxFileBytes`. */
  | 'file_too_large'
  /** The body ended before the closing delimiter. */
  | 'truncated';

/** The one error this module throws for bad input; `code` says which rule was broken. */
export class MultipartError extends Error {
  readonly code: MultipartErrorCode;

  constructor(code: MultipartErrorCode, message: string) {
    super(message);
    this.name = 'MultipartError';
    this.code = code;
  }
}

export function isMultipartError(error: unknown): error is MultipartError {
  return error instanceof MultipartError;
}

export interface PartHeaders {
  /** The `name` parameter of Content-Disposition. */
  name: string;
  /**
   * The `filename` (or RFC 5987 `filename*`) parameter exactly as sent, or null for a
   * non-file field. It is client-controlled: it may be empty or hold a path, so take
   * its basename before showing or storing it.
   */
  filename: string | null;
  /** The part's Content-Type header, trimmed, or null when absent. */
  contentType: string | null;
}

export interface MultipartHandlers {
  onPartBegin(headers: PartHeaders): void;
  /**
   * Part bytes, in order, in pieces of any size (never empty). A piece may be a view of
   * the chunk passed to `write` (or of internal memory) that is only valid during this
   * call: copy it if it must outlive the call.
   */
  onPartData(data: Uint8Array): void;
  onPartEnd(): void;
}

export interface MultipartLimits {
  /** Bytes of one part's header block. */
  maxHeaderBytes: number;
  /** Parts in the body. */
  maxParts: number;
  /** Bytes of all non-file fields together (their values are usually kept in memory). */
  maxFieldBytes: number;
  /** Bytes of all file parts together. */
  maxFileBytes: number;
}

export const DEFAULT_MULTIPART_LIMITS: Readonly<MultipartLimits> = Object.freeze({
  maxHeaderBytes: 16 * 1024,
  maxParts: 20,
  maxFieldBytes: 64 * 1024,
  maxFileBytes: Number.POSITIVE_INFINITY,
});

export interface MultipartParser {
  /**
   * Parses the next chunk of the body. Throws MultipartError on bad input; after any
   * throw (including one from a handler) the parser is spent and rethrows that error.
   */
  write(chunk: Uint8Array): void;
  /** Declares the body complete; throws MultipartError('truncated') if it was not. */
  end(): void;
}

// RFC 2046 bchars: DIGIT / ALPHA / "'" "(" ")" "+" "_" "," "-" "." "/" ":" "=" "?" and
// space, 1 to 70 of them, not ending in space.
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;

/** Extracts the boundary from a multipart/form-data Content-Type header value. */
export function parseBoundary(contentType: string): string {
  const semicolon = contentType.indexOf(';');
  const mediaType = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  if (mediaType !== 'multipart/form-data') {
    throw new MultipartError('not_multipart', 'Content-Type must be multipart/form-data');
  }
  const parsed = parseParameterized(contentType);
  if (parsed === null) throw new MultipartError('invalid_boundary', 'multipart/form-data Content-Type has malformed parameters');
  const boundary = parsed.params.get('boundary');
  if (boundary === undefined) {
    throw new MultipartError('invalid_boundary', 'multipart/form-data Content-Type has no boundary parameter');
  }
  checkBoundary(boundary);
  return boundary;
}

function checkBoundary(boundary: string): void {
  if (!BOUNDARY.test(boundary)) {
    throw new MultipartError('invalid_boundary', 'multipart boundary must be 1-70 characters allowed by RFC 2046, not ending in a space');
  }
}

const CR = 0x0d;
const LF = 0x0a;
const DASH = 0x2d;
const SPACE = 0x20;
const TAB = 0x09;
/** Transport padding (whitespace) tolerated after a delimiter, before its CRLF. */
const MAX_PADDING = 256;

const enum State {
  /** Before the first delimiter: bytes are discarded. */
  Preamble,
  /** Just after a delimiter: "--" closes the body, (padding) CRLF opens a part. */
  AfterDelimiter,
  /** Saw the first "-" after a delimiter. */
  CloseDash,
  /** Saw the CR of the CRLF after a delimiter. */
  DelimiterLf,
  /** Collecting a part's header block. */
  Headers,
  /** Part data, up to the next delimiter. */
  Body,
  /** After the closing delimiter: the epilogue is discarded. */
  Done,
}

export function createMultipartParser(
  boundary: string,
  handlers: MultipartHandlers,
  limits: Partial<MultipartLimits> = {},
): MultipartParser {
  checkBoundary(boundary);
  const { maxHeaderBytes, maxParts, maxFieldBytes, maxFileBytes } = withDefaults(DEFAULT_MULTIPART_LIMITS, limits);
  const delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');

  // The body's first delimiter has no CRLF before it; pretending the stream began with
  // one (a partial match of 2) lets a single search find every delimiter.
  let state = State.Preamble;
  let matched = 2;
  let preambleBytes = 0;
  let padding = 0;
  let parts = 0;
  let isFile = false;
  let fieldBytes = 0;
  let fileBytes = 0;
  let inPart = false;
  let failure: unknown = null;
  let ended = false;

  // Header bytes collect here behind a virtual CRLF, so the block always ends at the
  // first CRLFCRLF, including the empty block.
  let headerBuffer: Buffer | null = null;
  let headerLength = 2;

  function write(chunk: Uint8Array): void {
    if (failure !== null) throw failure; // eslint-disable-line @typescript-eslint/only-throw-error -- rethrows the stored failure as it came
    if (ended) throw new MultipartError('malformed_multipart', 'multipart body written after end');
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    try {
      let offset = 0;
      while (offset < bytes.length) {
        switch (state) {
          case State.Preamble:
          case State.Body:
            offset = scan(bytes, offset);
            break;
          case State.Headers:
            offset = collectHeaders(bytes, offset);
            break;
          case State.Done:
            offset = bytes.length;
            break;
          default:
            afterDelimiter(bytes[offset]!); // offset < bytes.length (the loop's condition)
            offset++;
        }
      }
    } catch (error) {
      failure = error;
      throw error;
    }
  }

  function end(): void {
    if (failure !== null) throw failure; // eslint-disable-line @typescript-eslint/only-throw-error -- rethrows the stored failure as it came
    ended = true;
    if (state !== State.Done) {
      failure = new MultipartError('truncated', 'multipart body ended before its closing boundary');
      throw failure;
    }
  }

  /** Looks for the delimiter from `offset`; hands on what precedes it. Returns the new offset. */
  function scan(bytes: Buffer, offset: number): number {
    if (matched > 0) {
      // Continue the partial match carried over from the previous chunk.
      const wanted = Math.min(delimiter.length - matched, bytes.length - offset);
      if (bytes.compare(delimiter, matched, matched + wanted, offset, offset + wanted) === 0) {
        matched += wanted;
        if (matched < delimiter.length) return offset + wanted;
        matched = 0;
        delimiterFound();
        return offset + wanted;
      }
      // Not a delimiter after all: the carried bytes were content.
      emit(delimiter.subarray(0, matched));
      matched = 0;
    }
    const at = bytes.indexOf(delimiter, offset);
    if (at !== -1) {
      emit(bytes.subarray(offset, at));
      delimiterFound();
      return at + delimiter.length;
    }
    // Keep a tail that may begin a delimiter: it starts with the only CR a delimiter has.
    let tail = bytes.length;
    for (let i = bytes.indexOf(CR, Math.max(offset, bytes.length - delimiter.length + 1)); i !== -1; i = bytes.indexOf(CR, i + 1)) {
      if (bytes.compare(delimiter, 0, bytes.length - i, i) === 0) {
        tail = i;
        break;
      }
    }
    emit(bytes.subarray(offset, tail));
    matched = bytes.length - tail;
    return bytes.length;
  }

  function emit(data: Uint8Array): void {
    if (data.length === 0) return;
    if (state === State.Preamble) {
      preambleBytes += data.length;
      if (preambleBytes > maxHeaderBytes) {
        throw new MultipartError('malformed_multipart', `multipart body has no opening boundary in its first ${maxHeaderBytes} bytes`);
      }
      return;
    }
    if (isFile) {
      fileBytes += data.length;
      if (fileBytes > maxFileBytes) throw new MultipartError('file_too_large', `multipart files exceed ${maxFileBytes} bytes`);
    } else {
      fieldBytes += data.length;
      if (fieldBytes > maxFieldBytes) throw new MultipartError('field_too_large', `multipart fields exceed ${maxFieldBytes} bytes`);
    }
    handlers.onPartData(data);
  }

  function delimiterFound(): void {
    if (inPart) {
      inPart = false;
      handlers.onPartEnd();
    }
    state = State.AfterDelimiter;
    padding = 0;
  }

  function afterDelimiter(byte: number): void {
    switch (state) {
      case State.AfterDelimiter:
        if (byte === DASH && padding === 0) state = State.CloseDash;
        else if (byte === CR) state = State.DelimiterLf;
        else if ((byte === SPACE || byte === TAB) && ++padding <= MAX_PADDING) return;
        else throw new MultipartError('malformed_multipart', 'multipart boundary is not followed by CRLF or "--"');
        return;
      case State.CloseDash:
        if (byte !== DASH) throw new MultipartError('malformed_multipart', 'multipart boundary is not followed by CRLF or "--"');
        state = State.Done;
        return;
      case State.DelimiterLf:
        if (byte !== LF) throw new MultipartError('malformed_multipart', 'multipart boundary line does not end in CRLF');
        if (++parts > maxParts) throw new MultipartError('too_many_parts', `multipart body has more than ${maxParts} parts`);
        state = State.Headers;
        headerLength = 2;
        return;
    }
  }

  function collectHeaders(bytes: Buffer, offset: number): number {
    if (headerBuffer === null) {
      headerBuffer = Buffer.allocUnsafe(maxHeaderBytes + 2);
      headerBuffer[0] = CR;
      headerBuffer[1] = LF;
    }
    const copied = bytes.copy(headerBuffer, headerLength, offset, Math.min(bytes.length, offset + maxHeaderBytes + 2 - headerLength));
    const searchFrom = Math.max(0, headerLength - 3);
    headerLength += copied;
    const at = headerBuffer.subarray(0, headerLength).indexOf('\r\n\r\n', searchFrom, 'latin1');
    if (at === -1) {
      if (headerLength === headerBuffer.length) {
        throw new MultipartError('header_too_large', `multipart part headers exceed ${maxHeaderBytes} bytes`);
      }
      return offset + copied;
    }
    const blockEnd = at + 4;
    const headers = parsePartHeaders(headerBuffer.toString('utf8', 2, at));
    isFile = headers.filename !== null;
    state = State.Body;
    inPart = true;
    handlers.onPartBegin(headers);
    // Only part of the copy belonged to the header block; the rest is body.
    return offset + copied - (headerLength - blockEnd);
  }

  return { write, end };
}

/** Reads a part's header block (CRLF-separated lines, without the blank line). */
function parsePartHeaders(block: string): PartHeaders {
  let disposition: string | null = null;
  let contentType: string | null = null;
  const lines: string[] = [];
  for (const line of block === '' ? [] : block.split('\r\n')) {
    // Obsolete line folding: a line starting with whitespace continues the previous one.
    if ((line.startsWith(' ') || line.startsWith('\t')) && lines.length > 0) lines[lines.length - 1] += ' ' + line.trim();
    else lines.push(line);
  }
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new MultipartError('malformed_multipart', 'multipart part has a malformed header line');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'content-disposition') disposition ??= value;
    else if (name === 'content-type') contentType ??= value;
  }
  if (disposition === null) throw new MultipartError('malformed_multipart', 'multipart part has no Content-Disposition header');
  const parsed = parseParameterized(disposition);
  if (parsed === null || parsed.value.toLowerCase() !== 'form-data') {
    throw new MultipartError('malformed_multipart', 'multipart part Content-Disposition is not form-data');
  }
  const name = parsed.params.get('name');
  if (name === undefined) throw new MultipartError('malformed_multipart', 'multipart part has no name');
  const extended = parsed.params.get('filename*');
  const filename = (extended === undefined ? undefined : decodeExtendedValue(extended)) ?? parsed.params.get('filename') ?? null;
  return { name, filename, contentType: contentType === '' ? null : contentType };
}

interface Parameterized {
  value: string;
  params: Map<string, string>;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z/]+$/;

/**
 * Reads `value; key=token; key="quoted"` (Content-Type, Content-Disposition). Keys are
 * lowercased; the first of a repeated key wins. Inside quotes a backslash escapes only
 * `"` and `\`, so Windows paths sent unescaped survive. Returns null when malformed.
 */
function parseParameterized(text: string): Parameterized | null {
  const params = new Map<string, string>();
  let i = text.indexOf(';');
  const value = (i === -1 ? text : text.slice(0, i)).trim();
  if (!TOKEN.test(value)) return null;
  if (i === -1) return { value, params };
  const length = text.length;
  while (i < length) {
    // At a ';': skip it and whitespace (a trailing or doubled ';' is tolerated).
    i++;
    while (i < length && (text[i] === ' ' || text[i] === '\t')) i++;
    if (i >= length) break;
    if (text[i] === ';') continue;
    const equals = text.indexOf('=', i);
    if (equals === -1) return null;
    const key = text.slice(i, equals).trim().toLowerCase();
    if (!TOKEN.test(key)) return null;
    i = equals + 1;
    while (i < length && (text[i] === ' ' || text[i] === '\t')) i++;
    let param: string;
    if (text[i] === '"') {
      param = '';
      i++;
      for (;;) {
        if (i >= length) return null;
        const char = text[i];
        if (char === '"') break;
        if (char === '\\' && (text[i + 1] === '"' || text[i + 1] === '\\')) {
          param += text[i + 1];
          i += 2;
        } else {
          param += char;
          i++;
        }
      }
      i++;
      while (i < length && (text[i] === ' ' || text[i] === '\t')) i++;
      if (i < length && text[i] !== ';') return null;
    } else {
      const next = text.indexOf(';', i);
      param = (next === -1 ? text.slice(i) : text.slice(i, next)).trim();
      i = next === -1 ? length : next;
    }
    if (!params.has(key)) params.set(key, param);
  }
  return { value, params };
}

/** RFC 5987 `charset'language'percent-encoded`; undefined when unreadable, so `filename` is used. */
function decodeExtendedValue(text: string): string | undefined {
  const match = /^([\w!#$%&+\-^`{}~]+)'[\w-]*'(.*)$/.exec(text);
  if (match === null) return undefined;
  const charset = match[1]!.toLowerCase(); // both groups are required by the pattern
  try {
    if (charset === 'utf-8') return decodeURIComponent(match[2]!);
    if (charset === 'iso-8859-1') return unescape(match[2]!);
  } catch {
    return undefined;
  }
  return undefined;
}
