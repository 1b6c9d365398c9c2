/**
 * Content-addressed asset store in the object store (`src/store/backends`: the local
 * disk, or S3 shared by every instance), keys from `backends/keys.ts`:
 *
 *   assets/sha256/<aa>/<sha256>        the bytes (aa = first two hex digits)
 *   assets/sha256/<aa>/<sha256>.json   {"sha256", "size", "contentType"}
 *   assets/ids/<id>.json               {"id", "sha256"}: which bytes an asset id gave
 *
 * The same bytes are stored once whatever the id (a conditional create), and an id
 * recorded in `ids/` is never fetched again, by this instance or any other sharing the
 * store: the whole fleet downloads an asset once. A body streams to a local temp file
 * (`tempDir`) while it is hashed, then goes into the store whole; the index entry is
 * written last, so it always points at stored bytes and meta.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rm, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { isStoreUnavailable } from '../store/backends/errors.js';
import { assetKeys } from '../store/backends/keys.js';
import type { ObjectStore } from '../store/backends/types.js';
import { AssetFetchError, AssetStoreError } from './errors.js';

/** Where assets are kept (`objects`) and where bodies are written while they arrive (`tempDir`, local). */
export interface AssetStore {
  objects: ObjectStore;
  tempDir: string;
}

export interface AssetMeta {
  sha256: string;
  size: number;
  contentType: string;
}

/** Asset ids are decimal, at most 20 digits (a u64). */
export const ASSET_ID_PATTERN = /^\d{1,20}$/;
const SHA256_PATTERN = /^[0-9a-f]{64}$/;
/** `type/subtype` only; parameters are dropped. */
const CONTENT_TYPE_PATTERN = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,127}$/;
export const DEFAULT_CONTENT_TYPE = 'application/octet-stream';
/** Index and meta files are tiny; anything bigger is not ours. */
const MAX_JSON_FILE_BYTES = 4096;

export function isSha256(text: string): boolean {
  return SHA256_PATTERN.test(text);
}

/**
 * Where the disk object store rooted at `root` keeps the bytes of an asset (the service's
 * store is rooted at DATA_DIR/objects). Throws a TypeError unless `sha256` is lowercase
 * hex, so no path can escape the store.
 */
export function assetPath(root: string, sha256: string): string {
  return join(root, ...assetKeys.bytes(checkSha256(sha256)).split('/'));
}

function checkSha256(sha256: string): string {
  if (!isSha256(sha256)) throw new TypeError(`not a lowercase hex SHA-256: ${JSON.stringify(sha256)}`);
  return sha256;
}

/** Where partial downloads are written, under a data directory. */
export function assetTempDir(dataDir: string): string {
  return join(dataDir, 'assets', 'tmp');
}

/** A header value reduced to `type/subtype`, or the octet-stream default when it is not one. */
export function normaliseContentType(header: string | undefined): string {
  const type = header?.split(';', 1)[0]?.trim().toLowerCase();
  return type !== undefined && CONTENT_TYPE_PATTERN.test(type) ? type : DEFAULT_CONTENT_TYPE;
}

/** The stored meta of an asset, or undefined when absent, malformed, or `sha256` is not a hash. */
export async function readAssetMeta(objects: ObjectStore, sha256: string): Promise<AssetMeta | undefined> {
  if (!isSha256(sha256)) return undefined;
  const json = await readSmallJson(objects, assetKeys.meta(sha256));
  if (!isRecord(json)) return undefined;
  const { size, contentType } = json;
  if (json.sha256 !== sha256 || !Number.isSafeInteger(size) || (size as number) < 0 || typeof contentType !== 'string') return undefined;
  return { sha256, size: size as number, contentType: normaliseContentType(contentType) };
}

/**
 * The asset an id was stored as, when its index entry, meta and bytes are all present
 * and agree. Anything less is a miss, so the id is simply fetched again. Throws a
 * `StoreUnavailableError` when the store cannot be asked.
 */
export async function lookupAssetId(objects: ObjectStore, id: string): Promise<AssetMeta | undefined> {
  if (!ASSET_ID_PATTERN.test(id)) throw new TypeError(`not an asset id: ${JSON.stringify(id)}`);
  const json = await readSmallJson(objects, assetKeys.id(id));
  if (!isRecord(json) || json.id !== id || typeof json.sha256 !== 'string' || !isSha256(json.sha256)) return undefined;
  const [meta, bytes] = await Promise.all([readAssetMeta(objects, json.sha256), objects.head(assetKeys.bytes(json.sha256))]);
  return meta !== undefined && bytes !== undefined && bytes.size === meta.size ? meta : undefined;
}

