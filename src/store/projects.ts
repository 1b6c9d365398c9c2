/**
 * The project store: each project is a few objects under `projects/<id>/` in the object
 * store (`backends/`: the local disk, or S3 shared by every instance), named by a random
 * id that is safe in URLs and keys:
 *   document.json   the project document, built by a worker into a local temp file
 *                   (`prepare`) and then stored whole (`commit`: a rename on disk, a
 *                   multipart upload on S3, invisible until complete)
 *   summary.json    what the project page shows (service/summary.ts)
 *   place, scene-assets.json, scene.glb
 *                   what the project's scene.glb is built from (the map, which bytes each
 *                   asset id gave), kept before the sidecar; and the scene once built
 *   meta.json       the sidecar (owner, assets, size, creation time, and `encoding: "br"`
 *                   when the document is stored Brotli-compressed, as version 2 documents
 *                   are) that ownership and asset access are checked against; written
 *                   last, removed first
 * A project exists when its sidecar does, so a create cut short (a crash, the store gone)
 * leaves nothing anyone can see; `sweep` removes such leftovers once they are stale.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { listAll } from './backends/operations.js';
import { parseProjectKey, projectKeys } from './backends/keys.js';
import type { ObjectInfo, ObjectStore, ObjectStream } from './backends/types.js';

export interface ProjectStoreOptions {
  objects: ObjectStore;
  /** A local folder for documents being built. */
  workDir: string;
}

export interface SweepOptions {
  staleMs: number;
  createdBefore: number;
  now?: number;
  /** Runs before a project past retention is removed (what counts it goes first). */
  beforeRemove?: (id: string, owner: string) => Promise<void>;
}

export interface ProjectStore {
  /** Stores a new project document (and a sidecar owned by `doc.owner`) and returns its id ('p_' and 20 base32 characters). */
  save(doc: object & { owner: string }): Promise<string>;
  /** The document (decompressed), or undefined when unknown or `id` is not a project id. Ownership is the caller's check. For tools and tests: it holds the whole document. */
  get(id: string): Promise<Record<string, unknown> | undefined>;
  /** The sidecar, or undefined when unknown, malformed (validated as read), or `id` is not a project id. */
  getMeta(id: string): Promise<ProjectMeta | undefined>;
  /** The document's bytes as a stream, or undefined when there is none. */
  openDocument(id: string): Promise<ObjectStream | undefined>;
  /** A new id and a local temp file to write its document to. */
  prepare(): Promise<{ id: string; tempPath: string }>;
  /**
   * Keeps what the project's scene.glb is built from, before its sidecar: the table of
   * asset id → SHA-256 of the bytes its create downloaded, then the map (`placePath`,
   * linked where the store allows: the preview's map is only ever replaced whole).
   */
  keepScene(id: string, placePath: string, table: Record<string, string>): Promise<void>;
  /**
   * Stores a prepared document (taking the temp file), then its summary (JSON text: what
   * the project page shows, when given) and last its sidecar. When a step fails, what was
   * stored is removed (as far as the store lets it) and the error is rethrown.
   */
  commit(id: string, tempPath: string, meta: ProjectMeta, summary?: string): Promise<void>;
  /** The summary kept beside the document (as stored JSON text), or undefined when there is none. Ownership is the caller's check. */
  getSummary(id: string): Promise<string | undefined>;
  /** The summary's bytes as a stream (what the project page reads: served as it arrives, never held whole), or undefined. */
  openSummary(id: string): Promise<ObjectStream | undefined>;
  /** Removes a prepared document that will not be committed. */
  discard(tempPath: string): Promise<void>;
  /** Removes a project (sidecar first, so it stops being served at once); false when there was none. */
  delete(id: string): Promise<boolean>;
  /** Every project's id and sidecar. */
  list(): Promise<{ id: string; meta: ProjectMeta }[]>;
  /**
   * Removes objects of projects whose sidecar never came (a create cut short) once none of
   * them was written for `staleMs`, and projects created before `createdBefore`
   * (retention; 0 keeps every project). Returns the projects removed by retention, with their owners.
   */
  sweep(options: SweepOptions): Promise<{ id: string; owner: string }[]>;
}

export interface ProjectMeta {
  owner: string;
  /** SHA-256 of every asset the project references, so only those are served. */
  assets: string[];
  /** Bytes of the stored document and summary (absent in sidecars written before quotas). */
  bytes?: number;
  /** Milliseconds since the epoch (absent before quotas: the document's time stands in). */
  createdAt?: number;
  /** How the stored document is compressed ('br'); absent for documents stored as plain JSON (version 1). */
  encoding?: 'br';
}

