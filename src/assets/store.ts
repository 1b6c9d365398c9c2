/**
 * Content-addressed asset store under `<dataDir>/assets/`:
 *
 *   sha256/<aa>/<sha256>        the bytes (aa = first two hex digits)
 *   sha256/<aa>/<sha256>.json   {"sha256", "size", "contentType"}
 *   ids/<id>.json               {"id", "sha256"}: which bytes an asset id gave
 *   tmp/                        bodies being downloaded
 *
 * The same bytes are stored once whatever the id, and an id recorded in `ids/` is
 * never fetched again, by this process or another one sharing the data directory.
 * Every write is atomic (temp file, fsync, rename), so a reader sees a whole file or
 * none. A body streams to `tmp/` while it is hashed and is renamed into place when
 * complete; `tmp/` is on the same file system, so the rename is atomic too.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { AssetFetchError, AssetStoreError } from './errors.js';

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

/** Where the bytes of an asset live. Throws a TypeError unless `sha256` is lowercase hex, so no path can escape the store. */
export function assetPath(dataDir: string, sha256: string): string {
  if (!isSha256(sha256)) throw new TypeError(`not a lowercase hex SHA-256: ${JSON.stringify(sha256)}`);
  return join(dataDir, 'assets', 'sha256', sha256.slice(0, 2), sha256);
}

function metaPath(dataDir: string, sha256: string): string {
  return `${assetPath(dataDir, sha256)}.json`;
}

function idIndexPath(dataDir: string, id: string): string {
  if (!ASSET_ID_PATTERN.test(id)) throw new TypeError(`not an asset id: ${JSON.stringify(id)}`);
  return join(dataDir, 'assets', 'ids', `${id}.json`);
}

/** Where partial downloads are written. */
export function assetTempDir(dataDir: string): string {
  return join(dataDir, 'assets', 'tmp');
}

/** A header value reduced to `type/subtype`, or the octet-stream default when it is not one. */
export function normaliseContentType(header: string | undefined): string {
  const type = header?.split(';', 1)[0]?.trim().toLowerCase();
  return type !== undefined && CONTENT_TYPE_PATTERN.test(type) ? type : DEFAULT_CONTENT_TYPE;
}

/** The stored meta of an asset, or undefined when absent, malformed, or `sha256` is not a hash. */
export async function readAssetMeta(dataDir: string, sha256: string): Promise<AssetMeta | undefined> {
  if (!isSha256(sha256)) return undefined;
  const json = await readSmallJson(metaPath(dataDir, sha256));
  if (!isRecord(json)) return undefined;
  const { size, contentType } = json;
  if (json.sha256 !== sha256 || !Number.isSafeInteger(size) || (size as number) < 0 || typeof contentType !== 'string') return undefined;
  return { sha256, size: size as number, contentType: normaliseContentType(contentType) };
}

/**
 * The asset an id was stored as, when its index entry, meta and bytes are all
 * present and agree. Anything less is a cache miss, so the id is simply fetched again.
 */
export async function lookupAssetId(dataDir: string, id: string): Promise<AssetMeta | undefined> {
  const json = await readSmallJson(idIndexPath(dataDir, id));
  if (!isRecord(json) || json.id !== id || typeof json.sha256 !== 'string') return undefined;
  const meta = await readAssetMeta(dataDir, json.sha256);
  if (meta === undefined) return undefined;
  try {
    const bytes = await stat(assetPath(dataDir, meta.sha256));
    return bytes.isFile() && bytes.size === meta.size ? meta : undefined;
  } catch {
    return undefined;
  }
}

/** Records that `id` is the stored asset `sha256`. */
export async function recordAssetId(dataDir: string, id: string, sha256: string): Promise<void> {
  const path = idIndexPath(dataDir, id);
  assetPath(dataDir, sha256); // validates the hash
  await writeFileAtomic(path, `${JSON.stringify({ id, sha256 })}\n`).catch((error: unknown) => {
    throw new AssetStoreError(`cannot write asset index ${path}`, error);
  });
}

export interface StoreAssetOptions {
  /** The body may not exceed this many bytes: passing it throws `too_large` at once. */
  maxBytes: number;
  contentType?: string;
}

