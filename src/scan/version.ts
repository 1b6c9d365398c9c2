/**
 * A fingerprint of the scanner as deployed: a hash of this module's compiled
 * files (the WebAssembly and the JavaScript around it). Finding codes kept
 * from an earlier analysis (a stored preview) are used only when it matches,
 * so a deploy that changes the scanner never packs an older scanner's verdicts.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';

function fingerprint(): string {
  const dir = new URL('./', import.meta.url);
  const hash = createHash('sha256');
  for (const name of readdirSync(dir).filter((file) => file.endsWith('.js') || file.endsWith('.wasm')).sort()) {
    hash.update(name).update('\0').update(readFileSync(new URL(name, dir))).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

export const SCANNER_VERSION = fingerprint();
