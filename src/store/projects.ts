/**
 * The project store: one JSON document per project under `<dataDir>/projects/`,
 * named by a random id that is safe in URLs and paths, with a small sidecar
 * (`<id>.meta`: owner, assets, size, creation time, and `encoding: "br"` when the
 * document is stored Brotli-compressed, as version 2 documents are) that ownership and asset access
 * are checked against without reading the document.
 *
 * A document is written as a stream by a worker into a hidden temp file the store hands
 * out (`prepare`), then moved into place atomically (`commit`): readers see a whole
 * document or none, and a crash leaves only a temp file, which `sweep` removes.
 *
 * Beside it, for the project's scene.glb (built on its first request): `<id>.place`,
 * the map it was made from (a hard link to the preview's file where the file system
 * allows), `<id>.scene-assets.json` (asset id → SHA-256 of what its create downloaded)
 * and, once built, `<id>.glb`. Deleting or sweeping a project takes them along.
 */
import { randomBytes } from 'node:crypto';
import { readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { directoryMaker, isNotFound, isTempName, syncDirectory, writeFileAtomic } from './atomic.js';

export interface ProjectStoreOptions {
  dataDir: string;
}

export interface ProjectStore {
  /** Stores a new project document and returns its id ('p_' and 20 base32 characters). */
  save(doc: object & { owner: string }): Promise<string>;
  /** The document (decompressed), or undefined when unknown or `id` is not a project id. Ownership is the caller's check. For tools and tests: it holds the whole document. */
  get(id: string): Promise<Record<string, unknown> | undefined>;
  /**
   * Stores a document already serialised (by a worker, so the main thread never
   * stringifies a large scene) with a small sidecar the HTTP layer checks ownership
   * and asset access against without parsing the document.
   */
  saveSerialized(json: string, meta: ProjectMeta): Promise<string>;
  /** The sidecar, or undefined when unknown, malformed (validated as read), or `id` is not a project id. */
  getMeta(id: string): Promise<ProjectMeta | undefined>;
  /** Where the document's JSON lives (for streaming it out). Throws on a malformed id. */
  documentPath(id: string): string;
  /** A new id and the temp file to write its document to (hidden, beside where it will live). */
  prepare(): Promise<{ id: string; tempPath: string }>;
  /**
   * Moves a prepared document into place atomically, then writes its summary (JSON text:
   * what the project page shows, when given) and last its sidecar.
   */
  commit(id: string, tempPath: string, meta: ProjectMeta, summary?: string): Promise<void>;
  /** The summary kept beside the document (as stored JSON text), or undefined when there is none. Ownership is the caller's check. */
  getSummary(id: string): Promise<string | undefined>;
  /** Removes a prepared document that will not be committed. */
  discard(tempPath: string): Promise<void>;
  /** Removes a project (sidecar first, so it stops being served at once); false when there was none. */
  delete(id: string): Promise<boolean>;
  /** Every project's id and sidecar. */
  list(): Promise<{ id: string; meta: ProjectMeta }[]>;
  /** The project's map, scene asset table and built scene.glb (see the top). Throws on a malformed id. */
  scenePaths(id: string): { place: string; assets: string; glb: string };
  /**
   * Removes temp files not written to for `staleMs`, documents whose sidecar never came
   * (a crash between the two), and projects created before `createdBefore` (retention;
   * 0 keeps every project). Returns the ids of projects removed.
   */
  sweep(options: { staleMs: number; createdBefore: number; now?: number }): Promise<string[]>;
}

export interface ProjectMeta {
  owner: string;
  /** SHA-256 of every asset the project references, so only those are served. */
  assets: string[];
  /** Bytes of the stored document (absent in sidecars written before quotas). */
  bytes?: number;
  /** Milliseconds since the epoch (absent before quotas: the document's mtime stands in). */
  createdAt?: number;
  /** How the stored document is compressed ('br'); absent for documents stored as plain JSON (version 1). */
  encoding?: 'br';
}

const SHA256 = /^[0-9a-f]{64}$/;

/** A sidecar as read back from disk, or undefined when it is not one. */
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
  const dir = join(options.dataDir, 'projects');
  const ready = directoryMaker(dir);
  const pathOf = (id: string): string => join(dir, `${id}.json`);
  const metaPathOf = (id: string): string => join(dir, `${id}.meta`);
  const summaryPathOf = (id: string): string => join(dir, `${id}.summary`);

  async function save(doc: object & { owner: string }): Promise<string> {
    if (typeof doc.owner !== 'string' || doc.owner === '') throw new TypeError('a project document needs an owner');
    const id = newProjectId();
    await ready();
    await writeFileAtomic(pathOf(id), JSON.stringify(doc));
    return id;
  }

  async function get(id: string): Promise<Record<string, unknown> | undefined> {
    if (!PROJECT_ID.test(id)) return undefined;
    let bytes: Buffer;
    try {
      bytes = await readFile(pathOf(id));
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
    if ((await getMeta(id))?.encoding === 'br') bytes = brotliDecompressSync(bytes);
    return JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
  }

  async function saveSerialized(json: string, meta: ProjectMeta): Promise<string> {
    if (typeof meta.owner !== 'string' || meta.owner === '') throw new TypeError('a project needs an owner');
    const id = newProjectId();
    await ready();
    // Document first: a meta file always points at a complete document.
    await writeFileAtomic(pathOf(id), json);
    await writeFileAtomic(metaPathOf(id), JSON.stringify(meta));
    return id;
  }

  async function getMeta(id: string): Promise<ProjectMeta | undefined> {
    if (!PROJECT_ID.test(id)) return undefined;
    let text: string;
    try {
      text = await readFile(metaPathOf(id), 'utf8');
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
    try {
      return parseProjectMeta(JSON.parse(text));
    } catch {
      return undefined; // only outside damage can tear an atomically written file
    }
  }

  function documentPath(id: string): string {
    if (!PROJECT_ID.test(id)) throw new RangeError(`not a project id: ${JSON.stringify(id)}`);
    return pathOf(id);
  }

  async function prepare(): Promise<{ id: string; tempPath: string }> {
    await ready();
    const id = newProjectId();
    return { id, tempPath: join(dir, `.${id}.json.${randomBytes(6).toString('hex')}.tmp`) };
  }

  async function commit(id: string, tempPath: string, meta: ProjectMeta, summary?: string): Promise<void> {
    if (typeof meta.owner !== 'string' || meta.owner === '') throw new TypeError('a project needs an owner');
    // Document first, sidecar last: a sidecar always points at a complete document and summary.
    await rename(tempPath, documentPath(id));
    await syncDirectory(dir);
    if (summary !== undefined) await writeFileAtomic(summaryPathOf(id), summary);
    await writeFileAtomic(metaPathOf(id), JSON.stringify(meta));
  }

  async function getSummary(id: string): Promise<string | undefined> {
    if (!PROJECT_ID.test(id)) return undefined;
    try {
      return await readFile(summaryPathOf(id), 'utf8');
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async function discard(tempPath: string): Promise<void> {
    await rm(tempPath, { force: true });
  }

  function scenePaths(id: string): { place: string; assets: string; glb: string } {
    if (!PROJECT_ID.test(id)) throw new RangeError(`not a project id: ${JSON.stringify(id)}`);
    return { place: join(dir, `${id}.place`), assets: join(dir, `${id}.scene-assets.json`), glb: join(dir, `${id}.glb`) };
  }

  async function remove(id: string): Promise<boolean> {
    if (!PROJECT_ID.test(id)) return false;
    const had = await stat(metaPathOf(id)).then(() => true, () => false);
    await rm(metaPathOf(id), { force: true });
    await rm(pathOf(id), { force: true });
    for (const path of Object.values(scenePaths(id))) await rm(path, { force: true });
    await rm(summaryPathOf(id), { force: true });
    return had;
  }

  async function names(): Promise<string[]> {
    try {
      return await readdir(dir);
    } catch (error) {
      if (isNotFound(error)) return [];
      throw error;
    }
  }

  async function list(): Promise<{ id: string; meta: ProjectMeta }[]> {
    const found: { id: string; meta: ProjectMeta }[] = [];
    for (const name of await names()) {
      const id = name.slice(0, -'.meta'.length);
      if (!name.endsWith('.meta') || !PROJECT_ID.test(id)) continue;
      const meta = await getMeta(id);
      if (meta) found.push({ id, meta: await withDefaults(id, meta) });
    }
    return found;
  }

  /** Sidecars written before quotas lack size and time: the document's own stand in. */
  async function withDefaults(id: string, meta: ProjectMeta): Promise<ProjectMeta> {
    if (meta.bytes !== undefined && meta.createdAt !== undefined) return meta;
    const info = await stat(pathOf(id)).catch(() => null);
    return { ...meta, bytes: meta.bytes ?? info?.size ?? 0, createdAt: meta.createdAt ?? info?.mtimeMs ?? 0 };
  }

  async function sweep({ staleMs, createdBefore, now = Date.now() }: { staleMs: number; createdBefore: number; now?: number }): Promise<string[]> {
    const removed: string[] = [];
    const all = await names();
    const metas = new Set(all.filter((name) => name.endsWith('.meta')).map((name) => name.slice(0, -'.meta'.length)));
    for (const name of all) {
      const path = join(dir, name);
      const id = name.slice(0, name.lastIndexOf('.'));
      const sceneOf = /^(p_[a-z2-7]{20})\.(place|glb|scene-assets\.json)$/.exec(name)?.[1];
      const orphan = ((name.endsWith('.json') || name.endsWith('.summary')) && PROJECT_ID.test(id) && !metas.has(id)) || (sceneOf !== undefined && !metas.has(sceneOf));
      if (!isTempName(name) && !orphan) continue;
      const info = await stat(path).catch(() => null);
      if (info !== null && info.mtimeMs < now - staleMs) await rm(path, { force: true });
    }
    if (createdBefore > 0) {
      for (const { id, meta } of await list()) {
        if ((meta.createdAt ?? 0) < createdBefore && (await remove(id))) removed.push(id);
      }
    }
    return removed;
  }

  return { save, get, saveSerialized, getMeta, getSummary, documentPath, prepare, commit, discard, delete: remove, list, sweep, scenePaths };
}
