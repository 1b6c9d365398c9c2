/**
 * The service behind the HTTP layer: the object store (local disk, or S3 shared by
 * every instance) and the preview, project and asset stores over it, worker pool, asset
 * downloader, disk quota and memory budget, wired once; the analysis and project
 * services on top; the sweeper that keeps the store and the data directory within their
 * bounds (the fleet-wide part by one instance at a time, under a lease). `src/http` turns requests
 * into calls of this and ServiceErrors into statuses.
 */
import { randomBytes } from 'node:crypto';
import { readdir, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../config.js';
import { createAssetDownloader, type AssetDownloader } from '../assets/download.js';
import { defaultStoreConfig } from '../store/backends/config.js';
import { openObjectStore } from '../store/backends/index.js';
import { isStoreUnavailable } from '../store/backends/errors.js';
import { acquireLease } from '../store/backends/lease.js';
import { prepareDataDir } from '../store/data-dir.js';
import { migrateLegacyLayout } from '../store/legacy.js';
import { createLocalMirror } from '../store/mirror.js';
import type { ObjectStore, Reachability } from '../store/backends/types.js';
import { createPreviewStore, STALE_TEMP_MS, type PreviewStore } from '../store/previews.js';
import { createProjectStore } from '../store/projects.js';
import { createHoldings } from '../store/holdings.js';
import { createDiskQuota, type StorageState } from '../store/quota.js';
import { createWorkerPool, type WorkerPool } from '../workers/pool.js';
import { createAnalysisService, diskToServiceError, expiryOf, guard, type AnalysisService } from './analysis.js';
import { memoryBudget, type MemoryBudget } from './budget.js';
import { ServiceError } from './errors.js';
import { createSharedProgress, type SharedProgress } from './shared-progress.js';
import { createProjectService, type ProjectService } from './projects.js';
import { CONVERTER_VERSION } from '../scene/convert.js';

export { ServiceError, isServiceError, type ServiceErrorKind } from './errors.js';
export { cleanFileName, FALLBACK_FILE_NAME } from './file-name.js';
export type { UploadedFile } from './analysis.js';
export { CREATE_ID, type CreateProgress, type CreateTracker } from './progress.js';

export interface Service {
  readonly config: Config;
  readonly budget: MemoryBudget;
  /** Where uploads stream to before they are analysed. */
  readonly uploadDir: string;
  readonly analyses: AnalysisService;
  readonly projects: ProjectService;
  /** Progress of creates that named themselves (the create route's `X-Create-Id`), per user, shared with the fleet through the store. */
  readonly progress: SharedProgress;
  /** The largest map file this service accepts, in bytes: MAX_UPLOAD_BYTES, or less when the memory budget says so. */
  readonly maxMapBytes: number;
  /**
   * Whether an upload of `declaredBytes` may start (checked from its Content-Length,
   * before any of it is read): the memory budget's file size, the disk, the user's share.
   * The disk's room for it is held until the returned function is called (when the
   * upload is stored or given up on), so uploads arriving at once cannot share it.
   */
  admitUpload(user: string, declaredBytes: number): () => void;
  /** Whether the user's share has room for an upload of `declaredBytes` (a listing of the store: run it while the upload arrives). */
  checkShare(user: string, declaredBytes: number): Promise<void>;
  /** What /health reports; the store's reachability is asked at most every ~2 s. */
  health(): Promise<ServiceHealth>;
  /** Expired previews, old projects, stale temp files; then disk use is counted again. */
  sweep(staleMs?: number): Promise<void>;
  close(): Promise<void>;
}

export interface StoreHealth {
  kind: ObjectStore['kind'];
  location: string;
  reachable: boolean;
  latency_ms: number;
  /** Why it cannot be reached (`unreachable`, `timeout`, `misconfigured`, …) and the store's message. */
  reason?: string;
  message?: string;
}

export interface ServiceHealth {
  /**
   * `unavailable` while the object store cannot be reached (/health answers 503: the
   * gateway sends traffic elsewhere); `degraded` while the disk is full (analyze and
   * create answer 507 until it has room).
   */
  status: 'ok' | 'degraded' | 'unavailable';
  store: StoreHealth;
  workers: ReturnType<WorkerPool['stats']>;
  preview_cache: { entries: number; bytes: number; max_bytes: number };
  downloads: ReturnType<AssetDownloader['stats']>;
  storage: StorageState;
  memory: { budget_mb: number; per_worker_mb: number; rss_mb: number };
}

/** At start, a temp file not written to for this long belongs to a process that died (a kill -9 mid-create). */
const START_STALE_MS = 60_000;
/** How long a reachability answer of the store is reused by /health. */
const STORE_CHECK_MS = 2000;
/** A health probe waits at most this long for the store's answer. */
const STORE_CHECK_TIMEOUT_MS = 3000;
/** The lease under which one instance at a time sweeps the shared store. */
const SWEEP_LEASE = 'preview-sweep';

/** A warning for the operator, as one JSON line on stderr (the request log is stdout). */
function warn(msg: string, error: unknown, fields: Record<string, string> = {}): void {
  process.stderr.write(JSON.stringify({ level: 'warn', t: new Date().toISOString(), msg, ...fields, error: error instanceof Error ? error.message : String(error) }) + '\n');
}

/** The preview cache as /health gives it: snake_case, as every other field there. */
function previewCacheHealth({ entries, bytes, maxBytes }: ReturnType<PreviewStore['cacheInfo']>): ServiceHealth['preview_cache'] {
  return { entries, bytes, max_bytes: maxBytes };
}

export async function createService(config: Config): Promise<Service> {
  const budget = memoryBudget({ maxMemoryMb: config.maxMemoryMb, workers: config.workers, previewCacheBytes: config.previewCacheBytes });
  // Everything the service keeps under DATA_DIR: uploads and local copies, the disk store's objects, asset downloads.
  await prepareDataDir(config.dataDir, ['uploads', 'mirror', 'assets', ...(config.store === null ? ['objects'] : [])]);
  const uploadDir = join(config.dataDir, 'uploads');
  // What a process that died left in uploads/ goes with the start-up sweep below, once not written to for
  // START_STALE_MS: a file written to since may be another process's (a second `npm start` over the same
  // DATA_DIR, which then stops on the port in use), and removing all of them cut its uploads short.

  const storeConfig = config.store ?? defaultStoreConfig(config.dataDir);
  if (storeConfig.kind === 'disk') {
    const moved = await migrateLegacyLayout(config.dataDir, storeConfig.root);
    if (moved > 0) process.stderr.write(JSON.stringify({ level: 'info', t: new Date().toISOString(), msg: 'moved projects and assets of the layout before the object store', files: moved }) + '\n');
  }
  const objects = openObjectStore(storeConfig);
  // The workers read maps, assets and converted meshes as files: on disk the store's own, on S3 local copies.
  const mirror = createLocalMirror(objects, join(config.dataDir, 'mirror'));
  // Local files (uploads arriving, maps copied for a worker, documents being built) stay in uploadDir.
  const previews = createPreviewStore({ objects, workDir: uploadDir, cacheBytes: config.previewCacheBytes, ttlSeconds: config.previewTtlSeconds });
  const projects = createProjectStore({ objects, workDir: uploadDir });
  const quota = createDiskQuota({ dataDir: config.dataDir, maxDataBytes: config.maxDataBytes });
  const holdings = createHoldings(objects, { userMaxBytes: config.userMaxBytes, userMaxPreviews: config.userMaxPreviews, userMaxProjects: config.userMaxProjects });
  const pool = createWorkerPool({ workers: config.workers, maxQueue: config.maxQueue, limits: budget.task, resourceLimits: budget.resourceLimits, taskTimeoutMs: config.taskTimeoutMs });
  const assets = createAssetDownloader({
    dataDir: config.dataDir,
    objects,
    deliveryUrl: config.assetDeliveryUrl,
    urlTemplate: config.assetUrlTemplate,
    apiKey: config.assetApiKey,
    concurrency: config.assetConcurrency,
    perCallConcurrency: Math.min(config.assetConcurrencyPerCreate, config.assetConcurrency),
    timeoutMs: config.assetTimeoutMs,
    totalTimeoutMs: config.assetTotalTimeoutMs,
    maxBytes: config.assetMaxBytes,
    retries: config.assetRetries,
  });

  const projectService = createProjectService({
    objects, mirror, workDir: uploadDir, previews, projects, pool, assets, quota, holdings, maxSceneBytes: budget.task.maxDocumentBytes,
    sceneLimits: JSON.stringify({ task: budget.task, taskTimeoutMs: config.taskTimeoutMs, converter: CONVERTER_VERSION }),
    onUncounted: (id, error) => warn('project not counted in its owner\'s share', error, { project_id: id }),
  });
  const progress = createSharedProgress(objects, { onError: (error) => warn('create progress not published', error) });

  const retentionMs = config.projectRetentionDays * 24 * 60 * 60 * 1000;
  const instance = `${hostname()}/${process.pid}/${randomBytes(4).toString('hex')}`;
  // Held past the sweep, so the other instances skip theirs until it runs out; the holder renews it on its next sweep.
  const leaseMs = Math.max(2 * config.sweepIntervalMs, 1000);
  // Once per store: what each user held before their holdings were kept (tried again at each sweep until it is done).
  let indexed = false;
  const indexHoldings = async (): Promise<void> => {
    if (indexed) return;
    await holdings.indexOnce(async () => {
      const stored = [];
      for (const preview of await previews.list()) {
        const bytes = await previews.diskBytes(preview.hash);
        for (const user of preview.uploaders) stored.push({ user, hash: preview.hash, bytes, expiresAt: expiryOf(preview, user) });
      }
      return { previews: stored, projects: (await projects.list()).map(({ id, meta }) => ({ id, bytes: meta.bytes ?? 0, owner: meta.owner })) };
    });
    indexed = true;
  };
  /**
   * The store's housekeeping (under the fleet's lease), then this instance's own files
   * and disk count, which run whether or not the store answered: an outage of the store
   * must not leave stale uploads on the disk or the disk's room unmeasured.
   */
  async function sweep(staleMs = STALE_TEMP_MS): Promise<void> {
    try {
      await sweepStore(staleMs);
    } finally {
      await sweepLocal(staleMs);
    }
  }

  async function sweepStore(staleMs: number): Promise<void> {
    await indexHoldings();
    if (config.storeSweep && (await acquireLease(objects, SWEEP_LEASE, instance, leaseMs))) {
      // A shared store holds other instances' writes in progress, however recently this
      // one started: the shorter start-up staleness is only for a store of its own (disk).
      const storeStaleMs = objects.kind === 'disk' ? staleMs : Math.max(staleMs, STALE_TEMP_MS);
      await previews.sweep(storeStaleMs);
      await projects.sweep({ staleMs: storeStaleMs, createdBefore: retentionMs > 0 ? Date.now() - retentionMs : 0, beforeRemove: (id, owner) => holdings.removeProject(owner, id) });
      await holdings.sweep();
      await objects.sweepIncomplete(storeStaleMs);
      await progress.sweep();
    }
  }

  async function sweepLocal(staleMs: number): Promise<void> {
    await assets.sweep(staleMs);
    await mirror.prune(staleMs);
    for (const name of await readdir(uploadDir).catch(() => [] as string[])) {
      const path = join(uploadDir, name);
      const info = await stat(path).catch(() => null);
      if (info !== null && info.mtimeMs < Date.now() - staleMs) await rm(path, { force: true, recursive: true });
    }
    await quota.recount();
  }

  let checked: { at: number; answer: Promise<Reachability> } | undefined;
  function storeReachability(): Promise<Reachability> {
    if (checked === undefined || performance.now() - checked.at > STORE_CHECK_MS) {
      const started = performance.now();
      const timeout = new Promise<Reachability>((resolve) => {
        setTimeout(() => resolve({ ok: false, latencyMs: performance.now() - started, reason: 'timeout', message: `no answer within ${STORE_CHECK_TIMEOUT_MS} ms` }), STORE_CHECK_TIMEOUT_MS).unref();
      });
      checked = { at: started, answer: Promise.race([objects.check(), timeout]) };
    }
    return checked.answer;
  }

  try {
    await sweep(START_STALE_MS);
  } catch (error) {
    // A shared store that is down at start is not this instance's fault: it starts, /health says 503, requests answer 503 until it is back.
    if (!isStoreUnavailable(error)) throw error;
    process.stderr.write(JSON.stringify({ level: 'warn', t: new Date().toISOString(), msg: 'object store unavailable at start', error: error.message }) + '\n');
  }

  return {
    config,
    budget,
    uploadDir,
    analyses: createAnalysisService({ previews, pool, quota, holdings }),
    projects: projectService,
    progress,
    maxMapBytes: Math.min(config.maxUploadBytes, budget.task.maxFileBytes),
    admitUpload(user, declaredBytes) {
      if (declaredBytes > budget.task.maxFileBytes + 64 * 1024) {
        throw new ServiceError('map_too_large', `the upload is ${declaredBytes} bytes; a map may have at most ${budget.task.maxFileBytes} here (MAX_MEMORY_MB)`);
      }
      let release: () => void = () => undefined;
      guard(() => { release = quota.reserve(declaredBytes); });
      return release;
    },
    async checkShare(user, declaredBytes) {
      // The count of previews is checked once the upload's hash is known: the same bytes again cost nothing.
      await holdings.checkBytes(user, declaredBytes).catch(diskToServiceError);
    },
    async health() {
      const storage = quota.state();
      const reach = await storeReachability();
      const store: StoreHealth = {
        kind: objects.kind, location: objects.location, reachable: reach.ok, latency_ms: Math.round(reach.latencyMs * 10) / 10,
        ...(reach.ok ? {} : { reason: reach.reason, message: reach.message }),
      };
      return {
        status: !reach.ok ? 'unavailable' : storage.full ? 'degraded' : 'ok',
        store,
        workers: pool.stats(),
        preview_cache: previewCacheHealth(previews.cacheInfo()),
        downloads: assets.stats(),
        storage,
        memory: { budget_mb: budget.totalMb, per_worker_mb: budget.perWorkerMb, rss_mb: Math.round(process.memoryUsage.rss() / 2 ** 20) },
      };
    },
    sweep,
    async close() {
      await projectService.close();
      await assets.close();
      await pool.close();
      await progress.close();
      await objects.close();
    },
  };
}
