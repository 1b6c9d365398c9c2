/**
 * The preview store: analyses keyed by the upload's SHA-256, an LRU cache bounded in
 * bytes in front of a disk store under `<dataDir>/previews/`:
 *   <hash>.json   the preview (written atomically)
 *   <hash>.place  the uploaded file, which create decodes again
 *   <hash>.png    the analysis's picture of the map, when one was drawn
 * Updates of one hash are serialised in this process, so concurrent uploads of the
 * same file by different users all end up among its uploaders.
 */
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { LRUCache } from 'lru-cache';
import { ASSET_KINDS, type AssetKind } from '../assets/refs.js';
import { ASSET_ID_PATTERN } from '../assets/store.js';
import { createKeyedLock } from '../concurrency/index.js';
import type { Report } from '../project/report.js';
import { directoryMaker, isNotFound, isTempName, moveFileAtomic, writeFileAtomic } from './atomic.js';

export interface PreviewAsset {
  id: string;
  kind: AssetKind;
}

export interface Preview {
  /** Lowercase hex SHA-256 of the uploaded file. */
  hash: string;
  /** The analysis report. */
  report: Report;
  assets: PreviewAsset[];
  fileName: string;
  fileSize: number;
  format: 'binary' | 'xml';
  /** User ids of everyone who uploaded this file; only they may create from it. */
  uploaders: string[];
  /** The name each uploader gave the file, so nobody sees another user's file name. */
  fileNames?: Record<string, string>;
  /** The picture of the map beside the preview (`picturePath`); absent when none was drawn. */
  picture?: { width: number; height: number };
  /** Each map script's finding codes and the scanner that found them (absent in previews stored before they were kept). */
  scriptCodes?: { scanner: string; bits: number[] };
  /** Milliseconds since the epoch (the store's clock). */
  createdAt: number;
  expiresAt: number;
}

/** A preview to store; the store stamps `createdAt` / `expiresAt` when they are absent. */
export type NewPreview = Omit<Preview, 'createdAt' | 'expiresAt'> & Partial<Pick<Preview, 'createdAt' | 'expiresAt'>>;

export interface PreviewStoreOptions {
  dataDir: string;
  /** Bytes of previews (as JSON) kept in memory; 0 disables the cache. */
  cacheBytes: number;
  ttlSeconds: number;
  /** Milliseconds since the epoch; injectable for tests. */
  now?: () => number;
}

export interface PreviewStore {
  /** The preview, or undefined when unknown, expired or `hash` is not a SHA-256. Treat it as read-only. */
  get(hash: string): Promise<Preview | undefined>;
  /**
   * Stores a preview, and moves `uploadedTempPath` (if given) to `placePath(hash)`; when
   * the place file is already there the temp file is deleted instead. If an unexpired
   * preview of the same hash exists, the uploaders are merged and the expiry refreshed.
   */
  put(preview: NewPreview, uploadedTempPath?: string, picture?: Uint8Array): Promise<Preview>;
  /** Adds a user to an unexpired preview's uploaders and refreshes its expiry. */
  addUploader(hash: string, userId: string, fileName?: string): Promise<Preview | undefined>;
  /** Where the uploaded file of `hash` is kept. Throws on a malformed hash. */
  placePath(hash: string): string;
  /** Where the picture of `hash` is kept (when the preview has one). Throws on a malformed hash. */
  picturePath(hash: string): string;
  /** Removes expired previews (disk and cache) and leftovers of interrupted writes; returns the hashes of previews removed. */
  sweep(): Promise<string[]>;
  /** Every unexpired preview on disk (for the quota's per-user index at start). */
  list(): Promise<Preview[]>;
  /** Bytes a preview takes on disk (its place file and its JSON). */
  diskBytes(hash: string): Promise<number>;
  /** Sweeps every `intervalMs` (never two at once, not keeping the process alive); returns a stop function. */
  startSweeper(intervalMs: number, onError?: (error: unknown) => void): () => void;
  /** What the memory cache holds now. */
  cacheInfo(): { entries: number; bytes: number; maxBytes: number };
}

const HASH = /^[0-9a-f]{64}$/;
/** Temp files not written to for this long are leftovers of a crash, not writes in flight. */
export const STALE_TEMP_MS = 10 * 60 * 1000;