/** Records that `id` is the stored asset `sha256`. */
export async function recordAssetId(objects: ObjectStore, id: string, sha256: string): Promise<void> {
  const key = assetKeys.id(id);
  await objects.put(key, `${JSON.stringify({ id, sha256: checkSha256(sha256) })}\n`).catch((error: unknown) => {
    throw new AssetStoreError(`cannot write asset index ${key}`, error);
  });
}

export interface StoreAssetOptions {
  /** The body may not exceed this many bytes: passing it throws `too_large` at once. */
  maxBytes: number;
  contentType?: string;
}

/**
 * Streams a body to a local temp file while hashing it, then stores it; returns its
 * meta. The body is never held whole in memory. On every failure (the source's, the
 * size cap, an empty body, the disk, the store) the temp file is removed. Errors of the
 * source are rethrown as they are, the cap and an empty body as AssetFetchError, disk and
 * store errors as AssetStoreError (its cause the store's own error).
 */
export async function storeAssetStream(
  store: AssetStore,
  chunks: AsyncIterable<Uint8Array>,
  options: StoreAssetOptions,
): Promise<AssetMeta> {
  const { objects, tempDir } = store;
  const tempPath = join(tempDir, `${randomBytes(12).toString('hex')}.part`);
  const diskError = (what: string) => (error: unknown): never => {
    throw new AssetStoreError(`cannot ${what} ${tempPath}`, error);
  };
  await mkdir(tempDir, { recursive: true }).catch(diskError('create the directory of'));
  const handle = await open(tempPath, 'wx', 0o644).catch(diskError('create'));
  let handleOpen = true;
  try {
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of chunks) {
      size += chunk.byteLength;
      if (size > options.maxBytes) {
        throw new AssetFetchError('too_large', `asset body is larger than ${options.maxBytes} bytes`);
      }
      hash.update(chunk);
      await writeFully(handle, chunk, size - chunk.byteLength).catch(diskError('write'));
    }
    if (size === 0) throw new AssetFetchError('upstream_error', 'asset body is empty', { retryable: true });
    await handle.sync().catch(diskError('sync'));
    handleOpen = false;
    await handle.close().catch(diskError('close'));

    const meta: AssetMeta = { sha256: hash.digest('hex'), size, contentType: normaliseContentType(options.contentType) };
    const storeError = (what: string) => (error: unknown): never => {
      throw new AssetStoreError(`cannot store ${what} of asset ${meta.sha256}${isStoreUnavailable(error) ? '' : `: ${(error as Error)?.message}`}`, error);
    };
    const existing = await objects.head(assetKeys.bytes(meta.sha256)).catch(storeError('the bytes'));
    if (existing?.size === size) {
      await rm(tempPath, { force: true }); // the same bytes are already stored (another id, or another instance)
    } else {
      // Where the store decides conditions, one of several instances storing the same bytes wins; the rest find them there.
      await objects.putFile(assetKeys.bytes(meta.sha256), tempPath, existing === undefined ? { ifNoneMatch: '*', moveSource: true } : { moveSource: true })
        .catch(storeError('the bytes'));
    }
    const stored = await readAssetMeta(objects, meta.sha256).catch(storeError('the meta'));
    if (stored === undefined || stored.size !== meta.size || stored.contentType !== meta.contentType) {
      await objects.put(assetKeys.meta(meta.sha256), `${JSON.stringify(meta)}\n`).catch(storeError('the meta'));
    }
    return meta;
  } catch (error) {
    if (handleOpen) await handle.close().catch(() => {});
    await rm(tempPath, { force: true }).catch(() => {});
    throw error;
  }
}

/** Removes partial downloads in `tempDir` not written to for `olderThanMs` (a process that died mid-way left them). */
export async function sweepStaleTempFiles(tempDir: string, olderThanMs: number): Promise<void> {
  const cutoff = Date.now() - olderThanMs;
  const names = await readdir(tempDir).catch(() => [] as string[]);
  for (const name of names) {
    const path = join(tempDir, name);
    try {
      if ((await stat(path)).mtimeMs < cutoff) await rm(path, { force: true });
    } catch {
      // gone already, or not ours to judge
    }
  }
}

async function writeFully(handle: FileHandle, chunk: Uint8Array, position: number): Promise<void> {
  let offset = 0;
  while (offset < chunk.byteLength) {
    const { bytesWritten } = await handle.write(chunk, offset, chunk.byteLength - offset, position + offset);
    offset += bytesWritten;
  }
}

/** Parsed JSON of a small object, or undefined when it is missing, too big or not JSON; the store's failures are thrown. */
async function readSmallJson(objects: ObjectStore, key: string): Promise<unknown> {
  let stored;
  try {
    stored = await objects.get(key, { maxBytes: MAX_JSON_FILE_BYTES });
  } catch (error) {
    if (isStoreUnavailable(error)) throw error;
    return undefined; // too big, or unreadable: not ours
  }
  if (stored === undefined) return undefined;
  try {
    return JSON.parse(stored.body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