const SHA256 = /^[0-9a-f]{64}$/;
/** Sidecars are small; anything bigger is not ours. */
const MAX_META_BYTES = 16 * 1024 * 1024;
/**
 * A summary holds the analysis's report and one outcome per asset: read with the
 * preview analysis's own limit (previews.ts), so a map with a hundred thousand asset
 * ids, whose analysis could be read, also has a summary that can.
 */
const MAX_SUMMARY_BYTES = 64 * 1024 * 1024;

/** A sidecar as read back from the store, or undefined when it is not one. */
export function parseProjectMeta(value: unknown): ProjectMeta | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { owner, assets, bytes, createdAt, encoding } = value as Record<string, unknown>;
  if (typeof owner !== 'string' || owner === '' || !Array.isArray(assets) || !assets.every((hash) => typeof hash === 'string' && SHA256.test(hash))) return undefined;
  const meta: ProjectMeta = { owner, assets: assets as string[] };
  if (Number.isSafeInteger(bytes) && (bytes as number) >= 0) meta.bytes = bytes as number;
  if (Number.isSafeInteger(createdAt) && (createdAt as number) >= 0) meta.createdAt = createdAt as number;
  if (encoding === 'br') meta.encoding = encoding;
  else if (encoding !== undefined) return undefined; // a stored encoding this service cannot serve
  return meta;
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
const PROJECT_ID = /^p_[a-z2-7]{20}$/;

export function isProjectId(id: string): boolean {
  return PROJECT_ID.test(id);
}

/** 100 random bits: collisions are not a practical concern, so ids are not checked for reuse. */
export function newProjectId(): string {
  const bytes = randomBytes(20);
  let id = 'p_';
  for (const byte of bytes) id += ALPHABET[byte & 31];
  return id;
}

