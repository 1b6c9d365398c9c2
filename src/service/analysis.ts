/**
 * The analysis service: an uploaded file (already on disk, hashed) to its preview.
 * The same bytes are decoded once however many people upload them at once (single
 * flight by hash on one instance) or later (the stored analysis, on any instance); every uploader is recorded, each
 * with the name they gave the file. Refusals are ServiceErrors.
 */
import { createSingleFlight } from '../concurrency/index.js';
import type { ObjectStream } from '../store/backends/types.js';
import { StoreUnavailableError } from '../store/backends/errors.js';
import { ofUser, type PreviewStore, type Preview, type UserPreview } from '../store/previews.js';
import type { Holdings } from '../store/holdings.js';
import type { DiskQuota } from '../store/quota.js';
import { PoolBusyError, type WorkerPool } from '../workers/pool.js';
import { asServiceError, ServiceError } from './errors.js';

export interface UploadedFile {
  path: string;
  sha256: string;
  size: number;
  fileName: string;
  user: string;
}

export interface AnalysisService {
  /** The preview of an upload, as its uploader sees it; the temp file at `upload.path` is the caller's to remove (the store moved it when it kept it). */
  analyze(upload: UploadedFile): Promise<UserPreview>;
  /** The picture of a preview, for one of its uploaders; not_found for anyone else, or when it has none. */
  picture(user: string, hash: string): Promise<ObjectStream>;
}

export interface AnalysisDeps {
  previews: PreviewStore;
  pool: WorkerPool;
  quota: DiskQuota;
  /** Each user's share, counted in the store. */
  holdings: Holdings;
}

/** Where a preview's picture is served (to its uploaders only). */
export function pictureUrl(hash: string): string {
  return `/api-rbxl/previews/${hash}/image.png`;
}

export function createAnalysisService({ previews, pool, quota, holdings }: AnalysisDeps): AnalysisService {
  const decodes = createSingleFlight<UserPreview>();

  async function decodeAndStore(upload: UploadedFile): Promise<UserPreview> {
    const result = await pool.analyze({ path: upload.path, fileName: upload.fileName, fileSize: upload.size }).catch(busyToServiceError);
    if (!result.ok) throw new ServiceError(result.reason === 'too_large' ? 'map_too_large' : 'not_a_place', result.message);
    const { picture } = result;
    // The report names the picture by the preview's hash: the same URL for every uploader, each checked on read.
    const report = { ...result.report, picture: picture ? { url: pictureUrl(upload.sha256), width: picture.width, height: picture.height } : null };
    const preview = await previews.put({
      hash: upload.sha256, report, assets: result.assets, scriptCodes: result.scriptCodes, fileName: upload.fileName,
      fileSize: upload.size, format: result.format, user: upload.user,
      ...(picture ? { picture: { width: picture.width, height: picture.height } } : {}),
    }, upload.path, picture?.png).catch(diskToServiceError);
    const bytes = await previews.diskBytes(preview.hash);
    quota.add(bytes);
    await holdings.addPreview(upload.user, preview.hash, bytes, preview.expiresAt).catch(diskToServiceError);
    return preview;
  }

  async function analyze(upload: UploadedFile): Promise<UserPreview> {
    const reservation = await holdings.reserve(upload.user, 'preview', upload.size, upload.sha256).catch(diskToServiceError);
    try {
      return await analyzeReserved(upload);
    } finally {
      reservation.release(); // its entry is written by now, or it failed
    }
  }

  async function analyzeReserved(upload: UploadedFile): Promise<UserPreview> {
    const hash = upload.sha256;
    // The same bytes analysed before, on any instance: this upload only adds its uploader.
    let preview = (await previews.hasAnalysis(hash))
      ? await previews.addUploader(hash, upload.user, upload.fileName, true).catch(diskToServiceError)
      : undefined;
    if (preview === undefined) {
      preview = await decodes.run(hash, () => decodeAndStore(upload));
      // Stored by this call (decodeAndStore counted it), or by a concurrent upload of the same bytes, maybe another user's.
      if (preview.user === upload.user && preview.fileName === upload.fileName) return preview;
      const joined = await previews.addUploader(hash, upload.user, upload.fileName, true).catch(diskToServiceError);
      // The analysis went from the store between the two calls: this upload is not kept, and says so (never another user's view).
      if (joined === undefined) throw new StoreUnavailableError('the analysis of this file left the store before the upload was added to it; send the file again', 'addUploader', hash, 'server_error', 5);
      preview = joined;
    }
    await holdings.addPreview(upload.user, hash, await previews.diskBytes(hash), preview.expiresAt).catch(diskToServiceError);
    return preview;
  }

  async function picture(user: string, hash: string): Promise<ObjectStream> {
    const preview = await previews.getFor(hash, user);
    const stream = preview?.picture ? await previews.openPicture(hash) : undefined;
    if (stream === undefined) throw new ServiceError('not_found', 'picture not found');
    return stream;
  }

  return { analyze, picture };
}

/** When `user`'s own upload of a preview expires (not another uploader's later one). */
export function expiryOf(preview: Preview, user: string): number {
  return ofUser(preview.expiries, user) ?? preview.expiresAt;
}

/** Runs a quota check, turning its refusal into a ServiceError. */
export function guard(check: () => void): void {
  try {
    check();
  } catch (error) {
    throw asServiceError(error);
  }
}

export function diskToServiceError(error: unknown): never {
  throw asServiceError(error);
}

export function busyToServiceError(error: unknown): never {
  if (error instanceof PoolBusyError) throw new ServiceError('busy', 'the service is busy; retry shortly');
  throw error;
}
