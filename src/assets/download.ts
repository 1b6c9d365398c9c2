/**
 * Downloads assets by numeric id into the content-addressed store (store.ts).
 *
 * Sources, decided by configuration only (never by anything in a map):
 * - `urlTemplate` set: a plain GET of the template with `{id}` filled in; the body is
 *   the asset. For mirrors, tests and self-hosted asset stores.
 * - otherwise Roblox Open Cloud asset delivery: GET `deliveryUrl` with `x-api-key`,
 *   which answers `{"location": "..."}`; the bytes are then fetched from that location
 *   (without the key). Production locations are https CDN URLs; http is accepted as
 *   well so a loopback test server or a self-hosted delivery service can answer.
 *   Without an API key nothing is requested: every asset that is not already stored
 *   fails with `no_credentials`, since the anonymous endpoints refuse such requests.
 *
 * Bodies are gunzipped when `Content-Encoding: gzip` says so or when they start with
 * the gzip magic bytes (the CDN serves some assets gzipped without saying so). Redirects
 * are not followed; a 3xx answer is an `upstream_error`.
 *
 * Limits: at most `concurrency` assets are fetched at a time across all calls of one
 * downloader; one attempt (for Open Cloud: the delivery request and the bytes) must
 * finish within `timeoutMs`; a body above `maxBytes` (declared or counted while
 * streaming, after gunzip) is abandoned at once. 429, 5xx, 408, network errors and
 * timeouts are retried up to `retries` times with exponential back-off and jitter; a
 * 429/503 hint (`Retry-After` in seconds or as an HTTP date, `x-ratelimit-reset` in
 * seconds) replaces the back-off, capped by `maxRetryAfterMs`.
 */
import { Readable, pipeline } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { createGunzip } from 'node:zlib';
import type { IncomingHttpHeaders } from 'node:http';
import { Agent, type Dispatcher } from 'undici';
import { AssetFetchError, AssetStoreError, type AssetFailureReason } from './errors.js';
import type { AssetKind } from './refs.js';
import {
  ASSET_ID_PATTERN,
  lookupAssetId,
  recordAssetId,
  storeAssetStream,
  sweepStaleTempFiles,
  type AssetMeta,
} from './store.js';

// refs.ts (finding references in a map) owns the kinds; re-exported for callers of the downloader.
export type { AssetKind };

export interface AssetRequest {
  /** Decimal digits, at most 20; anything else makes `download` throw a TypeError. */
  id: string;
  kind: AssetKind;
}

export type AssetOutcome =
  | { id: string; kind: AssetKind; ok: true; sha256: string; size: number; contentType: string; cached: boolean }
  | { id: string; kind: AssetKind; ok: false; reason: AssetFailureReason; status?: number };

export interface AssetDownloaderOptions {
  dataDir: string;
  /** Open Cloud delivery endpoint containing `{id}`. */
  deliveryUrl: string;
  /** Plain-GET source containing `{id}`; when set it replaces Open Cloud. */
  urlTemplate: string | null;
  apiKey: string | null;
  concurrency: number;
  timeoutMs: number;
  maxBytes: number;
  /** Extra attempts after the first for retryable failures. */
  retries: number;
  /** First back-off delay; doubles per attempt, with jitter. Default 500 ms. */
  backoffBaseMs?: number;
  /** Cap on a server's Retry-After / x-ratelimit-reset hint. Default 30 s. */
  maxRetryAfterMs?: number;
}

export interface AssetDownloader {
  /**
   * One outcome per request, in the same order; duplicate ids are fetched once, and
   * an id already in the store is answered from it (`cached: true`) without any request.
   * Rejects when `signal` aborts (with its reason), when the downloader is closed, or
   * with an AssetStoreError when the store cannot write to disk. Throws a TypeError
   * for an id that is not decimal digits: the caller is expected to have normalised it.
   */
  download(requests: readonly AssetRequest[], signal?: AbortSignal): Promise<AssetOutcome[]>;
  /** Aborts what is in flight and closes the connections. */
  close(): Promise<void>;
}

