/**
 * The host side of the WebAssembly scanner (assembly/): loads the module
 * built next to this file, copies in the word table once, and runs one
 * script at a time. The lexer and the token walk run in WebAssembly because
 * they touch every byte of every script: compiled ahead of time, the loop
 * over a source's bytes is several times faster than the same loop in
 * JavaScript. What is rare (confirming candidate loops, writing messages)
 * stays in JavaScript and reads the results in the module's memory.
 *
 * A scan's results are views into that memory, valid until the next scan.
 */
import { readFileSync } from 'node:fs';
import { Buffer } from 'node:buffer';
import { WORD_TABLE, POSITIONAL_WORD_IDS, TABLE_BITS } from './words.js';
import { FINDING_FIELDS, FUNC_FIELDS, LOOP_FIELDS } from './constants.js';

interface ScannerExports {
  memory: WebAssembly.Memory;
  tables(): number;
  configure(seed: number, longestWord: number): void;
  results(): number;
  reserve(n: number): number;
  scan(n: number, localPlayerIsNil: number): void;
  countNewlines(n: number): number;
}

/** The results of one scan; every view is valid until the next. */
export interface ScanOutput {
  /** The source's UTF-8 bytes (followed by zero padding). */
  bytes: Buffer;
  /** Index one past the last real token; tokens are 1..count-1, 0 and count.. are EOF. */
  count: number;
  /** The source had more tokens than the scanner reads; only its beginning was scanned. */
  truncated: boolean;
  /** The line the source ends on. */
  lastLine: number;
  /** TOKEN_STRIDE i32s per token: kind | word << 8, start and end byte offsets, line (see the accessors). */
  tokens: Int32Array;
  /** FINDING_STRIDE i32s per finding in the order found: code index, line, subject token. */
  findings: Int32Array;
  /** FUNC_STRIDE i32s per function: `function` token, name token, last name token, closing token, parent record, yields. */
  funcs: Int32Array;
  /** LOOP_STRIDE i32s per candidate loop: keyword token, closing token, function record. */
  loops: Int32Array;
}

export const TOKEN_STRIDE = 4;
export const FINDING_STRIDE = FINDING_FIELDS;
export const FUNC_STRIDE = FUNC_FIELDS;
export const LOOP_STRIDE = LOOP_FIELDS;

// Token accessors over ScanOutput.tokens.
export function kindAt(tokens: Int32Array, token: number): number {
  return tokens[token << 2] & 0xff;
}

export function wordAt(tokens: Int32Array, token: number): number {
  return tokens[token << 2] >>> 8;
}

export function startAt(tokens: Int32Array, token: number): number {
  return tokens[(token << 2) + 1];
}

export function endAt(tokens: Int32Array, token: number): number {
  return tokens[(token << 2) + 2];
}

export function lineAt(tokens: Int32Array, token: number): number {
  return tokens[(token << 2) + 3];
}

/**
 * At most this many bytes of one source are scanned (the decoder allows
 * strings of 256 MB); a longer Source is scanned up to here and reported as
 * truncated, like a source with more tokens than the scanner reads.
 */
export const MAX_SOURCE_BYTES = 32 << 20;

/** The module's memory past this size is given back after a scan, by starting a fresh instance. */
const RETAINED_MEMORY = 64 << 20;

const MODULE = new WebAssembly.Module(readFileSync(new URL('./scanner.wasm', import.meta.url)));

let scanner: ScannerExports;
let maxTokens = 0;
/** Where the module puts each scan's result fields (i32 index in memory). */
let resultsAt = 0;
let memoryBuffer: ArrayBuffer;
let heap: Buffer;
let words: Int32Array;

function instantiate(): void {
  scanner = new WebAssembly.Instance(MODULE, {}).exports as unknown as ScannerExports;
  refreshViews();
  const at = scanner.tables() >> 2;
  const [slots, kind, roles, head, tail, length, longOffset, longChars, headMask, tailMask, ids, maxWords, maxLong, maxKeyed, tableBits, tokenLimit]
    = words.subarray(at, at + 16);
  const table = WORD_TABLE;
  if (table.kind.length > maxWords || table.longChars.length > maxLong || table.headMask.length > maxKeyed || tableBits !== TABLE_BITS) {
    throw new Error('scan word table does not fit the WebAssembly scanner');
  }
  heap.set(table.slots, slots);
  heap.set(table.kind, kind);
  heap.set(table.roles, roles);
  words.set(table.head, head >> 2);
  words.set(table.tail, tail >> 2);
  words.set(table.length, length >> 2);
  words.set(table.longOffset, longOffset >> 2);
  heap.set(table.longChars, longChars);
  words.set(table.headMask, headMask >> 2);
  words.set(table.tailMask, tailMask >> 2);
  words.set(POSITIONAL_WORD_IDS, ids >> 2);
  maxTokens = tokenLimit;
  scanner.configure(table.seed, table.longest);
  resultsAt = scanner.results() >> 2;
}

