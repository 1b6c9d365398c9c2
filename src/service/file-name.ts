/**
 * The name an uploader gave their file, as the report shows it back: a base name a
 * person would recognise, never a path, never control characters, at most 255
 * characters; nothing left becomes the contract's fallback name.
 */
import { basename } from 'node:path';

export const FALLBACK_FILE_NAME = 'upload.rbxl';

export function cleanFileName(raw: string | null): string {
  // eslint-disable-next-line no-control-regex -- control characters are what this removes
  const name = basename((raw ?? '').replace(/\\/g, '/')).replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, 255);
  return name === '' ? FALLBACK_FILE_NAME : name;
}
