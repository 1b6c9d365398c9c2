/**
 * Reading upstream bodies safely: every body is either read to its end, or
 * discarded with its errors swallowed. A body destroyed without an error listener
 * raises RequestAbortedError as an uncaught exception and ends the process (issue 10,
 * defect 1): nothing in the asset area destroys a body any other way than `discard`.
 */
import { Buffer } from 'node:buffer';
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

/** Bytes enough to tell a web page from an asset (`isWebPage`). */
export const PAGE_SNIFF_BYTES = 64;

// After an optional UTF-8 byte order mark (read as latin1: three characters).
const PAGE_START = /^(?:\xef\xbb\xbf)?[\t\n\f\r ]*<(?:!doctype[\t\n\f\r ]+html|html|head|body|title)(?:[\t\n\f\r />]|$)/i;

/**
 * Whether a body's first bytes are an HTML page: what a proxy, captive portal or
 * misrouted URL answers with 200. No asset Roblox serves starts that way (models and
 * animations in XML start with `<roblox` or `<?xml`; images, sounds and meshes are binary).
 */
export function isWebPage(head: Uint8Array): boolean {
  return PAGE_START.test(Buffer.from(head.buffer, head.byteOffset, Math.min(head.byteLength, PAGE_SNIFF_BYTES)).toString('latin1'));
}

/** `chunks` as they come, failing with `upstream_error` when they begin as a web page (`isWebPage`). */
export async function* refusingWebPages(chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const head: Buffer[] = [];
  let headBytes = 0;
  const check = (): void => {
    if (isWebPage(Buffer.concat(head))) throw new AssetFetchError('upstream_error', 'the host answered with a web page, not the asset');
  };
  for await (const chunk of chunks) {
    if (headBytes >= PAGE_SNIFF_BYTES) { yield chunk; continue; }
    head.push(chunk);
    headBytes += chunk.length;
    if (headBytes < PAGE_SNIFF_BYTES) continue;
    check();
    yield* head.splice(0);
  }
  if (headBytes < PAGE_SNIFF_BYTES) {
    check();
    yield* head;
  }
}
