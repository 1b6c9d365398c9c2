/** The 32-byte file header and format sniffing. */
import { DecodeError } from './errors.js';
import type { DecodeLimits } from './limits.js';

export const MAGIC = new TextEncoder().encode('<roblox!');
export const SIGNATURE = Uint8Array.of(0x89, 0xff, 0x0d, 0x0a, 0x1a, 0x0a);
export const HEADER_SIZE = 32;

export interface FileHeader {
  classCount: number;
  instanceCount: number;
}

function startsWith(bytes: Uint8Array, prefix: Uint8Array, at = 0): boolean {
  if (bytes.length < at + prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[at + i] !== prefix[i]) return false;
  return true;
}

/** binary: `<roblox!` + signature; xml: `<roblox` followed by whitespace or `>` (after a BOM, whitespace, an XML declaration or comments). */
export function sniffFormat(bytes: Uint8Array): 'binary' | 'xml' | undefined {
  if (startsWith(bytes, MAGIC)) return 'binary';
  // A linear scan, not a regex: backtracking over crafted comment runs can take minutes.
  const head = new TextDecoder('latin1').decode(bytes.subarray(0, 64 * 1024));
  let at = head.startsWith('\u00EF\u00BB\u00BF') ? 3 : head.startsWith('\uFEFF') ? 1 : 0;
  const skipSpace = (): void => { while (at < head.length && /\s/.test(head[at]!)) at++; };
  skipSpace();
  if (head.startsWith('<?xml', at)) {
    const end = head.indexOf('?>', at);
    if (end < 0) return undefined;
    at = end + 2;
    skipSpace();
  }
  while (head.startsWith('<!--', at)) {
    const end = head.indexOf('-->', at + 4);
    if (end < 0) return undefined;
    at = end + 3;
    skipSpace();
  }
  if (!head.startsWith('<roblox', at)) return undefined;
  const next = head[at + 7];
  return next === '>' || (next !== undefined && /\s/.test(next)) ? 'xml' : undefined;
}

export function readHeader(bytes: Uint8Array, limits: DecodeLimits): FileHeader {
  const context = { chunk: 'header', offset: 0 };
  if (!startsWith(bytes, MAGIC)) throw new DecodeError('not a binary Roblox file: missing "<roblox!" magic', context);
  if (!startsWith(bytes, SIGNATURE, 8)) throw new DecodeError('bad file signature after "<roblox!"', { chunk: 'header', offset: 8 });
  if (bytes.length < HEADER_SIZE) throw new DecodeError(`file ends inside the ${HEADER_SIZE}-byte header`, context);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint16(14, true);
  if (version !== 0) throw new DecodeError(`unsupported format version ${version}`, { chunk: 'header', offset: 14 });
  const classCount = view.getInt32(16, true);
  const instanceCount = view.getInt32(20, true);
  // A negative count is malformed; one past the cap is a file larger than allowed.
  if (classCount < 0 || classCount > limits.maxClasses) {
    throw new DecodeError(`header class count ${classCount} is outside 0..${limits.maxClasses}`, { chunk: 'header', offset: 16, ...(classCount > limits.maxClasses ? { limit: 'maxClasses' } : {}) });
  }
  if (instanceCount < 0 || instanceCount > limits.maxInstances) {
    throw new DecodeError(`header instance count ${instanceCount} is outside 0..${limits.maxInstances}`, { chunk: 'header', offset: 20, ...(instanceCount > limits.maxInstances ? { limit: 'maxInstances' } : {}) });
  }
  return { classCount, instanceCount };
}
