/**
 * Converted meshes, content-addressed like the assets they come from:
 *
 *   converted/v<N>/<aa>/<sha256>.glb    the glTF mesh of the asset with that SHA-256
 *   converted/v<N>/<aa>/<sha256>.json   {"sha256", "converted": true, "format", ...} or
 *                                       {"sha256", "converted": false, "reason", "message"}
 *
 * under `<dataDir>/assets/`. <N> is the converter's version (src/scene/convert.ts), so
 * a new converter never reads an old file. A mesh is converted once whatever id or
 * project names it; the record says why one was not. Files are written whole (temp,
 * rename): a reader sees a complete file or none. This runs in the worker pool
 * (synchronous file calls are fine there), never on the main thread.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { CONVERTER_VERSION, convertMeshAsset, type ConversionFailure } from '../scene/convert.js';
import { DEFAULT_MESH_LIMITS, type MeshLimits } from '../mesh/limits.js';
import { assetPath, isSha256 } from './store.js';
import { readFileBounded } from '../store/bounded-read.js';

/** What became of one downloaded mesh or union model. */
export type ConversionRecord =
  | { sha256: string; converted: true; format: string; vertices: number; triangles: number; bones: number; bytes: number }
  | { sha256: string; converted: false; reason: ConversionFailure | 'unreadable'; message: string; limits?: SizeLimits };

/**
 * The mesh sizes a `too_large` conversion ran under. Limits follow each instance's memory
 * budget, and the record is shared by every instance: one whose limits are higher
 * converts the mesh again rather than take a smaller instance's refusal.
 */
export type SizeLimits = Pick<MeshLimits, 'maxVertices' | 'maxTriangles'>;

/** What an asset outcome says about a mesh's or union model's conversion (the record without its key). */
export type AssetConversion =
  | { converted: true; format: string; vertices: number; triangles: number; bones: number }
  | { converted: false; reason: ConversionFailure | 'unreadable'; message: string };

export function conversionOf(record: ConversionRecord): AssetConversion {
  return record.converted
    ? { converted: true, format: record.format, vertices: record.vertices, triangles: record.triangles, bones: record.bones }
    : { converted: false, reason: record.reason, message: record.message };
}

/** Largest record file read back; anything bigger is not ours. */
const MAX_RECORD_BYTES = 4096;

export function convertedGlbPath(dataDir: string, sha256: string): string {
  if (!isSha256(sha256)) throw new TypeError(`not a lowercase hex SHA-256: ${JSON.stringify(sha256)}`);
  return join(dataDir, 'assets', 'converted', `v${CONVERTER_VERSION}`, sha256.slice(0, 2), `${sha256}.glb`);
}

function recordPath(dataDir: string, sha256: string): string {
  return convertedGlbPath(dataDir, sha256).replace(/\.glb$/, '.json');
}

/** The stored record of an asset's conversion; undefined when it was never converted (or the record is damaged). */
export function readConversion(dataDir: string, sha256: string): ConversionRecord | undefined {
  let text: string;
  try {
    const bytes = readFileSync(recordPath(dataDir, sha256));
    if (bytes.length > MAX_RECORD_BYTES) return undefined;
    text = bytes.toString('utf8');
  } catch {
    return undefined;
  }
  try {
    const record = JSON.parse(text) as ConversionRecord;
    if (record?.sha256 !== sha256 || typeof record.converted !== 'boolean') return undefined;
    return record;
  } catch {
    return undefined;
  }
}

/**
 * Converts the stored asset `sha256` unless a record already says what became of it;
 * writes the GLB and the record. `maxBytes` bounds what is read (the memory budget).
 */
export function convertStoredAsset(dataDir: string, sha256: string, options: { maxBytes: number; limits?: Partial<MeshLimits> }): ConversionRecord {
  const limits: SizeLimits = {
    maxVertices: options.limits?.maxVertices ?? DEFAULT_MESH_LIMITS.maxVertices,
    maxTriangles: options.limits?.maxTriangles ?? DEFAULT_MESH_LIMITS.maxTriangles,
  };
  const known = readConversion(dataDir, sha256);
  if (known && !refusedUnderLess(known, limits)) return known;
  let bytes: Uint8Array;
  try {
    bytes = readFileBounded(assetPath(dataDir, sha256), options.maxBytes, (size) => new Error(`the asset is ${size} bytes, more than the ${options.maxBytes} a conversion may read`));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Not recorded: a missing or oversized file is about this store now, not about the asset.
    return { sha256, converted: false, reason: 'unreadable', message: code ? `the stored asset cannot be read (${code})` : (error as Error).message };
  }
  const result = convertMeshAsset(bytes, options.limits);
  const record: ConversionRecord = result.ok
    ? { sha256, converted: true, format: result.info.format, vertices: result.info.vertices, triangles: result.info.triangles, bones: result.info.bones, bytes: result.glb.length }
    : { sha256, converted: false, reason: result.reason, message: result.message, ...(result.reason === 'too_large' ? { limits } : {}) };
  if (result.ok) writeWhole(convertedGlbPath(dataDir, sha256), result.glb);
  writeWhole(recordPath(dataDir, sha256), JSON.stringify(record));
  return record;
}

/** A `too_large` record made under smaller limits than `limits` (so worth converting again). */
function refusedUnderLess(record: ConversionRecord, limits: SizeLimits): boolean {
  if (record.converted || record.reason !== 'too_large' || record.limits === undefined) return false;
  return record.limits.maxVertices < limits.maxVertices || record.limits.maxTriangles < limits.maxTriangles;
}

/**
 * The records already written for `sha256s`, in that order (those never converted left
 * out): what a conversion task refused part-way (past its deadline, out of memory) still
 * finished. A few small files, read on that path only.
 */
export function finishedConversions(dataDir: string, sha256s: readonly string[]): ConversionRecord[] {
  return sha256s.flatMap((sha256) => readConversion(dataDir, sha256) ?? []);
}

/** The converted GLB's bytes (a record said converted). */
export function readConvertedGlb(dataDir: string, sha256: string): Uint8Array {
  return readFileSync(convertedGlbPath(dataDir, sha256));
}

function writeWhole(path: string, data: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  // A dot first: the disk store's sweep removes such names when stale (a worker ended mid-write leaves one).
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    writeFileSync(temp, data);
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}
