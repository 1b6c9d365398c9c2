/**
 * POST /api-rbxl/import/rbxl/analyze: streams the multipart `file` part to a temp
 * file while hashing it (pausing the socket while the disk catches up), then hands it
 * to the analysis service. The body is never held whole in memory, and every path out
 * (error, abort, reuse) removes the temp file before anything is answered.
 */
import type { HttpRequest } from 'uWebSockets.js';
import { createMultipartParser, isMultipartError, parseBoundary, type MultipartError } from '../multipart.js';
import { createUploadSink, type UploadSink } from '../upload-sink.js';
import { badRequest, HttpError, tooLarge } from '../errors.js';
import { sendJson, type Exchange } from '../exchange.js';
import type { HttpContext } from '../context.js';
import type { RouteHandler } from '../route.js';
import { isPreviewHash } from '../../store/previews.js';
import { cleanFileName, FALLBACK_FILE_NAME } from '../../service/index.js';

function multipartStatus(error: MultipartError, maxUploadBytes: number): HttpError {
  if (error.code === 'not_multipart') return new HttpError(415, 'unsupported_media_type', error.message);
  if (error.code === 'file_too_large') return tooLarge(maxUploadBytes);
  return badRequest(error.code, error.message);
}

/** The multipart framing around the file is small; it is allowed for on top of the file limit. */
const FRAMING_BYTES = 64 * 1024;

export function analyzeRoute(ctx: HttpContext): RouteHandler {
  const { maxUploadBytes } = ctx.config;
  return async (exchange: Exchange, req: HttpRequest) => {
    let boundary: string;
    try {
      boundary = parseBoundary(req.getHeader('content-type'));
    } catch (error) {
      throw isMultipartError(error) ? multipartStatus(error, maxUploadBytes) : error;
    }
    const lengthHeader = req.getHeader('content-length');
    if (lengthHeader === '') throw new HttpError(411, 'length_required', 'send the upload with a Content-Length header');
    const declared = Number(lengthHeader); // digits: the route wrapper checked the framing
    if (declared > maxUploadBytes + FRAMING_BYTES) throw tooLarge(maxUploadBytes);
    // The disk's room for the upload is held from here until it is stored or given up on (the finally below).
    const releaseRoom = ctx.service.admitUpload(exchange.user!, declared);
    // The user's share is a listing of the store: it runs while the body arrives (uWS wants the body read from this tick on).
    const share = ctx.service.checkShare(exchange.user!, declared);
    share.catch(() => undefined); // awaited below; a refusal also ends the upload early

    const held: { sink: UploadSink | null } = { sink: null };
    /** Once analysis has the temp file, it (not an abort) decides when the file goes. */
    let handedOff = false;
    exchange.onAbort.push(() => {
      // Others uploading the same bytes may be waiting on an analysis that reads this file.
      if (!handedOff) void held.sink?.abort();
    });
    let answer: object;
    try {
      const fileName = await receiveUpload(ctx, exchange, boundary, declared, held, share);
      await share;
      const { path, sha256, size } = await held.sink!.finish();
      if (exchange.aborted) return;
      if (!isPreviewHash(sha256)) throw new Error('upload hash is not a SHA-256');
      handedOff = true;
      const preview = await ctx.service.analyses.analyze({ path, sha256, size, fileName, user: exchange.user! });
      // A reused analysis carries this uploader's own file name, never an earlier uploader's.
      answer = { preview_hash: preview.hash, report: { ...preview.report, file_name: fileName } };
    } finally {
      releaseRoom(); // a stored preview is in the disk's count by now
      await held.sink?.abort(); // removes the temp file unless the store took it
    }
    sendJson(exchange, 200, answer);
  };
}

/**
 * Reads the body into an upload sink (created when the `file` part begins, kept in
 * `held`). Resolves with the file's cleaned name once the body has ended; rejects with
 * what is wrong with it, when the client goes away, or as soon as `admitted` rejects.
 */
function receiveUpload(ctx: HttpContext, exchange: Exchange, boundary: string, declared: number, held: { sink: UploadSink | null }, admitted: Promise<void>): Promise<string> {
  const { res } = exchange;
  return new Promise<string>((resolve, reject) => {
    let fileName: string | null = null;
    let inFile = false;
    let failed = false;
    let paused = false;
    const resume = (): void => {
      if (paused && !exchange.finished) { paused = false; res.resume(); }
    };
    const fail = (error: unknown): void => {
      if (failed) return;
      failed = true;
      // A socket left paused by back-pressure would never take the connection's next request.
      resume();
      reject(isMultipartError(error) ? multipartStatus(error, ctx.config.maxUploadBytes) : error);
    };
    exchange.onAbort.push(() => fail(new Error('the client went away')));
    admitted.catch(fail);
    exchange.bodyStarted = true;

    const parser = createMultipartParser(boundary, {
      onPartBegin(part) {
        if (part.name === 'file' && part.filename !== null && held.sink === null) {
          inFile = true;
          fileName = cleanFileName(part.filename);
          held.sink = createUploadSink(ctx.service.uploadDir);
          held.sink.onDrain(resume);
        } else {
          inFile = false;
        }
      },
      onPartData(data) {
        if (inFile && held.sink && !held.sink.write(data) && !paused) { paused = true; res.pause(); }
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
        exchange.bodyDone = true;
        parser.end();
      } catch (error) {
        fail(error);
        return;
      }
      if (held.sink === null) fail(badRequest('missing_file', 'the form has no `file` part with a file in it'));
      else resolve(fileName ?? FALLBACK_FILE_NAME);
    });
  });
}
