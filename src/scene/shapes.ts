/**
 * Shapes the assembly gives parts beyond the primitives of src/geometry/shapes.ts:
 * unions from their collision hulls (`PhysicalConfigData`, CSGPHS) or render model
 * (`MeshData` / the `AssetId` download, CSGMDL), and meshes from their converted
 * geometry. Each is a `SceneShape` shared by every part showing it (glTF
 * instancing), and a per-part fit: the node's scale and offset in part space.
 */
import type { MeshGeometry } from '../geometry/mesh.js';
import { geometryBounds } from '../geometry/mesh.js';
import type { Vec3 } from '../parser/values.js';

export type ShapeKind = 'primitive' | 'union' | 'mesh' | 'placeholder';

export interface SceneShape {
  /** Equal keys mean equal geometry. */
  key: string;
  geometry: MeshGeometry;
  kind: ShapeKind;
  /** Placeholders: why the real shape is missing (e.g. "mesh not downloaded"). */
  reason?: string;
  /** Where the geometry came from: an asset id, or the property that held it. */
  source?: string;
  /** Drawn by the picture's box path (Block, placeholders). */
  box: boolean;
  /** Bounds of the geometry (for fitting), computed once. */
  bounds: { min: Vec3; max: Vec3 };
}

export interface Fit {
  scale: Vec3;
  offset: Vec3;
}

/** How far a model's bounds may stray from InitialSize before it is fitted to Size instead. */
const INITIAL_SIZE_TOLERANCE = 0.05;

/**
 * A union model (hulls or render model) stored at `initialSize`, shown at `size`:
 * scaled by Size / InitialSize about the union's origin, as Roblox does. When the
 * model's bounds are not the InitialSize box (collision hulls sometimes reach past it,
 * or InitialSize is missing), its bounds are fitted to the Size box instead, so the
 * shape always fills the part's box.
 */
export function unionFit(shape: SceneShape, size: Vec3, initialSize: Vec3 | null): Fit {
  const { min, max } = shape.bounds;
  if (initialSize && initialSize.every((v) => v > 1e-6)) {
    let agrees = true;
    for (let a = 0; a < 3; a++) {
      const extent = max[a]! - min[a]!, centre = (max[a]! + min[a]!) / 2;
      if (Math.abs(extent - initialSize[a]!) > INITIAL_SIZE_TOLERANCE * initialSize[a]! || Math.abs(centre) > INITIAL_SIZE_TOLERANCE * initialSize[a]!) agrees = false;
    }
    if (agrees) return { scale: [size[0] / initialSize[0], size[1] / initialSize[1], size[2] / initialSize[2]], offset: [0, 0, 0] };
  }
  return boundsFit(shape, size);
}

/** The shape's bounds fitted to the box of `size` centred on the part (a MeshPart's mesh). */
export function boundsFit(shape: SceneShape, size: Vec3): Fit {
  const { min, max } = shape.bounds;
  const scale: Vec3 = [1, 1, 1];
  const offset: Vec3 = [0, 0, 0];
  for (let a = 0; a < 3; a++) {
    const extent = max[a]! - min[a]!;
    // A flat mesh (a plane) keeps its thickness; it has none to stretch.
    scale[a] = extent > 1e-6 ? size[a]! / extent : 1;
    offset[a] = -((max[a]! + min[a]!) / 2) * scale[a]!;
  }
  return { scale, offset };
}

export function shapeOf(key: string, geometry: MeshGeometry, kind: ShapeKind, extra: Partial<SceneShape> = {}): SceneShape {
  const bounds = geometryBounds(geometry.positions) ?? { min: [0, 0, 0] as Vec3, max: [0, 0, 0] as Vec3 };
  return { key, geometry, kind, box: false, bounds, ...extra };
}

/** What flatShaded keeps per triangle: three corners of a position, a normal (3 × f32 each) and an index (u32). */
export const FLAT_BYTES_PER_TRIANGLE = 3 * (12 + 12 + 4);

/**
 * Triangles with their own corners and face normals: collision hulls come as
 * shared-corner triangle lists without normals, and would shade as blobs.
 */
export function flatShaded(positions: Float32Array, indices: Uint32Array): MeshGeometry {
  const count = indices.length;
  const outPositions = new Float32Array(count * 3);
  const normals = new Float32Array(count * 3);
  const outIndices = new Uint32Array(count);
  let kept = 0;
  for (let t = 0; t + 2 < count; t += 3) {
    const a = indices[t]! * 3, b = indices[t + 1]! * 3, c = indices[t + 2]! * 3;
    const ux = positions[b]! - positions[a]!, uy = positions[b + 1]! - positions[a + 1]!, uz = positions[b + 2]! - positions[a + 2]!;
    const vx = positions[c]! - positions[a]!, vy = positions[c + 1]! - positions[a + 1]!, vz = positions[c + 2]! - positions[a + 2]!;
    let nx = uy * vz - uz * vy, ny = uz * vx - ux * vz, nz = ux * vy - uy * vx;
    const length = Math.hypot(nx, ny, nz);
    if (!(length > 0) || !Number.isFinite(length)) continue; // a degenerate triangle draws nothing
    nx /= length; ny /= length; nz /= length;
    for (const corner of [a, b, c]) {
      const o = kept * 3;
      outPositions[o] = positions[corner]!; outPositions[o + 1] = positions[corner + 1]!; outPositions[o + 2] = positions[corner + 2]!;
      normals[o] = nx; normals[o + 1] = ny; normals[o + 2] = nz;
      outIndices[kept] = kept;
      kept++;
    }
  }
  return { positions: outPositions.slice(0, kept * 3), normals: normals.slice(0, kept * 3), indices: outIndices.slice(0, kept) };
}