const DEFAULT_BACKOFF_BASE_MS = 500;
const DEFAULT_MAX_RETRY_AFTER_MS = 30_000;
const MAX_BACKOFF_MS = 10_000;
/** The delivery API's answer is a few hundred bytes of JSON. */
const MAX_DELIVERY_ANSWER_BYTES = 64 * 1024;
/** Error bodies are read (to keep the connection) up to this much, then dropped. */
const MAX_DISCARDED_BODY_BYTES = 64 * 1024;
/** Partial downloads older than this belong to a process that died. */
const STALE_TEMP_MS = 60 * 60 * 1000;
const USER_AGENT = 'rbxl-import-assets/1';

type FetchResult =
  | { ok: true; meta: AssetMeta; cached: boolean }
  | { ok: false; reason: AssetFailureReason; status?: number };

interface Job {
  promise: Promise<FetchResult>;
  controller: AbortController;
  /** Callers waiting that can still abort; the job stops when the last one does. */
  waiters: number;
}

export function createAssetDownloader(options: AssetDownloaderOptions): AssetDownloader {
  validateOptions(options);
  const { dataDir, urlTemplate, apiKey, timeoutMs, maxBytes, retries } = options;
  const backoffBaseMs = options.backoffBaseMs ?? DEFAULT_BACKOFF_BASE_MS;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS;
  const agent = new Agent({
    // No per-origin connection cap: the limiter below bounds the attempts, one request each at a time.
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 60_000,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connect: { timeout: timeoutMs },
  });
  const slots = createLimiter(options.concurrency);
  const jobs = new Map<string, Job>();
  let closed = false;
  let swept: Promise<void> | undefined;

  async function download(requests: readonly AssetRequest[], signal?: AbortSignal): Promise<AssetOutcome[]> {
    for (const request of requests) {
      if (typeof request.id !== 'string' || !ASSET_ID_PATTERN.test(request.id)) {
        throw new TypeError(`asset id must be 1 to 20 decimal digits, got ${JSON.stringify(request.id)}`);
      }
    }
    if (closed) throw new Error('the asset downloader is closed');
    swept ??= sweepStaleTempFiles(dataDir, STALE_TEMP_MS).catch(() => {});
    await swept;
    signal?.throwIfAborted();
    const ids = [...new Set(requests.map((request) => request.id))];
    // Settled, not all: an aborted call returns only once its jobs have cleaned up.
    const settled = await Promise.allSettled(ids.map((id) => join(id, signal)));
    const byId = new Map<string, FetchResult>();
    for (const [index, result] of settled.entries()) {
      if (result.status === 'rejected') throw result.reason;
      byId.set(ids[index]!, result.value);
    }
    return requests.map((request) => toOutcome(request, byId.get(request.id)!));
  }

  /** Waits for the job fetching `id`, starting one unless another call already has. */
  function join(id: string, signal: AbortSignal | undefined): Promise<FetchResult> {
    let job = jobs.get(id);
    if (job === undefined) {
      const controller = new AbortController();
      const created: Job = { controller, waiters: 0, promise: runJob(id, controller.signal) };
      created.promise
        .finally(() => {
          if (jobs.get(id) === created) jobs.delete(id);
        })
        .catch(() => {});
      jobs.set(id, created);
      job = created;
    }
    const current = job;
    if (signal === undefined) {
      current.waiters = Infinity; // someone will wait to the end
      return current.promise;
    }
    current.waiters += 1;
    return new Promise<FetchResult>((resolve, reject) => {
      const onAbort = () => {
        current.waiters -= 1;
        if (current.waiters > 0) return reject(signal.reason); // others still want it
        if (jobs.get(id) === current) jobs.delete(id);
        current.controller.abort(signal.reason);
        // Rejects once the job has stopped, so no partial file outlives the call.
        const fail = () => reject(signal.reason);
        current.promise.then(fail, fail);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      current.promise.then(
        (result) => {
          signal.removeEventListener('abort', onAbort);
          resolve(result);
        },
        (error: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      );
    });
  }

  async function runJob(id: string, signal: AbortSignal): Promise<FetchResult> {
    const stored = await lookupAssetId(dataDir, id);
    if (stored !== undefined) return { ok: true, meta: stored, cached: true };
    if (urlTemplate === null && apiKey === null) return { ok: false, reason: 'no_credentials' };
    const release = await slots.acquire(signal);
    try {
      return await fetchWithRetries(id, signal);
    } finally {
      release();
    }
  }

  async function fetchWithRetries(id: string, signal: AbortSignal): Promise<FetchResult> {
    for (let attempt = 0; ; attempt++) {
      let failure: AssetFetchError;
      try {
        const meta = await attemptOnce(id, signal);
        await recordAssetId(dataDir, id, meta.sha256);
        return { ok: true, meta, cached: false };
      } catch (error) {
        failure = asFetchFailure(error, signal);
      }
      if (!failure.retryable || attempt >= retries) {
        return failure.status === undefined
          ? { ok: false, reason: failure.reason }
          : { ok: false, reason: failure.reason, status: failure.status };
      }
      const delay = failure.retryAfterMs !== undefined
        ? Math.min(failure.retryAfterMs, maxRetryAfterMs)
        : backoffDelay(backoffBaseMs, attempt);
      await sleep(delay, undefined, { signal }).catch(() => {
        throw signal.reason;
      });
    }
  }

  /** One attempt under one deadline: (delivery request and) the bytes into the store. */
  async function attemptOnce(id: string, jobSignal: AbortSignal): Promise<AssetMeta> {
    const deadline = new AbortController();
    const timer = setTimeout(() => {
      deadline.abort(new AssetFetchError('timeout', `asset ${id} took longer than ${timeoutMs} ms`, { retryable: true }));
    }, timeoutMs);
    const onJobAbort = () => deadline.abort(jobSignal.reason);
    jobSignal.addEventListener('abort', onJobAbort, { once: true });
    try {
      const url = urlTemplate !== null ? fillTemplate(urlTemplate, id) : await resolveLocation(id, deadline.signal);
      return await fetchIntoStore(url, deadline.signal);
    } catch (error) {
      // However undici reported it, an aborted attempt failed because of the abort.
      if (deadline.signal.aborted && !(error instanceof AssetStoreError)) throw deadline.signal.reason;
      throw error;
    } finally {
      clearTimeout(timer);
      jobSignal.removeEventListener('abort', onJobAbort);
    }
  }

  /** Asks the Open Cloud delivery API where the bytes of `id` are. */
  async function resolveLocation(id: string, signal: AbortSignal): Promise<string> {
    const response = await get(fillTemplate(options.deliveryUrl, id), { accept: 'application/json', 'x-api-key': apiKey! }, signal);
    await expectOk(response);
    const text = await readLimitedText(response.body, MAX_DELIVERY_ANSWER_BYTES);
    let answer: unknown;
    try {
      answer = JSON.parse(text);
    } catch {
      throw new AssetFetchError('upstream_error', 'the asset delivery answer is not JSON', { status: response.statusCode });
    }
    const location = isRecord(answer) ? answer.location : undefined;
    if (typeof location === 'string') {
      if (!isHttpUrl(location)) {
        throw new AssetFetchError('upstream_error', 'the asset delivery location is not an http(s) URL', { status: response.statusCode });
      }
      return location;
    }
    // Some answers are 200 with {"errors": [{"code": 404, ...}]} instead of a location.
    const code = isRecord(answer) && Array.isArray(answer.errors) && isRecord(answer.errors[0]) ? answer.errors[0].code : undefined;
    if (typeof code === 'number' && code >= 400 && code <= 599) throw statusFailure(code, {});
    throw new AssetFetchError('upstream_error', 'the asset delivery answer has no location', { status: response.statusCode });
  }

  async function fetchIntoStore(url: string, signal: AbortSignal): Promise<AssetMeta> {
    const response = await get(url, { accept: '*/*', 'accept-encoding': 'gzip' }, signal);
    await expectOk(response);
    const encoding = headerValue(response.headers['content-encoding'])?.trim().toLowerCase() ?? 'identity';
    const gzipped = encoding === 'gzip' || encoding === 'x-gzip';
    if (!gzipped && encoding !== 'identity') {
      response.body.destroy();
      throw new AssetFetchError('upstream_error', `unsupported Content-Encoding ${JSON.stringify(encoding)}`, { status: response.statusCode });
    }
    const declared = Number(headerValue(response.headers['content-length']));
    // A gzipped body's length says nothing sure about the asset's; it is counted after gunzip.
    if (!gzipped && Number.isFinite(declared) && declared > maxBytes) {
      response.body.destroy();
      throw new AssetFetchError('too_large', `asset is ${declared} bytes, more than ${maxBytes}`, { status: response.statusCode });
    }
    return storeAssetStream(dataDir, decodeBody(response.body, gzipped), {
      maxBytes,
      contentType: headerValue(response.headers['content-type']),
    });
  }

  function get(url: string, headers: Record<string, string>, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
    const target = new URL(url);
    return agent.request({
      origin: target.origin,
      path: `${target.pathname}${target.search}`,
      method: 'GET',
      headers: { ...headers, 'user-agent': USER_AGENT },
      signal,
    });
  }

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    const reason = new Error('the asset downloader was closed');
    const pending = [...jobs.values()];
    for (const job of pending) job.controller.abort(reason);
    await Promise.allSettled(pending.map((job) => job.promise));
    await agent.close();
  }

  return { download, close };
}

function toOutcome(request: AssetRequest, result: FetchResult): AssetOutcome {
  const { id, kind } = request;
  if (result.ok) {
    const { sha256, size, contentType } = result.meta;
    return { id, kind, ok: true, sha256, size, contentType, cached: result.cached };
  }
  return result.status === undefined
    ? { id, kind, ok: false, reason: result.reason }
    : { id, kind, ok: false, reason: result.reason, status: result.status };
}

/** Throws the failure a non-200 answer stands for, after draining a little of its body. */
async function expectOk(response: Dispatcher.ResponseData): Promise<void> {
  if (response.statusCode === 200) return;
  await response.body.dump({ limit: MAX_DISCARDED_BODY_BYTES }).catch(() => {});
  throw statusFailure(response.statusCode, response.headers);
}

export function statusFailure(status: number, headers: IncomingHttpHeaders): AssetFetchError {
  const message = `asset source answered HTTP ${status}`;
  switch (status) {
    case 401: return new AssetFetchError('unauthorized', message, { status });
    case 403: return new AssetFetchError('forbidden', message, { status });
    case 404:
    case 410: return new AssetFetchError('not_found', message, { status });
    case 408: return new AssetFetchError('timeout', message, { status, retryable: true });
    case 429: return new AssetFetchError('rate_limited', message, { status, retryable: true, retryAfterMs: retryAfterMs(headers) });
  }
  if (status >= 500) return new AssetFetchError('upstream_error', message, { status, retryable: true, retryAfterMs: retryAfterMs(headers) });
  return new AssetFetchError('upstream_error', message, { status });
}

/** The server's hint of when to try again, in ms: Retry-After (seconds or HTTP date), else x-ratelimit-reset. */
export function retryAfterMs(headers: IncomingHttpHeaders, now = Date.now()): number | undefined {
  const retryAfter = headerValue(headers['retry-after'])?.trim();
  if (retryAfter !== undefined && retryAfter !== '') {
    if (/^\d+(\.\d+)?$/.test(retryAfter)) return Math.round(Number(retryAfter) * 1000);
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date)) return Math.max(0, date - now);
  }
  const reset = headerValue(headers['x-ratelimit-reset'])?.trim();
  if (reset !== undefined && /^\d+(\.\d+)?$/.test(reset)) {
    const seconds = Number(reset);
    // Roblox sends seconds until the reset; some APIs send the reset's epoch second.
    return seconds > 1e9 ? Math.max(0, seconds * 1000 - now) : Math.round(seconds * 1000);
  }
  return undefined;
}

