/**
 * ZSTD chunk decompression through libzstd compiled to WebAssembly
 * (@bokuweb/zstd-wasm): synchronous once loaded, no install script, and libzstd
 * validates every sequence, so a crafted block cannot make it loop. The output size
 * is ours, never the frame's: the library sizes its buffer from the frame's content
 * size field, so that field must agree with the chunk header (already capped)
 * before anything is allocated.
 */
import { decompress, init } from '@bokuweb/zstd-wasm';
import { DecodeError } from './errors.js';

await init();

/** Frame_Content_Size of a ZSTD frame header (RFC 8878 3.1.1.1), or null when the frame omits it. */
export function frameContentSize(frame: Uint8Array): number | null {
  if (frame.length < 5) throw new DecodeError('ZSTD frame header is truncated');
  const descriptor = frame[4]!;
  const sizeFlag = descriptor >> 6;
  const singleSegment = (descriptor >> 5) & 1;
  const dictionaryBytes = [0, 1, 2, 4][descriptor & 3]!;
  const sizeBytes = [singleSegment ? 1 : 0, 2, 4, 8][sizeFlag]!;
  const at = 5 + (singleSegment ? 0 : 1) + dictionaryBytes;
  if (sizeBytes === 0) return null;
  if (frame.length < at + sizeBytes) throw new DecodeError('ZSTD frame header is truncated');
  const view = new DataView(frame.buffer, frame.byteOffset + at, sizeBytes);
  switch (sizeBytes) {
    case 1: return view.getUint8(0);
    case 2: return view.getUint16(0, true) + 256;
    case 4: return view.getUint32(0, true);
    default: {
      const value = view.getBigUint64(0, true);
      return value > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(value);
    }
  }
}

/** Decompresses one chunk's ZSTD data to exactly `size` bytes, or throws a DecodeError. */
export function decompressZstd(frame: Uint8Array, size: number): Uint8Array {
  const declared = frameContentSize(frame);
  if (declared !== null && declared !== size) {
    throw new DecodeError(`ZSTD frame declares ${declared} bytes, the chunk header ${size}`);
  }
  let data: Uint8Array;
  try {
    data = decompress(frame, { defaultHeapSize: Math.max(size, 1) });
  } catch (error) {
    throw new DecodeError(`corrupt ZSTD data: ${(error as Error)?.message ?? String(error)}`);
  }
  if (data.length !== size) throw new DecodeError(`ZSTD data decompressed to ${data.length} bytes, the chunk header says ${size}`);
  return data;
}
