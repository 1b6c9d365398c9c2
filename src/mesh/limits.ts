/**
 * Caps that mesh and union bytes meet before anything is allocated. Every declared
 * count is checked against what the input can still hold and against these caps;
 * counts that compression can inflate (Draco, ZSTD, CSGMDL 5 delta indices,
 * CSGPHS 8 Edgebreaker) are checked against them before decoding.
 */
import { withDefaults } from '../parser/limits.js';

export interface MeshLimits {
  /** Largest input accepted at all. */
  maxInputBytes: number;
  /** Most vertices in one mesh, union model or physics blob (all hulls together). */
  maxVertices: number;
  /** Most triangles stored (all LODs, all hulls together). */
  maxTriangles: number;
  /** Most LOD offsets in a LOD table. */
  maxLods: number;
  /** Most bones in a skinned mesh. */
  maxBones: number;
  /** Most mesh subsets. */
  maxSubsets: number;
  /** Largest bone name table. */
  maxNameTableBytes: number;
  /** Most convex hulls in one CSGPHS blob. */
  maxHulls: number;
  /**
   * Most points in one hull whose triangles must be computed (a CSGPHS hull stored
   * as points only): the incremental hull is quadratic in the worst case.
   */
  maxHullPoints: number;
  /**
   * Most work computing hulls in one blob, as the sum of each computed hull's points
   * squared (the worst case of the incremental hull): four hulls of `maxHullPoints`.
   * Without it a 983 KB blob of twenty 4,096-point hulls took 4 s, and one of 256 MiB
   * could ask for thousands of them.
   */
  maxHullWork: number;
  /**
   * Place-wide, for the scene assembly (the analysis picture, scene.glb, `rbxl-import gltf`;
   * a single decodeMeshAsset call ignores it): most hull work, as for `maxHullWork`,
   * across every distinct union physics blob of one place. Real places store their
   * hulls' triangles and compute none; without it 250 blobs each within `maxHullWork`
   * (a 192 KB upload) held a worker for 33–54 s. Checked from each blob's hull headers
   * before it is decoded; past it, the place's remaining unions are drawn as boxes.
   */
  maxPlaceHullWork: number;
  /**
   * Place-wide, as `maxPlaceHullWork`: most bytes of union hull geometry one assembly
   * keeps (flat-shaded: 84 bytes a triangle, in typed arrays outside a worker's V8 heap
   * limit, so the heap cap never sees them). The memory budget sets it from the task's
   * share (service/budget.ts). Checked before a blob is decoded, from its declared
   * triangles (a hull stored as points only counts its hull's most, 2n − 4), and
   * for CSGPHS 8, whose counts are inside its ZSTD frame, by lowering `maxTriangles`
   * for its decode to the room left.
   */
  maxPlaceHullBytes: number;
  /**
   * Place-wide, as the hull caps: most bytes of union model geometry (the CSGMDL a union
   * stores in `MeshData`) one assembly decodes, counted from each distinct blob's declared
   * counts before it is decoded (36 bytes a vertex, 4 an index: the typed arrays decoding
   * allocates, outside a worker's V8 heap limit) and whether or not the model is kept, so
   * it bounds the decoding as well as what is kept. CSGMDL 5 codes an index in one byte:
   * without it, 50 MB of MeshData in a 0.9 MB upload kept 185 MB of geometry. The memory
   * budget sets it from the task's share (service/budget.ts); past it, the place's
   * remaining unions draw their hulls, else a box.
   */
  maxPlaceModelBytes: number;
  /** Largest decompressed CSGPHS 8 payload. */
  maxDecompressedBytes: number;
  /**
   * Largest ratio of what a compressed stream declares it holds (a CSGPHS 8 payload,
   * a Draco mesh's vertex and index arrays) to its own size, plus 1 MiB: real files
   * stay far below, so a few bytes can never claim gigabytes.
   */
  maxExpansion: number;
  /** Most chunks in a version 6.00/7.00 mesh. */
  maxChunks: number;
  /**
   * The Draco decoder's WebAssembly heap grows to the largest mesh it has decoded and
   * can never shrink: after a decode leaves it larger than this, a fresh module is
   * loaded to replace it (the old one serves until then), so a worker does not keep
   * a large mesh's memory for the rest of its life. Values under a fresh module's heap
   * (MIN_DECODER_HEAP_BYTES) count as that heap: lower, every decode would reload it.
   */
  maxDecoderHeapBytes: number;
}

export const DEFAULT_MESH_LIMITS: MeshLimits = Object.freeze({
  maxInputBytes: 256 << 20,
  maxVertices: 1 << 22,
  maxTriangles: 1 << 22,
  maxLods: 256,
  maxBones: 8192,
  maxSubsets: 8192,
  maxNameTableBytes: 1 << 20,
  maxHulls: 1 << 16,
  maxHullPoints: 4096,
  maxHullWork: 4 * 4096 * 4096,
  maxPlaceHullWork: 2 * 4 * 4096 * 4096,
  maxPlaceHullBytes: 64 << 20,
  maxPlaceModelBytes: 64 << 20,
  maxDecompressedBytes: 256 << 20,
  maxExpansion: 256,
  maxChunks: 256,
  maxDecoderHeapBytes: 64 << 20,
});

/** The heap a freshly loaded Draco module starts with (Emscripten's 16 MiB). */
export const MIN_DECODER_HEAP_BYTES = 16 << 20;

export function resolveMeshLimits(partial?: Partial<MeshLimits>): MeshLimits {
  const limits = withDefaults(DEFAULT_MESH_LIMITS, partial);
  if (!(limits.maxDecoderHeapBytes >= MIN_DECODER_HEAP_BYTES)) return { ...limits, maxDecoderHeapBytes: MIN_DECODER_HEAP_BYTES };
  return limits;
}

/** What a compressed stream of `streamBytes` may declare it expands to. */
export function expansionCap(limits: MeshLimits, streamBytes: number): number {
  return limits.maxExpansion * streamBytes + (1 << 20);
}
