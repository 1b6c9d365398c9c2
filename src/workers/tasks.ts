/**
 * The worker side of the pool: everything CPU-bound (decoding, analysis and its
 * picture, converting downloaded meshes, building the project document and writing it
 * out as a stream, building scene.glb) runs here, so the main thread only moves bytes. Files are read here too: no upload crosses the thread boundary. Both
 * tasks decode under the same limits (the memory budget's, service/budget.ts), so a map
 * that analyses also builds. Malformed or oversized input comes back as a value, not a
 * throw, so the main thread can tell "not a place" (422) and "too large" (413) from a
 * bug (500). After each task, memory grown in WebAssembly for it is given back.
 */
import { decode } from '../parser/index.js';
import { DecodeError } from '../parser/errors.js';
import { TASK_FINISHED, TASK_RUNNING } from './deadlines.js';
import type { DecodeLimits } from '../parser/limits.js';
import type { MeshLimits } from '../mesh/limits.js';
import { releaseZstdMemory } from '../parser/zstd.js';
import { analyzeDom, type Analysis } from '../project/report.js';
import { projectJson, type BuildProjectOptions } from '../project/document.js';
import { DOCUMENT_ENCODING } from '../project/compression.js';
import { threadCompressor } from '../project/compress-thread.js';
import { JsonTooLargeError, writeChunksFile } from '../project/json-stream.js';
import { releaseLargeMemory } from '../scan/wasm.js';
import { readFileBounded } from '../store/bounded-read.js';
import { convertStoredAsset, type ConversionRecord } from '../assets/converted.js';
import { assembleScene, GlbTooLargeError, mapPicture, readTerrainGrid, storedAssets, terrainRow, writeSceneGlbFile } from '../scene/index.js';

/** The budget's per-task limits (service/budget.ts), passed with every task. */
export interface TaskLimits {
  maxFileBytes: number;
  decode: Partial<DecodeLimits>;
  maxDocumentBytes: number;
  /**
   * What a mesh conversion may decode, and the scene assembly's union hulls and models (the
   * picture's and scene.glb's, place-wide caps included): the budget's share; the defaults when absent.
   */
  mesh?: Partial<MeshLimits>;
}

export interface AnalyzeTask {
  kind: 'analyze';
  path: string;
  fileName: string;
  fileSize: number;
  limits: TaskLimits;
}

/** Why a map was refused: not a place (422), or over the limits (413). */
export type Refusal = { ok: false; reason: 'not_a_place' | 'too_large'; message: string };

export type AnalyzeResult =
  | ({ ok: true; format: 'binary' | 'xml'; picture: AnalyzePicture | null } & Analysis)
  | Refusal;

/** The analysis's picture of the map: a PNG (null when it could not be drawn: the analysis still stands). */
export interface AnalyzePicture {
  png: Uint8Array;
  width: number;
  height: number;
}

/** Converts downloaded meshes and union models (by SHA-256) into the converted store. */
export interface ConvertTask {
  kind: 'convert';
  dataDir: string;
  sha256s: string[];
  limits: TaskLimits;
}

export type ConvertResult = { ok: true; records: ConversionRecord[] };

/** Builds a project's scene.glb from its map and its downloaded assets. */
export interface SceneTask {
  kind: 'scene';
  /** The project's copy of the map. */
  path: string;
  dataDir: string;
  /** Asset id → SHA-256 of what the project downloaded. */
  assets: [string, string][];
  /** Where to write the GLB (a new file; the project store moves it into place). */
  glbPath: string;
  /** Bytes the GLB may take (the budget's document size and the disk's room). */
  maxBytes: number;
  limits: TaskLimits;
}

export type SceneResult =
  | { ok: true; bytes: number; parts: number; placeholders: Record<string, number> }
  | Refusal
  | { ok: false; reason: 'missing'; message: string }
  | { ok: false; reason: 'disk_full'; message: string };

export interface BuildTask extends Omit<BuildProjectOptions, 'createdAt'> {
  kind: 'build';
  path: string;
  createdAt: string;
  limits: TaskLimits;
  /** Where to write the document (a new file; the project store moves it into place). */
  documentPath: string;
  /** Bytes the disk quota leaves for the document. */
  diskRoomBytes: number;
}

export type BuildResult =
  /** `bytes` as stored: the document compressed with `encoding`. */
  | { ok: true; bytes: number; jsonBytes: number; encoding: typeof DOCUMENT_ENCODING; assetHashes: string[] }
  | Refusal
  | { ok: false; reason: 'missing'; message: string }
  | { ok: false; reason: 'disk_full'; message: string };

export type Task = (AnalyzeTask | BuildTask | ConvertTask | SceneTask) & {
  /** Shared with the pool: TASK_RUNNING as the task starts, which starts its deadline, TASK_FINISHED as it ends (pool.ts). */
  started?: Int32Array;
};

