/**
 * The asset downloader: fetches assets by numeric id into the content-addressed store
 * (store.ts) from the configured source (open-cloud.ts), with the retry policy of
 * retry.ts. Whatever an upstream answers (any status, header, encoding, size, timing
 * or connection behaviour) ends as that asset's outcome, never as an exception.
 *
 * Sharing: one download per id at a time across all calls (single flight), and an id
 * already in the store is answered from it without any request. Download slots
 * (`concurrency`) are shared fairly between calls, one call being one create: a call
 * holds at most `perCallConcurrency` slots, and a freed slot goes to the next waiting
 * call in turn, so one map full of hanging ids cannot stall everyone else's.
 *
 * Time: one attempt (for Open Cloud: the delivery request and the bytes) must finish
 * within `timeoutMs`; one call's downloads together within `totalTimeoutMs`, after
 * which its unfinished assets are reported as `timeout`.
 */
import { createSemaphore, createSingleFlight, fanOutAbort, type AbortFanOut } from '../concurrency/index.js';
import { AssetFetchError, AssetStoreError, type AssetFailureReason } from './errors.js';
import { createAssetSource, fillTemplate, isHttpUrl } from './open-cloud.js';
import type { AssetKind } from './refs.js';
import type { AssetConversion } from './converted.js';
import { withRetries } from './retry.js';
import { createDiskStore } from '../store/backends/disk.js';
import type { ObjectStore } from '../store/backends/types.js';
import { ASSET_ID_PATTERN, assetTempDir, lookupAssetId, recordAssetId, sweepStaleTempFiles, type AssetMeta, type AssetStore } from './store.js';

// refs.ts (finding references in a map) owns the kinds; re-exported for callers of the downloader.
export type { AssetKind };
export { retryAfterMs, statusFailure } from './retry.js';

export interface AssetRequest {
  /** Decimal digits, at most 20; anything else makes `download` throw a TypeError. */
  id: string;
  kind: AssetKind;
}

export type AssetOutcome =
  | { id: string; kind: AssetKind; ok: true; sha256: string; size: number; contentType: string; cached: boolean; conversion?: AssetConversion }
  | { id: string; kind: AssetKind; ok: false; reason: AssetFailureReason; status?: number };

export interface AssetDownloaderOptions {
  /** Partial downloads go to `<dataDir>/assets/tmp` (local). */
  dataDir: string;
  /** Where assets are kept; default: the disk store rooted at `dataDir` (assets under `<dataDir>/assets`). */
  objects?: ObjectStore;
  /** Open Cloud delivery endpoint containing `{id}`. */
  deliveryUrl: string;
  /** Plain-GET source containing `{id}`; when set it replaces Open Cloud. */
  urlTemplate: string | null;
  apiKey: string | null;
  /** Downloads at a time, across all calls. */
  concurrency: number;
  /** Downloads at a time for one call (one create). Default: half of `concurrency`, rounded up. */
  perCallConcurrency?: number;
  timeoutMs: number;
  /** Bound on one call's downloads together; unfinished assets are `timeout`. Default: no bound. */
  totalTimeoutMs?: number;
  maxBytes: number;
  /** Extra attempts after the first for retryable failures. */
  retries: number;
  /** First back-off delay; doubles per attempt, with jitter. Default 500 ms. */
  backoffBaseMs?: number;
  /** Cap on a server's Retry-After / x-ratelimit-reset hint. Default 30 s. */
  maxRetryAfterMs?: number;
}

/** Called as each distinct id settles: ids settled so far, distinct ids in all, and how many of the settled failed. */
export type DownloadProgress = (done: number, total: number, failed: number) => void;

