/**
 * Chunk framing and decompression: a 16-byte header (name, compressed length,
 * uncompressed length, reserved), then the data: raw when the compressed length is
 * 0, else an LZ4 block or, when it starts with 28 B5 2F FD, a ZSTD frame.
 */
import { uncompressSync } from 'lz4-napi';
import { DecodeError } from './errors.js';
import { HEADER_SIZE } from './header.js';
import type { DecodeLimits } from './limits.js';
import { decompressZstd } from './zstd.js';

export type Compression = 'none' | 'lz4' | 'zstd';

export interface RawChunk {
  /** Name with trailing NULs removed ("END\0" is "END"). */
  name: string;
  /** File offset of the chunk's 16-byte header. */
  offset: number;
  compression: Compression;
  /** The (decompressed) chunk data. */
  data: Uint8Array;
}

const CHUNK_HEADER_SIZE = 16;
const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd];
/** LZ4 cannot expand by more than 255:1; ZSTD can, so it gets a generous but finite bound. */
const LZ4_MAX_RATIO = 255;
const ZSTD_MAX_RATIO = 4096;
const RATIO_SLACK = 64 * 1024;
const EXPANSION_SLACK = 1024 * 1024;

function chunkName(bytes: Uint8Array, at: number): string {
  let end = at + 4;
  while (end > at && bytes[end - 1] === 0) end--;
  let name = '';
  for (let i = at; i < end; i++) {
    const code = bytes[i]!;
    name += code >= 0x20 && code < 0x7f ? String.fromCharCode(code) : `\\x${code.toString(16).padStart(2, '0')}`;
  }
  return name;
}

function isZstd(block: Uint8Array): boolean {
  return block.length >= 4 && ZSTD_MAGIC.every((b, i) => block[i] === b);
}

function decompressLz4(block: Uint8Array, size: number): Uint8Array {
  // lz4-napi expects the uncompressed size as a 4-byte little-endian prefix.
  const input = Buffer.allocUnsafe(block.length + 4);
  input.writeUInt32LE(size, 0);
  input.set(block, 4);
  return uncompressSync(input);
}

/** A chunk's header, checked against the file and the limits. */
export interface Frame {
  name: string;
  offset: number;
  compressedLength: number;
  uncompressedLength: number;
}

/**
 * Walks the chunk headers to END before any data is decompressed, so a truncated or
 * lying file fails at once and cheaply, and every declared size meets the limits first.
 */
export function frameChunks(bytes: Uint8Array, limits: DecodeLimits): Frame[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const frames: Frame[] = [];
  let pos = HEADER_SIZE;
  let total = 0;
  for (;;) {
    if (pos === bytes.length) throw new DecodeError('file ends without an END chunk', { offset: pos });
    if (pos + CHUNK_HEADER_SIZE > bytes.length) throw new DecodeError('file ends inside a chunk header', { offset: pos });
    const name = chunkName(bytes, pos);
    const context = { chunk: name, offset: pos };
    const compressedLength = view.getUint32(pos + 4, true);
    const uncompressedLength = view.getUint32(pos + 8, true);
    const storedLength = compressedLength === 0 ? uncompressedLength : compressedLength;
    const dataStart = pos + CHUNK_HEADER_SIZE;
    if (storedLength > bytes.length - dataStart) {
      throw new DecodeError(`chunk declares ${storedLength} bytes of data but the file has ${bytes.length - dataStart} left`, context);
    }
    if (uncompressedLength > limits.maxChunkBytes) {
      throw new DecodeError(`chunk uncompressed length ${uncompressedLength} exceeds the limit of ${limits.maxChunkBytes}`, { ...context, limit: 'maxChunkBytes' });
    }
    if (compressedLength !== 0) {
      const ratio = isZstd(bytes.subarray(dataStart, dataStart + storedLength)) ? ZSTD_MAX_RATIO : LZ4_MAX_RATIO;
      if (uncompressedLength > compressedLength * ratio + RATIO_SLACK) {
        throw new DecodeError(`chunk claims ${uncompressedLength} bytes from ${compressedLength} compressed bytes, more than ${ratio === LZ4_MAX_RATIO ? 'lz4' : 'zstd'} can expand to`, context);
      }
    }
    total += uncompressedLength;
    if (total > limits.maxTotalBytes) {
      throw new DecodeError(`decompressed file size exceeds the limit of ${limits.maxTotalBytes} bytes`, { ...context, limit: 'maxTotalBytes' });
    }
    if (total > bytes.length * limits.maxExpansion + EXPANSION_SLACK) {
      throw new DecodeError(`chunks expand to more than ${limits.maxExpansion}× the file's size`, { ...context, limit: 'maxExpansion' });
    }
    frames.push({ name, offset: pos, compressedLength, uncompressedLength });
    pos = dataStart + storedLength;
    if (name === 'END') return frames;
  }
}

/** Reads every chunk up to and including END; decompresses each as it is reached. */
export function* readChunks(bytes: Uint8Array, limits: DecodeLimits): Generator<RawChunk> {
  for (const frame of frameChunks(bytes, limits)) yield readChunk(bytes, frame);
}

/** One framed chunk's data, decompressed (a view into `bytes` when it is stored raw). */
export function readChunk(bytes: Uint8Array, { name, offset, compressedLength, uncompressedLength }: Frame): RawChunk {
  const context = { chunk: name, offset };
  const dataStart = offset + CHUNK_HEADER_SIZE;
  const stored = bytes.subarray(dataStart, dataStart + (compressedLength || uncompressedLength));
  if (compressedLength === 0) return { name, offset, compression: 'none', data: stored };
  const compression: Compression = isZstd(stored) ? 'zstd' : 'lz4';
  let data: Uint8Array;
  try {
    data = compression === 'zstd'
      ? decompressZstd(stored, uncompressedLength)
      : decompressLz4(stored, uncompressedLength);
  } catch (error) {
    if (error instanceof DecodeError) throw error.withContext(context);
    throw new DecodeError(`corrupt ${compression.toUpperCase()} data: ${(error as Error)?.message ?? String(error)}`, context);
  }
  if (data.length !== uncompressedLength) {
    throw new DecodeError(`chunk decompressed to ${data.length} bytes, header says ${uncompressedLength}`, context);
  }
  return { name, offset, compression, data };
}
