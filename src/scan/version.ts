/**
 * A fingerprint of the scanner as deployed: a hash of this module's compiled
 * files (the WebAssembly and the JavaScript around it). Finding codes kept
 * from an earlier analysis (a stored preview) are used only when it matches,
 * so a deploy that changes the scanner never packs an older scanner's verdicts.
 *
 * A JavaScript file's closing `//# sourceMappingURL=` comment is not hashed: `npm run build`
 * writes it and the Docker image's build (no source maps) does not, and a fleet of both
 * from one commit runs one scanner.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';

const SOURCE_MAP_COMMENT = /\n\/\/# sourceMappingURL=[^\n]*\n?$/;

/** The fingerprint of the compiled scanner in `dir` (a folder URL ending in `/`). */
export function scannerFingerprint(dir: URL): string {
  const hash = createHash('sha256');
  for (const name of readdirSync(dir).filter((file) => file.endsWith('.js') || file.endsWith('.wasm')).sort()) {
    const bytes = readFileSync(new URL(name, dir));
    const content = name.endsWith('.js') ? Buffer.from(bytes.toString('utf8').replace(SOURCE_MAP_COMMENT, '\n'), 'utf8') : bytes;
    hash.update(name).update('\0').update(content).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

export const SCANNER_VERSION = scannerFingerprint(new URL('./', import.meta.url));