export interface AssetDownloader {
  /**
   * One outcome per request, in the same order; duplicate ids are fetched once, and
   * an id already in the store is answered from it (`cached: true`) without any request.
   * Rejects when `signal` aborts (with its reason), when the downloader is closed, or
   * with an AssetStoreError when the store cannot write to disk. Throws a TypeError
   * for an id that is not decimal digits: the caller is expected to have normalised it.
   */
  download(requests: readonly AssetRequest[], signal?: AbortSignal, onProgress?: DownloadProgress): Promise<AssetOutcome[]>;
  /** Removes partial downloads older than `olderThanMs` (a process that died mid-way left them). */
  sweep(olderThanMs?: number): Promise<void>;
  /** Downloads in flight and waiting for a slot. */
  stats(): { active: number; waiting: number };
  /** Aborts what is in flight and closes the connections. */
  close(): Promise<void>;
}

const DEFAULT_BACKOFF_BASE_MS = 500;
const DEFAULT_MAX_RETRY_AFTER_MS = 30_000;
/** Partial downloads older than this belong to a process that died. */
export const STALE_ASSET_TEMP_MS = 60 * 60 * 1000;

type FetchResult =
  | { ok: true; meta: AssetMeta; cached: boolean }
  | { ok: false; reason: AssetFailureReason; status?: number };

const TIMED_OUT: FetchResult = { ok: false, reason: 'timeout' };