/** Exponential back-off with "equal jitter": half fixed, half random. */
function backoffDelay(baseMs: number, attempt: number): number {
  const ceiling = Math.min(baseMs * 2 ** attempt, MAX_BACKOFF_MS);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** Maps whatever an attempt threw to a failure, rethrowing the job's own abort and disk errors. */
function asFetchFailure(error: unknown, jobSignal: AbortSignal): AssetFetchError {
  if (jobSignal.aborted) throw jobSignal.reason;
  if (error instanceof AssetStoreError) throw error;
  if (error instanceof AssetFetchError) return error;
  const code = isRecord(error) && typeof error.code === 'string' ? error.code : '';
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
    return new AssetFetchError('timeout', message, { retryable: true, cause: error });
  }
  if (code.startsWith('Z_')) {
    return new AssetFetchError('upstream_error', `asset body is not valid gzip: ${message}`, { retryable: true, cause: error });
  }
  return new AssetFetchError('network_error', message, { retryable: true, cause: error });
}

/** The body as it should be stored: gunzipped when declared so or when it starts with the gzip magic. */
async function* decodeBody(body: Readable, gzipDeclared: boolean): AsyncGenerator<Buffer> {
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
    await source.return?.();
  }
}

async function readLimitedText(body: Readable, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new AssetFetchError('upstream_error', `the asset delivery answer is larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A counting semaphore whose waiters can give up. */
function createLimiter(limit: number) {
  let active = 0;
  const waiting: Array<() => void> = [];
  const release = () => {
    const next = waiting.shift();
    if (next !== undefined) next(); // the slot passes straight on
    else active -= 1;
  };
  const releaseOnce = () => {
    let done = false;
    return () => {
      if (!done) {
        done = true;
        release();
      }
    };
  };
  return {
    async acquire(signal: AbortSignal): Promise<() => void> {
      signal.throwIfAborted();
      if (active < limit) {
        active += 1;
        return releaseOnce();
      }
      await new Promise<void>((resolve, reject) => {
        const grant = () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = () => {
          const index = waiting.indexOf(grant);
          if (index !== -1) waiting.splice(index, 1);
          reject(signal.reason);
        };
        waiting.push(grant);
        signal.addEventListener('abort', onAbort, { once: true });
      });
      return releaseOnce();
    },
  };
}

function fillTemplate(template: string, id: string): string {
  return template.replaceAll('{id}', id);
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function validateOptions(options: AssetDownloaderOptions): void {
  const integer = (name: keyof AssetDownloaderOptions, min: number) => {
    const value = options[name];
    if (value === undefined && (name === 'backoffBaseMs' || name === 'maxRetryAfterMs')) return;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
      throw new TypeError(`asset downloader option ${name} must be an integer >= ${min}, got ${String(value)}`);
    }
  };
  integer('concurrency', 1);
  integer('timeoutMs', 1);
  integer('maxBytes', 1);
  integer('retries', 0);
  integer('backoffBaseMs', 0);
  integer('maxRetryAfterMs', 0);
  const templates = [['deliveryUrl', options.deliveryUrl], ['urlTemplate', options.urlTemplate]] as const;
  for (const [name, template] of templates) {
    if (template === null) continue;
    if (!template.includes('{id}') || !isHttpUrl(fillTemplate(template, '1'))) {
      throw new TypeError(`asset downloader option ${name} must be an http(s) URL containing {id}, got ${JSON.stringify(template)}`);
    }
  }
}
