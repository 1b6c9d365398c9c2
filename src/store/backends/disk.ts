/**
 * The disk object store (the default): one file per key under `root`, key segments as
 * folders. Every write goes to a hidden temp file beside its target (`.name.<random>.tmp`,
 * fsynced) and is then renamed over it, or hard-linked to it for a conditional create, so
 * a reader sees the old object or the new one, never a torn one. Writes and deletes of a
 * key hold a lock file (`.name.lock`) besides an in-process lock, so conditional writes
 * stay atomic between processes sharing the folder. ETags come from the file's identity
 * (inode, size, modification time in ns): every write makes a new file, so a new ETag,
 * and head and list need no read of the bytes.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, copyFile, link, mkdir, open, readdir, rename, rm, rmdir, stat, type FileHandle } from 'node:fs/promises';
import type { BigIntStats, Dirent } from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isNotFound, isTempName, syncDirectory } from '../atomic.js';
import { busyError, fromFsError, tooLargeError } from './errors.js';
import { guardStream } from './guard-stream.js';
import { createKeyedLock } from '../../concurrency/keyed-lock.js';
import { measureReachability } from './operations.js';
import { checkKey, checkPrefix, isValidKey } from './keys.js';
import type { Capabilities, ListOptions, ListPage, ObjectInfo, ObjectStore, ObjectStream, PutFileOptions, Reachability, StoredObject, WriteOptions, WriteResult } from './types.js';

export interface DiskStoreOptions {
  root: string;
  /** Longest wait for another writer of the same key before `StoreUnavailableError` (busy). */
  lockTimeoutMs?: number;
  /** A lock file older than this was left by a process that died holding it. */
  staleLockMs?: number;
}

const MAX_PAGE = 1000;
const LOCK_SUFFIX = '.lock';

