/**
 * POST /api-rbxl/import/rbxl/create: checks the JSON body, finds the caller's
 * preview, downloads the map's assets, has a worker build the project document
 * (scripts packed and patched per scripts_mode), stores it and answers with its id.
 */
import { setMaxListeners } from 'node:events';
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { badRequest, HttpError, notFound, tooLarge, unauthorized } from '../errors.js';
import { sendError, sendJson, type Exchange } from '../exchange.js';
import { fileNameFor, type ServiceContext } from '../context.js';
import { SCRIPTS_MODES, type ScriptsMode } from '../../project/scripts.js';

export interface CreateRequest {
  previewHash: string;
  title: string;
  scriptsMode: ScriptsMode;
}

/** Validates a create body; every problem is a 400 that says what to fix. */
export function parseCreateRequest(text: string): CreateRequest {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw badRequest('invalid_json', 'the body is not valid JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('invalid_body', 'the body must be a JSON object');
  const { preview_hash: previewHash, title = '', scripts_mode: scriptsMode = 'disabled' } = body as Record<string, unknown>;
  if (previewHash === undefined || previewHash === null || previewHash === '') throw badRequest('missing_preview_hash', 'preview_hash is required');
  if (typeof previewHash !== 'string') throw badRequest('invalid_preview_hash', 'preview_hash must be a string');
  if (typeof title !== 'string') throw badRequest('invalid_title', 'title must be a string');
  if (title.length > 200) throw badRequest('invalid_title', 'title must be at most 200 characters');
  if (typeof scriptsMode !== 'string' || !(SCRIPTS_MODES as readonly string[]).includes(scriptsMode)) {
    throw badRequest('invalid_scripts_mode', `scripts_mode must be one of ${SCRIPTS_MODES.join(', ')}`);
  }
  return { previewHash, title: title.trim(), scriptsMode: scriptsMode as ScriptsMode };
}

export function handleCreate(ctx: ServiceContext, res: HttpResponse, req: HttpRequest): void {
  const exchange = ctx.begin(res, req);
  try {
    exchange.user = ctx.authenticate((name) => req.getHeader(name));
    if (!exchange.user) throw unauthorized();
    const contentType = req.getHeader('content-type').split(';')[0]!.trim().toLowerCase();
    if (contentType !== 'application/json') throw new HttpError(415, 'unsupported_media_type', 'send the body as Content-Type: application/json');
    const length = req.getHeader('content-length');
    if (length !== '' && Number(length) > ctx.config.maxJsonBytes) throw tooLarge(ctx.config.maxJsonBytes);
    readBody(exchange, ctx.config.maxJsonBytes, (text) => {
      void create(ctx, exchange, text).catch((error) => sendError(exchange, error, ctx.logError));
    }, (error) => sendError(exchange, error, ctx.logError));
  } catch (error) {
    sendError(exchange, error, ctx.logError);
  }
}

function readBody(exchange: Exchange, limit: number, done: (text: string) => void, fail: (error: unknown) => void): void {
  const parts: Buffer[] = [];
  let failed = false;
  exchange.res.onData((chunk, isLast) => {
    if (failed) return;
    exchange.bytesIn += chunk.byteLength;
    if (exchange.bytesIn > limit) {
      failed = true;
      exchange.bodyUnread = !isLast;
      fail(tooLarge(limit));
      return;
    }
    parts.push(Buffer.from(chunk.slice(0))); // uWS reuses the chunk's memory after this call
    if (isLast) done(Buffer.concat(parts).toString('utf8'));
  });
}

async function create(ctx: ServiceContext, exchange: Exchange, text: string): Promise<void> {
  const request = parseCreateRequest(text);
  const preview = await ctx.previews.get(request.previewHash);
  if (!preview || !preview.uploaders.includes(exchange.user!)) throw notFound('preview');
  // Downloads can take longer than what is left of the preview's life: keep it from being swept meanwhile.
  await ctx.previews.addUploader(preview.hash, exchange.user!);
  const controller = new AbortController();
  // The downloader listens on this signal once per asset id; hundreds are normal, not a leak.
  setMaxListeners(Infinity, controller.signal);
  exchange.onAbort.push(() => controller.abort());
  const outcomes = await ctx.assets.download(preview.assets as { id: string; kind: never }[], controller.signal);
  if (exchange.aborted) return;
  const built = await ctx.pool.build({
    path: ctx.previews.placePath(preview.hash),
    title: request.title,
    owner: exchange.user!,
    createdAt: new Date().toISOString(),
    previewHash: preview.hash,
    fileName: fileNameFor(preview, exchange.user!),
    format: preview.format,
    fileSize: preview.fileSize,
    scriptsMode: request.scriptsMode,
    assets: outcomes,
    ...(preview.scriptCodes !== undefined ? { scriptCodes: preview.scriptCodes } : {}),
  });
  if (!built.ok) throw built.missing ? notFound('preview') : new HttpError(422, 'not_a_place', built.message);
  if (exchange.aborted) return; // nobody would learn the project's id
  const projectId = await ctx.projects.saveSerialized(built.json, { owner: exchange.user!, assets: built.assetHashes });
  const failures = outcomes.filter((outcome) => !outcome.ok).map((outcome) => ({ id: outcome.id, reason: (outcome as { reason: string }).reason }));
  sendJson(exchange, 200, {
    project_id: projectId,
    redirect: ctx.config.redirectTemplate.replaceAll('{project_id}', encodeURIComponent(projectId)),
    assets_downloaded: outcomes.length - failures.length,
    assets_failed: failures.length,
    asset_failures: failures,
  });
}
