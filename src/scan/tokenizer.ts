/**
 * The scanner's tokens as one array per field, for tests and debugging. The
 * scan reads the WebAssembly module's interleaved stream directly (wasm.ts);
 * this view copies it out, so it stays valid after the next scan.
 */
import { Buffer } from 'node:buffer';
import { scanText, kindAt, wordAt, startAt, endAt, lineAt } from './wasm.js';

export * from './kinds.js';

export interface Tokens {
  /** The source as the scanner read it: UTF-8 bytes. */
  bytes: Buffer;
  /** The source had more tokens (or bytes) than the scanner reads; only its beginning was read. */
  truncated: boolean;
  /** Index one past the last real token; tokens are 1..count-1 (0 and count.. are EOF). */
  count: number;
  kind: Uint8Array;
  /** Interned word id for names and keywords (words.ts), 0 for anything else. */
  word: Uint16Array;
  /** Byte offsets in `bytes`; for strings, of their contents. */
  start: Int32Array;
  end: Int32Array;
  /** 1-based line on which the token starts. */
  line: Int32Array;
}

export function tokenize(source: string): Tokens {
  const stream = scanText(source, false);
  const { tokens: data, count } = stream;
  const size = count + 1;
  const tokens: Tokens = {
    bytes: Buffer.from(stream.bytes),
    truncated: stream.truncated,
    count,
    kind: new Uint8Array(size),
    word: new Uint16Array(size),
    start: new Int32Array(size),
    end: new Int32Array(size),
    line: new Int32Array(size),
  };
  for (let i = 0; i < size; i++) {
    tokens.kind[i] = kindAt(data, i);
    tokens.word[i] = wordAt(data, i);
    tokens.start[i] = startAt(data, i);
    tokens.end[i] = endAt(data, i);
    tokens.line[i] = lineAt(data, i);
  }
  return tokens;
}

/** The text of token `i`. */
export function tokenText(tokens: Tokens, i: number): string {
  return tokens.bytes.toString('utf8', tokens.start[i], tokens.end[i]);
}
