/**
 * Disk quotas: what the service may keep under DATA_DIR in all (MAX_DATA_BYTES, and a
 * free-space floor on its file system). Usage is counted by walking DATA_DIR at start
 * and at every sweep, with writes added as they happen in between. Each user's share
 * is counted from the store instead (holdings.ts), so it holds across instances.
 * Refusals are typed (StorageFullError, QuotaExceededError): HTTP answers 507.
 */
import { readdir, stat, statfs } from 'node:fs/promises';
import { join } from 'node:path';

export interface DiskQuotaOptions {
  dataDir: string;
  /** null: 80% of DATA_DIR's file system, measured by start(). */
  maxDataBytes: number | null;
}

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
  /**
   * Holds room for `bytes` that are about to arrive (an upload, from its Content-Length)
   * until the returned function is called (once is enough; more is harmless); throws
   * StorageFullError unless they fit beside what is already held.
   */
  reserve(bytes: number): () => void;
  /** Records bytes written (or, negative, removed) since the last count. */
  add(bytes: number): void;
  state(): StorageState;
}

export function createDiskQuota(options: DiskQuotaOptions): DiskQuota {
  let maxBytes = options.maxDataBytes ?? Number.MAX_SAFE_INTEGER;
  let used = 0;
  let free = Number.MAX_SAFE_INTEGER;
  /** Free space kept on the file system whatever MAX_DATA_BYTES says: 1% of it, at most 1 GiB. */
  let floor = 0;
  /**
   * Room held for uploads still arriving. Each was checked from its Content-Length alone,
   * so five at once each found the same room and wrote five times what it had. A recount
   * meanwhile also sees their partial files: counted twice for a while, never not at all.
   */
  let reserved = 0;

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

  const room = (): number => Math.max(0, Math.min(maxBytes - used, free - floor) - reserved);

  function checkRoom(bytes: number): void {
    if (bytes > room()) {
      // The figures are the operator's (in /health), not the user's.
      throw new StorageFullError('the service is out of storage space for now; try again later');
    }
  }

  return {
    start: recount,
    recount,
    room,
    checkRoom,
    reserve(bytes) {
      checkRoom(bytes);
      reserved += bytes;
      let held = true;
      return () => {
        if (!held) return;
        held = false;
        reserved -= bytes;
      };
    },
    add(bytes) {
      used = Math.max(0, used + bytes);
      free = Math.max(0, free - bytes);
    },
    state: () => ({ used_bytes: used, max_bytes: maxBytes, free_bytes: free, full: room() <= 0 }),
  };
}

/**
 * Bytes of every file under `dir` (not following symbolic links), each file once: a
 * project keeps its map as a hard link to the preview's, and counted per name, five
 * projects of one 5 MB map made 30 MB and the service refused everyone with 507.
 */
async function directoryBytes(dir: string, seen = new Set<string>()): Promise<number> {
  let total = 0;
  let names;
  try {
    names = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of names) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += await directoryBytes(path, seen);
    else if (entry.isFile()) {
      const info = await stat(path, { bigint: true }).catch(() => undefined);
      if (info === undefined) continue;
      if (info.nlink > 1n) {
        const inode = `${info.dev}:${info.ino}`;
        if (seen.has(inode)) continue;
        seen.add(inode);
      }
      total += Number(info.size);
    }
  }
  return total;
}

/** Whether a file-system error means the disk (or the user's disk quota) is full. */
export function isDiskFull(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code ?? (error as { cause?: NodeJS.ErrnoException } | null)?.cause?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}
