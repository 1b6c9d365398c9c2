/**
 * ZSTD chunk decompression through libzstd compiled to WebAssembly (the module that
 * @bokuweb/zstd-wasm ships): synchronous, no install script, and libzstd validates
 * every sequence, so a crafted block cannot make it loop. The output size is ours,
 * never the frame's: the frame's content size field must agree with the chunk header
 * (already capped) before anything is allocated.
 *
 * The module is instantiated here rather than through the package's glue, whose one
 * instance keeps every byte its memory ever grew to (a WebAssembly memory cannot
 * shrink: four ZSTD bombs left a worker at 3.2 GB, issue 10). Here the memory may grow
 * only as far as the chunk being decompressed needs, and an instance that grew past
 * RETAINED_BYTES is dropped after use, so the next chunk starts small.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { DecodeError } from './errors.js';

/** The exports used, by their names in @bokuweb/zstd-wasm 0.0.27's minified module (checked when loaded). */
interface ZstdExports {
  memory: WebAssembly.Memory;
  init(): void;
  isError(code: number): number;
  decompress(dst: number, dstCapacity: number, src: number, srcSize: number): number;
  malloc(size: number): number;
  free(pointer: number): void;
}

const EXPORT_NAMES = { memory: 'f', init: 'g', isError: 'h', decompress: 'r', malloc: 's', free: 't' } as const;
const ARITY = { init: 0, isError: 1, decompress: 4, malloc: 1, free: 1 } as const;
/** Memory kept between chunks (the module starts at about 16 MiB); an instance that grew past it is dropped after use. */
const RETAINED_BYTES = 32 << 20;
/** Room for libzstd's own state (decompression context, window) beside the input and output. */
const WORKING_BYTES = 16 << 20;
const PAGE = 65536;

const MODULE = new WebAssembly.Module(readFileSync(join(dirname(createRequire(import.meta.url).resolve('@bokuweb/zstd-wasm')), 'zstd.wasm')));

let instance: ZstdExports | null = null;
/** How far the current call lets memory grow, in bytes. */
let growthCap = 0;

function instantiate(): ZstdExports {
  let memory: WebAssembly.Memory | undefined;
  const fail = (what: string) => (): never => { throw new Error(`libzstd ${what}`); };
  const imports = {
    a: {
      a: fail('exited'), // proc_exit
      b: () => {}, // runtime keep-alive: nothing to keep
      c: fail('aborted'), // abort
      d: () => 0, // setitimer: libzstd sets no timers
      e: (requested: number): number => { // emscripten_resize_heap
        const wanted = requested >>> 0;
        if (memory === undefined || wanted > growthCap) return 0;
        const pages = Math.ceil((wanted - memory.buffer.byteLength) / PAGE);
        try {
          if (pages > 0) memory.grow(pages);
          return 1;
        } catch {
          return 0;
        }
      },
    },
  };
  const raw = new WebAssembly.Instance(MODULE, imports).exports;
  const exports = Object.fromEntries(Object.entries(EXPORT_NAMES).map(([name, short]) => [name, raw[short]])) as unknown as ZstdExports;
  memory = exports.memory;
  const shaped = memory instanceof WebAssembly.Memory
    && Object.entries(ARITY).every(([name, arity]) => typeof exports[name as keyof typeof ARITY] === 'function' && (exports[name as keyof typeof ARITY] as (...args: number[]) => number).length === arity);
  if (!shaped) throw new Error('the @bokuweb/zstd-wasm module does not have the exports src/parser/zstd.ts expects (was the package updated?)');
  exports.init();
  return exports;
}

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
  const zstd = (instance ??= instantiate());
  growthCap = Math.min(2 ** 31, zstd.memory.buffer.byteLength + frame.length + size + WORKING_BYTES);
  const src = zstd.malloc(frame.length);
  const dst = zstd.malloc(Math.max(size, 1));
  try {
    if (src === 0 || dst === 0) throw new DecodeError(`ZSTD chunk of ${size} bytes does not fit in the decompressor's memory`);
    new Uint8Array(zstd.memory.buffer, src, frame.length).set(frame);
    const written = zstd.decompress(dst, Math.max(size, 1), src, frame.length);
    if (zstd.isError(written)) throw new DecodeError(`corrupt ZSTD data (libzstd error ${-written >>> 0})`);
    if (written !== size) throw new DecodeError(`ZSTD data decompressed to ${written} bytes, the chunk header says ${size}`);
    return new Uint8Array(zstd.memory.buffer, dst, size).slice();
  } catch (error) {
    if (error instanceof DecodeError) throw error;
    instance = null; // a trap leaves the instance unusable
    throw new DecodeError(`corrupt ZSTD data: ${(error as Error)?.message ?? String(error)}`);
  } finally {
    if (instance === zstd) {
      if (src !== 0) zstd.free(src);
      if (dst !== 0) zstd.free(dst);
      if (zstd.memory.buffer.byteLength > RETAINED_BYTES) instance = null;
    }
  }
}

/** Drops the decompressor's memory (a fresh, small instance is made when next needed). */
export function releaseZstdMemory(): void {
  instance = null;
}

/** The decompressor's memory now, in bytes (0 when none is instantiated). */
export function zstdMemoryBytes(): number {
  return instance?.memory.buffer.byteLength ?? 0;
}
