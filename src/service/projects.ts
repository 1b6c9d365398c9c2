/**
 * The project service: create a project from a preview (download its assets, have a
 * worker build the document and stream it into the project store), find a project
 * for its owner, delete it. Refusals are ServiceErrors.
 */
import { setMaxListeners } from 'node:events';
import type { AssetDownloader, AssetOutcome } from '../assets/download.js';
import { AssetStoreError } from '../assets/errors.js';
import { projectTitle } from '../project/document.js';
import type { ScriptsMode } from '../project/scripts.js';
import { isSha256, readAssetMeta, type AssetMeta } from '../assets/store.js';
import { assetKeys } from '../store/backends/keys.js';
import type { ObjectStore, ObjectStream } from '../store/backends/types.js';
import type { PreviewStore } from '../store/previews.js';
import { isProjectId, type ProjectMeta, type ProjectStore } from '../store/projects.js';
import type { DiskQuota } from '../store/quota.js';
import type { WorkerPool } from '../workers/pool.js';
import { busyToServiceError, diskToServiceError, fileNameFor, guard } from './analysis.js';
import { ServiceError } from './errors.js';
import type { CreateProgressSink } from './progress.js';
import { projectSummary } from './summary.js';

export interface CreateRequest {
  user: string;
  previewHash: string;
  title: string;
  scriptsMode: ScriptsMode;
  /** Aborts when the client goes away: downloads stop, nothing is stored. */
  signal: AbortSignal;
  /** Told as assets settle and as the create moves on to building and storing. */
  progress?: CreateProgressSink;
}

export interface CreatedProject {
  projectId: string;
  assets: AssetOutcome[];
}

export interface ProjectService {
  /** Resolves to null when the request was aborted before the project was stored. */
  create(request: CreateRequest): Promise<CreatedProject | null>;
  /** The project's sidecar, when `user` owns it; not_found otherwise. */
  owned(user: string, id: string): Promise<ProjectMeta>;
  /** The project's summary as stored JSON text (summary.ts), when `user` owns it; not_found otherwise. Undefined for projects created before summaries were kept. */
  summary(user: string, id: string): Promise<{ meta: ProjectMeta; text: string | undefined }>;
  /** Deletes a project its owner asks to delete; not_found otherwise. */
  delete(user: string, id: string): Promise<void>;
  /** The project document's bytes as stored (see `meta.encoding`), when `user` owns it; not_found otherwise. Read the stream to its end or destroy it. */
  document(user: string, id: string): Promise<{ meta: ProjectMeta; stream: ObjectStream }>;
  /** One of the project's assets (bytes and meta), when `user` owns the project and it uses the asset; not_found otherwise. */
  asset(user: string, id: string, sha256: string): Promise<{ meta: AssetMeta; stream: ObjectStream }>;
}

export interface ProjectDeps {
  /** Where assets are kept (the store the downloader writes to). */
  objects: ObjectStore;
  previews: PreviewStore;
  projects: ProjectStore;
  pool: WorkerPool;
  assets: AssetDownloader;
  quota: DiskQuota;
}

