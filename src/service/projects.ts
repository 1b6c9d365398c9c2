/**
 * The project service: create a project from a preview (download its assets, have the
 * workers convert its meshes and union models and build the document, streamed into
 * the project store), find a project for its owner, delete it, and build its scene.glb
 * on first request. Refusals are ServiceErrors.
 */
import { setMaxListeners } from 'node:events';
import { link, readFile, rename, rm, stat, utimes, writeFile, copyFile } from 'node:fs/promises';
import { createSingleFlight } from '../concurrency/index.js';
import { conversionOf } from '../assets/converted.js';
import type { AssetDownloader, AssetOutcome } from '../assets/download.js';
import { AssetStoreError } from '../assets/errors.js';
import { projectTitle } from '../project/document.js';
import type { ScriptsMode } from '../project/scripts.js';
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
  /** Every asset's outcome; downloaded meshes and union models carry their `conversion`. */
  assets: AssetOutcome[];
}

/** Kinds whose downloads are converted to glTF meshes at create. */
const CONVERTED_KINDS = new Set(['mesh', 'union']);

export interface ProjectService {
  /** Resolves to null when the request was aborted before the project was stored. */
  create(request: CreateRequest): Promise<CreatedProject | null>;
  /** The project's sidecar, when `user` owns it; not_found otherwise. */
  owned(user: string, id: string): Promise<ProjectMeta>;
  /** The project's summary as stored JSON text (summary.ts), when `user` owns it; not_found otherwise. Undefined for projects created before summaries were kept. */
  summary(user: string, id: string): Promise<{ meta: ProjectMeta; text: string | undefined }>;
  /** Deletes a project its owner asks to delete; not_found otherwise. */
  delete(user: string, id: string): Promise<void>;
  documentPath(id: string): string;
  /** The project's scene.glb for its owner, built on first request (one build however many ask at once). */
  scene(user: string, id: string): Promise<string>;
}

export interface ProjectDeps {
  previews: PreviewStore;
  projects: ProjectStore;
  pool: WorkerPool;
  assets: AssetDownloader;
  quota: DiskQuota;
  dataDir: string;
  /** Largest scene.glb built (the memory budget's document size). */
  maxSceneBytes: number;
}

export function createProjectService({ previews, projects, pool, assets, quota, dataDir, maxSceneBytes }: ProjectDeps): ProjectService {
  const sceneBuilds = createSingleFlight<string>();

  /** Converts every downloaded mesh and union model once (the store remembers), in the workers. */
  async function convert(outcomes: AssetOutcome[]): Promise<AssetOutcome[]> {
    const sha256s = [...new Set(outcomes.flatMap((o) => (o.ok && CONVERTED_KINDS.has(o.kind) ? [o.sha256] : [])))];
    if (sha256s.length === 0) return outcomes;
    const result = await pool.convert({ dataDir, sha256s }).catch(busyToServiceError);
    const records = new Map(result.ok ? result.records.map((record) => [record.sha256, conversionOf(record)]) : []);
    return outcomes.map((o) => {
      if (!o.ok || !CONVERTED_KINDS.has(o.kind)) return o;
      const conversion = records.get(o.sha256) ?? { converted: false as const, reason: 'too_large' as const, message: result.ok ? 'not converted' : result.message };
      return { ...o, conversion };
    });
  }

  /** What scene.glb needs later: the map (linked, else copied) and which bytes each asset id gave. */
  async function keepScene(id: string, placePath: string, outcomes: AssetOutcome[]): Promise<void> {
    const paths = projects.scenePaths(id);
    try {
      await link(placePath, paths.place);
      const now = new Date();
      await utimes(paths.place, now, now); // a fresh time, so the sweep does not take it for a leftover
    } catch {
      await copyFile(placePath, paths.place);
    }
    const table: Record<string, string> = {};
    for (const o of outcomes) if (o.ok && (CONVERTED_KINDS.has(o.kind) || o.kind === 'image')) table[o.id] = o.sha256;
    await writeFile(paths.assets, JSON.stringify(table));
  }
  async function create({ user, previewHash, title, scriptsMode, signal, progress }: CreateRequest): Promise<CreatedProject | null> {
    const preview = await previews.get(previewHash);
    if (!preview || !preview.uploaders.includes(user)) throw new ServiceError('not_found', 'preview not found');
    guard(() => quota.checkUser(user, 'project', 0));
    guard(() => quota.checkRoom(1));
    // Downloads can take longer than what is left of the preview's life: keep it from being swept meanwhile.
    await previews.addUploader(preview.hash, user).catch(diskToServiceError);
    // The downloader listens on this signal once per asset id; hundreds are normal, not a leak.
    setMaxListeners(Infinity, signal);
    const downloaded = await assets.download(preview.assets, signal, progress ? (done, total, failed) => progress.assets(done, total, failed) : undefined).catch((error: unknown) => {
      if (error instanceof AssetStoreError) diskToServiceError(error.cause ?? error);
      throw error;
    });
    if (signal.aborted) return null;
    quota.add(downloaded.reduce((sum, outcome) => sum + (outcome.ok && !outcome.cached ? outcome.size : 0), 0));
    progress?.phase('converting');
    const outcomes = await convert(downloaded);
    if (signal.aborted) return null;
    const { id, tempPath } = await projects.prepare();
    const createdAt = new Date().toISOString();
    const fileName = fileNameFor(preview, user);
    progress?.phase('building');
    try {
      const built = await pool.build({
        path: previews.placePath(preview.hash),
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
      await keepScene(id, previews.placePath(preview.hash), outcomes).catch(diskToServiceError);
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

  async function scene(user: string, id: string): Promise<string> {
    await owned(user, id);
    const paths = projects.scenePaths(id);
    if (await stat(paths.glb).then(() => true, () => false)) return paths.glb;
    return sceneBuilds.run(id, async () => {
      let table: Record<string, string>;
      try {
        table = JSON.parse(await readFile(paths.assets, 'utf8')) as Record<string, string>;
      } catch {
        throw new ServiceError('not_found', 'this project has no scene (it was created before scenes were kept)');
      }
      guard(() => quota.checkRoom(1));
      const temp = `${paths.glb}.${Math.random().toString(36).slice(2)}.tmp`.replace(/([^/]+)$/, '.$1');
      try {
        const built = await pool.scene({
          path: paths.place, dataDir, assets: Object.entries(table).filter(([, sha]) => typeof sha === 'string'),
          glbPath: temp, maxBytes: Math.min(maxSceneBytes, quota.room()),
        }).catch(busyToServiceError);
        if (!built.ok) {
          switch (built.reason) {
            case 'missing': throw new ServiceError('not_found', 'this project has no scene (its map is gone)');
            case 'too_large': throw new ServiceError('map_too_large', built.message);
            case 'disk_full': throw new ServiceError('storage_full', built.message);
            default: throw new ServiceError('not_a_place', built.message);
          }
        }
        await rename(temp, paths.glb).catch(diskToServiceError);
        quota.add(built.bytes);
        return paths.glb;
      } finally {
        await rm(temp, { force: true });
      }
    });
  }

  async function summary(user: string, id: string): Promise<{ meta: ProjectMeta; text: string | undefined }> {
    const meta = await owned(user, id);
    return { meta, text: await projects.getSummary(id) };
  }

  return { create, owned, summary, delete: remove, documentPath: (id) => projects.documentPath(id), scene };
}