export function createAssetDownloader(options: AssetDownloaderOptions): AssetDownloader {
  validateOptions(options);
  const { timeoutMs, totalTimeoutMs } = options;
  const store: AssetStore = { objects: options.objects ?? createDiskStore({ root: options.dataDir }), tempDir: assetTempDir(options.dataDir) };
  const policy = {
    retries: options.retries,
    backoffBaseMs: options.backoffBaseMs ?? DEFAULT_BACKOFF_BASE_MS,
    maxRetryAfterMs: options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS,
  };
  const source = createAssetSource({ ...options, store });
  const slots = createSemaphore(options.concurrency, { perGroup: options.perCallConcurrency ?? Math.ceil(options.concurrency / 2) });
  const jobs = createSingleFlight<FetchResult>();
  /** Per running job: the latest deadline of the calls waiting on it (epoch ms; Infinity without one). */
  const jobDeadlines = new Map<string, { at: number }>();
  let closed = false;
  const closeReason = new Error('the asset downloader was closed');
  let swept: Promise<void> | undefined;

  async function download(requests: readonly AssetRequest[], signal?: AbortSignal, onProgress?: DownloadProgress): Promise<AssetOutcome[]> {
    for (const request of requests) {
      if (typeof request.id !== 'string' || !ASSET_ID_PATTERN.test(request.id)) {
        throw new TypeError(`asset id must be 1 to 20 decimal digits, got ${JSON.stringify(request.id)}`);
      }
    }
    if (closed) throw new Error('the asset downloader is closed');
    swept ??= sweep();
    await swept;
    signal?.throwIfAborted();
    const call = {}; // this call's group for fair slots
    const deadline = totalTimeoutMs === undefined ? null : AbortSignal.timeout(totalTimeoutMs);
    const deadlineAt = totalTimeoutMs === undefined ? Infinity : Date.now() + totalTimeoutMs;
    const callSignal = deadline === null ? signal : signal === undefined ? deadline : AbortSignal.any([signal, deadline]);
    // Every asset id waits on the call's signal: through a fan-out, one listener on it.
    const waitSignal = callSignal === undefined ? undefined : fanOutAbort(callSignal);
    try {
      return await downloadIds(requests, signal, waitSignal, onProgress, call, deadline, deadlineAt);
    } finally {
      waitSignal?.release();
    }
  }

  /** download's work: `signal` is the caller's, `waitSignal` it and the call's deadline together. */
  async function downloadIds(
    requests: readonly AssetRequest[], signal: AbortSignal | undefined, waitSignal: AbortFanOut | undefined,
    onProgress: DownloadProgress | undefined, call: object, deadline: AbortSignal | null, deadlineAt: number,
  ): Promise<AssetOutcome[]> {
    const ids = [...new Set(requests.map((request) => request.id))];
    let done = 0;
    let failed = 0;
    const tell = (): void => {
      try { onProgress?.(done, ids.length, failed); } catch { /* a listener's failure is not the download's */ }
    };
    const report = (result: FetchResult | undefined): void => {
      done++;
      if (!result?.ok) failed++;
      tell();
    };
    tell();
    // Each id's result, settled (an aborted call returns only once its jobs have cleaned
    // up). The ids go through CALL_LANES lanes, so only that many jobs (each a store
    // lookup, a promise chain and its signals) exist at once however many ids the map
    // names; once the call is stopped (aborted, past its deadline, the downloader closed)
    // the ids not started settle with the reason at once.
    const settled = new Array<PromiseSettledResult<FetchResult> | undefined>(ids.length);
    const stopped = (): unknown => (waitSignal?.aborted ? waitSignal.reason : closed ? closeReason : undefined);
    const settle = (index: number, result: PromiseSettledResult<FetchResult>): void => {
      if (settled[index] !== undefined) return; // the first outcome stands (a cached id is not stopped later)
      settled[index] = result;
      if (onProgress) report(result.status === 'fulfilled' ? result.value : undefined);
    };
    // Each id's job, shared by id with any other call that wants it (started at most once per id here).
    const started = new Uint8Array(ids.length);
    const startJob = async (index: number): Promise<void> => {
      started[index] = 1;
      const id = ids[index]!;
      try {
        const job = jobs.run(id, (jobSignal) => runJob(id, jobSignal, call).finally(() => jobDeadlines.delete(id)), waitSignal);
        // A job shared by several calls may wait as long as the latest of their deadlines.
        const shared = jobDeadlines.get(id);
        if (shared === undefined) jobDeadlines.set(id, { at: deadlineAt });
        else shared.at = Math.max(shared.at, deadlineAt);
        settle(index, { status: 'fulfilled', value: await job });
      } catch (error) {
        settle(index, { status: 'rejected', reason: error });
      }
    };
    // First what the store has already (one lookup each), so those are answered at once
    // rather than queued behind downloads; an id another call is downloading now is
    // joined at once (a wait, not a new job), so that download goes on for both.
    const joined: Promise<void>[] = [];
    await inLanes(ids.length, stopped, settle, async (index) => {
      const stored = await lookupAssetId(store.objects, ids[index]!);
      if (stored !== undefined) settle(index, { status: 'fulfilled', value: { ok: true, meta: stored, cached: true } });
      else if (jobs.has(ids[index]!)) joined.push(startJob(index));
    });
    // Then a job each for the rest.
    await inLanes(ids.length, stopped, settle, async (index) => {
      if (settled[index] === undefined && !started[index]) await startJob(index);
    });
    await Promise.all(joined);
    const byId = new Map<string, FetchResult>();
    for (const [index, result] of settled.entries()) {
      if (result === undefined) throw new Error(`asset ${ids[index]!} was not settled`); // inLanes settles every index
      if (result.status === 'fulfilled') byId.set(ids[index]!, result.value);
      else if (deadline?.aborted && !signal?.aborted && !closed && result.reason === deadline.reason) byId.set(ids[index]!, TIMED_OUT);
      else throw result.reason;
    }
    return requests.map((request) => toOutcome(request, byId.get(request.id)!));
  }

  async function runJob(id: string, signal: AbortSignal, call: object): Promise<FetchResult> {
    // Again here: another call may have stored it since this one looked.
    const stored = await lookupAssetId(store.objects, id);
    if (stored !== undefined) return { ok: true, meta: stored, cached: true };
    if (!source.usable) return { ok: false, reason: 'no_credentials' };
    // A slot per attempt, not per job: a job waiting out a Retry-After holds none, so a
    // host that rate-limits one map's assets does not stall every other create.
    const attempt = async (): Promise<AssetMeta> => {
      const release = await slots.acquire(signal, call);
      try {
        return await attemptOnce(id, signal);
      } finally {
        release();
      }
    };
    const result = await withRetries(attempt, policy, signal, () => jobDeadlines.get(id)?.at ?? Infinity);
    if (!result.ok) {
      const { reason, status } = result.failure;
      return status === undefined ? { ok: false, reason } : { ok: false, reason, status };
    }
    await recordAssetId(store.objects, id, result.value.sha256);
    return { ok: true, meta: result.value, cached: false };
  }

  /** One attempt under one deadline. */
  async function attemptOnce(id: string, jobSignal: AbortSignal): Promise<AssetMeta> {
    const attempt = new AbortController();
    const timer = setTimeout(() => {
      attempt.abort(new AssetFetchError('timeout', `asset ${id} took longer than ${timeoutMs} ms`, { retryable: true }));
    }, timeoutMs);
    const onJobAbort = (): void => attempt.abort(jobSignal.reason);
    jobSignal.addEventListener('abort', onJobAbort, { once: true });
    try {
      return await source.fetch(id, attempt.signal);
    } catch (error) {
      // However undici reported it, an aborted attempt failed because of the abort.
      if (attempt.signal.aborted && !(error instanceof AssetFetchError) && !(error instanceof AssetStoreError)) throw attempt.signal.reason;
      throw error;
    } finally {
      clearTimeout(timer);
      jobSignal.removeEventListener('abort', onJobAbort);
    }
  }

  function sweep(olderThanMs = STALE_ASSET_TEMP_MS): Promise<void> {
    return sweepStaleTempFiles(store.tempDir, olderThanMs).catch(() => {});
  }

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    await jobs.abortAll(closeReason);
    await source.close();
  }

  return { download, sweep, stats: () => ({ active: slots.active, waiting: slots.waiting }), close };
}

