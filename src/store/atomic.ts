/**
 * Atomic file replacement: readers see the old file or the new one, never a torn one,
 * and after a crash the new one is either wholly there or not at all.
 * Temporary files are hidden (`.name.<random>.tmp`) in the target's own directory, so
 * the rename never crosses a file system and directory listings can skip them.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { copyFile, mkdir, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** True for the temporary names this module creates. */
export function isTempName(name: string): boolean {
  return name.startsWith('.') && name.endsWith('.tmp');
}

function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
}

/** Writes `data` to a temp file beside `path`, fsyncs it, renames it over `path`, fsyncs the directory. */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const temp = tempPathFor(path);
  try {
    const handle = await open(temp, 'wx', 0o644);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await syncDirectory(dirname(path));
}

/**
 * Moves `source` to `dest`, replacing it atomically. A rename when both are on one file
 * system; otherwise a copy to a temp file beside `dest`, fsync, rename, then the source
 * is removed. The caller should have fsynced `source` (a rename keeps its data as is).
 */
export async function moveFileAtomic(source: string, dest: string): Promise<void> {
  try {
    await rename(source, dest);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    const temp = tempPathFor(dest);
    try {
      await copyFile(source, temp, constants.COPYFILE_EXCL);
      const handle = await open(temp, 'r+');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, dest);
    } catch (copyError) {
      await rm(temp, { force: true });
      throw copyError;
    }
    await rm(source, { force: true });
  }
  await syncDirectory(dirname(dest));
}

/** Makes a rename in `dir` durable. Some platforms cannot open or fsync a directory; there it is skipped. */
export async function syncDirectory(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'EINVAL' && code !== 'EPERM' && code !== 'EACCES' && code !== 'EBADF') throw error;
  } finally {
    await handle?.close();
  }
}

export function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === 'ENOENT';
}

/** Returns a function that creates `dir` (with parents) once; a failed attempt is retried on the next call. */
export function directoryMaker(dir: string): () => Promise<void> {
  let made: Promise<void> | null = null;
  return () => {
    made ??= mkdir(dir, { recursive: true }).then(
      () => {},
      (error: unknown) => {
        made = null;
        throw error;
      },
    );
    return made;
  };
}
