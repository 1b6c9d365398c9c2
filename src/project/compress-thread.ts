/**
 * Brotli for project documents on a thread of its own, as a Duplex in place of zlib's
 * stream (`threadCompressor(fileBytes)`: JSON in, the stored bytes out).
 *
 * Why: zlib's streams compress in libuv's threads, but each piece they finish is handed
 * on by the thread that writes the JSON, which is busy writing the next chunk, so the
 * compressor waited for the writer and the two mostly took turns: booga's build took its
 * text's time plus most of the compression's, rocket-arena's (quality 5) its text's plus
 * all of it. A thread whose own event loop drives the stream never waits for the writer.
 * The writer only copies each chunk across and goes on; at most IN_FLIGHT_BYTES of JSON
 * are on their way at once (the Duplex's write waits past that), so a compressor that
 * falls behind holds the writer back instead of the text piling up; so does a reader
 * that falls behind (a slow disk), once COMPRESSOR_BUFFER_BYTES of compressed bytes wait
 * for it, as zlib's stream did, instead of the output piling up outside the heap's limit.
 *
 * One thread per calling thread (a pool worker, the CLI, a benchmark), started on first
 * use and shared by its documents (each a stream of its own, by id); it keeps no process
 * alive while no document is being compressed. If it fails, every stream open on it fails
 * with the reason and the next document starts a new one. A pool worker ended by a
 * deadline ends its compressor thread with it.
 */
import { Buffer } from 'node:buffer';
import { Duplex } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { COMPRESSOR_BUFFER_BYTES } from './compression.js';

/** JSON sent to the thread and not yet compressed, at most (then the writer waits): what zlib's stream held before it pushed back. */
export const IN_FLIGHT_BYTES = COMPRESSOR_BUFFER_BYTES;

export type ToCompressor =
  | { type: 'open'; id: number; fileBytes: number }
  | { type: 'chunk'; id: number; bytes: Uint8Array }
  | { type: 'end'; id: number }
  | { type: 'destroy'; id: number };

export type FromCompressor =
  | { type: 'consumed'; id: number; bytes: number; buffer: ArrayBuffer }
  | { type: 'data'; id: number; bytes: Uint8Array }
  | { type: 'end'; id: number }
  | { type: 'error'; id: number; message: string };

interface Open {
  onMessage(message: FromCompressor): void;
  fail(error: Error): void;
}

/** A compressor thread and the streams open on it (a thread that ends fails its own streams, never a newer thread's). */
interface CompressorThread {
  worker: Worker;
  open: Map<number, Open>;
}

let thread: CompressorThread | null = null;
let nextId = 1;
/**
 * Chunks' memory the thread gave back, reused for the next chunks: moved to the thread and
 * left there, it was freed only by that thread's rare collections (the 200k place's
 * build peaked 40 MB higher). At most what can be in flight at once.
 */
const spare: ArrayBuffer[] = [];
const MAX_SPARE = 32;

/** `chunk` copied into memory of its own (a spare one when one is large enough), to be moved to the thread. */
function copyOf(chunk: Uint8Array): Uint8Array<ArrayBuffer> {
  const index = spare.findIndex((buffer) => buffer.byteLength >= chunk.length);
  const buffer = index === -1 ? new ArrayBuffer(chunk.length) : spare.splice(index, 1)[0]!;
  const bytes = new Uint8Array(buffer, 0, chunk.length);
  bytes.set(chunk);
  return bytes;
}

function compressorThread(): CompressorThread {
  if (thread) return thread;
  const worker = new Worker(new URL('./compress-worker.js', import.meta.url), {
    // What it holds is native (Brotli's window and tables) or in flight (bounded above).
    resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 8 },
    // None of the process's flags: some (--input-type, --eval's) refuse a worker's file.
    execArgv: [],
  });
  const started: CompressorThread = { worker, open: new Map() };
  worker.on('message', (message: FromCompressor) => started.open.get(message.id)?.onMessage(message));
  const gone = (error: Error): void => {
    if (thread === started) thread = null;
    for (const stream of [...started.open.values()]) stream.fail(error);
  };
  worker.on('error', gone);
  worker.on('exit', (code) => gone(new Error(`the document compressor's thread ended (exit code ${code})`)));
  worker.unref();
  return (thread = started);
}

/** A Duplex that compresses a document's JSON as `documentCompressor(fileBytes)` would, on the compressor's thread. */
export function threadCompressor(fileBytes: number): Duplex {
  const { worker, open } = compressorThread();
  const id = nextId++;
  let inFlight = 0;
  // Compressed bytes wait for the reader past the readable side's mark: then the writer waits too.
  let readerBehind = false;
  let blocked: (() => void) | null = null;
  let finished: (() => void) | null = null;
  let closed = false;
  const close = (): void => {
    if (closed) return;
    closed = true;
    open.delete(id);
    if (open.size === 0) worker.unref();
  };
  const mayWrite = (): boolean => inFlight <= IN_FLIGHT_BYTES && !readerBehind;
  const release = (): void => {
    if (!blocked || !mayWrite()) return;
    const callback = blocked;
    blocked = null;
    callback();
  };
  const duplex = new Duplex({
    // As zlib's stream held (compression.ts): a slow reader (a busy disk) holds the writer back
    // with at most this much compressed output waiting, besides what the JSON in flight becomes.
    readableHighWaterMark: COMPRESSOR_BUFFER_BYTES,
    write(chunk: Buffer, _encoding, callback) {
      // A copy of its own, moved across: the chunk's memory may be shared (Buffer's pool).
      const bytes = copyOf(chunk);
      inFlight += bytes.length;
      worker.postMessage({ type: 'chunk', id, bytes } satisfies ToCompressor, [bytes.buffer]);
      if (mayWrite()) callback();
      else blocked = callback;
    },
    final(callback) {
      finished = callback;
      worker.postMessage({ type: 'end', id } satisfies ToCompressor);
    },
    read() {
      readerBehind = false;
      release();
    },
    destroy(error, callback) {
      if (!closed) worker.postMessage({ type: 'destroy', id } satisfies ToCompressor);
      close();
      callback(error);
    },
  });
  open.set(id, {
    onMessage(message) {
      switch (message.type) {
        case 'consumed':
          inFlight -= message.bytes;
          if (spare.length < MAX_SPARE) spare.push(message.buffer);
          release();
          break;
        case 'data':
          if (!duplex.push(Buffer.from(message.bytes.buffer, message.bytes.byteOffset, message.bytes.length))) readerBehind = true;
          break;
        case 'end':
          close();
          finished?.();
          duplex.push(null);
          break;
        case 'error':
          duplex.destroy(new Error(`document compression failed: ${message.message}`));
          break;
      }
    },
    fail(error) {
      duplex.destroy(error);
    },
  });
  worker.ref();
  worker.postMessage({ type: 'open', id, fileBytes } satisfies ToCompressor);
  return duplex;
}

/** Ends the compressor's thread (its open streams fail; the next document starts a new one): for tests, and a process that wants it gone now. */
export async function endCompressorThread(): Promise<void> {
  const running = thread;
  if (running) await running.worker.terminate();
}