export function createProjectStore(options: ProjectStoreOptions): ProjectStore {
  const { objects, workDir } = options;

  async function save(doc: object & { owner: string }): Promise<string> {
    if (typeof doc.owner !== 'string' || doc.owner === '') throw new TypeError('a project document needs an owner');
    const id = newProjectId();
    const json = JSON.stringify(doc);
    await objects.put(projectKeys.document(id), json);
    await objects.put(projectKeys.meta(id), JSON.stringify({ owner: doc.owner, assets: [], bytes: Buffer.byteLength(json), createdAt: Date.now() }));
    return id;
  }

  async function readText(key: string, maxBytes = MAX_META_BYTES): Promise<string | undefined> {
    return (await objects.get(key, { maxBytes }))?.body.toString('utf8');
  }

  async function get(id: string): Promise<Record<string, unknown> | undefined> {
    if (!PROJECT_ID.test(id)) return undefined;
    const stored = await objects.get(projectKeys.document(id));
    if (stored === undefined) return undefined;
    const bytes = (await getMeta(id))?.encoding === 'br' ? brotliDecompressSync(stored.body) : stored.body;
    return JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
  }

  async function getMeta(id: string): Promise<ProjectMeta | undefined> {
    if (!PROJECT_ID.test(id)) return undefined;
    const text = await readText(projectKeys.meta(id));
    if (text === undefined) return undefined;
    try {
      return parseProjectMeta(JSON.parse(text));
    } catch {
      return undefined; // only outside damage can tear a whole-object write
    }
  }

  async function openDocument(id: string): Promise<ObjectStream | undefined> {
    if (!PROJECT_ID.test(id)) return undefined;
    return objects.getStream(projectKeys.document(id));
  }

  async function prepare(): Promise<{ id: string; tempPath: string }> {
    await mkdir(workDir, { recursive: true });
    const id = newProjectId();
    return { id, tempPath: join(workDir, `${id}.${randomBytes(6).toString('hex')}.document.tmp`) };
  }

  async function keepScene(id: string, placePath: string, table: Record<string, string>): Promise<void> {
    if (!PROJECT_ID.test(id)) throw new RangeError(`not a project id: ${JSON.stringify(id)}`);
    // The table first: a linked map keeps its preview's time (the upload's, maybe hours ago),
    // and a project without a sidecar whose objects all look old is a leftover to the sweep,
    // which took the map of a create in progress between the two writes.
    await objects.put(projectKeys.sceneAssets(id), JSON.stringify(table));
    await objects.putFile(projectKeys.place(id), placePath, { linkSource: true });
  }

  async function commit(id: string, tempPath: string, meta: ProjectMeta, summary?: string): Promise<void> {
    if (typeof meta.owner !== 'string' || meta.owner === '') throw new TypeError('a project needs an owner');
    if (!PROJECT_ID.test(id)) throw new RangeError(`not a project id: ${JSON.stringify(id)}`);
    try {
      // Document first, sidecar last: a sidecar always points at a whole document and summary.
      await objects.putFile(projectKeys.document(id), tempPath, { moveSource: true });
      if (summary !== undefined) await objects.put(projectKeys.summary(id), summary);
      await objects.put(projectKeys.meta(id), JSON.stringify(meta));
    } catch (error) {
      // Without its sidecar the project is invisible; what was stored goes now if it can (else the sweep takes it).
      try {
        for await (const info of listAll(objects, projectKeys.prefix(id))) await objects.delete(info.key);
      } catch {
        // the store is gone: the sweep removes the rest once it is stale
      }
      throw error;
    } finally {
      await rm(tempPath, { force: true });
    }
  }

  async function getSummary(id: string): Promise<string | undefined> {
    if (!PROJECT_ID.test(id)) return undefined;
    return readText(projectKeys.summary(id), MAX_SUMMARY_BYTES);
  }

  async function openSummary(id: string): Promise<ObjectStream | undefined> {
    if (!PROJECT_ID.test(id)) return undefined;
    return objects.getStream(projectKeys.summary(id));
  }

  async function discard(tempPath: string): Promise<void> {
    await rm(tempPath, { force: true });
  }

  async function remove(id: string): Promise<boolean> {
    if (!PROJECT_ID.test(id)) return false;
    const had = (await objects.head(projectKeys.meta(id))) !== undefined;
    await objects.delete(projectKeys.meta(id));
    const rest: string[] = [];
    for await (const info of listAll(objects, projectKeys.prefix(id))) rest.push(info.key);
    for (const key of rest) await objects.delete(key);
    return had;
  }

  /** Every project's objects, grouped by id, in key order. */
  async function* groups(): AsyncGenerator<{ id: string; objects: ObjectInfo[] }> {
    let current: { id: string; objects: ObjectInfo[] } | undefined;
    for await (const info of listAll(objects, 'projects/')) {
      const parsed = parseProjectKey(info.key);
      if (parsed === undefined) continue;
      if (current?.id !== parsed.id) {
        if (current !== undefined) yield current;
        current = { id: parsed.id, objects: [] };
      }
      current.objects.push(info);
    }
    if (current !== undefined) yield current;
  }

  async function list(): Promise<{ id: string; meta: ProjectMeta }[]> {
    const found: { id: string; meta: ProjectMeta }[] = [];
    for await (const group of groups()) {
      if (!group.objects.some((info) => info.key === projectKeys.meta(group.id))) continue;
      const meta = await getMeta(group.id);
      if (meta === undefined) continue;
      // Sidecars written before quotas lack size and time: the document's own stand in.
      const document = group.objects.find((info) => info.key === projectKeys.document(group.id));
      found.push({ id: group.id, meta: { ...meta, bytes: meta.bytes ?? document?.size ?? 0, createdAt: meta.createdAt ?? document?.lastModified ?? 0 } });
    }
    return found;
  }

  async function sweep({ staleMs, createdBefore, now = Date.now(), beforeRemove }: SweepOptions): Promise<{ id: string; owner: string }[]> {
    const removed: { id: string; owner: string }[] = [];
    for await (const group of groups()) {
      if (group.objects.some((info) => info.key === projectKeys.meta(group.id))) continue;
      // A create in progress writes its document and summary shortly before its sidecar.
      if (!group.objects.every((info) => info.lastModified < now - staleMs)) continue;
      // The listing is not the last word: a store whose listings lag behind its writes (or
      // leave a key out) made a whole project look like a leftover, and it went. A read of
      // the sidecar itself decides.
      if ((await objects.head(projectKeys.meta(group.id))) !== undefined) continue;
      for (const info of group.objects) await objects.delete(info.key);
    }
    if (createdBefore > 0) {
      for (const { id, meta } of await list()) {
        if ((meta.createdAt ?? 0) >= createdBefore) continue;
        await beforeRemove?.(id, meta.owner);
        if (await remove(id)) removed.push({ id, owner: meta.owner });
      }
    }
    return removed;
  }

  return { save, get, getMeta, openDocument, prepare, keepScene, commit, getSummary, openSummary, discard, delete: remove, list, sweep };
}
