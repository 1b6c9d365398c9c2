/**
 * Decoding entry points. The format is sniffed from the bytes, never the file name.
 * Both functions are synchronous: they run inside worker threads.
 */
import { decodeBinary, decodeBinaryChunks, type ChunkView } from './binary.js';
import type { Dom } from './dom.js';
import { DecodeError } from './errors.js';
import { sniffFormat } from './header.js';
import type { DecodeLimits } from './limits.js';
import { decodeXml } from './xml/index.js';

export function decode(bytes: Uint8Array, limits?: Partial<DecodeLimits>): Dom {
  const format = sniffFormat(bytes);
  if (format === 'binary') return decodeBinary(bytes, limits);
  if (format === 'xml') return decodeXml(bytes, limits);
  throw notAPlace(bytes);
}

/** The chunk-by-chunk view of a binary file (XML has no chunks). */
export function decodeChunks(bytes: Uint8Array, limits?: Partial<DecodeLimits>): ChunkView {
  const format = sniffFormat(bytes);
  if (format === 'binary') return decodeBinaryChunks(bytes, limits);
  if (format === 'xml') throw new DecodeError('decodeChunks reads the binary format only; this is an XML place', { chunk: 'header', offset: 0 });
  throw notAPlace(bytes);
}

function notAPlace(bytes: Uint8Array): DecodeError {
  const what = bytes.length === 0 ? 'the file is empty' : 'it starts with neither "<roblox!" (binary) nor a <roblox> element (XML)';
  return new DecodeError(`not a Roblox place or model file: ${what}`, { chunk: 'header', offset: 0 });
}

export { sniffFormat };
export type { ChunkView };
