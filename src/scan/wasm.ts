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
import {
  FINDING_FIELDS, FUNC_FIELDS, LOOP_FIELDS,
  TABLE_WORD_SLOTS, TABLE_WORD_KIND, TABLE_WORD_ROLES, TABLE_WORD_HEAD, TABLE_WORD_TAIL, TABLE_WORD_LENGTH, TABLE_WORD_LONG_OFFSET,
  TABLE_WORD_LONG_CHARS, TABLE_HEAD_MASK, TABLE_TAIL_MASK, TABLE_WORD_IDS, TABLE_MAX_WORDS, TABLE_MAX_LONG_CHARS, TABLE_MAX_KEYED_LENGTH,
  TABLE_BITS_SLOT, TABLE_MAX_TOKENS, TABLE_SLOT_COUNT,
  RESULT_TOKEN_COUNT, RESULT_TRUNCATED, RESULT_LAST_LINE, RESULT_TOKENS, RESULT_FINDINGS, RESULT_FINDING_COUNT, RESULT_FUNCS,
  RESULT_FUNC_COUNT, RESULT_LOOPS, RESULT_LOOP_COUNT, RESULT_SLOT_COUNT,
} from './constants.js';

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

// Token accessors over ScanOutput.tokens; a token outside the view (e.g. the one before the first) reads as 0: EOF, no word.
export function kindAt(tokens: Int32Array, token: number): number {
  return (tokens[token << 2] ?? 0) & 0xff;
}

export function wordAt(tokens: Int32Array, token: number): number {
  return (tokens[token << 2] ?? 0) >>> 8;
}

export function startAt(tokens: Int32Array, token: number): number {
  return tokens[(token << 2) + 1] ?? 0;
}

export function endAt(tokens: Int32Array, token: number): number {
  return tokens[(token << 2) + 2] ?? 0;
}

export function lineAt(tokens: Int32Array, token: number): number {
  return tokens[(token << 2) + 3] ?? 0;
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

/** One instance of the module and the host's views of it; replaced whole when the instance is. */
interface Scanner {
  exports: ScannerExports;
  /** At most this many tokens of one source are read (the module's limit). */
  maxTokens: number;
  /** Where the module puts each scan's results (i32 index in memory). */
  resultsAt: number;
  /** The memory the views below were made over (growing detaches it). */
  buffer: ArrayBuffer;
  heap: Buffer;
  words: Int32Array;
}

function instantiate(): Scanner {
  const exports = new WebAssembly.Instance(MODULE, {}).exports as unknown as ScannerExports;
  const scanner = { exports, maxTokens: 0, resultsAt: 0 } as Scanner;
  refreshViews(scanner);
  const at = exports.tables() >> 2;
  const slot = scanner.words.subarray(at, at + TABLE_SLOT_COUNT);
  const table = WORD_TABLE;
  if (table.kind.length > slot[TABLE_MAX_WORDS]! || table.longChars.length > slot[TABLE_MAX_LONG_CHARS]!
    || table.headMask.length > slot[TABLE_MAX_KEYED_LENGTH]! || slot[TABLE_BITS_SLOT] !== TABLE_BITS) {
    throw new Error('scan word table does not fit the WebAssembly scanner');
  }
  const { heap, words } = scanner;
  heap.set(table.slots, slot[TABLE_WORD_SLOTS]);
  heap.set(table.kind, slot[TABLE_WORD_KIND]);
  heap.set(table.roles, slot[TABLE_WORD_ROLES]);
  words.set(table.head, slot[TABLE_WORD_HEAD]! >> 2);
  words.set(table.tail, slot[TABLE_WORD_TAIL]! >> 2);
  words.set(table.length, slot[TABLE_WORD_LENGTH]! >> 2);
  words.set(table.longOffset, slot[TABLE_WORD_LONG_OFFSET]! >> 2);
  heap.set(table.longChars, slot[TABLE_WORD_LONG_CHARS]);
  words.set(table.headMask, slot[TABLE_HEAD_MASK]! >> 2);
  words.set(table.tailMask, slot[TABLE_TAIL_MASK]! >> 2);
  words.set(POSITIONAL_WORD_IDS, slot[TABLE_WORD_IDS]! >> 2);
  scanner.maxTokens = slot[TABLE_MAX_TOKENS]!;
  exports.configure(table.seed, table.longest);
  scanner.resultsAt = exports.results() >> 2;
  return scanner;
}

/** Views over the module's memory, made again after it grows (growing detaches the old buffer). */
function refreshViews(scanner: Scanner): void {
  scanner.buffer = scanner.exports.memory.buffer;
  scanner.heap = Buffer.from(scanner.buffer);
  scanner.words = new Int32Array(scanner.buffer);
}

/** Views that are current: after a call that may have grown the memory. */
function current(scanner: Scanner): Scanner {
  if (scanner.exports.memory.buffer !== scanner.buffer) refreshViews(scanner);
  return scanner;
}

let scanner = instantiate();

/** At most this many tokens of one source are read. */
export function maxScannedTokens(): number {
  return scanner.maxTokens;
}

/**
 * Scans a source of `length` UTF-8 bytes, which `write` puts at `offset` of
 * `memory`. `localPlayerIsNil` says the script runs on the server.
 */
function run(length: number, write: (memory: Buffer, offset: number, room: number) => number, localPlayerIsNil: boolean): ScanOutput {
  const room = Math.min(length, MAX_SOURCE_BYTES);
  const at = scanner.exports.reserve(room);
  const written = write(current(scanner).heap, at, room);
  try {
    scanner.exports.scan(written, localPlayerIsNil ? 1 : 0);
  } catch {
    // The module traps only when its memory cannot grow (the host is out of
    // memory): start a fresh instance and report the source as not read.
    scanner = instantiate();
    return unread(length);
  }
  const { heap, words, resultsAt } = current(scanner);
  const r = words.subarray(resultsAt, resultsAt + RESULT_SLOT_COUNT);
  const count = r[RESULT_TOKEN_COUNT]!;
  const view = (slot: number, items: number, stride: number): Int32Array => words.subarray(r[slot]! >> 2, (r[slot]! >> 2) + items * stride);
  return {
    bytes: heap.subarray(at, at + written),
    count,
    truncated: r[RESULT_TRUNCATED] !== 0 || written < length,
    lastLine: r[RESULT_LAST_LINE]!,
    tokens: view(RESULT_TOKENS, count + 4, TOKEN_STRIDE),
    findings: view(RESULT_FINDINGS, r[RESULT_FINDING_COUNT]!, FINDING_STRIDE),
    funcs: view(RESULT_FUNCS, r[RESULT_FUNC_COUNT]!, FUNC_STRIDE),
    loops: view(RESULT_LOOPS, r[RESULT_LOOP_COUNT]!, LOOP_STRIDE),
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
    const at = scanner.exports.reserve(part.length);
    current(scanner).heap.set(part, at);
    newlines += scanner.exports.countNewlines(part.length);
  }
  releaseLargeMemory();
  return source[source.length - 1] === 10 ? newlines : newlines + 1;
}

/** The scanner module's memory now, in bytes. */
export function scannerMemoryBytes(): number {
  return scanner.exports.memory.buffer.byteLength;
}

/** Lets go of memory grown for an unusually large script. */
export function releaseLargeMemory(): void {
  if (scanner.exports.memory.buffer.byteLength > RETAINED_MEMORY) scanner = instantiate();
}