/** Views over the module's memory, made again after it grows (growing detaches the old buffer). */
function refreshViews(): void {
  memoryBuffer = scanner.memory.buffer;
  heap = Buffer.from(memoryBuffer);
  words = new Int32Array(memoryBuffer);
}

instantiate();

/** At most this many tokens of one source are read. */
export function maxScannedTokens(): number {
  return maxTokens;
}

/**
 * Scans a source of `length` UTF-8 bytes, which `write` puts at `offset` of
 * `memory`. `localPlayerIsNil` says the script runs on the server.
 */
function run(length: number, write: (memory: Buffer, offset: number, room: number) => number, localPlayerIsNil: boolean): ScanOutput {
  const room = Math.min(length, MAX_SOURCE_BYTES);
  const at = scanner.reserve(room);
  if (scanner.memory.buffer !== memoryBuffer) refreshViews();
  const written = write(heap, at, room);
  try {
    scanner.scan(written, localPlayerIsNil ? 1 : 0);
  } catch {
    // The module traps only when its memory cannot grow (the host is out of
    // memory): start a fresh instance and report the source as not read.
    instantiate();
    return unread(length);
  }
  if (scanner.memory.buffer !== memoryBuffer) refreshViews();
  const r = words.subarray(resultsAt, resultsAt + 12);
  const count = r[0];
  return {
    bytes: heap.subarray(at, at + written),
    count,
    truncated: r[2] !== 0 || written < length,
    lastLine: r[3],
    tokens: words.subarray(r[4] >> 2, (r[4] >> 2) + (count + 4) * TOKEN_STRIDE),
    findings: words.subarray(r[6] >> 2, (r[6] >> 2) + r[7] * FINDING_STRIDE),
    funcs: words.subarray(r[8] >> 2, (r[8] >> 2) + r[9] * FUNC_STRIDE),
    loops: words.subarray(r[10] >> 2, (r[10] >> 2) + r[11] * LOOP_STRIDE),
  };
}

const NO_TOKENS = new Int32Array(8 * TOKEN_STRIDE);

/** The result of a scan that could not run: no tokens, no findings, truncated. */
function unread(length: number): ScanOutput {
  const empty = new Int32Array(0);
  return { bytes: Buffer.alloc(0), count: 1, truncated: length > 0, lastLine: 1, tokens: NO_TOKENS, findings: empty, funcs: empty, loops: empty };
}

/** Scans `source` (encoded as UTF-8). */
export function scanText(source: string, localPlayerIsNil: boolean): ScanOutput {
  const length = Buffer.byteLength(source, 'utf8');
  // Writes whole characters only, so a source cut at MAX_SOURCE_BYTES ends cleanly.
  return run(length, (memory, offset, room) => memory.write(source, offset, room, 'utf8'), localPlayerIsNil);
}

/** Scans UTF-8 bytes as they are (invalid sequences start no token, as their replacement characters would not). */
export function scanBytes(source: Uint8Array, localPlayerIsNil: boolean): ScanOutput {
  return run(source.length, (memory, offset, room) => {
    memory.set(room < source.length ? source.subarray(0, room) : source, offset);
    return room;
  }, localPlayerIsNil);
}

/**
 * Lines as an editor counts them, over UTF-8 bytes: a final line without a
 * newline counts, an empty source has none. Counted in WebAssembly sixteen
 * bytes at a time (a JavaScript loop over a place's sources costs as much as
 * decoding it).
 */
export function countSourceLines(source: Uint8Array): number {
  if (source.length === 0) return 0;
  let newlines = 0;
  for (let from = 0; from < source.length; from += MAX_SOURCE_BYTES) {
    const part = source.subarray(from, from + MAX_SOURCE_BYTES);
    const at = scanner.reserve(part.length);
    if (scanner.memory.buffer !== memoryBuffer) refreshViews();
    heap.set(part, at);
    newlines += scanner.countNewlines(part.length);
  }
  releaseLargeMemory();
  return source[source.length - 1] === 10 ? newlines : newlines + 1;
}

/** The scanner module's memory now, in bytes. */
export function scannerMemoryBytes(): number {
  return scanner.memory.buffer.byteLength;
}

/** Lets go of memory grown for an unusually large script. */
export function releaseLargeMemory(): void {
  if (scanner.memory.buffer.byteLength > RETAINED_MEMORY) instantiate();
}
