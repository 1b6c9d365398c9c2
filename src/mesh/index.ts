/**
 * Roblox mesh and union (CSG) blobs into the shared geometry shape. One entry point
 * sniffs the format from the bytes and hands them to the decoder of that format:
 *
 * | bytes start with        | decoder                      | kind             |
 * |-------------------------|------------------------------|------------------|
 * | `version 1.00`/`1.01`   | filemesh/text.ts             | mesh             |
 * | `version 2.00`/`3.0x`   | filemesh/v2.ts               | mesh             |
 * | `version 4.0x`/`5.00`   | filemesh/v4.ts               | mesh             |
 * | `version 6.00`/`7.00`   | filemesh/chunked.ts (+draco) | mesh             |
 * | CSGMDL (obfuscated) 2/4 | csg/csgmdl.ts                | union_graphics   |
 * | CSGMDL (obfuscated) 5   | csg/csgmdl5.ts               | union_graphics   |
 * | `CSGPHS` 0/3/5/6/7      | csg/csgphs.ts                | union_physics    |
 * | `CSGPHS` 8              | csg/csgphs8.ts (+edgebreaker)| union_physics    |
 * | `CSGK`                  | csg/csgk.ts                  | union_key        |
 *
 * Synchronous and pure (the Draco and ZSTD WebAssembly modules load when this
 * module is first imported). Malformed input throws MeshDecodeError, nothing else.
 */
import { decodeCsgk } from './csg/csgk.js';
import { csgmdlCounts, decodeCsgmdl } from './csg/csgmdl.js';
import { csgmdl5Counts, decodeCsgmdl5 } from './csg/csgmdl5.js';
import { csgphsCost, decodeCsgphs } from './csg/csgphs.js';
import { MeshDecodeError } from './errors.js';
import { decodeChunkedMesh } from './filemesh/chunked.js';
import { decodeTextMesh } from './filemesh/text.js';
import { decodeMeshV2 } from './filemesh/v2.js';
import { decodeMeshV4 } from './filemesh/v4.js';
import { resolveMeshLimits, type MeshLimits } from './limits.js';
import { sniffMeshFormat } from './sniff.js';
import { nonFiniteNote } from './geometry.js';
import type { FileMeshAsset, MeshAsset } from './types.js';

export function decodeMeshAsset(bytes: Uint8Array, limits?: Partial<MeshLimits>): MeshAsset {
  const caps = resolveMeshLimits(limits);
  if (bytes.length > caps.maxInputBytes) {
    throw new MeshDecodeError('unknown', 0, `the input is ${bytes.length} bytes, past the limit of ${caps.maxInputBytes}`);
  }
  const format = sniffMeshFormat(bytes);
  try {
    switch (format.family) {
      case 'mesh': {
        const mesh = decodeFileMesh(bytes, format.version, format.bodyStart, caps);
        const note = nonFiniteNote(mesh.geometry);
        if (note) mesh.header.notes.push(note);
        return mesh;
      }
      case 'csgmdl':
        if (format.version === 2 || format.version === 4) return decodeCsgmdl(bytes, format.version, caps);
        if (format.version === 5) return decodeCsgmdl5(bytes, caps);
        throw new MeshDecodeError(`CSGMDL ${format.version}`, 6, `unsupported CSGMDL version ${format.version} (known: 2, 4, 5)`);
      case 'csgphs':
        return decodeCsgphs(bytes, format.version, caps);
      case 'csgk':
        return decodeCsgk(bytes);
    }
  } catch (error) {
    if (error instanceof MeshDecodeError) throw error;
    // A RangeError from an allocation the limits allow but the heap does not: still a clean, typed failure.
    if (error instanceof RangeError) throw new MeshDecodeError(describe(format), 0, `cannot decode: ${error.message}`);
    throw error;
  }
}

/**
 * What decoding union physics bytes (a PhysicalConfigData) would cost, from their first
 * bytes and hull headers, nothing decoded: null when they are no CSGPHS blob (there are
 * no hulls to decode), else the most hull `work` and the most `triangles` kept (null when
 * only decoding can tell: CSGPHS 8, whose counts are inside its ZSTD frame). Bytes that
 * are no mesh or union blob at all throw MeshDecodeError, as decodeMeshAsset would.
 */
export function unionHullCost(bytes: Uint8Array, limits?: Partial<MeshLimits>): { work: number; triangles: number | null } | null {
  const format = sniffMeshFormat(bytes);
  if (format.family !== 'csgphs') return null;
  return csgphsCost(bytes, format.version, resolveMeshLimits(limits)) ?? { work: 0, triangles: null };
}

/** Bytes of decoded union model geometry counted per vertex (positions and normals 12 each, colour 4, uv 8) and per index. */
export const MODEL_BYTES_PER_VERTEX = 36;
export const MODEL_BYTES_PER_INDEX = 4;

/**
 * What decoding union model bytes (a MeshData) would cost, from their counts alone,
 * nothing decoded: null when they are no CSGMDL blob (no union model to decode),
 * else the vertices and indices decoding reads and the `bytes` it allocates for them
 * at most (36 a vertex, 4 an index: CSGMDL 5 keeps the first of its index ranges but
 * decodes them all; CSGMDL 2 and 4 add the whole blob, which they are decoded from a
 * clear copy of, whatever follows the model in it). Bytes that are no mesh or union
 * blob at all, or whose counts are malformed or past `limits`, throw MeshDecodeError
 * as decodeMeshAsset would.
 */
export function unionModelCost(bytes: Uint8Array, limits?: Partial<MeshLimits>): { vertices: number; indices: number; bytes: number } | null {
  const format = sniffMeshFormat(bytes);
  if (format.family !== 'csgmdl') return null;
  const caps = resolveMeshLimits(limits);
  let counts: { vertices: number; indices: number };
  let copied = 0;
  if (format.version === 2 || format.version === 4) {
    counts = csgmdlCounts(bytes, format.version, caps);
    copied = bytes.length;
  } else if (format.version === 5) {
    counts = csgmdl5Counts(bytes, caps);
  } else {
    throw new MeshDecodeError(`CSGMDL ${format.version}`, 6, `unsupported CSGMDL version ${format.version} (known: 2, 4, 5)`);
  }
  return { ...counts, bytes: counts.vertices * MODEL_BYTES_PER_VERTEX + counts.indices * MODEL_BYTES_PER_INDEX + copied };
}

function decodeFileMesh(bytes: Uint8Array, version: string, bodyStart: number, limits: MeshLimits): FileMeshAsset {
  if (version.startsWith('1.')) return decodeTextMesh(bytes, version, bodyStart, limits);
  if (version.startsWith('2.') || version.startsWith('3.')) return decodeMeshV2(bytes, version, bodyStart, limits);
  if (version.startsWith('4.') || version.startsWith('5.')) return decodeMeshV4(bytes, version, bodyStart, limits);
  return decodeChunkedMesh(bytes, version, bodyStart, limits);
}

function describe(format: ReturnType<typeof sniffMeshFormat>): string {
  switch (format.family) {
    case 'mesh': return `mesh ${format.version}`;
    case 'csgmdl': return `CSGMDL ${format.version}`;
    case 'csgphs': return `CSGPHS ${format.version}`;
    case 'csgk': return 'CSGK';
  }
}

export { MeshDecodeError, isMeshDecodeError } from './errors.js';
export { DEFAULT_MESH_LIMITS, resolveMeshLimits, type MeshLimits } from './limits.js';
export { convexHull } from './csg/convex-hull.js';
export type * from './types.js';
