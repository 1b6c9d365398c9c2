/**
 * The JSON view of a decoded blob (what `rbxl-import mesh FILE --json` prints):
 * kind and version, every vertex position as stored (a mesh's vertex array, a union
 * model's positions, a collision blob's hull points concatenated) as [x, y, z], the
 * triangle count of the geometry, and the counts the format has. Floats print in
 * their shortest float32 form; non-finite ones as null.
 */
import type { MeshAsset } from './types.js';

export interface MeshAssetSummary {
  kind: MeshAsset['kind'];
  version: string;
  /** Every vertex position, in file order. */
  positions: Array<[number | null, number | null, number | null]>;
  /** Triangles of the geometry: LOD 0 for a mesh, every hull for a collision blob. */
  faces: number;
  vertices: number;
  [detail: string]: unknown;
}

export function summarizeMeshAsset(asset: MeshAsset): MeshAssetSummary {
  const positions: MeshAssetSummary['positions'] = [];
  const p = asset.geometry?.positions;
  if (p) for (let i = 0; i + 2 < p.length; i += 3) positions.push([shortFloat(p[i]!), shortFloat(p[i + 1]!), shortFloat(p[i + 2]!)]);
  const base = { kind: asset.kind, version: asset.version, positions, faces: (asset.geometry?.indices.length ?? 0) / 3, vertices: positions.length };
  switch (asset.kind) {
    case 'mesh': {
      const h = asset.header;
      return {
        ...base,
        facesStored: h.faceCount,
        lods: h.lods.length,
        lodRanges: h.lods,
        lodType: h.lodType,
        subsets: h.subsetCount,
        bones: h.boneCount,
        boneNames: h.boneNames,
        facs: h.facs,
        draco: h.draco,
        colors: asset.geometry.colors !== undefined,
        ...(h.chunks ? { chunks: h.chunks } : {}),
        notes: h.notes,
      };
    }
    case 'union_graphics':
      return { ...base, hash: asset.header.hash, colors: asset.geometry.colors !== undefined, extraIndexRanges: asset.header.extraIndexRanges };
    case 'union_physics':
      return {
        ...base,
        hulls: asset.hulls.length,
        hullsComputed: asset.hulls.filter((h) => h.computed).length,
        block: asset.block,
        geomType: asset.header.geomType,
        rawHulls: asset.header.rawHullCount,
        ...(asset.header.bounds ? { bounds: asset.header.bounds } : {}),
      };
    case 'union_key':
      return { ...base, key: asset.key };
  }
}

/** The shortest decimal that reads back as the same float32. */
function shortFloat(value: number): number | null {
  if (!Number.isFinite(value)) return null;
  for (let digits = 1; digits < 9; digits++) {
    const candidate = Number(value.toPrecision(digits));
    if (Math.fround(candidate) === value) return candidate;
  }
  return Number(value.toPrecision(9));
}
