/**
 * The project service: create a project from a preview (download its assets, have the
 * workers convert its meshes and union models and build the document, streamed into
 * the project store), find a project for its owner, delete it, and build its scene.glb
 * on first request. Refusals are ServiceErrors.
 */
import { setMaxListeners } from 'node:events';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createKeyedLock, createSingleFlight } from '../concurrency/index.js';
import { conversionOf, finishedConversions } from '../assets/converted.js';
import type { AssetDownloader, AssetOutcome } from '../assets/download.js';
import { AssetStoreError } from '../assets/errors.js';
import { projectTitle } from '../project/document.js';
import type { ScriptsMode } from '../project/scripts.js';
import { isSha256, readAssetMeta, type AssetMeta } from '../assets/store.js';
import { CONVERTER_VERSION } from '../scene/convert.js';
import { assetKeys, projectKeys } from '../store/backends/keys.js';
import type { LocalMirror } from '../store/mirror.js';
import type { ObjectStore, ObjectStream } from '../store/backends/types.js';
import type { PreviewStore, UserPreview } from '../store/previews.js';
import { isProjectId, type ProjectMeta, type ProjectStore } from '../store/projects.js';
import type { Holdings, Reservation } from '../store/holdings.js';
import { QuotaExceededError, type DiskQuota } from '../store/quota.js';
import { LRUCache } from 'lru-cache';
import type { WorkerPool } from '../workers/pool.js';
import { busyToServiceError, diskToServiceError, guard } from './analysis.js';
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
  /** Asset ids of the map past the ones a create downloads (MAX_DOWNLOADED_ASSET_IDS): not attempted, so failed. */
  notAttempted: number;
}

/** Kinds whose downloads are converted to glTF meshes at create. */
const CONVERTED_KINDS = new Set(['mesh', 'union']);

export interface ProjectService {
  /** Resolves to null when the request was aborted before the project was stored. */
  create(request: CreateRequest): Promise<CreatedProject | null>;
  /** The project's sidecar, when `user` owns it; not_found otherwise. */
  owned(user: string, id: string): Promise<ProjectMeta>;
  /** The project's summary as stored (summary.ts; a stream), when `user` owns it; not_found otherwise. Undefined for projects created before summaries were kept. */
  summary(user: string, id: string): Promise<{ meta: ProjectMeta; stream: ObjectStream | undefined }>;
  /** Deletes a project its owner asks to delete; not_found otherwise. */
  delete(user: string, id: string): Promise<void>;
  /** The project document's bytes as stored (see `meta.encoding`), when `user` owns it; not_found otherwise. Read the stream to its end or destroy it. */
  document(user: string, id: string): Promise<{ meta: ProjectMeta; stream: ObjectStream }>;
  /** Stops retrying share entries (each still pending is reported uncounted) and waits at most `timeoutMs` for the writes in flight. */
  close(timeoutMs?: number): Promise<void>;
  /** One of the project's assets (bytes and meta), when `user` owns the project and it uses the asset; not_found otherwise. */
  asset(user: string, id: string, sha256: string): Promise<{ meta: AssetMeta; stream: ObjectStream }>;
  /** The project's scene.glb for its owner, built on first request (one build per instance however many ask at once; stored for every instance). */
  scene(user: string, id: string): Promise<ObjectStream>;
}

export interface ProjectDeps {
  /** Where assets are kept (the store the downloader writes to). */
  objects: ObjectStore;
  previews: PreviewStore;
  projects: ProjectStore;
  pool: WorkerPool;
  assets: AssetDownloader;
  quota: DiskQuota;
  /** Each user's share, counted in the store. */
  holdings: Holdings;
  /** The files the workers read and write (assets, converted meshes, maps): the store's own on disk, local copies on S3. */
  mirror: LocalMirror;
  /** A local folder for scenes being built. */
  workDir: string;
  /** Largest scene.glb built (the memory budget's document size). */
  maxSceneBytes: number;
  /**
   * The limits a scene build runs under (task limits, TASK_TIMEOUT_MS, converter), as
   * text: a refusal under the same limits is answered again without building.
   */
  sceneLimits: string;
  /** A made project whose share entry the store refused every time: it stays, uncounted. */
  onUncounted?: (id: string, error: unknown) => void;
}

