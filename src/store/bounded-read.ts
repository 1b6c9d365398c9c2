/**
 * A whole file read synchronously (workers read one input at a time), refused before
 * anything is allocated when it is larger than the caller may hold.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** The file's bytes; `tooLarge(size)` is thrown, before reading, when it has more than `maxBytes`. */
export function readFileBounded(path: string, maxBytes: number, tooLarge: (size: number) => Error): Uint8Array {
  const fd = openSync(path, 'r');
  try {
    const { size } = fstatSync(fd);
    if (size > maxBytes) throw tooLarge(size);
    const bytes = Buffer.allocUnsafe(size);
    let offset = 0;
    while (offset < size) {
      const read = readSync(fd, bytes, offset, size - offset, offset);
      if (read === 0) break;
      offset += read;
    }
    return bytes.subarray(0, offset);
  } finally {
    closeSync(fd);
  }
}
