/**
 * A streaming JSON writer: a value's JSON text in pieces, never as one string, so a
 * project document of any size is written with bounded memory (a whole-document
 * JSON.stringify failed with "Invalid string length" past 512 MiB, issue 10).
 *
 *   jsonChunks(value, n, replacer) pieces of about 64 KiB of exactly JSON.stringify(value, replacer)
 *   writeJsonFile(path, value, o)  those pieces into a new file (fsynced), optionally
 *                                  through a compressing transform, held to `maxBytes`
 *   writeChunksFile(path, chunks, o)  the same for JSON already in pieces (the project
 *                                  document's writer yields UTF-8 chunks)
 *
 * The value is walked with an explicit stack (no recursion, so no depth limit but the
 * heap) and follows JSON.stringify's rules: toJSON, undefined/function/symbol members
 * left out of objects and written as null in arrays, non-finite numbers as null, a
 * cycle or a BigInt is a TypeError. Atomic placement (temp file, rename) is the
 * caller's: the project store hands out the temp path and moves it into place.
 */
import { once } from 'node:events';
import { open, type FileHandle } from 'node:fs/promises';
import type { Duplex } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export const JSON_CHUNK_CHARS = 64 * 1024;

interface ArrayFrame { array: readonly unknown[]; index: number }
interface ObjectFrame { object: Record<string, unknown>; keys: string[]; index: number; first: boolean }
/** A string longer than a piece, written a piece at a time from `index`. */
interface StringFrame { text: string; index: number }
type Frame = ArrayFrame | ObjectFrame | StringFrame;

/** JSON.stringify's replacer function, called without its holder. */
export type JsonReplacer = (key: string, value: unknown) => unknown;

/**
 * Yields the JSON text of `value` in pieces of about `chunkChars` characters; their
 * concatenation is JSON.stringify(value, replacer) (the replacer is called as
 * `replacer(key, value)`, without its holder as `this`). A string longer than a piece is
 * escaped a piece at a time: its JSON whole can pass the longest string V8 makes.
 */
export function* jsonChunks(value: unknown, chunkChars = JSON_CHUNK_CHARS, replacer?: JsonReplacer): Generator<string, void, undefined> {
  const stack: Frame[] = [];
  const onPath = new Set<object>();
  let out = '';

  /** Writes a primitive (already prepared), or opens a container or a long string (pushing its frame). Returns false for what JSON leaves out. */
  const open = (item: unknown): boolean => {
    switch (typeof item) {
      case 'string':
        if (item.length <= chunkChars) { out += JSON.stringify(item); return true; }
        out += '"';
        stack.push({ text: item, index: 0 });
        return true;
      case 'number': out += Number.isFinite(item) ? String(item) : 'null'; return true;
      case 'boolean': out += item ? 'true' : 'false'; return true;
      case 'bigint': throw new TypeError('Do not know how to serialize a BigInt');
      case 'object': {
        if (item === null) { out += 'null'; return true; }
        if (item instanceof Number || item instanceof String || item instanceof Boolean) { out += JSON.stringify(item); return true; }
        if (onPath.has(item)) throw new TypeError('Converting circular structure to JSON');
        onPath.add(item);
        if (Array.isArray(item)) {
          out += '[';
          stack.push({ array: item, index: 0 });
        } else {
          out += '{';
          stack.push({ object: item as Record<string, unknown>, keys: Object.keys(item), index: 0, first: true });
        }
        return true;
      }
      default: return false; // undefined, function, symbol
    }
  };

  if (!open(prepared(value, '', replacer))) throw new TypeError('the value has no JSON text (undefined, a function or a symbol)');
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    if ('text' in frame) {
      // A slice never ends between the halves of a surrogate pair: escaped apart, each would be a lone \ud8xx.
      const { text } = frame;
      let to = Math.min(text.length, frame.index + chunkChars);
      if (to < text.length && isHighSurrogate(text.charCodeAt(to - 1)) && isLowSurrogate(text.charCodeAt(to))) to += to - 1 === frame.index ? 1 : -1;
      out += JSON.stringify(text.slice(frame.index, to)).slice(1, -1);
      frame.index = to;
      if (to === text.length) {
        out += '"';
        stack.pop();
      }
    } else if ('array' in frame) {
      if (frame.index < frame.array.length) {
        if (frame.index > 0) out += ',';
        const index = frame.index++;
        if (!open(prepared(frame.array[index], String(index), replacer))) out += 'null';
      } else {
        out += ']';
        stack.pop();
        onPath.delete(frame.array);
      }
    } else {
      let wrote = false;
      while (frame.index < frame.keys.length && !wrote) {
        const key = frame.keys[frame.index++]!;
        const member = prepared(frame.object[key], key, replacer);
        if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
        out += `${frame.first ? '' : ','}${JSON.stringify(key)}:`;
        frame.first = false;
        open(member);
        wrote = true;
      }
      if (!wrote) {
        out += '}';
        stack.pop();
        onPath.delete(frame.object);
      }
    }
    if (out.length >= chunkChars) {
      yield out;
      out = '';
    }
  }
  if (out.length > 0) yield out;
}

