/**
 * Disk quotas: what the service may keep under DATA_DIR in all (MAX_DATA_BYTES, and a
 * free-space floor on its file system) and per user (bytes, previews, projects).
 *
 * Usage is counted by walking DATA_DIR at start and at every sweep, with writes added
 * as they happen in between; per-user usage is an index of the previews and projects
 * each user holds, built from the stores at start and kept as they change. A preview
 * counts for every user who uploaded it. Refusals are typed (StorageFullError,
 * QuotaExceededError): HTTP answers 507.
 */
import { readdir, stat, statfs } from 'node:fs/promises';
import { join } from 'node:path';

export interface DiskQuotaOptions {
  dataDir: string;
  /** null: 80% of DATA_DIR's file system, measured by start(). */
  maxDataBytes: number | null;
  userMaxBytes: number;
  userMaxPreviews: number;
  userMaxProjects: number;
}

export type UsageKind = 'preview' | 'project';

export interface StorageState {
  used_bytes: number;
  max_bytes: number;
  free_bytes: number;
  full: boolean;
}

/** The service has no room left (MAX_DATA_BYTES reached, or the disk nearly full). */
export class StorageFullError extends Error {
  override name = 'StorageFullError';
}

/** One user's share is used up. */
export class QuotaExceededError extends Error {
  override name = 'QuotaExceededError';
}

export interface DiskQuota {
  /** Measures the file system (for the default cap) and counts what DATA_DIR holds. */
  start(): Promise<void>;
  /** Counts DATA_DIR again and refreshes the free space. */
  recount(): Promise<void>;
  /** Bytes that may still be written. */
  room(): number;
  /** Throws StorageFullError unless `bytes` more fit. */
  checkRoom(bytes: number): void;
  /** Records bytes written (or, negative, removed) since the last count. */
  add(bytes: number): void;
  /** Sets what a preview or project holds and who it counts for (replacing an earlier entry). */
  track(kind: UsageKind, key: string, bytes: number, users: readonly string[]): void;
  untrack(kind: UsageKind, key: string): void;
  /** Throws QuotaExceededError unless `user` may add one more `kind` of `bytes` (an entry the user already has is free). */
  checkUser(user: string, kind: UsageKind, bytes: number, key?: string): void;
  /** Throws QuotaExceededError unless `user` may add `bytes` (counts are checked by checkUser, once the entry is known). */
  checkUserBytes(user: string, bytes: number): void;
  usage(user: string): { bytes: number; previews: number; projects: number };
  /** Bytes `user` may still add. */
  userRoom(user: string): number;
  state(): StorageState;
}

interface Entry { bytes: number; users: readonly string[] }
interface UserUsage { bytes: number; previews: number; projects: number }

export function createDiskQuota(options: DiskQuotaOptions): DiskQuota {
  let maxBytes = options.maxDataBytes ?? Number.MAX_SAFE_INTEGER;
  let used = 0;
  let free = Number.MAX_SAFE_INTEGER;
  /** Free space kept on the file system whatever MAX_DATA_BYTES says: 1% of it, at most 1 GiB. */
  let floor = 0;
  const entries = new Map<string, Entry>();
  const users = new Map<string, UserUsage>();

  async function measure(): Promise<void> {
    try {
      const fs = await statfs(options.dataDir);
      free = fs.bavail * fs.bsize;
      floor = Math.min(2 ** 30, Math.floor(fs.blocks * fs.bsize * 0.01));
      if (options.maxDataBytes === null) maxBytes = Math.floor(fs.blocks * fs.bsize * 0.8);
    } catch {
      // statfs is missing on some platforms: MAX_DATA_BYTES alone then
    }
  }

  async function recount(): Promise<void> {
    await measure();
    used = await directoryBytes(options.dataDir);
  }

  function checkUserBytes(user: string, bytes: number): void {
    if ((users.get(user)?.bytes ?? 0) + bytes > options.userMaxBytes) {
      throw new QuotaExceededError(`your previews and projects would take more than ${options.userMaxBytes} bytes (USER_MAX_BYTES); delete projects or let previews expire`);
    }
  }

  const room = (): number => Math.max(0, Math.min(maxBytes - used, free - floor));

  function userOf(user: string): UserUsage {
    let usage = users.get(user);
    if (!usage) users.set(user, (usage = { bytes: 0, previews: 0, projects: 0 }));
    return usage;
  }

  function apply(kind: UsageKind, entry: Entry, sign: 1 | -1): void {
    for (const user of entry.users) {
      const usage = userOf(user);
      usage.bytes += sign * entry.bytes;
      if (kind === 'preview') usage.previews += sign;
      else usage.projects += sign;
      if (usage.bytes <= 0 && usage.previews <= 0 && usage.projects <= 0) users.delete(user);
    }
  }

  function untrack(kind: UsageKind, key: string): void {
    const id = `${kind}:${key}`;
    const entry = entries.get(id);
    if (!entry) return;
    entries.delete(id);
    apply(kind, entry, -1);
  }

  return {
    start: recount,
    recount,
    room,
    checkRoom(bytes) {
      if (bytes > room()) {
        throw new StorageFullError(`the service has no room for ${bytes} more bytes (MAX_DATA_BYTES ${maxBytes}, ${used} used, ${free} free on disk)`);
      }
    },
    add(bytes) {
      used = Math.max(0, used + bytes);
      free = Math.max(0, free - bytes);
    },
    track(kind, key, bytes, owners) {
      untrack(kind, key);
      const entry = { bytes, users: [...new Set(owners)] };
      entries.set(`${kind}:${key}`, entry);
      apply(kind, entry, 1);
    },
    untrack,
    checkUser(user, kind, bytes, key) {
      const entry = key === undefined ? undefined : entries.get(`${kind}:${key}`);
      if (entry?.users.includes(user)) return;
      const usage = users.get(user) ?? { bytes: 0, previews: 0, projects: 0 };
      if (kind === 'preview' && usage.previews >= options.userMaxPreviews) {
        throw new QuotaExceededError(`you have ${usage.previews} previews, the most one user may have (USER_MAX_PREVIEWS); they expire, or create from them`);
      }
      if (kind === 'project' && usage.projects >= options.userMaxProjects) {
        throw new QuotaExceededError(`you have ${usage.projects} projects, the most one user may keep (USER_MAX_PROJECTS); delete some first`);
      }
      checkUserBytes(user, bytes);
    },
    checkUserBytes,
    userRoom: (user) => Math.max(0, options.userMaxBytes - (users.get(user)?.bytes ?? 0)),
    usage: (user) => ({ ...(users.get(user) ?? { bytes: 0, previews: 0, projects: 0 }) }),
    state: () => ({ used_bytes: used, max_bytes: maxBytes, free_bytes: free, full: room() <= 0 }),
  };
}

/** Bytes of every file under `dir` (not following links). */
async function directoryBytes(dir: string): Promise<number> {
  let total = 0;
  let names;
  try {
    names = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of names) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += await directoryBytes(path);
    else if (entry.isFile()) total += await stat(path).then((info) => info.size, () => 0);
  }
  return total;
}

/** Whether a file-system error means the disk (or the user's disk quota) is full. */
export function isDiskFull(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code ?? (error as { cause?: NodeJS.ErrnoException } | null)?.cause?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}
