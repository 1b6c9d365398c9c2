/**
 * DATA_DIR at start: created if missing and checked to be a directory the service can
 * write, so an unusable one stops the start with one line naming it rather than a
 * stack trace (a file in its place) or a hang (Node's recursive mkdir never returns
 * for a path under /proc).
 */
import { constants } from 'node:fs';
import { access, mkdir, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { ConfigError } from '../config.js';

const unusable = (dir: string, why: string): ConfigError => new ConfigError(`DATA_DIR ${JSON.stringify(dir)} cannot be used: ${why}`);

const codeOf = (error: unknown): string => (error as NodeJS.ErrnoException)?.code ?? String((error as Error)?.message ?? error);

/**
 * Creates `dir` (each missing level in turn) and checks it is a writable directory, then
 * the `folders` the service keeps in it; throws ConfigError otherwise. The folders are made
 * here, not where they are used, so one that cannot be (a file in its place, a file system
 * that refuses even root, as /sys does), or one already there that the service cannot
 * write, stops the start with one line too.
 */
export async function prepareDataDir(dir: string, folders: readonly string[] = []): Promise<void> {
  const path = resolve(dir);
  const missing: string[] = [];
  for (let at = path; ; at = dirname(at)) {
    const found = await stat(at).catch((error: unknown) => {
      if (codeOf(error) === 'ENOENT' || codeOf(error) === 'ENOTDIR') return undefined;
      throw unusable(dir, `${at} cannot be read (${codeOf(error)})`);
    });
    if (found) {
      if (!found.isDirectory()) throw unusable(dir, `${at} is not a directory`);
      break;
    }
    if (dirname(at) === at) break;
    missing.unshift(at);
  }
  for (const level of missing) {
    await mkdir(level).catch((error: unknown) => {
      if (codeOf(error) !== 'EEXIST') throw unusable(dir, `${level} cannot be created (${codeOf(error)})`);
    });
  }
  await access(path, constants.W_OK | constants.X_OK).catch((error: unknown) => {
    throw unusable(dir, `it cannot be written (${codeOf(error)})`);
  });
  for (const folder of folders) {
    const at = join(path, folder);
    await mkdir(at).catch(async (error: unknown) => {
      if (codeOf(error) !== 'EEXIST') throw unusable(dir, `${at} cannot be created (${codeOf(error)})`);
      if (!(await stat(at)).isDirectory()) throw unusable(dir, `${at} is not a directory`);
    });
    // One already there may belong to someone else: a volume first used by a container run as root.
    await access(at, constants.W_OK | constants.X_OK).catch((error: unknown) => {
      throw unusable(dir, `${at} cannot be written (${codeOf(error)})`);
    });
  }
}
