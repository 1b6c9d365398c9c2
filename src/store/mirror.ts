/**
 * Local files for the workers, which read and write files synchronously (a map, assets,
 * converted meshes): objects of the store laid out under `root` exactly as their keys
 * (`root/assets/sha256/ab/…`). On the disk store the store's own folder is the mirror
 * and nothing is copied; on S3 `root` is a local folder that `fetch` fills from the
 * store before a task and `push` empties into the store after it, so what a worker
 * made on one instance is there for every other.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createKeyedLock } from '../concurrency/index.js';
import { checkKey } from './backends/keys.js';
import type { ObjectStore } from './backends/types.js';

export interface LocalMirror {
  /** Where keys are files (`join(root, ...key.split('/'))`). */
  readonly root: string;
  /** Whether the store itself is the mirror (nothing is copied). */
  readonly shared: boolean;
  /** The local file of a key. */
  pathOf(key: string): string;
  /**
   * Copies each key the store has and `root` lacks into `root`, and keeps the copies of
   * `keys` from `prune` until the returned function is called (when the task that reads
   * them is done).
   */
  fetch(keys: readonly string[]): Promise<() => void>;
  /** Stores each key that is a file under `root` and not yet in the store. */
  push(keys: readonly string[]): Promise<void>;
  /** Removes local copies (S3 mode), after a task or when the mirror grows. */
  drop(keys: readonly string[]): Promise<void>;
  /** Removes local copies not written for `olderThanMs` and not held by a `fetch` (S3 mode; the store keeps every one). */
  prune(olderThanMs: number): Promise<void>;
}

export function createLocalMirror(objects: ObjectStore, localRoot: string): LocalMirror {
  const shared = objects.localPath !== undefined;
  const root = shared ? storeRoot(objects) : localRoot;
  const pathOf = (key: string): string => join(root, ...checkKey(key).split('/'));
  const isFile = (path: string): Promise<boolean> => stat(path).then((info) => info.isFile(), () => false);

  /**
   * Copies a task reads, by path, and how many tasks read each: `prune` leaves them. A copy
   * kept from an earlier task is not fetched again, so its time says nothing of its use: the
   * sweep took copies a create or a scene build was about to read (a mesh then said
   * `unreadable`, a scene.glb stored with boxes for good).
   */
  const held = new Map<string, number>();
  /** A copy's check-and-fetch and prune's check-and-remove, one at a time per path. */
  const perPath = createKeyedLock();

  async function fetch(keys: readonly string[]): Promise<() => void> {
    if (shared) return () => undefined;
    const paths = new Map([...new Set(keys)].map((key) => [key, pathOf(key)]));
    // Held before anything is looked at: a prune that comes later leaves them.
    for (const path of paths.values()) held.set(path, (held.get(path) ?? 0) + 1);
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      for (const path of paths.values()) {
        const left = held.get(path)! - 1;
        if (left === 0) held.delete(path); else held.set(path, left);
      }
    };
    try {
      for (const [key, path] of paths) await perPath(path, () => copy(key, path));
    } catch (error) {
      release();
      throw error;
    }
    return release;
  }

  async function copy(key: string, path: string): Promise<void> {
    if (await isFile(path)) return;
    const stream = await objects.getStream(key);
    if (stream === undefined) return;
    await mkdir(dirname(path), { recursive: true });
    const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await pipeline(stream.body, createWriteStream(temp, { flags: 'wx' }));
      await rename(temp, path);
    } finally {
      await rm(temp, { force: true });
    }
  }

  async function push(keys: readonly string[]): Promise<void> {
    if (shared) return;
    for (const key of new Set(keys)) {
      const path = pathOf(key);
      if (!(await isFile(path)) || (await objects.head(key)) !== undefined) continue;
      await objects.putFile(key, path, { ifNoneMatch: '*' });
    }
  }

  async function drop(keys: readonly string[]): Promise<void> {
    if (shared) return;
    for (const key of new Set(keys)) await rm(pathOf(key), { force: true });
  }

  async function prune(olderThanMs: number): Promise<void> {
    if (shared) return;
    const cutoff = Date.now() - olderThanMs;
    const walk = async (dir: string): Promise<void> => {
      for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) await walk(path);
        else {
          await perPath(path, async () => {
            if (!held.has(path) && ((await stat(path).catch(() => undefined))?.mtimeMs ?? Infinity) < cutoff) await rm(path, { force: true });
          });
        }
      }
    };
    await walk(root);
  }

  return { root, shared, pathOf, fetch, push, drop, prune };
}

/** The folder of a store that keeps its objects on this machine. */
function storeRoot(objects: ObjectStore): string {
  const probe = objects.localPath!('probe');
  return probe.slice(0, probe.length - 'probe'.length - 1);
}
