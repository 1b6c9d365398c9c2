/**
 * What `decodeMeshAsset` returns: one record per kind of blob, each with the shared
 * `MeshGeometry` (or null when the blob holds no geometry) and what the file says
 * about itself.
 */
import type { MeshGeometry } from '../geometry/mesh.js';

export type MeshAssetKind = 'mesh' | 'union_graphics' | 'union_physics' | 'union_key';

/** A Roblox mesh file (`version 1.00` … `7.00`), its LOD 0 as geometry. */
export interface FileMeshAsset {
  kind: 'mesh';
  /** "1.00", "1.01", "2.00", "3.00", "3.01", "4.00", "4.01", "5.00", "6.00" or "7.00". */
  version: string;
  /**
   * Every stored vertex (in file order) and LOD 0's triangles. Vertices only the
   * coarser LODs use stay in (they lie on the same surface), so positions are the
   * file's vertex array as stored.
   */
  geometry: MeshGeometry;
  header: FileMeshHeader;
}

export interface FileMeshHeader {
  vertexCount: number;
  /** Triangles stored, all LODs together. */
  faceCount: number;
  /** The LOD table as stored: face offsets, LOD n spanning [offsets[n], offsets[n + 1]). */
  lodOffsets: number[];
  /** [first face, end face) of each LOD, LOD 0 first; one range over every face when the table has fewer than 3 entries (Roblox then ignores it). */
  lods: Array<[number, number]>;
  /** 0 none, 1 unknown, 2 RbxSimplifier, 3 zeux/meshoptimizer, other values as stored; null before 4.00. */
  lodType: number | null;
  highQualityLodCount: number | null;
  subsetCount: number;
  boneCount: number;
  boneNames: string[];
  /** FACS (facial animation) data, skipped: its size, or null when absent. */
  facs: { bytes: number; format: number | null } | null;
  /** Bytes per vertex record (36 or 40 in 2.00/3.xx, 40 after); null for text and Draco. */
  vertexSize: number | null;
  /** Whether the geometry was Draco-compressed (COREMESH version 2). */
  draco: boolean;
  /** Chunks of a 6.00/7.00 file, in order; null for the older layouts. */
  chunks: Array<{ type: string; version: number; bytes: number }> | null;
  /** Things that were read past without failing (unknown chunk versions, bytes after the end). */
  notes: string[];
}

/** A `CSGMDL` union render model (`UnionOperation.MeshData`, or the asset its `AssetId` names). */
export interface UnionGraphicsAsset {
  kind: 'union_graphics';
  /** "2", "4" or "5". */
  version: string;
  geometry: MeshGeometry;
  header: {
    vertexCount: number;
    faceCount: number;
    /** Content hash the file carries (versions 2 and 4): 16 hexadecimal characters. */
    hash: string | null;
    /** Index ranges of version 5: the first is the model, the rest (LODs, presumably) are counted here. */
    extraIndexRanges: number;
  };
}

export interface HullGeometry {
  positions: Float32Array;
  indices: Uint32Array;
  /** True when the blob stored the hull's points only and its triangles were computed here. */
  computed: boolean;
}

/** A `CSGPHS` collision blob (`PhysicalConfigData`): convex hulls in the union's local space at `InitialSize`. */
export interface UnionPhysicsAsset {
  kind: 'union_physics';
  /** "0" (BLOCK), "3", "5", "6", "7" or "8". */
  version: string;
  /** Every hull in one geometry (positions concatenated in hull order); null for BLOCK. */
  geometry: MeshGeometry | null;
  hulls: HullGeometry[];
  /** BLOCK: the union collides as its bounding box; there are no hulls. */
  block: boolean;
  header: {
    /** Version 7/8's geometry type byte. */
    geomType: number | null;
    /** Mass properties of versions 6 and 7. */
    physics: { volume: number; centerOfGravity: [number, number, number]; inertia: [number, number, number, number, number, number] } | null;
    /** Version 8's stored bounds. */
    bounds: { min: [number, number, number]; max: [number, number, number] } | null;
    /** Version 8: hulls stored as plain triangle lists before the Edgebreaker-coded ones. */
    rawHullCount: number;
  };
}

/** A `CSGK` marker: the union's data lives elsewhere, under this key. */
export interface UnionKeyAsset {
  kind: 'union_key';
  /** CSGK has no version number. */
  version: 'CSGK';
  geometry: null;
  key: string;
}

export type MeshAsset = FileMeshAsset | UnionGraphicsAsset | UnionPhysicsAsset | UnionKeyAsset;