/** A scene refusal kept beside the project, so the next request does not spend a worker on the same answer. */
interface SceneRefusal {
  code: 'map_too_large' | 'not_a_place';
  message: string;
  limits: string;
}

/** The keys a conversion of `sha256s` reads (the bytes) and writes (GLB and record). */
function conversionKeys(sha256s: readonly string[]): { read: string[]; written: string[] } {
  const written = sha256s.flatMap((sha256) => [assetKeys.converted(CONVERTER_VERSION, sha256, 'glb'), assetKeys.converted(CONVERTER_VERSION, sha256, 'json')]);
  return { read: [...sha256s.map(assetKeys.bytes), ...written], written };
}

/** Waits before each new try of a made project's share entry that the store refused. */
const COUNT_RETRY_MS = [250, 1000, 4000];

export function createProjectService({ objects, mirror, workDir, previews, projects, pool, assets, quota, holdings, maxSceneBytes, sceneLimits, onUncounted }: ProjectDeps): ProjectService {
  const sceneBuilds = createSingleFlight<void>();
  // A user's scenes are checked against their share and counted one at a time: two
  // built at once must not both pass a check that has room for one.
  const sceneShares = createKeyedLock();
  const deletes = createKeyedLock();
  /** Scenes refused for their owner's share, with their size (this instance's memory; a few thousand at most). */
  const shareRefusedScenes = new LRUCache<string, number>({ max: 4096 });
  const sceneOverShare = (): ServiceError =>
    new ServiceError('quota_exceeded', 'your share of the service has no room for this project\'s scene.glb (USER_MAX_BYTES); delete projects or let previews expire to make room');
  /** Share entries of made projects being written (and tried again); close ends their retries. */
  const counting = new Set<Promise<void>>();
  const stopCounting = new AbortController();
  /** Per project whose entry is being tried again: stops the tries when the project is deleted here. */
  const retrying = new Map<string, AbortController>();

  /** Converts every downloaded mesh and union model once (the store remembers, for every instance), in the workers. */
  async function convert(outcomes: AssetOutcome[]): Promise<AssetOutcome[]> {
    const sha256s = [...new Set(outcomes.flatMap((o) => (o.ok && CONVERTED_KINDS.has(o.kind) ? [o.sha256] : [])))];
    if (sha256s.length === 0) return outcomes;
    const keys = conversionKeys(sha256s);
    // The copies stay until the records are read back (a sweep meanwhile leaves them).
    const release = await mirror.fetch(keys.read);
    try {
      return await converted(outcomes, sha256s, keys.written);
    } finally {
      release();
    }
  }

  /** The conversion itself, on the copies `convert` holds. */
  async function converted(outcomes: AssetOutcome[], sha256s: string[], written: string[]): Promise<AssetOutcome[]> {
    const result = await pool.convert({ dataDir: mirror.root, sha256s }).catch(busyToServiceError);
    await mirror.push(written);
    // A batch refused part-way (past TASK_TIMEOUT_MS, or out of memory) still wrote the records of the meshes it finished (a few small files).
    const finished = result.ok ? result.records : finishedConversions(mirror.root, sha256s);
    const records = new Map(finished.map((record) => [record.sha256, conversionOf(record)]));
    return outcomes.map((o) => {
      if (!o.ok || !CONVERTED_KINDS.has(o.kind)) return o;
      const conversion = records.get(o.sha256) ?? { converted: false as const, reason: 'too_large' as const, message: result.ok ? 'not converted' : result.message };
      return { ...o, conversion };
    });
  }

  /** What scene.glb needs later, kept with the project (before its sidecar): the map and which bytes each asset id gave. */
  async function keepScene(id: string, placePath: string, outcomes: AssetOutcome[]): Promise<void> {
    const table: Record<string, string> = {};
    for (const o of outcomes) if (o.ok && (CONVERTED_KINDS.has(o.kind) || o.kind === 'image')) table[o.id] = o.sha256;
    await projects.keepScene(id, placePath, table);
  }
  async function create(request: CreateRequest): Promise<CreatedProject | null> {
    const preview = await previews.getFor(request.previewHash, request.user);
    if (!preview) throw new ServiceError('not_found', 'preview not found');
    const reservation = await holdings.reserve(request.user, 'project', 0).catch(diskToServiceError);
    let counting: Promise<void> | undefined;
    try {
      const made = await createReserved(request, preview, reservation);
      if (made === null) return null;
      counting = made.counting;
      return made.created;
    } finally {
      // Released once its entry is written or given up on (the project was made), or now (it was not).
      if (counting) void counting.finally(() => reservation.release());
      else reservation.release();
    }
  }

  async function createReserved(
    { user, title, scriptsMode, signal, progress }: CreateRequest, preview: UserPreview, reservation: Reservation,
  ): Promise<{ created: CreatedProject; counting: Promise<void> } | null> {
    guard(() => quota.checkRoom(1));
    // Downloads can take longer than what is left of the preview's life: keep it from being swept meanwhile.
    const refreshed = await previews.addUploader(preview.hash, user).catch(diskToServiceError);
    // Their upload expired (or the preview went) since the lookup: as if the lookup had found nothing.
    if (!refreshed) throw new ServiceError('not_found', 'preview not found');
    await holdings.addPreview(user, preview.hash, await previews.diskBytes(preview.hash), refreshed.expiresAt).catch(diskToServiceError);
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
    reservation.identify(id); // counted once, not twice, when its entry is listed before the release
    const createdAt = new Date().toISOString();
    const fileName = preview.fileName; // the name this user gave it, never another uploader's
    progress?.phase('building');
    // The map as a local file for the worker (a copy from the store when it has no local files).
    const place = await previews.openPlace(preview.hash);
    if (place === undefined) throw new ServiceError('not_found', 'preview not found');
    try {
      // What the user's share leaves, as of now (the downloads may have taken a while).
      const userRoom = await holdings.room(user).catch(diskToServiceError);
      const built = await pool.build({
        path: place.path,
        documentPath: tempPath,
        diskRoomBytes: Math.min(quota.room(), userRoom),
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
          case 'disk_full':
            if (userRoom >= quota.room()) throw new ServiceError('storage_full', built.message);
            // Entries of projects that are gone may be what fills the share: dropped now, the next try counts without them.
            await holdings.dropOrphans(user).catch(() => false);
            throw new ServiceError('quota_exceeded', 'the project document would take more than your share of the disk (USER_MAX_BYTES)');
          default: throw new ServiceError('not_a_place', built.message);
        }
      }
      if (signal.aborted) return null; // nobody would learn the project's id
      progress?.phase('storing');
      await keepScene(id, place.path, outcomes).catch(diskToServiceError);
      const summary = JSON.stringify(projectSummary({
        projectId: id, title: projectTitle(title, fileName), createdAt, scriptsMode, fileName, fileSize: preview.fileSize,
        documentBytes: built.bytes, documentJsonBytes: built.jsonBytes, documentEncoding: built.encoding, outcomes, report: preview.report,
      }));
      const bytes = built.bytes + Buffer.byteLength(summary);
      await projects.commit(id, tempPath, { owner: user, assets: built.assetHashes, bytes, createdAt: Date.now(), encoding: built.encoding }, summary).catch(diskToServiceError);
      quota.add(bytes);
      reservation.holds(bytes);
      // The answer waits for the entry's first write only: the project exists whatever the store says next.
      const { retries } = await countProject(user, id, bytes);
      return { created: { projectId: id, assets: outcomes, notAttempted: Math.max(0, preview.report.assets_total - preview.assets.length) }, counting: retries };
    } finally {
      await projects.discard(tempPath); // a no-op once committed (the temp name is gone)
      await place.release();
    }
  }

  /**
   * The project's entry in its owner's share, once the project is made: written before
   * the create answers, so every instance counts the project by then. A store that
   * refuses it is tried again a few times after the answer (a store restarting takes
   * seconds) while the create's reservation keeps counting the project and its bytes
   * on this instance; after that, or when the service stops, the project stays
   * uncounted rather than failing a create that has succeeded, and the operator is
   * told. Resolves after the first write with the retries still to come (a promise in
   * an object: a promise's promise would be awaited through).
   */
  async function countProject(user: string, id: string, bytes: number): Promise<{ retries: Promise<void> }> {
    try {
      await holdings.addProject(user, id, bytes);
      return { retries: Promise.resolve() };
    } catch (first) {
      const deleted = new AbortController();
      retrying.set(id, deleted);
      const stop = AbortSignal.any([stopCounting.signal, deleted.signal]);
      const retries = (async () => {
        let error = first;
        for (const wait of COUNT_RETRY_MS) {
          await sleep(wait, undefined, { signal: stop }).catch(() => undefined);
          if (deleted.signal.aborted) return; // deleted here: nothing to count
          if (stop.aborted) break;
          try {
            await countIfKept(user, id, bytes);
            return;
          } catch (again) {
            error = again;
          }
        }
        onUncounted?.(id, error);
      })();
      counting.add(retries);
      void retries.finally(() => {
        counting.delete(retries);
        if (retrying.get(id) === deleted) retrying.delete(id);
      });
      return { retries };
    }
  }

  /**
   * Writes a project's share entry, then removes it again when the project is gone: a
   * delete that ran before the entry landed could not see it, and it would count for ever.
   */
  async function countIfKept(user: string, id: string, bytes: number): Promise<void> {
    await holdings.addProject(user, id, bytes);
    if ((await projects.getMeta(id)) === undefined) await holdings.removeProject(user, id);
  }

  async function close(timeoutMs = 2000): Promise<void> {
    stopCounting.abort();
    if (counting.size > 0) await Promise.race([Promise.allSettled([...counting]), sleep(timeoutMs, undefined, { ref: false })]);
  }

  async function owned(user: string, id: string): Promise<ProjectMeta> {
    const meta = isProjectId(id) ? await projects.getMeta(id) : undefined;
    if (!meta || meta.owner !== user) throw new ServiceError('not_found', 'project not found');
    return meta;
  }

  /**
   * Deletes of one project run one at a time here, each checking ownership inside: of
   * two sent at once the second finds nothing (404), as it would sent after, and the
   * disk's count gives the project's bytes back once (five sent at once took five times
   * its bytes off, so the disk limit let that much more in until the next recount).
   */
  function remove(user: string, id: string): Promise<void> {
    return deletes(id, () => removeOwned(user, id));
  }

  async function removeOwned(user: string, id: string): Promise<void> {
    const meta = await owned(user, id);
    // The scene was counted when it was built (buildScene), beside the document's bytes in the sidecar.
    const scene = await objects.head(projectKeys.scene(id));
    // The share's entry first: a failure between the two leaves a project uncounted, never a count without a project.
    await holdings.removeProject(user, id);
    await projects.delete(id);
    // Its entry's retries stop once it is gone (a delete that failed leaves them counting a project that stays).
    retrying.get(id)?.abort();
    quota.add(-((meta.bytes ?? 0) + (scene?.size ?? 0)));
    // Once more, for an entry another instance's retry wrote after the first removal (it
    // checks for the project after writing, so one written after this sees it gone). The
    // project is gone either way: a failure here leaves an orphan entry, which the next
    // refusal of this user's share finds and drops (holdings.ts).
    await holdings.removeProject(user, id).catch(() => undefined);
  }

  async function scene(user: string, id: string): Promise<ObjectStream> {
    const meta = await owned(user, id);
    const stored = await objects.getStream(projectKeys.scene(id));
    if (stored !== undefined) return stored;
    const refused = await sceneRefusal(id);
    if (refused !== undefined) throw new ServiceError(refused.code, refused.message);
    await sceneBuilds.run(id, () => buildScene(id, meta));
    const built = await objects.getStream(projectKeys.scene(id));
    if (built === undefined) throw new ServiceError('not_found', 'this project has no scene');
    return built;
  }

  /** Builds scene.glb in a worker from the project's kept map and assets (local files), and stores it for every instance. */
  async function buildScene(id: string, meta: ProjectMeta): Promise<void> {
    const tableObject = await objects.get(projectKeys.sceneAssets(id), { maxBytes: 64 * 1024 * 1024 });
    let table: Record<string, string>;
    try {
      if (tableObject === undefined) throw new Error('no table');
      table = JSON.parse(tableObject.body.toString('utf8')) as Record<string, string>;
    } catch {
      throw new ServiceError('not_found', 'this project has no scene (it was created before scenes were kept)');
    }
    guard(() => quota.checkRoom(1));
    // A scene must fit its owner's share (checked with its size once built). One refused
    // for that is remembered with its size, so asking again without making room is
    // refused here, not with a build each time.
    const refusedBytes = shareRefusedScenes.get(id);
    if (refusedBytes !== undefined && (await holdings.room(meta.owner).catch(() => Infinity)) < refusedBytes) throw sceneOverShare();
    const entries = Object.entries(table).filter(([, sha]) => typeof sha === 'string' && isSha256(sha));
    const keys = conversionKeys([...new Set(entries.map(([, sha]) => sha))]);
    const release = await mirror.fetch([projectKeys.place(id), ...keys.read]);
    const temp = join(workDir, `${id}.${randomBytes(6).toString('hex')}.scene.tmp`);
    try {
      const built = await pool.scene({
        path: mirror.pathOf(projectKeys.place(id)), dataDir: mirror.root, assets: entries,
        glbPath: temp, maxBytes: Math.min(maxSceneBytes, quota.room()),
      }).catch(busyToServiceError);
      if (!built.ok) {
        switch (built.reason) {
          case 'missing': throw new ServiceError('not_found', 'this project has no scene (its map is gone)');
          case 'disk_full': throw new ServiceError('storage_full', built.message);
          default: {
            // The same map under the same limits gets the same answer: kept (best effort) so it is not worked out again.
            const refusal: SceneRefusal = { code: built.reason === 'too_large' ? 'map_too_large' : 'not_a_place', message: built.message, limits: sceneLimits };
            await objects.put(projectKeys.sceneRefusal(id), JSON.stringify(refusal)).catch(() => undefined);
            await forgetUnlessKept(id);
            throw new ServiceError(refusal.code, refusal.message);
          }
        }
      }
      // A conversion the scene made on the way (a record the store had lost) is kept too.
      await mirror.push(keys.written);
      // The scene is the owner's as much as the document: it must fit their share, which
      // counts it from now on (the larger of a project's entries counts; its delete removes both).
      await sceneShares(meta.owner, async () => {
        await holdings.checkBytes(meta.owner, built.bytes).catch((error: unknown) => {
          if (!(error instanceof QuotaExceededError)) diskToServiceError(error);
          shareRefusedScenes.set(id, built.bytes);
          throw sceneOverShare();
        });
        shareRefusedScenes.delete(id);
        await objects.putFile(projectKeys.scene(id), temp, { moveSource: true });
        await forgetUnlessKept(id);
        quota.add(built.bytes);
        await countIfKept(meta.owner, id, (meta.bytes ?? 0) + built.bytes).catch((error: unknown) => onUncounted?.(id, error));
      });
    } finally {
      release();
      await rm(temp, { force: true });
      await mirror.drop([projectKeys.place(id)]);
    }
  }

  /**
   * After a scene (or its refusal) is stored: when the project was deleted meanwhile (its
   * delete listed the objects before these came), removes them and answers 404, so
   * nothing of a deleted project stays or is served.
   */
  async function forgetUnlessKept(id: string): Promise<void> {
    if (await projects.getMeta(id) !== undefined) return;
    await objects.delete(projectKeys.scene(id)).catch(() => undefined);
    await objects.delete(projectKeys.sceneRefusal(id)).catch(() => undefined);
    throw new ServiceError('not_found', 'project not found');
  }

  /** The kept refusal of this project's scene, when it was made under the limits in force now. */
  async function sceneRefusal(id: string): Promise<SceneRefusal | undefined> {
    const stored = await objects.get(projectKeys.sceneRefusal(id), { maxBytes: 64 * 1024 }).catch(() => undefined);
    if (stored === undefined) return undefined;
    try {
      const refusal = JSON.parse(stored.body.toString('utf8')) as Partial<SceneRefusal>;
      const known = (refusal.code === 'map_too_large' || refusal.code === 'not_a_place') && typeof refusal.message === 'string';
      return known && refusal.limits === sceneLimits ? (refusal as SceneRefusal) : undefined;
    } catch {
      return undefined;
    }
  }

  async function summary(user: string, id: string): Promise<{ meta: ProjectMeta; stream: ObjectStream | undefined }> {
    const meta = await owned(user, id);
    return { meta, stream: await projects.openSummary(id) };
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

  return { create, owned, summary, delete: remove, document, asset, scene, close };
}
