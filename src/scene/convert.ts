/**
 * One downloaded mesh or union model, converted once to a glTF mesh (a small GLB):
 * the geometry of `decodeMeshAsset` (LOD 0; positions, normals, UVs, vertex colours,
 * subsets as primitives, skin and bones) in the asset's own space and units. The
 * scene reads it back (`readGlbGeometry`) and places it per part. A blob that is not
 * a mesh, is of a version no decoder knows, is damaged or past the limits is not
 * converted, and says why in one of a few reasons.
 */
import type { MeshGeometry } from '../geometry/mesh.js';
import { addGeometry, addMaterial, addMeshOf, addNode, addSkin, createGltf, glbBytes } from '../gltf/index.js';
import { decodeMeshAsset, isMeshDecodeError, type MeshAsset, type MeshLimits } from '../mesh/index.js';
import { flatShaded } from './shapes.js';

/** Bumped when the converted files change, so a store keyed by it never serves stale ones. */
export const CONVERTER_VERSION = 1;

export type ConversionFailure = 'not_a_mesh' | 'unknown_version' | 'unsupported_feature' | 'corrupt' | 'too_large' | 'no_geometry';

export interface ConversionInfo {
  /** The format as read, e.g. "mesh 4.01", "CSGMDL 5", "CSGPHS 8". */
  format: string;
  kind: MeshAsset['kind'];
  vertices: number;
  triangles: number;
  bones: number;
}

export type Conversion =
  | { ok: true; glb: Uint8Array; info: ConversionInfo }
  | { ok: false; reason: ConversionFailure; message: string };

export function convertMeshAsset(bytes: Uint8Array, limits?: Partial<MeshLimits>): Conversion {
  let asset: MeshAsset;
  try {
    asset = decodeMeshAsset(bytes, limits);
  } catch (error) {
    if (!isMeshDecodeError(error)) throw error;
    return { ok: false, reason: classify(error.format, error.what), message: error.message };
  }
  const format = asset.kind === 'mesh' ? `mesh ${asset.version}` : asset.kind === 'union_graphics' ? `CSGMDL ${asset.version}`
    : asset.kind === 'union_physics' ? `CSGPHS ${asset.version}` : 'CSGK';
  let geometry: MeshGeometry | null = asset.geometry;
  // Collision hulls: shared-corner triangles without normals; drawn flat.
  if (asset.kind === 'union_physics' && geometry) geometry = flatShaded(geometry.positions, geometry.indices);
  if (!geometry || geometry.indices.length === 0) {
    const message = asset.kind === 'union_key' ? 'a CSGK key: the model itself is stored elsewhere'
      : asset.kind === 'union_physics' && asset.block ? 'CSGPHS BLOCK: the union collides as its box and has no shape here' : 'no triangles';
    return { ok: false, reason: 'no_geometry', message: `${format}: ${message}` };
  }
  if (!usedPositionsFinite(geometry.positions, geometry.indices)) {
    return { ok: false, reason: 'corrupt', message: `${format}: the triangles use vertices that are not finite numbers` };
  }
  try {
    return { ok: true, glb: meshGlb(geometry, format), info: { format, kind: asset.kind, vertices: geometry.positions.length / 3, triangles: geometry.indices.length / 3, bones: geometry.skin?.bones.length ?? 0 } };
  } catch (error) {
    // The writer's own checks (a joint past the bones, a singular bone matrix): the file is inconsistent.
    if (error instanceof RangeError) return { ok: false, reason: 'corrupt', message: `${format}: ${error.message}` };
    throw error;
  }
}

function classify(format: string, what: string): ConversionFailure {
  if (format === 'unknown') return 'not_a_mesh';
  if (/^unsupported (mesh|CSGMDL|CSGPHS) version/.test(what)) return 'unknown_version';
  if (/^unsupported /.test(what)) return 'unsupported_feature';
  if (/exceeds? the limit|past the limit|past \d+× its size|limited to|past the limits/.test(what)) return 'too_large';
  return 'corrupt';
}

/**
 * The geometry a scene uses: only vertices LOD 0's triangles reach (a mesh file keeps
 * coarser LODs' vertices, and Roblox's simplifier leaves non-finite ones there), so
 * every written position is finite and used.
 */
export function usedPositionsFinite(positions: Float32Array, indices: Uint32Array): boolean {
  for (let i = 0; i < indices.length; i++) {
    const v = indices[i]! * 3;
    if (!Number.isFinite(positions[v]!) || !Number.isFinite(positions[v + 1]!) || !Number.isFinite(positions[v + 2]!)) return false;
  }
  return true;
}

/** Vertices used by the triangles only, in first-use order (a copy only when some are unused). */
export function usedVertices(geometry: MeshGeometry): MeshGeometry {
  const vertices = geometry.positions.length / 3;
  const remap = new Int32Array(vertices).fill(-1);
  let used = 0;
  for (let i = 0; i < geometry.indices.length; i++) {
    const v = geometry.indices[i]!;
    if (remap[v] === -1) remap[v] = used++;
  }
  if (used === vertices) return geometry;
  const pick = <T extends Float32Array | Uint8Array | Uint16Array>(array: T | undefined, width: number): T | undefined => {
    if (!array) return undefined;
    const out = new (array.constructor as new (n: number) => T)(used * width);
    for (let v = 0; v < vertices; v++) {
      const to = remap[v]!;
      if (to >= 0) for (let k = 0; k < width; k++) out[to * width + k] = array[v * width + k]!;
    }
    return out;
  };
  const out: MeshGeometry = { positions: pick(geometry.positions, 3)!, indices: geometry.indices.map((v) => remap[v]!) };
  if (geometry.normals) out.normals = pick(geometry.normals, 3);
  if (geometry.uvs) out.uvs = pick(geometry.uvs, 2);
  if (geometry.colors) out.colors = pick(geometry.colors, 4);
  if (geometry.groups) out.groups = geometry.groups;
  if (geometry.skin) out.skin = { bones: geometry.skin.bones, joints: pick(geometry.skin.joints, 4)!, weights: pick(geometry.skin.weights, 4)! };
  return out;
}

/** A GLB of one mesh: white materials (one per subset), the skin when the mesh has bones. */
function meshGlb(source: MeshGeometry, format: string): Uint8Array {
  const geometry = usedVertices(source);
  const doc = createGltf({ converter: 'rbxl-import', converterVersion: CONVERTER_VERSION, source: format, units: 'studs', up: '+Y' });
  const groups = geometry.groups?.length ? geometry.groups : [{ start: 0, count: geometry.indices.length }];
  const materials = groups.map((group, i) => addMaterial(doc, { name: group.material ?? (groups.length > 1 ? `subset ${i}` : 'mesh'), baseColor: [1, 1, 1, 1], metallic: 0, roughness: 0.6 }));
  const mesh = addMeshOf(doc, [{ geometry: addGeometry(doc, geometry), materials }], format);
  if (geometry.skin && geometry.skin.bones.length > 0) {
    const skin = addSkin(doc, geometry.skin, undefined, 'mesh');
    addNode(doc, { name: 'mesh', mesh, skin });
  } else {
    addNode(doc, { name: 'mesh', mesh });
  }
  return glbBytes(doc);
}
