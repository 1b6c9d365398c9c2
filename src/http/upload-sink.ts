/**
 * Streams an upload to a temporary file while computing its SHA-256, chunk by chunk,
 * so the body is never held whole. Writes are queued and flushed in order; `write`
 * reports back-pressure the way a Node stream does, so the transport can pause.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

export interface UploadResult {
  /** The temporary file; the caller moves it away (or `abort` removes it). */
  path: string;
  /** Lowercase hex SHA-256 of the bytes written. */
  sha256: string;
  size: number;
}

export interface UploadSink {
  /** Where the bytes are being written. */
  readonly path: string;
  /**
   * Queues a chunk and hashes it. The chunk is copied first, so the caller may reuse or
   * lose its memory at once (uWS neuters onData buffers when the callback returns).
   * Returns false when the queue is full: pause the source until the drain callback.
   * Throws if the sink has failed (the write error), finished or been aborted.
   */
  write(chunk: Uint8Array): boolean;
  /**
   * Sets the callback run each time the queue drains after `write` returned false.
   * It also runs when a write fails, so a paused source wakes up to find out.
   */
  onDrain(callback: () => void): void;
  /** Flushes, fsyncs and closes the file. Rejects with the write error if one occurred. */
  finish(): Promise<UploadResult>;
  /**
   * Stops writing and removes the temporary file. Safe to call more than once, and after
   * `finish` (it then removes the file unless it has been moved away): call it in a
   * `finally` so no temp file outlives its request.
   */
  abort(): Promise<void>;
}

export interface UploadSinkOptions {
  /** Queued bytes above which `write` asks the source to pause. */
  highWaterMark?: number;
}

export class UploadSinkClosedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UploadSinkClosedError';
  }
}

const DEFAULT_HIGH_WATER_MARK = 1024 * 1024;

/** Creates `dir` if needed and opens a uniquely named temporary file in it. */
export function createUploadSink(dir: string, options: UploadSinkOptions = {}): UploadSink {
  const highWaterMark = options.highWaterMark ?? DEFAULT_HIGH_WATER_MARK;
  const path = join(dir, `upload-${randomBytes(12).toString('hex')}.tmp`);
  const hash = createHash('sha256');
  let size = 0;
  let queue: Buffer[] = [];
  let queuedBytes = 0;
  let needDrain = false;
  let drainCallback: (() => void) | null = null;
  let failure: unknown = null;
  let closed = false;
  let state: 'open' | 'finishing' | 'finished' | 'aborted' = 'open';
  let pumping: Promise<void> | null = null;
  let finishing: Promise<UploadResult> | null = null;
  let aborting: Promise<void> | null = null;

  const opened: Promise<FileHandle> = mkdir(dir, { recursive: true }).then(() => open(path, 'wx', 0o600));
  opened.catch(fail);

  function fail(error: unknown): void {
    if (failure === null) failure = error;
    queue = [];
    queuedBytes = 0;
    drain();
  }

  function drain(): void {
    if (!needDrain) return;
    needDrain = false;
    drainCallback?.();
  }

  function write(chunk: Uint8Array): boolean {
    if (failure !== null) throw failure; // eslint-disable-line @typescript-eslint/only-throw-error -- rethrows the stored failure as it came
    if (state !== 'open') throw new UploadSinkClosedError(`upload sink is ${state}`);
    if (chunk.byteLength === 0) return queuedBytes < highWaterMark;
    const copy = Buffer.from(chunk); // copies: the source memory may be reused after we return
    hash.update(copy);
    size += copy.length;
    queue.push(copy);
    queuedBytes += copy.length;
    pumping ??= pump();
    if (queuedBytes < highWaterMark) return true;
    needDrain = true;
    return false;
  }

  async function pump(): Promise<void> {
    try {
      const handle = await opened;
      while (queue.length > 0 && failure === null && state !== 'aborted') {
        const chunk = queue[0]!; // queue.length > 0 (the loop's condition)
        await writeAll(handle, chunk);
        // A failure or abort while writing has already emptied the queue.
        if (queue[0] !== chunk) continue;
        queue.shift();
        queuedBytes -= chunk.length;
        if (queuedBytes < highWaterMark) drain();
      }
    } catch (error) {
      fail(error);
    } finally {
      pumping = null;
    }
  }

  async function flushed(): Promise<void> {
    while (pumping !== null) await pumping;
  }

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    const handle = await opened.catch(() => null);
    await handle?.close().catch(() => {});
  }

  function finish(): Promise<UploadResult> {
    finishing ??= (async () => {
      if (state === 'aborted') throw new UploadSinkClosedError('upload sink is aborted');
      state = 'finishing';
      try {
        await flushed();
        if (failure !== null) throw failure; // eslint-disable-line @typescript-eslint/only-throw-error -- rethrows the stored failure as it came
        const handle = await opened;
        // Durable before the caller renames it into a store.
        await handle.sync();
        closed = true;
        await handle.close();
        if (state !== 'finishing') throw new UploadSinkClosedError('upload sink is aborted');
        state = 'finished';
        return { path, sha256: hash.digest('hex'), size };
      } catch (error) {
        // Clean up here unless an abort already is (it waits for this to settle).
        if (aborting === null) {
          state = 'aborted';
          await abort();
        }
        throw error;
      }
    })();
    return finishing;
  }

  function abort(): Promise<void> {
    aborting ??= (async () => {
      const pendingFinish = state === 'finishing' ? finishing : null;
      state = 'aborted';
      queue = [];
      queuedBytes = 0;
      await pendingFinish?.catch(() => {});
      await flushed();
      await close();
      await rm(path, { force: true }).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOTDIR') throw error; // the directory never existed: nothing to remove
      });
    })();
    return aborting;
  }

  return {
    path,
    write,
    onDrain(callback) {
      drainCallback = callback;
    },
    finish,
    abort,
  };
}

async function writeAll(handle: FileHandle, chunk: Buffer): Promise<void> {
  let offset = 0;
  while (offset < chunk.length) {
    const { bytesWritten } = await handle.write(chunk, offset, chunk.length - offset);
    offset += bytesWritten;
  }
}