export function createDiskStore(options: DiskStoreOptions): ObjectStore {
  const root = options.root;
  const lockTimeoutMs = options.lockTimeoutMs ?? 10_000;
  const staleLockMs = options.staleLockMs ?? 60_000;
  const localLock = createKeyedLock();

  const pathOf = (key: string): string => join(root, ...checkKey(key).split('/'));
  const lockPathOf = (path: string): string => join(dirname(path), `.${basename(path)}${LOCK_SUFFIX}`);
  const tempPathOf = (path: string): string => join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);

  /** Runs `make` (which creates something in `dir`) again after creating `dir`, when a sweep removed the empty folder meanwhile. */
  async function inDirectory<T>(dir: string, make: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await make();
      } catch (error) {
        if (!isNotFound(error) || attempt === 4) throw error;
        await mkdir(dir, { recursive: true });
      }
    }
  }

  /** Holds the key for `task`: first among this process's writers, then against other processes by a lock file. */
  function withKeyLock<T>(operation: string, key: string, path: string, task: () => Promise<T>): Promise<T> {
    return localLock(key, async () => {
      const lockPath = lockPathOf(path);
      const started = Date.now();
      let delay = 2;
      for (;;) {
        try {
          await inDirectory(dirname(path), async () => (await open(lockPath, 'wx', 0o644)).close());
          break;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        }
        const held = await stat(lockPath).catch(() => undefined);
        // Held only for a rename or link, so an old lock file is a dead process's. (Two waiters
        // judging it stale at once may both go ahead: a crash-recovery edge, not a steady state.)
        if (held !== undefined && Date.now() - held.mtimeMs > staleLockMs) {
          await rm(lockPath, { force: true });
          continue;
        }
        if (Date.now() - started > lockTimeoutMs) throw busyError(operation, key, Date.now() - started);
        await sleep(delay);
        delay = Math.min(delay * 2, 50);
      }
      try {
        return await task();
      } finally {
        await rm(lockPath, { force: true });
      }
    });
  }

  function infoOf(key: string, stats: BigIntStats): ObjectInfo {
    return {
      key,
      size: Number(stats.size),
      etag: `${stats.ino.toString(36)}-${stats.size.toString(36)}-${stats.mtimeNs.toString(36)}`,
      lastModified: Number(stats.mtimeMs),
    };
  }

  /** Fills a temp file beside `path` (by `fill`), fsyncs it; returns its path and the ETag it will have. */
  async function writeTemp(path: string, fill: (temp: string) => Promise<void>): Promise<{ temp: string; stats: BigIntStats }> {
    const temp = tempPathOf(path);
    try {
      await inDirectory(dirname(path), () => fill(temp));
      const handle = await open(temp, 'r+');
      try {
        await handle.sync();
        return { temp, stats: await handle.stat({ bigint: true }) };
      } finally {
        await handle.close();
      }
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }

  /** Puts the fsynced temp file at `path` when the condition holds; removes it otherwise. */
  async function commit(operation: string, key: string, path: string, temp: string, stats: BigIntStats, condition: WriteOptions): Promise<WriteResult> {
    try {
      const written = await withKeyLock(operation, key, path, async () => {
        if (condition.ifNoneMatch === '*') {
          try {
            await link(temp, path); // fails if anything has the name, whoever created it
            return true;
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
            throw error;
          }
        }
        if (condition.ifMatch !== undefined) {
          const current = await statOrUndefined(path);
          if (current === undefined || infoOf(key, current).etag !== condition.ifMatch) return false;
        }
        await rename(temp, path);
        return true;
      });
      if (!written) return { written: false };
      await syncDirectory(dirname(path));
      return { written: true, etag: infoOf(key, stats).etag };
    } finally {
      await rm(temp, { force: true }); // after a link, or a failed condition
    }
  }

  /** A condition already false needs no temp file (checked again under the lock before the write). */
  async function failsAlready(key: string, path: string, condition: WriteOptions): Promise<boolean> {
    if (condition.ifNoneMatch !== '*' && condition.ifMatch === undefined) return false;
    const current = await statOrUndefined(path);
    if (condition.ifNoneMatch === '*') return current !== undefined;
    return current === undefined || infoOf(key, current).etag !== condition.ifMatch;
  }

  async function statOrUndefined(path: string): Promise<BigIntStats | undefined> {
    try {
      const stats = await stat(path, { bigint: true });
      return stats.isFile() ? stats : undefined;
    } catch (error) {
      if (isAbsent(error)) return undefined;
      throw error;
    }
  }

  /** The file at `path`, open for reading, with its stats; undefined when absent or not a file. */
  async function openFile(path: string): Promise<{ handle: FileHandle; stats: BigIntStats } | undefined> {
    let handle: FileHandle;
    try {
      handle = await open(path, 'r');
    } catch (error) {
      if (isAbsent(error)) return undefined;
      throw error;
    }
    try {
      const stats = await handle.stat({ bigint: true });
      if (stats.isFile()) return { handle, stats };
    } catch (error) {
      await handle.close();
      throw error;
    }
    await handle.close();
    return undefined;
  }

  async function capabilities(): Promise<Capabilities> {
    return { atomicCreate: true, atomicReplace: true };
  }

  async function head(key: string): Promise<ObjectInfo | undefined> {
    const path = pathOf(key);
    try {
      const stats = await statOrUndefined(path);
      return stats === undefined ? undefined : infoOf(key, stats);
    } catch (error) {
      throw fromFsError(error, 'head', key);
    }
  }

  async function get(key: string, getOptions: { maxBytes?: number } = {}): Promise<StoredObject | undefined> {
    const path = pathOf(key);
    let file: { handle: FileHandle; stats: BigIntStats } | undefined;
    try {
      file = await openFile(path);
      if (file === undefined) return undefined;
      const size = Number(file.stats.size);
      if (getOptions.maxBytes !== undefined && size > getOptions.maxBytes) throw tooLargeError('get', key, size, getOptions.maxBytes);
      const body = await file.handle.readFile();
      return { ...infoOf(key, file.stats), body };
    } catch (error) {
      throw fromFsError(error, 'get', key);
    } finally {
      await file?.handle.close();
    }
  }

  async function getStream(key: string): Promise<ObjectStream | undefined> {
    const path = pathOf(key);
    let file: { handle: FileHandle; stats: BigIntStats } | undefined;
    try {
      file = await openFile(path);
    } catch (error) {
      throw fromFsError(error, 'getStream', key);
    }
    if (file === undefined) return undefined;
    // The stream reads the file it opened, even if a writer replaces the name meanwhile.
    const body = guardStream(file.handle.createReadStream({ autoClose: true }), (error) => fromFsError(error, 'getStream', key));
    return { ...infoOf(key, file.stats), body };
  }

  async function put(key: string, body: Uint8Array | string, condition: WriteOptions = {}): Promise<WriteResult> {
    const path = pathOf(key);
    try {
      if (await failsAlready(key, path, condition)) return { written: false };
      const { temp, stats } = await writeTemp(path, async (file) => {
        const handle = await open(file, 'wx', 0o644);
        try {
          await handle.writeFile(body);
        } finally {
          await handle.close();
        }
      });
      return await commit('put', key, path, temp, stats, condition);
    } catch (error) {
      throw fromFsError(error, 'put', key);
    }
  }

  async function putFile(key: string, source: string, fileOptions: PutFileOptions = {}): Promise<WriteResult> {
    const path = pathOf(key);
    try {
      if (await failsAlready(key, path, fileOptions)) {
        if (fileOptions.moveSource === true) await rm(source, { force: true });
        return { written: false };
      }
      const { temp, stats } = await writeTemp(path, async (file) => {
        if (fileOptions.moveSource === true) {
          try {
            await rename(source, file);
            return;
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
          }
        }
        // Files are only ever replaced whole, never changed in place: a second name for the same
        // bytes (a project keeping its preview's map) needs no copy where the file system allows.
        if (fileOptions.linkSource === true) {
          try {
            await link(source, file);
            return;
          } catch {
            // another file system, or links not allowed: copy
          }
        }
        await copyFile(source, file, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
      });
      const result = await commit('putFile', key, path, temp, stats, fileOptions);
      if (fileOptions.moveSource === true) await rm(source, { force: true });
      return result;
    } catch (error) {
      throw fromFsError(error, 'putFile', key);
    }
  }

  async function remove(key: string): Promise<void> {
    const path = pathOf(key);
    try {
      await withKeyLock('delete', key, path, () => rm(path, { force: true }));
      await removeEmptyParents(dirname(path));
    } catch (error) {
      throw fromFsError(error, 'delete', key);
    }
  }

  /** Folders are an artefact of this store, not objects: an emptied one goes (a concurrent writer re-creates it). */
  async function removeEmptyParents(dir: string): Promise<void> {
    for (let current = dir; current.startsWith(root + sep); current = dirname(current)) {
      try {
        await rmdir(current);
      } catch {
        return; // not empty, or gone already
      }
    }
  }

  async function list(prefix: string, listOptions: ListOptions = {}): Promise<ListPage> {
    checkPrefix(prefix);
    const limit = Math.max(1, Math.min(listOptions.limit ?? MAX_PAGE, MAX_PAGE));
    const after = listOptions.cursor;
    if (after !== undefined && !isValidKey(after)) throw new TypeError(`not a list cursor of this store: ${JSON.stringify(after)}`);
    const slash = prefix.lastIndexOf('/');
    const startKey = prefix.slice(0, slash + 1);
    const objects: ObjectInfo[] = [];
    try {
      for await (const info of walk(join(root, ...startKey.split('/').filter(Boolean)), startKey, prefix, after, listOptions.keysOnly === true)) {
        if (objects.length === limit) return { objects, cursor: objects[objects.length - 1]!.key };
        objects.push(info);
      }
    } catch (error) {
      throw fromFsError(error, 'list', prefix);
    }
    return { objects };
  }

  /**
   * The objects under `dir` whose keys start with `prefix` and come after `after`, in key
   * order: entries sorted with folders as `name/`, so a folder's keys fall where they sort.
   */
  async function* walk(dir: string, dirKey: string, prefix: string, after: string | undefined, keysOnly: boolean): AsyncGenerator<ObjectInfo> {
    // Names that cannot lead under `prefix` go before anything else is done with them: a
    // listing of one user's entries among thousands sorts only that user's.
    const items = (await readFolder(dir))
      .filter((entry) => mayHold(dirKey + entry.name, prefix) && isValidKey(entry.name) && (entry.isDirectory() || entry.isFile()))
      .map((entry) => ({ name: entry.name, folder: entry.isDirectory(), order: entry.isDirectory() ? `${entry.name}/` : entry.name }))
      .sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0));
    for (const item of items) {
      const key = dirKey + item.order;
      if (item.folder) {
        if (!prefix.startsWith(key) && !key.startsWith(prefix)) continue;
        if (after !== undefined && key < after && !after.startsWith(key)) continue; // every key inside sorts before `after`
        yield* walk(join(dir, item.name), key, prefix, after, keysOnly);
      } else {
        if (!key.startsWith(prefix) || (after !== undefined && key <= after)) continue;
        if (keysOnly) { yield { key, size: 0, etag: '', lastModified: 0 }; continue; }
        const stats = await statOrUndefined(join(dir, item.name));
        if (stats !== undefined) yield infoOf(key, stats);
      }
    }
  }

  function check(): Promise<Reachability> {
    return measureReachability(async () => {
      await mkdir(root, { recursive: true });
      await access(root, constants.R_OK | constants.W_OK);
    }, (error) => fromFsError(error, 'check', undefined));
  }

  async function sweepIncomplete(olderThanMs: number): Promise<number> {
    const cutoff = Date.now() - olderThanMs;
    let removed = 0;
    async function sweepDir(dir: string): Promise<void> {
      for (const entry of await readFolder(dir)) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) {
          await sweepDir(path);
          await rmdir(path).catch(() => {}); // only an empty folder goes; a writer re-creates it
        } else if (isTempName(entry.name) || (entry.name.startsWith('.') && entry.name.endsWith(LOCK_SUFFIX))) {
          const stats = await stat(path).catch(() => undefined);
          if (stats !== undefined && stats.mtimeMs < cutoff) {
            await rm(path, { force: true });
            removed++;
          }
        }
      }
    }
    try {
      await sweepDir(root);
    } catch (error) {
      throw fromFsError(error, 'sweepIncomplete', undefined);
    }
    return removed;
  }

  return {
    kind: 'disk',
    location: `disk:${root}`,
    capabilities,
    head,
    get,
    getStream,
    put,
    putFile,
    delete: remove,
    list,
    check,
    sweepIncomplete,
    localPath: pathOf,
    close: async () => {},
  };
}

/** Whether `key` (a file, or a folder without its `/`) may be or hold a key under `prefix`. */
function mayHold(key: string, prefix: string): boolean {
  return key.startsWith(prefix) || prefix.startsWith(key);
}

/** A folder's entries; none when it is gone (a delete or a sweep removed it). */
async function readFolder(dir: string): Promise<Dirent[]> {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if (isAbsent(error)) return [];
    throw error;
  }
}

/** Absent, including a key whose folder is a file or whose name is a folder. */
function isAbsent(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return isNotFound(error) || code === 'ENOTDIR' || code === 'EISDIR';
}
