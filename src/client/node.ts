/** Node-only helpers for the client; the browser never loads this module. */
import { openAsBlob } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Upload } from './upload.js';

/** A file on disk as an upload: named by its base name, read lazily as it is sent. */
export async function uploadFromPath(path: string): Promise<Upload & { name: string; data: Blob }> {
  const info = await stat(path);
  if (!info.isFile()) throw new Error(`${path} is not a regular file`);
  return { name: basename(path), data: await openAsBlob(path) };
}
