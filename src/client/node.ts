/** Node-only helpers for the client; the browser never loads this module. */
import { openAsBlob } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Upload } from './upload.js';

/**
 * A file on disk as an upload: named by its base name, read lazily as it is sent. A path
 * given as bytes (a name that is not UTF-8) is named by its UTF-8 reading.
 */
export async function uploadFromPath(path: string | Buffer): Promise<Upload & { name: string; data: Blob }> {
  const info = await stat(path);
  const text = typeof path === 'string' ? path : path.toString('utf8');
  if (!info.isFile()) throw new Error(`${text} is not a regular file`);
  return { name: basename(text), data: await openAsBlob(path) };
}
