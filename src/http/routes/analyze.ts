/**
 * POST /api-rbxl/import/rbxl/analyze: streams the multipart `file` part to a temp
 * file while hashing it, then reuses the stored analysis of that hash or has a
 * worker decode and analyse it. The body is never held whole in memory, and every
 * path out (error, abort, reuse) removes the temp file.
 */
import { basename } from 'node:path';
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { createMultipartParser, isMultipartError, parseBoundary, type MultipartError } from '../multipart.js';
import { createUploadSink, type UploadSink } from '../upload-sink.js';
import { badRequest, HttpError, tooLarge, unauthorized } from '../errors.js';
import { sendError, sendJson, type Exchange } from '../exchange.js';
import type { ServiceContext } from '../context.js';
import { isPreviewHash, type Preview } from '../../store/previews.js';

const FALLBACK_FILE_NAME = 'upload.rbxl';

function multipartStatus(error: MultipartError, maxUploadBytes: number): HttpError {
  if (error.code === 'not_multipart') return new HttpError(415, 'unsupported_media_type', error.message);
  if (error.code === 'file_too_large') return tooLarge(maxUploadBytes);
  return badRequest(error.code, error.message);
}

/** Keeps only a base name a person would recognise; never a path, never control characters. */
export function cleanFileName(raw: string | null): string {
  const name = basename((raw ?? '').replace(/\\/g, '/')).replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, 255);
  return name === '' ? FALLBACK_FILE_NAME : name;
}

export function handleAnalyze(ctx: ServiceContext, res: HttpResponse, req: HttpRequest): void {
  const exchange = ctx.begin(res, req);
  const header = (name: string): string => req.getHeader(name);
  try {
    exchange.user = ctx.authenticate(header);
    if (!exchange.user) throw unauthorized();
    let boundary: string;
    try {
      boundary = parseBoundary(header('content-type'));
    } catch (error) {
      throw isMultipartError(error) ? multipartStatus(error, ctx.config.maxUploadBytes) : error;
    }
    const lengthHeader = header('content-length');
    if (lengthHeader === '') {
      throw new HttpError(411, 'length_required', 'send the upload with a Content-Length header');
    }
    const declared = Number(lengthHeader);
    if (!/^\d+$/.test(lengthHeader)) throw badRequest('bad_content_length', 'Content-Length is not a number');
    // The multipart framing around the file is small; allow for it on top of the file limit.
    if (declared > ctx.config.maxUploadBytes + 64 * 1024) throw tooLarge(ctx.config.maxUploadBytes);
    receiveUpload(ctx, exchange, boundary, declared);
  } catch (error) {
    sendError(exchange, error, ctx.logError);
  }
}

function receiveUpload(ctx: ServiceContext, exchange: Exchange, boundary: string, declared: number): void {
  const { res } = exchange;
  let sink: UploadSink | null = null;
  let fileName: string | null = null;
  let sawFile = false;
  let inFile = false;
  let failed = false;
  let bodyDone = false;
  let paused = false;
  /** Once analysis has the temp file, it (not an abort) decides when the file goes. */
  let handedOff = false;

  const fail = (error: unknown): void => {
    if (failed) return;
    failed = true;
    exchange.bodyUnread = !bodyDone;
    // A socket left paused by back-pressure would never take the connection's next request.
    if (paused && !exchange.finished) { paused = false; res.resume(); }
    // Answer once the temp file is gone, so no answer leaves one behind.
    void Promise.resolve(sink?.abort())
      .catch(ctx.logError)
      .finally(() => sendError(exchange, error, ctx.logError));
  };
  exchange.onAbort.push(() => {
    failed = true;
    // Others uploading the same bytes may be waiting on an analysis that reads this file.
    if (!handedOff) void sink?.abort();
  });

  const parser = createMultipartParser(boundary, {
    onPartBegin(part) {
      if (part.name === 'file' && part.filename !== null && !sawFile) {
        sawFile = true;
        inFile = true;
        fileName = cleanFileName(part.filename);
        sink = createUploadSink(ctx.uploadDir);
        sink.onDrain(() => {
          if (paused && !exchange.finished) { paused = false; res.resume(); }
        });
      } else {
        inFile = false;
      }
    },
    onPartData(data) {
      if (inFile && sink && !sink.write(data) && !paused) { paused = true; res.pause(); }
    },
    onPartEnd() {
      inFile = false;
    },
  }, { maxFileBytes: ctx.config.maxUploadBytes });

  res.onData((chunk, isLast) => {
    if (failed) return;
    exchange.bytesIn += chunk.byteLength;
    try {
      if (exchange.bytesIn > declared) throw badRequest('bad_content_length', 'body is longer than its Content-Length');
      parser.write(new Uint8Array(chunk));
      if (!isLast) return;
      bodyDone = true;
      parser.end();
    } catch (error) {
      fail(isMultipartError(error) ? multipartStatus(error, ctx.config.maxUploadBytes) : error);
      return;
    }
    if (!sink) {
      fail(badRequest('missing_file', 'the form has no `file` part with a file in it'));
      return;
    }
    const upload = sink;
    void finishUpload(ctx, exchange, upload, fileName ?? FALLBACK_FILE_NAME, () => { handedOff = true; }).catch(fail);
  });
}

async function finishUpload(ctx: ServiceContext, exchange: Exchange, sink: UploadSink, fileName: string, handOff: () => void): Promise<void> {
  let preview: Preview;
  try {
    const { path, sha256, size } = await sink.finish();
    if (exchange.aborted) return;
    if (!isPreviewHash(sha256)) throw new Error('upload hash is not a SHA-256');
    handOff();
    preview = await ctx.analyses.analyze({ path, sha256, size, fileName, user: exchange.user! });
  } finally {
    await sink.abort(); // removes the temp file unless the store took it, before anything is answered
  }
  // A reused analysis carries this uploader's own file name, never an earlier uploader's.
  sendJson(exchange, 200, { preview_hash: preview.hash, report: { ...(preview.report as object), file_name: fileName } });
}
