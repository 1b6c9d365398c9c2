/**
 * File header and chunk framing: a 16-byte chunk header (name padded with NULs,
 * compressed length, uncompressed length, 4 reserved bytes), then the data as an
 * LZ4 block, or raw with compressed length 0.
 */
import { compressSync } from 'lz4-napi';
import { EncodeError } from './errors.js';

const MAGIC = [0x3c, 0x72, 0x6f, 0x62, 0x6c, 0x6f, 0x78, 0x21]; // "<roblox!"
const SIGNATURE = [0x89, 0xff, 0x0d, 0x0a, 0x1a, 0x0a];
export const FILE_HEADER_SIZE = 32;
const CHUNK_HEADER_SIZE = 16;

export function fileHeader(classCount: number, instanceCount: number): Uint8Array {
  const header = new Uint8Array(FILE_HEADER_SIZE);
  header.set(MAGIC, 0);
  header.set(SIGNATURE, 8);
  const view = new DataView(header.buffer);
  view.setUint16(14, 0, true); // version
  view.setInt32(16, classCount, true);
  view.setInt32(20, instanceCount, true);
  return header; // bytes 24..31 reserved, zero
}

/** An LZ4 block of `data`, without the size prefix lz4-napi puts in front of it. */
export function lz4Block(data: Uint8Array): Uint8Array {
  const prefixed = compressSync(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  if (prefixed.length < 4 || prefixed.readUInt32LE(0) !== data.byteLength) {
    throw new EncodeError('lz4-napi returned a block without the expected 4-byte size prefix');
  }
  return prefixed.subarray(4);
}

/** The chunk as two parts (header, body), so the file can be assembled without extra copies. */
export function frameChunk(name: string, data: Uint8Array, compress: boolean): [Uint8Array, Uint8Array] {
  if (name.length > 4) throw new EncodeError(`chunk name ${JSON.stringify(name)} is longer than 4 bytes`);
  const body = compress ? lz4Block(data) : data;
  const header = new Uint8Array(CHUNK_HEADER_SIZE);
  for (let i = 0; i < name.length; i++) header[i] = name.charCodeAt(i);
  const view = new DataView(header.buffer);
  view.setUint32(4, compress ? body.length : 0, true);
  view.setUint32(8, data.length, true);
  return [header, body];
}

export function concat(parts: readonly Uint8Array[]): Uint8Array {
  let total = 0;
  for (const part of parts) total += part.length;
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
