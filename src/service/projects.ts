/**
 * The project service: create a project from a preview (download its assets, have a
 * worker build the document and stream it into the project store), find a project
 * for its owner, delete it. Refusals are ServiceErrors.
 */
import { setMaxListeners } from 'node:events';
import type { AssetDownloader, AssetOutcome } from '../assets/download.js';
import { AssetStoreError } from '../assets/errors.js';
import type { ScriptsMode } from '../project/scripts.js';
import type { PreviewStore } from '../store/previews.js';
import { isProjectId, type ProjectMeta, type ProjectStore } from '../store/projects.js';
import type { DiskQuota } from '../store/quota.js';
import type { WorkerPool } from '../workers/pool.js';
import { busyToServiceError, diskToServiceError, fileNameFor, guard } from './analysis.js';
import { ServiceError } from './errors.js';

export interface CreateRequest {
  user: string;
  previewHash: string;
  title: string;
  scriptsMode: ScriptsMode;
  /** Aborts when the client goes away: downloads stop, nothing is stored. */
  signal: AbortSignal;
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
  /** Deletes a project its owner asks to delete; not_found otherwise. */
  delete(user: string, id: string): Promise<void>;
  documentPath(id: string): string;
}

export interface ProjectDeps {
  previews: PreviewStore;
  projects: ProjectStore;
  pool: WorkerPool;
  assets: AssetDownloader;
  quota: DiskQuota;
}

export function createProjectService({ previews, projects, pool, assets, quota }: ProjectDeps): ProjectService {
  async function create({ user, previewHash, title, scriptsMode, signal }: CreateRequest): Promise<CreatedProject | null> {
    const preview = await previews.get(previewHash);
    if (!preview || !preview.uploaders.includes(user)) throw new ServiceError('not_found', 'preview not found');
    guard(() => quota.checkUser(user, 'project', 0));
    guard(() => quota.checkRoom(1));
    // Downloads can take longer than what is left of the preview's life: keep it from being swept meanwhile.
    await previews.addUploader(preview.hash, user).catch(diskToServiceError);
    // The downloader listens on this signal once per asset id; hundreds are normal, not a leak.
    setMaxListeners(Infinity, signal);
    const outcomes = await assets.download(preview.assets, signal).catch((error: unknown) => {
      if (error instanceof AssetStoreError) diskToServiceError(error.cause ?? error);
      throw error;
    });
    if (signal.aborted) return null;
    quota.add(outcomes.reduce((sum, outcome) => sum + (outcome.ok && !outcome.cached ? outcome.size : 0), 0));
    const { id, tempPath } = await projects.prepare();
    try {
      const built = await pool.build({
        path: previews.placePath(preview.hash),
        documentPath: tempPath,
        diskRoomBytes: Math.min(quota.room(), quota.userRoom(user)),
        title,
        owner: user,
        createdAt: new Date().toISOString(),
        previewHash: preview.hash,
        fileName: fileNameFor(preview, user),
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
      await projects.commit(id, tempPath, { owner: user, assets: built.assetHashes, bytes: built.bytes, createdAt: Date.now() }).catch(diskToServiceError);
      quota.add(built.bytes);
      quota.track('project', id, built.bytes, [user]);
      return { projectId: id, assets: outcomes };
    } finally {
      await projects.discard(tempPath); // a no-op once committed (the temp name is gone)
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

  return { create, owned, delete: remove, documentPath: (id) => projects.documentPath(id) };
}
