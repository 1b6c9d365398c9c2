/**
 * What every route shares: configuration, the stores, the worker pool, the asset
 * downloader, and the analysis service that deduplicates work by file hash.
 */
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import type { Config } from '../config.js';
import { createAssetDownloader, type AssetDownloader } from '../assets/download.js';
import { createPreviewStore, type Preview, type PreviewStore } from '../store/previews.js';
import { createProjectStore, type ProjectStore } from '../store/projects.js';
import { createWorkerPool, type WorkerPool } from '../workers/pool.js';
import { userFromHeaders } from './auth.js';
import { HttpError } from './errors.js';
import { beginExchange, type Exchange, type ExchangeHooks } from './exchange.js';

export interface UploadedFile {
  path: string;
  sha256: string;
  size: number;
  fileName: string;
  user: string;
}

/** The name this user gave the file (the first uploader's only as a fallback for old previews). */
export function fileNameFor(preview: Preview, user: string): string {
  return preview.fileNames?.[user] ?? preview.fileName;
}

export interface ServiceContext {
  readonly config: Config;
  readonly uploadDir: string;
  readonly previews: PreviewStore;
  readonly projects: ProjectStore;
  readonly pool: WorkerPool;
  readonly assets: AssetDownloader;
  readonly analyses: { analyze(upload: UploadedFile): Promise<Preview> };
  begin(res: HttpResponse, req: HttpRequest): Exchange;
  authenticate(header: (name: string) => string): string | null;
  logError(error: unknown): void;
}

export async function createContext(config: Config, hooks: ExchangeHooks): Promise<ServiceContext> {
  const uploadDir = join(config.dataDir, 'uploads');
  await mkdir(uploadDir, { recursive: true });
  // Uploads left by a process that died mid-request belong to nobody now.
  for (const name of await readdir(uploadDir)) await rm(join(uploadDir, name), { force: true, recursive: true });

  const previews = createPreviewStore({ dataDir: config.dataDir, cacheBytes: config.previewCacheBytes, ttlSeconds: config.previewTtlSeconds });
  const projects = createProjectStore({ dataDir: config.dataDir });
  const pool = createWorkerPool({ workers: config.workers, maxQueue: config.maxQueue });
  const assets = createAssetDownloader({
    dataDir: config.dataDir,
    deliveryUrl: config.assetDeliveryUrl,
    urlTemplate: config.assetUrlTemplate,
    apiKey: config.assetApiKey,
    concurrency: config.assetConcurrency,
    timeoutMs: config.assetTimeoutMs,
    maxBytes: config.assetMaxBytes,
    retries: config.assetRetries,
  });
  const logError = (error: unknown): void => {
    process.stderr.write(JSON.stringify({ level: 'error', t: new Date().toISOString(), error: (error as Error)?.stack ?? String(error) }) + '\n');
  };

  // One decode per file at a time, however many people upload it at once.
  const inFlight = new Map<string, Promise<Preview>>();
  async function analyze(upload: UploadedFile): Promise<Preview> {
    const stored = await previews.get(upload.sha256);
    if (stored) return (await previews.addUploader(upload.sha256, upload.user, upload.fileName)) ?? stored;
    let job = inFlight.get(upload.sha256);
    if (!job) {
      job = (async () => {
        const result = await pool.analyze({ path: upload.path, fileName: upload.fileName, fileSize: upload.size });
        if (!result.ok) throw new HttpError(422, 'not_a_place', result.message);
        return previews.put({
          hash: upload.sha256, report: result.report, assets: result.assets, scriptCodes: result.scriptCodes, fileName: upload.fileName,
          fileSize: upload.size, format: result.format, uploaders: [upload.user], fileNames: { [upload.user]: upload.fileName },
        }, upload.path);
      })();
      inFlight.set(upload.sha256, job);
      void job.finally(() => inFlight.delete(upload.sha256)).catch(() => {});
    }
    const preview = await job;
    if (preview.fileNames?.[upload.user] === upload.fileName) return preview;
    return (await previews.addUploader(upload.sha256, upload.user, upload.fileName)) ?? preview;
  }

  return {
    config, uploadDir, previews, projects, pool, assets,
    analyses: { analyze },
    begin: (res, req) => beginExchange(res, req, hooks),
    authenticate: (header) => userFromHeaders(config.authMode, header),
    logError,
  };
}