/** What JSON.stringify serialises in place of `value`: its toJSON result, when it has one, then the replacer's. */
function prepared(value: unknown, key: string, replacer: JsonReplacer | undefined): unknown {
  let item = value;
  if (item !== null && (typeof item === 'object' || typeof item === 'bigint') && typeof (item as { toJSON?: unknown }).toJSON === 'function') {
    item = (item as { toJSON(key: string): unknown }).toJSON(key);
  }
  return replacer ? replacer(key, item) : item;
}

const isHighSurrogate = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;

/** The file would pass `maxBytes`: nothing more is written, and the caller removes the file. */
export class JsonTooLargeError extends Error {
  override name = 'JsonTooLargeError';
  constructor(readonly maxBytes: number) {
    super(`the JSON text is larger than ${maxBytes} bytes`);
  }
}

export interface WriteJsonOptions {
  /** Most bytes the file may hold (as stored, after `encode`); past it JsonTooLargeError. */
  maxBytes?: number;
  /** A transform for the bytes on their way to disk, e.g. () => createGzip() (any Duplex: threadCompressor). */
  encode?: () => Duplex;
  /** File mode of the new file (default 0o644). */
  mode?: number;
}

export interface WrittenJson {
  /** Bytes in the file. */
  bytes: number;
  /** Bytes of JSON text (before `encode`). */
  jsonBytes: number;
}

/**
 * Writes `value`'s JSON to a new file at `path` (which must not exist), piece by piece
 * with back-pressure, and fsyncs it. On any failure the partial file is left for the
 * caller to remove (it owns the path).
 */
export async function writeJsonFile(path: string, value: unknown, options: WriteJsonOptions = {}): Promise<WrittenJson> {
  return writeChunksFile(path, jsonChunks(value), options);
}

/** Like writeJsonFile, for JSON text already in pieces (strings or UTF-8 bytes), taken one at a time. */
export async function writeChunksFile(path: string, chunks: Iterable<string | Uint8Array>, options: WriteJsonOptions = {}): Promise<WrittenJson> {
  const maxBytes = options.maxBytes ?? Infinity;
  let jsonBytes = 0;
  let bytes = 0;
  const text = (function* () {
    for (const chunk of chunks) {
      const encoded = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      jsonBytes += encoded.length;
      if (options.encode === undefined && jsonBytes > maxBytes) throw new JsonTooLargeError(maxBytes);
      yield encoded;
    }
  })();
  const handle = await open(path, 'wx', options.mode ?? 0o644);
  try {
    let tooLarge: JsonTooLargeError | undefined;
    const sink = async (source: AsyncIterable<Uint8Array>): Promise<void> => {
      for await (const chunk of source) {
        bytes += chunk.length;
        if (bytes > maxBytes) throw (tooLarge = new JsonTooLargeError(maxBytes));
        await writeAll(handle, chunk);
      }
    };
    try {
      await pumpChunks(text, options.encode?.(), sink);
    } catch (error) {
      // Through a transform, the sink's error may come back as the AbortError of the
      // streams torn down: the limit is still the reason.
      throw tooLarge ?? error;
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
  return { bytes, jsonBytes };
}

/**
 * Feeds `chunks` through `encode` (when given) into `sink`. The chunks are written to
 * the transform as they come, yielding to the event loop after each one: a
 * compressor on another thread (compress-thread.ts, or zlib's in libuv's threads)
 * compresses one chunk while the next is produced on this thread, instead of the two
 * taking turns (which a Readable piped into it amounts to), and what it finished is
 * passed on in that turn. Back-pressure still holds: past what the transform holds the
 * loop waits for it to drain. If the chunks throw, or the sink does, everything is
 * torn down and the error is thrown.
 */
export async function pumpChunks(
  chunks: Iterable<Uint8Array>, encode: Duplex | undefined, sink: (source: AsyncIterable<Uint8Array>) => Promise<void>,
): Promise<void> {
  if (!encode) {
    await sink((async function* () { for (const chunk of chunks) yield chunk; })());
    return;
  }
  const done = pipeline(encode, sink);
  // `done` settles when the pipeline ends or fails; the loop below stops on either.
  let ended = false;
  const settled = done.then(() => { ended = true; }, () => { ended = true; });
  // Iterated by hand so that a failed pipeline is seen before the next chunk is made:
  // after a sink error nothing more is produced, and that error is the one thrown.
  const iterator = chunks[Symbol.iterator]();
  try {
    while (!ended) {
      const next = iterator.next();
      if (next.done === true) break;
      if (encode.write(next.value)) await new Promise<void>((resolve) => setImmediate(resolve));
      else await Promise.race([once(encode, 'drain').then(() => undefined, () => undefined), settled]);
    }
  } catch (error) {
    encode.destroy(error instanceof Error ? error : new Error(String(error)));
    await settled;
    throw error;
  }
  if (ended) iterator.return?.(); // stopped early: let the source clean up
  else encode.end();
  await done;
}

async function writeAll(handle: FileHandle, chunk: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < chunk.length) offset += (await handle.write(chunk, offset, chunk.length - offset)).bytesWritten;
}
