/**
 * The service behind the HTTP layer: stores, worker pool, asset downloader, disk
 * quota and memory budget, wired once; the analysis and project services on top; the
 * sweeper that keeps the data directory within its bounds. `src/http` turns requests
 * into calls of this and ServiceErrors into statuses.
 */
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../config.js';
import { createAssetDownloader, type AssetDownloader } from '../assets/download.js';
import { createPreviewStore, STALE_TEMP_MS, type PreviewStore } from '../store/previews.js';
import { createProjectStore } from '../store/projects.js';
import { createDiskQuota, type StorageState } from '../store/quota.js';
import { createWorkerPool, type WorkerPool } from '../workers/pool.js';
import { createAnalysisService, guard, type AnalysisService } from './analysis.js';
import { memoryBudget, type MemoryBudget } from './budget.js';
import { ServiceError } from './errors.js';
import { createProgressBoard, type ProgressBoard } from './progress.js';
import { createProjectService, type ProjectService } from './projects.js';

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
  /** Progress of creates that named themselves (the create route's `X-Create-Id`), per user. */
  readonly progress: ProgressBoard;
  /** The largest map file this service accepts, in bytes: MAX_UPLOAD_BYTES, or less when the memory budget says so. */
  readonly maxMapBytes: number;
  /**
   * Whether an upload of `declaredBytes` may start (checked from its Content-Length,
   * before any of it is read): the memory budget's file size, the disk, the user's share.
   */
  admitUpload(user: string, declaredBytes: number): void;
  health(): ServiceHealth;
  /** Expired previews, old projects, stale temp files; then disk use is counted again. */
  sweep(staleMs?: number): Promise<void>;
  close(): Promise<void>;
}

export interface ServiceHealth {
  /** `degraded` while the disk is full: analyze and create answer 507 until it has room. */
  status: 'ok' | 'degraded';
  workers: ReturnType<WorkerPool['stats']>;
  preview_cache: ReturnType<PreviewStore['cacheInfo']>;
  downloads: ReturnType<AssetDownloader['stats']>;
  storage: StorageState;
  memory: { budget_mb: number; per_worker_mb: number; rss_mb: number };
}

/** At start, a temp file not written to for this long belongs to a process that died (a kill -9 mid-create). */
const START_STALE_MS = 60_000;

export async function createService(config: Config): Promise<Service> {
  const budget = memoryBudget({ maxMemoryMb: config.maxMemoryMb, workers: config.workers, previewCacheBytes: config.previewCacheBytes });
  const uploadDir = join(config.dataDir, 'uploads');
  await mkdir(uploadDir, { recursive: true });
  // Uploads left by a process that died mid-request belong to nobody now.
  for (const name of await readdir(uploadDir)) await rm(join(uploadDir, name), { force: true, recursive: true });

  const previews = createPreviewStore({ dataDir: config.dataDir, cacheBytes: config.previewCacheBytes, ttlSeconds: config.previewTtlSeconds });
  const projects = createProjectStore({ dataDir: config.dataDir });
  const quota = createDiskQuota({
    dataDir: config.dataDir, maxDataBytes: config.maxDataBytes,
    userMaxBytes: config.userMaxBytes, userMaxPreviews: config.userMaxPreviews, userMaxProjects: config.userMaxProjects,
  });
  const pool = createWorkerPool({ workers: config.workers, maxQueue: config.maxQueue, limits: budget.task, resourceLimits: budget.resourceLimits });
  const assets = createAssetDownloader({
    dataDir: config.dataDir,
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

  const retentionMs = config.projectRetentionDays * 24 * 60 * 60 * 1000;
  async function sweep(staleMs = STALE_TEMP_MS): Promise<void> {
    for (const hash of await previews.sweep()) quota.untrack('preview', hash);
    for (const id of await projects.sweep({ staleMs, createdBefore: retentionMs > 0 ? Date.now() - retentionMs : 0 })) quota.untrack('project', id);
    await assets.sweep(staleMs);
    for (const name of await readdir(uploadDir).catch(() => [] as string[])) {
      const path = join(uploadDir, name);
      const info = await stat(path).catch(() => null);
      if (info !== null && info.mtimeMs < Date.now() - staleMs) await rm(path, { force: true, recursive: true });
    }
    await quota.recount();
  }

  // Who holds what, before the first request: the quota's per-user index.
  await sweep(START_STALE_MS);
  for (const preview of await previews.list()) quota.track('preview', preview.hash, await previews.diskBytes(preview.hash), preview.uploaders);
  for (const { id, meta } of await projects.list()) quota.track('project', id, meta.bytes ?? 0, [meta.owner]);

  return {
    config,
    budget,
    uploadDir,
    analyses: createAnalysisService({ previews, pool, quota }),
    projects: createProjectService({ previews, projects, pool, assets, quota, dataDir: config.dataDir, maxSceneBytes: budget.task.maxDocumentBytes }),
    progress: createProgressBoard(),
    maxMapBytes: Math.min(config.maxUploadBytes, budget.task.maxFileBytes),
    admitUpload(user, declaredBytes) {
      if (declaredBytes > budget.task.maxFileBytes + 64 * 1024) {
        throw new ServiceError('map_too_large', `the upload is ${declaredBytes} bytes; a map may have at most ${budget.task.maxFileBytes} here (MAX_MEMORY_MB)`);
      }
      guard(() => quota.checkRoom(declaredBytes));
      // The count of previews is checked once the upload's hash is known: the same bytes again cost nothing.
      guard(() => quota.checkUserBytes(user, declaredBytes));
    },
    health() {
      const storage = quota.state();
      return {
        status: storage.full ? 'degraded' : 'ok',
        workers: pool.stats(),
        preview_cache: previews.cacheInfo(),
        downloads: assets.stats(),
        storage,
        memory: { budget_mb: budget.totalMb, per_worker_mb: budget.perWorkerMb, rss_mb: Math.round(process.memoryUsage.rss() / 2 ** 20) },
      };
    },
    sweep,
    async close() {
      await assets.close();
      await pool.close();
    },
  };
}
