/**
 * The memory budget (MAX_MEMORY_MB) split between the main thread and the workers,
 * and the per-task limits derived from each worker's share. Every limit that stands
 * between an upload and memory comes from here, and analyze and create use the same
 * ones, so a map that analyses also creates.
 *
 *   main thread     max(192 MiB, 15% of the budget, preview cache + 128 MiB)
 *   per worker      (budget - main) / WORKERS, of which 64 MiB is the thread's own
 *                   (isolate, the scanner's and ZSTD's WebAssembly memory) and the
 *                   rest is the task's:
 *     file bytes      <= 20% of the task  (the upload the worker reads)
 *     decoded bytes   <= 20% of the task  (decompressed chunks, held by the DOM's columns)
 *     JS heap         <= 60% of the task  (worker resourceLimits: past it the worker dies alone)
 *     instances       <= 60% of the heap / 1 KiB  (decode ~200 B and project document ~830 B per part, measured)
 *     document bytes  <= the task's share  (the project document as written, streamed)
 *     hull bytes      <= 20% of the task  (union hull geometry the picture and scene.glb keep, place-wide)
 *     model bytes     <= 20% of the task  (union model geometry, MeshData, they decode, place-wide)
 *
 * A task that outgrows its worker's heap anyway ends that worker only; its request
 * gets 413 `map_too_large`.
 */
import type { ResourceLimits } from 'node:worker_threads';
import { ConfigError } from '../config-error.js';
import type { DecodeLimits } from '../parser/limits.js';
import { DEFAULT_MESH_LIMITS, type MeshLimits } from '../mesh/limits.js';

export interface BudgetInput {
  maxMemoryMb: number;
  workers: number;
  previewCacheBytes: number;
  /** Whether `maxMemoryMb` is the host's default (MAX_MEMORY_MB unset), which a refusal then says. */
  maxMemoryFromHost?: boolean;
}

export interface MemoryBudget {
  totalMb: number;
  mainMb: number;
  perWorkerMb: number;
  /** What one task may use: its limits, in the decoder's terms and ours. */
  task: TaskLimits;
  /** The worker threads' V8 limits. */
  resourceLimits: ResourceLimits;
}

export interface TaskLimits {
  /** Largest file a worker reads (uploads above it are refused from their Content-Length). */
  maxFileBytes: number;
  /** Passed to decode() by both tasks. */
  decode: Pick<DecodeLimits, 'maxTotalBytes' | 'maxChunkBytes' | 'maxInstances' | 'maxStringBytes'>;
  /** Largest project document, as written. */
  maxDocumentBytes: number;
  /**
   * Mesh sizes a conversion may decode (its Draco decoder's heap is outside the worker's V8 limits),
   * and the union hull and model geometry one scene assembly may keep (typed arrays, outside them too).
   */
  mesh: Pick<MeshLimits, 'maxVertices' | 'maxTriangles' | 'maxPlaceHullBytes' | 'maxPlaceModelBytes'>;
}

/**
 * Bytes of a task's share per mesh vertex converted: the Draco decoder's WebAssembly heap
 * grows about 220 bytes a vertex (a 4.2M-vertex mesh 7.00 of 4.9 MB took a worker to
 * 1.3 GB), then come the decoded arrays and the converted GLB.
 */
const BYTES_PER_MESH_VERTEX = 512;

const MiB = 2 ** 20;
const WORKER_OWN_MB = 64;
/** Decode plus project document, per instance, measured on the generated 200k-part place (~200 + ~830 B). */
const BYTES_PER_INSTANCE = 1024;
/** Below this a worker cannot decode a real place. */
const MIN_TASK_MB = 48;

/** MAX_MEMORY_MB cannot hold WORKERS workers: a configuration error, reported at start. */
export class BudgetError extends ConfigError {
  override name = 'BudgetError';
}

/** The main thread's share: max(192 MiB, 15% of the budget, the preview cache + 128 MiB). */
function mainThreadMb(maxMemoryMb: number, previewCacheBytes: number): number {
  return Math.max(192, Math.ceil(maxMemoryMb * 0.15), Math.ceil(previewCacheBytes / MiB) + 128);
}

/** How many workers `maxMemoryMb` holds after the main thread's share (0 when not one). */
export function workersThatFit(maxMemoryMb: number, previewCacheBytes: number): number {
  return Math.max(0, Math.floor((maxMemoryMb - mainThreadMb(maxMemoryMb, previewCacheBytes)) / (WORKER_OWN_MB + MIN_TASK_MB)));
}

export function memoryBudget({ maxMemoryMb, workers, previewCacheBytes, maxMemoryFromHost = false }: BudgetInput): MemoryBudget {
  const cacheMb = Math.ceil(previewCacheBytes / MiB) + 128;
  const mainMb = mainThreadMb(maxMemoryMb, previewCacheBytes);
  const perWorkerMb = Math.floor((maxMemoryMb - mainMb) / workers);
  const taskMb = perWorkerMb - WORKER_OWN_MB;
  if (taskMb < MIN_TASK_MB) {
    // When the preview cache sets the main thread's share, the cache is what to change.
    const advice = cacheMb === mainMb && cacheMb > 192
      ? `lower PREVIEW_CACHE_BYTES (${previewCacheBytes}), which the main thread holds, or raise MAX_MEMORY_MB`
      : 'raise MAX_MEMORY_MB or lower WORKERS';
    throw new BudgetError(
      `${maxMemoryFromHost ? `MAX_MEMORY_MB, not set, defaults to ${maxMemoryMb} (half the memory of this host or container), which` : `MAX_MEMORY_MB=${maxMemoryMb}`} leaves ${perWorkerMb} MiB to each of ${workers} workers after ${mainMb} MiB for the main thread; ` +
      `each needs at least ${WORKER_OWN_MB + MIN_TASK_MB} MiB: ${advice}`,
    );
  }
  const taskBytes = taskMb * MiB;
  const heapMb = Math.floor(taskMb * 0.6);
  // A large young generation keeps decoding from being GC-bound; it is part of the heap's share.
  const youngMb = Math.max(8, Math.min(64, Math.floor(heapMb / 6)));
  const decodedBytes = Math.floor(taskBytes * 0.2);
  return {
    totalMb: maxMemoryMb,
    mainMb,
    perWorkerMb,
    task: {
      maxFileBytes: decodedBytes,
      decode: {
        maxTotalBytes: decodedBytes,
        maxChunkBytes: decodedBytes,
        maxStringBytes: Math.min(256 * MiB, decodedBytes),
        maxInstances: Math.floor((heapMb * MiB * 0.6) / BYTES_PER_INSTANCE),
      },
      maxDocumentBytes: taskBytes,
      mesh: {
        maxVertices: Math.min(DEFAULT_MESH_LIMITS.maxVertices, Math.floor(taskBytes / BYTES_PER_MESH_VERTEX)),
        maxTriangles: Math.min(DEFAULT_MESH_LIMITS.maxTriangles, Math.floor(taskBytes / BYTES_PER_MESH_VERTEX)),
        maxPlaceHullBytes: Math.min(DEFAULT_MESH_LIMITS.maxPlaceHullBytes, Math.floor(taskBytes * 0.2)),
        maxPlaceModelBytes: Math.min(DEFAULT_MESH_LIMITS.maxPlaceModelBytes, Math.floor(taskBytes * 0.2)),
      },
    },
    resourceLimits: { maxOldGenerationSizeMb: heapMb - youngMb, maxYoungGenerationSizeMb: youngMb },
  };
}