export function createProjectService({ objects, previews, projects, pool, assets, quota }: ProjectDeps): ProjectService {
  async function create({ user, previewHash, title, scriptsMode, signal, progress }: CreateRequest): Promise<CreatedProject | null> {
    const preview = await previews.getFor(previewHash, user);
    if (!preview) throw new ServiceError('not_found', 'preview not found');
    guard(() => quota.checkUser(user, 'project', 0));
    guard(() => quota.checkRoom(1));
    // Downloads can take longer than what is left of the preview's life: keep it from being swept meanwhile.
    await previews.addUploader(preview.hash, user).catch(diskToServiceError);
    // The downloader listens on this signal once per asset id; hundreds are normal, not a leak.
    setMaxListeners(Infinity, signal);
    const outcomes = await assets.download(preview.assets, signal, progress ? (done, total, failed) => progress.assets(done, total, failed) : undefined).catch((error: unknown) => {
      if (error instanceof AssetStoreError) diskToServiceError(error.cause ?? error);
      throw error;
    });
    if (signal.aborted) return null;
    quota.add(outcomes.reduce((sum, outcome) => sum + (outcome.ok && !outcome.cached ? outcome.size : 0), 0));
    const { id, tempPath } = await projects.prepare();
    const createdAt = new Date().toISOString();
    const fileName = fileNameFor(preview, user);
    progress?.phase('building');
    // The map as a local file for the worker (a copy from the store when it has no local files).
    const place = await previews.openPlace(preview.hash);
    if (place === undefined) throw new ServiceError('not_found', 'preview not found');
    try {
      const built = await pool.build({
        path: place.path,
        documentPath: tempPath,
        diskRoomBytes: Math.min(quota.room(), quota.userRoom(user)),
        title,
        owner: user,
        createdAt,
        previewHash: preview.hash,
        fileName,
        format: preview.format,
        fileSize: preview.fileSize,
        scriptsMode,
        assets: outcomes,
        ...(preview.scriptCodes !== undefined ? { scriptCodes: preview.scriptCodes } : {}),
      }).catch(busyToServiceError);
      if (!built.ok) {
        switch (built.reason) {
          case 'missing': throw new ServiceError('not_found', 'preview not found');
          case 'too_large': throw new ServiceError('map_too_large', built.message);
          case 'disk_full': throw quota.userRoom(user) < quota.room()
            ? new ServiceError('quota_exceeded', 'the project document would take more than your share of the disk (USER_MAX_BYTES)')
            : new ServiceError('storage_full', built.message);
          default: throw new ServiceError('not_a_place', built.message);
        }
      }
      if (signal.aborted) return null; // nobody would learn the project's id
      progress?.phase('storing');
      const summary = JSON.stringify(projectSummary({
        projectId: id, title: projectTitle(title, fileName), createdAt, scriptsMode, fileName, fileSize: preview.fileSize,
        documentBytes: built.bytes, documentJsonBytes: built.jsonBytes, documentEncoding: built.encoding, outcomes, report: preview.report,
      }));
      const bytes = built.bytes + Buffer.byteLength(summary);
      await projects.commit(id, tempPath, { owner: user, assets: built.assetHashes, bytes, createdAt: Date.now(), encoding: built.encoding }, summary).catch(diskToServiceError);
      quota.add(bytes);
      quota.track('project', id, bytes, [user]);
      return { projectId: id, assets: outcomes };
    } finally {
      await projects.discard(tempPath); // a no-op once committed (the temp name is gone)
      await place.release();
    }
  }

  async function owned(user: string, id: string): Promise<ProjectMeta> {
    const meta = isProjectId(id) ? await projects.getMeta(id) : undefined;
    if (!meta || meta.owner !== user) throw new ServiceError('not_found', 'project not found');
    return meta;
  }

  async function remove(user: string, id: string): Promise<void> {
    const meta = await owned(user, id);
    await projects.delete(id);
    quota.add(-(meta.bytes ?? 0));
    quota.untrack('project', id);
  }

  async function summary(user: string, id: string): Promise<{ meta: ProjectMeta; text: string | undefined }> {
    const meta = await owned(user, id);
    return { meta, text: await projects.getSummary(id) };
  }

  async function document(user: string, id: string): Promise<{ meta: ProjectMeta; stream: ObjectStream }> {
    const meta = await owned(user, id);
    const stream = await projects.openDocument(id);
    if (stream === undefined) throw new ServiceError('not_found', 'project not found');
    return { meta, stream };
  }

  async function asset(user: string, id: string, sha256: string): Promise<{ meta: AssetMeta; stream: ObjectStream }> {
    const project = await owned(user, id);
    if (!isSha256(sha256) || !project.assets.includes(sha256)) throw new ServiceError('not_found', 'asset not found');
    const meta = await readAssetMeta(objects, sha256);
    const stream = meta === undefined ? undefined : await objects.getStream(assetKeys.bytes(sha256));
    if (meta === undefined || stream === undefined) throw new ServiceError('not_found', 'asset not found');
    return { meta, stream };
  }

  return { create, owned, summary, delete: remove, document, asset };
}