export default async function runTask(task: Task): Promise<AnalyzeResult | BuildResult | ConvertResult | SceneResult> {
  if (task.started) Atomics.store(task.started, 0, TASK_RUNNING);
  try {
    if (task.kind === 'convert') {
      // One at a time: each conversion holds one asset and its geometry, then lets them go.
      const records = task.sha256s.map((sha256) => convertStoredAsset(task.dataDir, sha256, { maxBytes: task.limits.maxFileBytes, ...(task.limits.mesh ? { limits: task.limits.mesh } : {}) }));
      return { ok: true, records };
    }
    const dom = decode(readPlace(task.path, task.limits.maxFileBytes), task.limits.decode);
    if (task.kind === 'analyze') {
      // The SmoothGrid is read once: the report counts its voxels, the picture draws it.
      const row = terrainRow(dom);
      const terrain = row === -1 ? undefined : readTerrainGrid(dom, row);
      const analysis = analyzeDom(dom, { fileName: task.fileName, fileSize: task.fileSize, terrain });
      return { ok: true, format: dom.format, ...analysis, picture: drawPicture(dom, terrain, task.limits.mesh, analysis.report.warnings) };
    }
    if (task.kind === 'scene') return await buildScene(dom, task);
    const { kind: _kind, path: _path, limits, documentPath, diskRoomBytes, ...options } = task;
    const maxBytes = Math.min(limits.maxDocumentBytes, diskRoomBytes);
    try {
      // Written as it is built, one chunk at a time, compressed on its way to the file by a
      // thread of its own, beside this one writing the text (compress-thread.ts).
      const { bytes, jsonBytes } = await writeChunksFile(documentPath, projectJson(dom, options), {
        maxBytes, encode: () => threadCompressor(options.fileSize),
      });
      const assetHashes = [...new Set(task.assets.flatMap((asset) => (asset.ok ? [asset.sha256] : [])))];
      return { ok: true, bytes, jsonBytes, encoding: DOCUMENT_ENCODING, assetHashes };
    } catch (error) {
      if (!(error instanceof JsonTooLargeError)) throw error;
      return maxBytes === limits.maxDocumentBytes
        ? { ok: false, reason: 'too_large', message: `the project document is larger than ${limits.maxDocumentBytes} bytes` }
        : { ok: false, reason: 'disk_full', message: 'the data directory has no room for the project document' };
    }
  } catch (error) {
    if (error instanceof TooLargeFile) return { ok: false, reason: 'too_large', message: error.message };
    // Past one of the decoder's caps (many of them set from the memory budget) is too large; anything else is not a place.
    if (error instanceof DecodeError) return { ok: false, reason: error.limit ? 'too_large' : 'not_a_place', message: error.message };
    // The preview expired and was swept between the create's check and this read.
    if ((error as NodeJS.ErrnoException)?.code === 'ENOENT') return { ok: false, reason: 'missing', message: 'preview file is gone' };
    if ((error as NodeJS.ErrnoException)?.code === 'ENOSPC') return { ok: false, reason: 'disk_full', message: 'the disk is full' };
    throw error;
  } finally {
    releaseZstdMemory();
    releaseLargeMemory();
    // Its result is on its way: a deadline passing now must not end the worker.
    if (task.started) Atomics.store(task.started, 0, TASK_FINISHED);
  }
}

/** The map's picture; a failure to draw is a warning, never a failed analysis. */
function drawPicture(dom: ReturnType<typeof decode>, terrain: ReturnType<typeof readTerrainGrid> | undefined, limits: Partial<MeshLimits> | undefined, warnings: string[]): AnalyzePicture | null {
  try {
    const { png, width, height, parts, hullBudget, modelBudget } = mapPicture(dom, { terrain, ...(limits ? { limits } : {}) });
    if (modelBudget.unionsUndecoded > 0) warnings.push(`picture: ${modelBudget.unionsUndecoded} unions' models (MeshData) not decoded, drawn as their hulls or boxes (the place's union models pass the limit on decoding them; scene.glb draws them the same way)`);
    if (hullBudget.unionsBoxed > 0) warnings.push(`picture: ${hullBudget.unionsBoxed} unions drawn as boxes (the place's union hulls pass the limit on computing and keeping them; scene.glb draws them the same way)`);
    if (parts.unfinished > 0) warnings.push(`picture: ${parts.unfinished} parts not drawn (the picture's drawing budget was spent; the import is not affected)`);
    return { png, width, height };
  } catch (error) {
    if (error instanceof RangeError || error instanceof DecodeError) {
      warnings.push(`picture: not drawn (${error.message})`);
      return null;
    }
    throw error;
  }
}

async function buildScene(dom: ReturnType<typeof decode>, task: SceneTask): Promise<SceneResult> {
  const assets = storedAssets({ dataDir: task.dataDir, assets: new Map(task.assets), maxBytes: task.limits.maxFileBytes, maxTotalBytes: task.maxBytes, ...(task.limits.mesh ? { meshLimits: task.limits.mesh } : {}) });
  try {
    const assembly = assembleScene(dom, { assets, ...(task.limits.mesh ? { limits: task.limits.mesh } : {}) });
    const { bytes, stats } = await writeSceneGlbFile(assembly, task.glbPath, { images: assets, maxBytes: task.maxBytes });
    return { ok: true, bytes, parts: stats.parts, placeholders: stats.placeholders };
  } catch (error) {
    if (!(error instanceof GlbTooLargeError)) throw error;
    return error.maxBytes === task.limits.maxDocumentBytes
      ? { ok: false, reason: 'too_large', message: error.message }
      : { ok: false, reason: 'disk_full', message: 'the data directory has no room for scene.glb' };
  }
}

class TooLargeFile extends Error {}

/** The file's bytes, refused before reading when it is larger than the task may hold. */
function readPlace(path: string, maxBytes: number): Uint8Array {
  return readFileBounded(path, maxBytes, (size) => new TooLargeFile(`the file is ${size} bytes, more than the ${maxBytes} a map may have here (MAX_MEMORY_MB)`));
}
