/**
 * The path an argument names. Node decodes arguments as UTF-8, a byte that is not
 * becoming U+FFFD, so a file named in another encoding could not be read and
 * `gltf MAP $'out\xff.glb'` wrote `out\uFFFD.glb`. Such an argument is opened by its
 * bytes from /proc/self/cmdline (Linux); two arguments that read alike are refused,
 * rather than one written over the other. Every command that takes a FILE reads it so.
 */
import { readFileSync } from 'node:fs';

/** Two arguments read as the same text, one of them bytes that are not UTF-8: which is meant cannot be told. */
export class AlikeArgumentsError extends Error {}

export function argumentPath(arg: string): string | Buffer {
  if (!arg.includes('\uFFFD')) return arg;
  // A U+FFFD typed as such reads alike too (its bytes are the string's): `gltf $'a\xff' a\uFFFD` wrote over a\xff.
  const alike = rawArguments().filter((bytes) => bytes.toString('utf8') === arg);
  if (alike.some((bytes) => !bytes.equals(alike[0]!))) {
    throw new AlikeArgumentsError(`two arguments read as ${arg} (bytes that are not UTF-8); rename one`);
  }
  return alike[0] ?? arg;
}

/** The command's arguments as bytes, the last process.argv.length - 2 of /proc/self/cmdline ([] elsewhere). */
function rawArguments(): Buffer[] {
  let cmdline: Buffer;
  try {
    cmdline = readFileSync('/proc/self/cmdline');
  } catch {
    return [];
  }
  const all: Buffer[] = [];
  for (let start = 0; start < cmdline.length;) {
    const end = cmdline.indexOf(0, start);
    all.push(cmdline.subarray(start, end === -1 ? cmdline.length : end));
    start = end === -1 ? cmdline.length : end + 1;
  }
  return all.slice(Math.max(0, all.length - (process.argv.length - 2)));
}