export function isPreviewHash(hash: string): boolean {
  return HASH.test(hash);
}

export function createPreviewStore(options: PreviewStoreOptions): PreviewStore {
  const { cacheBytes, ttlSeconds } = options;
  const now = options.now ?? Date.now;
  const dir = join(options.dataDir, 'previews');
  const ready = directoryMaker(dir);
  const lock = createKeyedLock();
  const cache =
    cacheBytes > 0
      ? new LRUCache<string, Preview>({
          maxSize: cacheBytes,
          sizeCalculation: (preview) => Buffer.byteLength(JSON.stringify(preview)),
        })
      : null;

  const jsonPath = (hash: string): string => join(dir, `${hash}.json`);

  function picturePath(hash: string): string {
    if (!HASH.test(hash)) throw new RangeError(`not a SHA-256 preview hash: ${JSON.stringify(hash)}`);
    return join(dir, `${hash}.png`);
  }

  function placePath(hash: string): string {
    if (!HASH.test(hash)) throw new RangeError(`not a SHA-256 preview hash: ${JSON.stringify(hash)}`);
    return join(dir, `${hash}.place`);
  }

  const isExpired = (preview: Preview): boolean => preview.expiresAt <= now();

  /** Cache, then disk; expired or unreadable previews count as absent. */
  async function load(hash: string): Promise<Preview | undefined> {
    const cached = cache?.get(hash);
    if (cached !== undefined) return isExpired(cached) ? undefined : cached;
    const preview = await readPreview(hash);
    if (preview === undefined || isExpired(preview)) return undefined;
    cache?.set(hash, preview);
    return preview;
  }

  async function readPreview(hash: string): Promise<Preview | undefined> {
    let text: string;
    try {
      text = await readFile(jsonPath(hash), 'utf8');
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
    try {
      const preview: unknown = JSON.parse(text);
      if (!isPreview(preview) || preview.hash !== hash) return undefined;
      // Codes of another shape are dropped, not trusted: create then scans the scripts again.
      if (preview.scriptCodes !== undefined && !isCodesShape(preview.scriptCodes)) delete preview.scriptCodes;
      return preview;
    } catch {
      return undefined; // only outside damage can tear an atomically written file
    }
  }

  async function save(preview: Preview): Promise<void> {
    const json = JSON.stringify(preview);
    await writeFileAtomic(jsonPath(preview.hash), json);
    cache?.set(preview.hash, preview, { size: Buffer.byteLength(json) });
  }

  async function get(hash: string): Promise<Preview | undefined> {
    if (!HASH.test(hash)) return undefined;
    return load(hash);
  }

  async function put(preview: NewPreview, uploadedTempPath?: string, picture?: Uint8Array): Promise<Preview> {
    const place = placePath(preview.hash);
    await ready();
    return lock(preview.hash, async () => {
      // The place file and the picture go first: a preview on disk always has its files beside it.
      if (uploadedTempPath !== undefined) {
        if (await exists(place)) await rm(uploadedTempPath, { force: true });
        else await moveFileAtomic(uploadedTempPath, place);
      }
      if (picture !== undefined) await writeFileAtomic(picturePath(preview.hash), picture);
      const time = now();
      const existing = await load(preview.hash);
      const stored: Preview = {
        ...preview,
        uploaders: union(existing?.uploaders ?? [], preview.uploaders),
        fileNames: { ...existing?.fileNames, ...preview.fileNames },
        createdAt: existing?.createdAt ?? preview.createdAt ?? time,
        expiresAt: Math.max(existing?.expiresAt ?? 0, preview.expiresAt ?? time + ttlSeconds * 1000),
      };
      await save(stored);
      return stored;
    });
  }

  async function addUploader(hash: string, userId: string, fileName?: string): Promise<Preview | undefined> {
    if (!HASH.test(hash)) return undefined;
    await ready();
    return lock(hash, async () => {
      const existing = await load(hash);
      if (existing === undefined) return undefined;
      const updated: Preview = {
        ...existing,
        uploaders: union(existing.uploaders, [userId]),
        fileNames: fileName === undefined ? existing.fileNames : { ...existing.fileNames, [userId]: fileName },
        expiresAt: Math.max(existing.expiresAt, now() + ttlSeconds * 1000),
      };
      await save(updated);
      return updated;
    });
  }

  async function listNames(): Promise<string[]> {
    try {
      return await readdir(dir);
    } catch (error) {
      if (isNotFound(error)) return [];
      throw error;
    }
  }

  async function list(): Promise<Preview[]> {
    const found: Preview[] = [];
    for (const name of await listNames()) {
      const hash = name.slice(0, 64);
      if (name !== `${hash}.json` || !HASH.test(hash)) continue;
      const preview = await load(hash);
      if (preview !== undefined) found.push(preview);
    }
    return found;
  }

  async function diskBytes(hash: string): Promise<number> {
    if (!HASH.test(hash)) return 0;
    const size = (path: string) => stat(path).then((info) => info.size, () => 0);
    return (await size(jsonPath(hash))) + (await size(placePath(hash))) + (await size(picturePath(hash)));
  }

  async function sweep(): Promise<string[]> {
    await ready();
    const names = await listNames();
    const previews = new Set<string>();
    const removed: string[] = [];
    for (const name of names) {
      const hash = name.slice(0, 64);
      if (name === `${hash}.json` && HASH.test(hash)) {
        previews.add(hash);
        const gone = await lock(hash, async () => {
          const preview = cache?.get(hash) ?? (await readPreview(hash));
          if (preview !== undefined && !isExpired(preview)) return false;
          cache?.delete(hash);
          await rm(jsonPath(hash), { force: true });
          await rm(placePath(hash), { force: true });
          await rm(picturePath(hash), { force: true });
          return true;
        });
        if (gone) removed.push(hash);
      }
    }
    for (const name of names) {
      const hash = name.slice(0, 64);
      if ((name === `${hash}.place` || name === `${hash}.png`) && HASH.test(hash) && !previews.has(hash)) {
        // A file whose preview was never written (a crash between the steps).
        await lock(hash, async () => {
          if (!(await exists(jsonPath(hash)))) await rm(join(dir, name), { force: true });
        });
      } else if (isTempName(name)) {
        await removeIfStale(join(dir, name));
      }
    }
    return removed;
  }

  async function removeIfStale(path: string): Promise<void> {
    try {
      const { mtimeMs } = await stat(path);
      if (mtimeMs < now() - STALE_TEMP_MS) await rm(path, { force: true });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  function startSweeper(intervalMs: number, onError?: (error: unknown) => void): () => void {
    let running = false;
    const timer = setInterval(() => {
      if (running) return;
      running = true;
      sweep()
        .catch((error: unknown) => onError?.(error))
        .finally(() => {
          running = false;
        });
    }, intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  function cacheInfo(): { entries: number; bytes: number; maxBytes: number } {
    return { entries: cache?.size ?? 0, bytes: cache?.calculatedSize ?? 0, maxBytes: cacheBytes };
  }

  return { get, put, addUploader, placePath, picturePath, sweep, list, diskBytes, startSweeper, cacheInfo };
}

function union(first: readonly string[], second: readonly string[]): string[] {
  return [...new Set([...first, ...second])];
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

const isCodesShape = (value: unknown): boolean =>
  isRecord(value) && typeof value.scanner === 'string' && Array.isArray(value.bits) && value.bits.every(isCount);

/**
 * Whether a preview read back from disk has the shape the service relies on: a file
 * written by another version, or damaged, counts as absent rather than as a crash later.
 */
export function isPreview(value: unknown): value is Preview {
  if (!isRecord(value)) return false;
  const { hash, report, assets, fileName, fileSize, format, uploaders, fileNames, createdAt, expiresAt } = value;
  return (
    typeof hash === 'string' && HASH.test(hash) &&
    isRecord(report) && isCount(report.scripts_total) &&
    Array.isArray(assets) && assets.every((asset) => isRecord(asset) && typeof asset.id === 'string' && ASSET_ID_PATTERN.test(asset.id)
      && (ASSET_KINDS as readonly unknown[]).includes(asset.kind)) &&
    typeof fileName === 'string' && isCount(fileSize) && (format === 'binary' || format === 'xml') &&
    Array.isArray(uploaders) && uploaders.every((user) => typeof user === 'string') &&
    (fileNames === undefined || (isRecord(fileNames) && Object.values(fileNames).every((name) => typeof name === 'string'))) &&
    typeof createdAt === 'number' && typeof expiresAt === 'number'
  );
}