/**
 * Runs `work(index)` for every index below `count`, CALL_LANES at a time. What `work`
 * throws settles its index as rejected; once `stopped()` gives a reason, the indexes not
 * started settle with it instead of running. Never rejects.
 */
async function inLanes(
  count: number, stopped: () => unknown, settle: (index: number, result: PromiseRejectedResult) => void, work: (index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      const index = next++;
      const reason = stopped();
      if (reason !== undefined) { settle(index, { status: 'rejected', reason }); continue; }
      try {
        await work(index);
      } catch (error) {
        settle(index, { status: 'rejected', reason: error });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CALL_LANES, count) }, lane));
}

/**
 * Asset ids of one call worked on at once (most wait for a download slot; a cached one
 * is a store lookup). All of a 100,000-id map's at once held about 7 KB each on the main
 * thread: 0.6 GB.
 */
export const CALL_LANES = 256;

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

function validateOptions(options: AssetDownloaderOptions): void {
  type NumberOption = { [K in keyof AssetDownloaderOptions]-?: AssetDownloaderOptions[K] extends number | undefined ? K : never }[keyof AssetDownloaderOptions];
  const integer = (name: NumberOption, min: number, optional = false) => {
    const value = options[name];
    if (value === undefined && optional) return;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
      throw new TypeError(`asset downloader option ${name} must be an integer >= ${min}, got ${String(value)}`);
    }
  };
  integer('concurrency', 1);
  integer('perCallConcurrency', 1, true);
  integer('timeoutMs', 1);
  integer('totalTimeoutMs', 1, true);
  integer('maxBytes', 1);
  integer('retries', 0);
  integer('backoffBaseMs', 0, true);
  integer('maxRetryAfterMs', 0, true);
  const templates = [['deliveryUrl', options.deliveryUrl], ['urlTemplate', options.urlTemplate]] as const;
  for (const [name, template] of templates) {
    if (template === null) continue;
    if (!template.includes('{id}') || !isHttpUrl(fillTemplate(template, '1'))) {
      throw new TypeError(`asset downloader option ${name} must be an http(s) URL containing {id}, got ${JSON.stringify(template)}`);
    }
  }
}