/**
 * Streams a body into the store while hashing it; returns its meta. The body is
 * never held whole in memory. On every failure (the source's, the size cap, an empty
 * body, the disk) the partial file is removed. Errors of the source are rethrown as
 * they are, the cap and an empty body as AssetFetchError, disk errors as AssetStoreError.
 */
export async function storeAssetStream(
  dataDir: string,
  chunks: AsyncIterable<Uint8Array>,
  options: StoreAssetOptions,
): Promise<AssetMeta> {
  const tempDir = assetTempDir(dataDir);
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
    const target = assetPath(dataDir, meta.sha256);
    await mkdir(dirname(target), { recursive: true }).catch(diskError('create the directory for'));
    if ((await fileSize(target)) === size) {
      await rm(tempPath, { force: true }); // the same bytes are already stored (another id, or another process)
    } else {
      await rename(tempPath, target).catch(diskError('rename'));
      await syncDirectory(dirname(target));
    }
    const stored = await readAssetMeta(dataDir, meta.sha256);
    if (stored === undefined || stored.size !== meta.size || stored.contentType !== meta.contentType) {
      await writeFileAtomic(metaPath(dataDir, meta.sha256), `${JSON.stringify(meta)}\n`).catch(diskError('write the meta of'));
    }
    return meta;
  } catch (error) {
    if (handleOpen) await handle.close().catch(() => {});
    await rm(tempPath, { force: true }).catch(() => {});
    throw error;
  }
}

/**
 * Removes what a process that died mid-way left (not written to for `olderThanMs`):
 * partial downloads in `tmp/`, and the temp files of atomic writes beside the index
 * (`ids/`) and the metas (`sha256/<aa>/`).
 */
export async function sweepStaleTempFiles(dataDir: string, olderThanMs: number): Promise<void> {
  const cutoff = Date.now() - olderThanMs;
  const root = join(dataDir, 'assets');
  const shards = await readdir(join(root, 'sha256')).catch(() => [] as string[]);
  const dirs: [string, (name: string) => boolean][] = [
    [assetTempDir(dataDir), () => true],
    [join(root, 'ids'), isAtomicTemp],
    ...shards.map((shard): [string, (name: string) => boolean] => [join(root, 'sha256', shard), isAtomicTemp]),
  ];
  for (const [dir, isTemp] of dirs) {
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) {
      if (!isTemp(name)) continue;
      const path = join(dir, name);
      try {
        if ((await stat(path)).mtimeMs < cutoff) await rm(path, { force: true });
      } catch {
        // gone already, or not ours to judge
      }
    }
  }
}

/** `<name>.<12 hex>.tmp`, as writeFileAtomic below names its temp files. */
const isAtomicTemp = (name: string): boolean => /\.[0-9a-f]{12}\.tmp$/.test(name);

/** Writes `data` to `path` so that readers see the old file or the new one, never a part. */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const directory = dirname(path);
  await mkdir(directory, { recursive: true });
  const tempPath = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  let handle: FileHandle | undefined;
  try {
    handle = await open(tempPath, 'wx', 0o644);
    await handle.writeFile(data);
    await handle.sync();
    await handle.close();
    handle = undefined;
    await rename(tempPath, path);
  } catch (error) {
    await handle?.close().catch(() => {});
    await rm(tempPath, { force: true }).catch(() => {});
    throw error;
  }
  await syncDirectory(directory);
}

async function writeFully(handle: FileHandle, chunk: Uint8Array, position: number): Promise<void> {
  let offset = 0;
  while (offset < chunk.byteLength) {
    const { bytesWritten } = await handle.write(chunk, offset, chunk.byteLength - offset, position + offset);
    offset += bytesWritten;
  }
}

/** Makes a rename durable; best effort, since not every platform can open a directory. */
async function syncDirectory(directory: string): Promise<void> {
  try {
    const handle = await open(directory, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // not supported here
  }
}

async function fileSize(path: string): Promise<number | undefined> {
  try {
    const info = await stat(path);
    return info.isFile() ? info.size : undefined;
  } catch {
    return undefined;
  }
}

/** Parsed JSON of a small file, or undefined when it is missing, too big or not JSON. */
async function readSmallJson(path: string): Promise<unknown> {
  try {
    const info = await stat(path);
    if (!info.isFile() || info.size > MAX_JSON_FILE_BYTES) return undefined;
    return JSON.parse(await readFile(path, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
