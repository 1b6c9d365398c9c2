/**
 * Reading upstream bodies safely: every body is either read to its end, or
 * discarded with its errors swallowed. A body destroyed without an error listener
 * raises RequestAbortedError as an uncaught exception and ends the process (issue 10,
 * defect 1): nothing in the asset area destroys a body any other way than `discard`.
 */
import { Readable, pipeline } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { AssetFetchError } from './errors.js';

/** Stops reading `body` and frees its connection; whatever it raises afterwards is ignored. */
export function discard(body: Readable): void {
  body.on('error', () => {});
  body.destroy();
}

/** The body as it should be stored: gunzipped when declared so or when it starts with the gzip magic. */
export async function* decodedBody(body: Readable, gzipDeclared: boolean): AsyncGenerator<Buffer> {
  const source = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  try {
    const head: Buffer[] = [];
    let headBytes = 0;
    while (headBytes < 2) {
      const step = await source.next();
      if (step.done) break;
      head.push(step.value);
      headBytes += step.value.length;
    }
    async function* replay(): AsyncGenerator<Buffer> {
      yield* head;
      for (;;) {
        const step = await source.next();
        if (step.done) return;
        yield step.value;
      }
    }
    const first = Buffer.concat(head);
    if (gzipDeclared || (first[0] === 0x1f && first[1] === 0x8b)) {
      // pipeline destroys every stage on an error or an early stop, so nothing leaks.
      yield* pipeline(Readable.from(replay()), createGunzip(), () => {});
    } else {
      yield* replay();
    }
  } finally {
    await source.return?.().catch(() => {});
    discard(body);
  }
}

/** A small body as text, refused past `limit` bytes. */
export async function readLimitedText(body: Readable, limit: number, what: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) throw new AssetFetchError('upstream_error', `${what} is larger than ${limit} bytes`);
      chunks.push(chunk);
    }
  } finally {
    discard(body);
  }
  return Buffer.concat(chunks).toString('utf8');
}
