/**
 * The one in-memory shape of triangle geometry, shared by every reader (Roblox meshes,
 * CSG union data, terrain, part shapes) and every writer (glTF, the preview renderer).
 * Typed arrays end to end, as three.js and glTF-Transform keep them: a reader fills
 * them once, a writer copies them once, nothing per vertex is an object.
 *
 * Axes and units are Roblox's: studs, Y up, right-handed, -Z forward (glTF's own
 * convention apart from the unit, so a writer copies positions as they are).
 */

/** Up to four joints per vertex, as glTF's JOINTS_0/WEIGHTS_0. */
export interface MeshSkin {
  /** 4 per vertex: indices into `bones`. */
  joints: Uint16Array;
  /** 4 per vertex, each vertex's four summing to 1 (or all 0 for an unskinned vertex). */
  weights: Float32Array;
  bones: MeshBone[];
}

export interface MeshBone {
  name: string;
  /** Index into `bones`, or -1 for a root. */
  parent: number;
  /** The bone's rest pose in mesh space: column-major 4x4 (glTF's matrix order). */
  matrix: Float64Array;
}

/** A run of triangles that shares one material (a mesh subset, a terrain material, a CSG face group). */
export interface MeshGroup {
  /** First index (not triangle) in `indices`. */
  start: number;
  /** Number of indices (3 per triangle). */
  count: number;
  /** What the group stands for, for the writer's material choice (e.g. a terrain material name). */
  material?: string;
}

export interface MeshGeometry {
  /** x, y, z per vertex. */
  positions: Float32Array;
  /** x, y, z per vertex, unit length; absent when the source has none (a writer may compute flat ones). */
  normals?: Float32Array;
  /** u, v per vertex; v grows downwards as in Roblox and glTF. */
  uvs?: Float32Array;
  /** r, g, b, a per vertex, 0..255. */
  colors?: Uint8Array;
  /** Three vertex indices per triangle, counter-clockwise seen from outside. */
  indices: Uint32Array;
  /** Subsets; absent means one group over every index. */
  groups?: MeshGroup[];
  skin?: MeshSkin;
}

/** Axis-aligned bounds of a geometry's positions; null when it has no finite vertex. */
export function geometryBounds(positions: Float32Array): { min: [number, number, number]; max: [number, number, number] } | null {
  let minX = Infinity, minY = Infinity, minZ = Infinity, maxX = -Infinity, maxY = -Infinity, maxZ = -Infinity;
  for (let i = 0; i + 2 < positions.length; i += 3) {
    const x = positions[i]!, y = positions[i + 1]!, z = positions[i + 2]!;
    if (!Number.isFinite(x) || !Number.isFinite(y) || !Number.isFinite(z)) continue;
    if (x < minX) minX = x;
    if (y < minY) minY = y;
    if (z < minZ) minZ = z;
    if (x > maxX) maxX = x;
    if (y > maxY) maxY = y;
    if (z > maxZ) maxZ = z;
  }
  return minX <= maxX ? { min: [minX, minY, minZ], max: [maxX, maxY, maxZ] } : null;
}
