/**
 * POST /api-rbxl/import/rbxl/create: checks the JSON body, then the project service
 * downloads the map's assets, has a worker build and store the project document, and
 * the answer carries its id and the download outcome.
 */
import type { HttpRequest } from 'uWebSockets.js';
import { badRequest, HttpError, notFound, shuttingDown, tooLarge, toHttpError } from '../errors.js';
import { sendJson, type Exchange } from '../exchange.js';
import type { HttpContext } from '../context.js';
import type { RouteHandler } from '../route.js';
import { SCRIPTS_MODES, type ScriptsMode } from '../../project/scripts.js';
import { CREATE_ID, type CreateTracker } from '../../service/index.js';

/**
 * The optional header naming a create so its progress can be polled
 * (GET /api-rbxl/import/rbxl/create/{id}). Without it a create is exactly the contract's.
 */
export const CREATE_ID_HEADER = 'x-create-id';

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
  const trimmed = title.trim();
  if (codePoints(trimmed) > MAX_TITLE_CHARS) throw badRequest('invalid_title', `title must be at most ${MAX_TITLE_CHARS} characters`);
  if (typeof scriptsMode !== 'string' || !(SCRIPTS_MODES as readonly string[]).includes(scriptsMode)) {
    throw badRequest('invalid_scripts_mode', `scripts_mode must be one of ${SCRIPTS_MODES.join(', ')}`);
  }
  return { previewHash, title: trimmed, scriptsMode: scriptsMode as ScriptsMode };
}

/** Longest title, in characters (code points: an emoji is one), after trimming. */
export const MAX_TITLE_CHARS = 200;

function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

export function createRoute(ctx: HttpContext): RouteHandler {
  const limit = ctx.config.maxJsonBytes;
  return async (exchange: Exchange, req: HttpRequest) => {
    const contentType = req.getHeader('content-type').split(';')[0]!.trim().toLowerCase();
    if (contentType !== 'application/json') throw new HttpError(415, 'unsupported_media_type', 'send the body as Content-Type: application/json');
    const length = req.getHeader('content-length');
    if (length !== '' && Number(length) > limit) throw tooLarge(limit, 'the create request');
    const createId = readCreateId(req);
    // Listened for from the start: a client gone while its body or its progress entry is
    // awaited stops the create as surely as one gone during the build.
    const controller = new AbortController();
    exchange.onAbort.push(() => controller.abort(new Error('the client went away')));
    const request = parseCreateRequest(await readBody(exchange, limit));
    let tracker: CreateTracker | null = null;
    if (createId !== null) {
      tracker = await ctx.service.progress.begin(exchange.user!, createId);
      if (tracker === null) throw new HttpError(409, 'create_id_in_use', `a create named ${createId} is still running; name each create with its own X-Create-Id`);
    }
    let created;
    try {
      created = controller.signal.aborted ? null
        : await ctx.service.projects.create({ user: exchange.user!, ...request, signal: controller.signal, ...(tracker ? { progress: tracker } : {}) });
    } catch (error) {
      // Whatever a stopped create throws (an aborted download or task), the reason is the stop.
      if (!controller.signal.aborted) {
        const answer = toHttpError(error);
        tracker?.failed(answer?.code ?? 'internal', answer?.message ?? 'internal error');
        throw error;
      }
      created = null;
    }
    if (created === null) {
      // Stopped: the client left (nobody would learn the project's id), or the service is shutting down (it answered 503).
      if (exchange.aborted) tracker?.failed('client_gone', 'the create was stopped because its request was closed');
      else { const stop = shuttingDown(); tracker?.failed(stop.code, stop.message); }
      return;
    }
    tracker?.done(created.projectId);
    const failures = created.assets.flatMap((outcome) => (outcome.ok ? [] : [{ id: outcome.id, reason: outcome.reason }]));
    // Downloaded meshes and union models that could not be converted to glTF (they stand as boxes in scene.glb).
    const notConverted = created.assets.flatMap((outcome) => (outcome.ok && outcome.conversion && !outcome.conversion.converted
      ? [{ id: outcome.id, kind: outcome.kind, reason: outcome.conversion.reason, message: outcome.conversion.message }] : []));
    sendJson(exchange, 200, {
      project_id: created.projectId,
      redirect: ctx.config.redirectTemplate.replaceAll('{project_id}', encodeURIComponent(created.projectId)),
      assets_downloaded: created.assets.length - failures.length,
      // Ids past the download cap count as failed, so the two counts add up to the report's assets_total.
      assets_failed: failures.length + created.notAttempted,
      asset_failures: failures,
      assets_not_converted: notConverted,
    });
  };
}

/** The create's id from X-Create-Id, null when not sent; a malformed one is a 400 (read before the handler's first await). */
function readCreateId(req: HttpRequest): string | null {
  let count = 0;
  req.forEach((key) => {
    if (key === CREATE_ID_HEADER) count++;
  });
  if (count === 0) return null;
  const id = req.getHeader(CREATE_ID_HEADER);
  if (count > 1 || !CREATE_ID.test(id)) {
    throw badRequest('invalid_create_id', 'X-Create-Id must be sent once, as 8 to 64 letters, digits, - or _ (a UUID will do)');
  }
  return id;
}

/** GET /api-rbxl/import/rbxl/create/{create_id}: the progress of the caller's own create of that id. */
export function createProgressRoute(ctx: HttpContext): RouteHandler {
  return async (exchange: Exchange, req: HttpRequest) => {
    const progress = await ctx.service.progress.get(exchange.user!, req.getParameter(0) ?? '');
    if (!progress) throw notFound('create');
    sendJson(exchange, 200, progress);
  };
}

/** The whole (small) body as text; rejects past `limit` bytes or when the client leaves. */
function readBody(exchange: Exchange, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let failed = false;
    exchange.onAbort.push(() => reject(new Error('the client went away')));
    exchange.bodyStarted = true;
    exchange.res.onData((chunk, isLast) => {
      if (failed) return;
      exchange.bytesIn += chunk.byteLength;
      if (exchange.bytesIn > limit) {
        failed = true;
        reject(tooLarge(limit, 'the create request'));
        return;
      }
      parts.push(Buffer.from(chunk.slice(0))); // uWS reuses the chunk's memory after this call
      if (isLast) {
        exchange.bodyDone = true;
        resolve(Buffer.concat(parts).toString('utf8'));
      }
    });
  });
}
