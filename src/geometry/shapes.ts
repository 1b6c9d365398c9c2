/**
 * Roblox part shapes as `MeshGeometry`: one unit geometry per shape (it fills the box
 * [-0.5, 0.5]³ of part space) and the scale that fits it to a part, so every part of
 * one shape can share one mesh (glTF instancing: one mesh, many nodes).
 *
 * Conventions (part space: +X right, +Y up, -Z front, as Roblox's CFrame.LookVector):
 * - Block: the box.
 * - Wedge (WedgePart, Part.Shape Wedge, SpecialMesh Wedge): full bottom face and full
 *   back face (+Z); the slope runs from the top back edge down to the bottom front edge
 *   (-Z), so it faces front and up. Left and right faces are triangles.
 * - CornerWedge: full bottom face; its apex is the top corner at (+X, +Y, -Z): the
 *   right (+X) and front (-Z) faces are vertical triangles, the other two slope.
 * - Ball: a sphere of diameter min(Size), centred.
 * - Cylinder (Part.Shape Cylinder and SpecialMesh Cylinder): its axis is part X; length
 *   Size.X, diameter min(Size.Y, Size.Z).
 * - CylinderMesh: the same cylinder standing along Y: length Size.Y, diameter min(Size.X, Size.Z).
 * - BlockMesh and SpecialMesh Brick, Wedge, Sphere: stretched to Size × Scale (a Sphere
 *   becomes an ellipsoid); Cylinder types keep a round section (the smaller of the two
 *   cross extents), as Roblox documents for DataModelMesh.Scale.
 * - Truss: a lattice of four rails along the part's longest axis with rungs every
 *   2 studs (Roblox trusses come in 2-stud segments), built at its size.
 * - Head, Torso and the deprecated Prism, Pyramid, ParallelRamp, RightAngleRamp mesh
 *   types: close stand-ins (a rounded cylinder standing along Y; a box narrowing to
 *   80% width at the bottom; a roof ridge along Z; a square pyramid; a box sheared
 *   along Z; a wedge), stretched to Size × Scale. Roblox itself calls their scaling
 *   non-standard.
 * - FileMesh (a SpecialMesh or MeshPart mesh file) has no shape here: the scene
 *   assembly uses the decoded mesh, or `placeholder` (a box of the part's Size).
 *
 * Faces wind counter-clockwise seen from outside; UVs run 0..1 over each flat face.
 */
import type { Vec3 } from '../parser/values.js';
import type { MeshGeometry } from './mesh.js';

/** A part's shape: which unit geometry, and how the node scales and offsets it in part space. */
export interface PartShape {
  /** Identifies the unit geometry: equal keys mean equal geometry. */
  key: string;
  /** The geometry (cached per key). */
  geometry: MeshGeometry;
  /** Scale applied to the unit geometry, in part space. */
  scale: Vec3;
  /** Translation in part space (a mesh object's Offset), applied after scaling. */
  offset: Vec3;
  /** True when the part's real shape is unknown here (a mesh file not decoded): a box of its Size. */
  placeholder?: boolean;
}

/** Tessellation of curved shapes: segments around (default 24) and rings from pole to pole (default 12). */
export interface ShapeDetail {
  segments?: number;
  rings?: number;
}

const ZERO: Vec3 = [0, 0, 0];

/**
 * The shape of a part from its class shape name (scene.ts `shape`: Block, Ball,
 * Cylinder, Wedge, CornerWedge, Truss, Mesh, Union, ...) and Size. Shapes with no
 * primitive here (meshes, unions without decoded geometry) give a placeholder box.
 */
export function partShape(shape: string, size: Vec3, detail?: ShapeDetail): PartShape {
  const [sx, sy, sz] = size.map((v) => Math.abs(v)) as Vec3;
  switch (shape) {
    case 'Block':
      return shaped('box', unitBox, [sx, sy, sz]);
    case 'Wedge':
      return shaped('wedge', unitWedge, [sx, sy, sz]);
    case 'CornerWedge':
      return shaped('cornerWedge', unitCornerWedge, [sx, sy, sz]);
    case 'Ball': {
      const d = Math.min(sx, sy, sz);
      return shaped(`sphere:${segmentsOf(detail)}:${ringsOf(detail)}`, () => unitSphere(segmentsOf(detail), ringsOf(detail)), [d, d, d]);
    }
    case 'Cylinder': {
      const d = Math.min(sy, sz);
      return shaped(`cylinderX:${segmentsOf(detail)}`, () => unitCylinderX(segmentsOf(detail)), [sx, d, d]);
    }
    case 'Truss': {
      const key = `truss:${round3(sx)}:${round3(sy)}:${round3(sz)}`;
      return { key, geometry: cached(key, () => truss([sx, sy, sz])), scale: [1, 1, 1], offset: ZERO };
    }
    default:
      return placeholder(size);
  }
}

/** A box of the part's Size standing for a shape not known here (a mesh file, a union without geometry). */
export function placeholder(size: Vec3): PartShape {
  return { ...shaped('box', unitBox, size.map((v) => Math.abs(v)) as Vec3), placeholder: true };
}

/**
 * The shape a mesh object under a part gives it: `className` SpecialMesh (with its
 * MeshType name), BlockMesh or CylinderMesh; `scale` and `offset` are the object's.
 * Returns null for a FileMesh type (the shape comes from the mesh file).
 */
export function meshObjectShape(
  className: string, meshType: string | undefined, partSize: Vec3, scale: Vec3 = [1, 1, 1], offset: Vec3 = ZERO, detail?: ShapeDetail,
): PartShape | null {
  const stretched: Vec3 = [Math.abs(partSize[0] * scale[0]), Math.abs(partSize[1] * scale[1]), Math.abs(partSize[2] * scale[2])];
  const [x, y, z] = stretched;
  const at = (shape: PartShape): PartShape => ({ ...shape, offset: [...offset] as Vec3 });
  if (className === 'BlockMesh') return at(shaped('box', unitBox, stretched));
  if (className === 'CylinderMesh') {
    const d = Math.min(x, z);
    return at(shaped(`cylinderY:${segmentsOf(detail)}`, () => unitCylinderY(segmentsOf(detail)), [d, y, d]));
  }
  if (className !== 'SpecialMesh') return null;
  switch (meshType ?? 'Head') {
    case 'Brick': return at(shaped('box', unitBox, stretched));
    case 'Wedge': case 'RightAngleRamp': return at(shaped('wedge', unitWedge, stretched));
    case 'CornerWedge': return at(shaped('cornerWedge', unitCornerWedge, stretched));
    case 'Sphere': return at(shaped(`sphere:${segmentsOf(detail)}:${ringsOf(detail)}`, () => unitSphere(segmentsOf(detail), ringsOf(detail)), stretched));
    case 'Cylinder': {
      const d = Math.min(y, z);
      return at(shaped(`cylinderX:${segmentsOf(detail)}`, () => unitCylinderX(segmentsOf(detail)), [x, d, d]));
    }
    case 'Head': return at(shaped(`head:${segmentsOf(detail)}`, () => unitHead(segmentsOf(detail)), stretched));
    case 'Torso': return at(shaped('torso', unitTorso, stretched));
    case 'Prism': return at(shaped('prism', unitPrism, stretched));
    case 'Pyramid': return at(shaped('pyramid', unitPyramid, stretched));
    case 'ParallelRamp': return at(shaped('parallelRamp', unitParallelRamp, stretched));
    default: return null;
  }
}

function shaped(key: string, build: () => MeshGeometry, scale: Vec3): PartShape {
  return { key, geometry: cached(key, build), scale, offset: ZERO };
}

const cache = new Map<string, MeshGeometry>();
/** Unit geometries are built once per process; trusses (sized) are kept up to a bound. */
function cached(key: string, build: () => MeshGeometry): MeshGeometry {
  let geometry = cache.get(key);
  if (!geometry) {
    if (cache.size > 4096) cache.clear();
    geometry = build();
    cache.set(key, geometry);
  }
  return geometry;
}

const segmentsOf = (detail?: ShapeDetail): number => Math.max(3, Math.min(256, Math.round(detail?.segments ?? 24)));
const ringsOf = (detail?: ShapeDetail): number => Math.max(2, Math.min(128, Math.round(detail?.rings ?? 12)));
const round3 = (x: number): number => Math.round(x * 1000) / 1000;

// ---------------------------------------------------------------------------
// Flat-faced solids from polygons

/** Collects flat polygons (each its own vertices, so normals stay sharp) into one geometry. */
class Polygons {
  positions: number[] = [];
  normals: number[] = [];
  uvs: number[] = [];
  indices: number[] = [];

  /** Adds a convex polygon, turning it to face away from `inside` (a point inside the solid). */
  add(points: Vec3[], inside: Vec3 = ZERO): void {
    let nx = 0, ny = 0, nz = 0;
    for (let i = 0; i < points.length; i++) {
      const a = points[i]!, b = points[(i + 1) % points.length]!;
      nx += (a[1] - b[1]) * (a[2] + b[2]);
      ny += (a[2] - b[2]) * (a[0] + b[0]);
      nz += (a[0] - b[0]) * (a[1] + b[1]);
    }
    const length = Math.hypot(nx, ny, nz);
    if (length === 0) return;
    nx /= length; ny /= length; nz /= length;
    const p = points[0]!;
    if ((p[0] - inside[0]) * nx + (p[1] - inside[1]) * ny + (p[2] - inside[2]) * nz < 0) {
      points = [...points].reverse();
      nx = -nx; ny = -ny; nz = -nz;
    }
    // UVs: the face's own axes, u along its first edge.
    const e = sub(points[1]!, points[0]!);
    const eLength = Math.hypot(...e) || 1;
    const u: Vec3 = [e[0] / eLength, e[1] / eLength, e[2] / eLength];
    const v: Vec3 = [ny * u[2] - nz * u[1], nz * u[0] - nx * u[2], nx * u[1] - ny * u[0]];
    const us = points.map((q) => dot(sub(q, points[0]!), u));
    const vs = points.map((q) => dot(sub(q, points[0]!), v));
    const [u0, u1, v0, v1] = [Math.min(...us), Math.max(...us), Math.min(...vs), Math.max(...vs)];
    const base = this.positions.length / 3;
    points.forEach((q, i) => {
      this.positions.push(q[0], q[1], q[2]);
      this.normals.push(nx, ny, nz);
      this.uvs.push((us[i]! - u0) / ((u1 - u0) || 1), 1 - (vs[i]! - v0) / ((v1 - v0) || 1));
    });
    for (let i = 1; i + 1 < points.length; i++) this.indices.push(base, base + i, base + i + 1);
  }

  geometry(): MeshGeometry {
    return {
      positions: Float32Array.from(this.positions),
      normals: Float32Array.from(this.normals),
      uvs: Float32Array.from(this.uvs),
      indices: Uint32Array.from(this.indices),
    };
  }
}

const sub = (a: Vec3, b: Vec3): Vec3 => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
const dot = (a: Vec3, b: Vec3): number => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];

function boxInto(polygons: Polygons, min: Vec3, max: Vec3): void {
  const [x0, y0, z0] = min, [x1, y1, z1] = max;
  const centre: Vec3 = [(x0 + x1) / 2, (y0 + y1) / 2, (z0 + z1) / 2];
  polygons.add([[x1, y0, z0], [x1, y1, z0], [x1, y1, z1], [x1, y0, z1]], centre);
  polygons.add([[x0, y0, z0], [x0, y0, z1], [x0, y1, z1], [x0, y1, z0]], centre);
  polygons.add([[x0, y1, z0], [x0, y1, z1], [x1, y1, z1], [x1, y1, z0]], centre);
  polygons.add([[x0, y0, z0], [x1, y0, z0], [x1, y0, z1], [x0, y0, z1]], centre);
  polygons.add([[x0, y0, z1], [x1, y0, z1], [x1, y1, z1], [x0, y1, z1]], centre);
  polygons.add([[x0, y0, z0], [x0, y1, z0], [x1, y1, z0], [x1, y0, z0]], centre);
}

export function unitBox(): MeshGeometry {
  const polygons = new Polygons();
  boxInto(polygons, [-0.5, -0.5, -0.5], [0.5, 0.5, 0.5]);
  return polygons.geometry();
}

/** Wedge: full bottom and back (+Z) faces, slope facing front (-Z) and up. */
export function unitWedge(): MeshGeometry {
  const h = 0.5;
  const inside: Vec3 = [0, -h / 2, h / 2];
  const p = new Polygons();
  p.add([[-h, -h, -h], [h, -h, -h], [h, -h, h], [-h, -h, h]], inside); // bottom
  p.add([[-h, -h, h], [h, -h, h], [h, h, h], [-h, h, h]], inside); // back
  p.add([[-h, -h, -h], [-h, h, h], [h, h, h], [h, -h, -h]], inside); // slope
  p.add([[h, -h, -h], [h, h, h], [h, -h, h]], inside); // right
  p.add([[-h, -h, -h], [-h, -h, h], [-h, h, h]], inside); // left
  return p.geometry();
}

/** CornerWedge: full bottom, apex at (+X, +Y, -Z). */
export function unitCornerWedge(): MeshGeometry {
  const h = 0.5;
  const apex: Vec3 = [h, h, -h];
  const b0: Vec3 = [-h, -h, -h], b1: Vec3 = [h, -h, -h], b2: Vec3 = [h, -h, h], b3: Vec3 = [-h, -h, h];
  const inside: Vec3 = [h / 2, -h / 2, -h / 2];
  const p = new Polygons();
  p.add([b0, b1, b2, b3], inside); // bottom
  p.add([apex, b0, b1], inside); // front
  p.add([apex, b1, b2], inside); // right
  p.add([apex, b3, b0], inside); // left slope
  p.add([apex, b2, b3], inside); // back slope
  return p.geometry();
}

/** Torso stand-in: the box narrowing to 80% of its width at the bottom. */
function unitTorso(): MeshGeometry {
  const h = 0.5, w = 0.4;
  const top: Vec3[] = [[-h, h, -h], [h, h, -h], [h, h, h], [-h, h, h]];
  const bottom: Vec3[] = [[-w, -h, -h], [w, -h, -h], [w, -h, h], [-w, -h, h]];
  return prismOf(top, bottom);
}

/** Prism stand-in: a roof with its ridge along Z. */
function unitPrism(): MeshGeometry {
  const h = 0.5;
  const p = new Polygons();
  p.add([[-h, -h, -h], [h, -h, -h], [h, -h, h], [-h, -h, h]]);
  p.add([[-h, -h, -h], [0, h, -h], [h, -h, -h]]);
  p.add([[-h, -h, h], [h, -h, h], [0, h, h]]);
  p.add([[-h, -h, -h], [-h, -h, h], [0, h, h], [0, h, -h]]);
  p.add([[h, -h, -h], [0, h, -h], [0, h, h], [h, -h, h]]);
  return p.geometry();
}

function unitPyramid(): MeshGeometry {
  const h = 0.5;
  const apex: Vec3 = [0, h, 0];
  const base: Vec3[] = [[-h, -h, -h], [h, -h, -h], [h, -h, h], [-h, -h, h]];
  const inside: Vec3 = [0, -h / 2, 0];
  const p = new Polygons();
  p.add(base, inside);
  for (let i = 0; i < 4; i++) p.add([apex, base[i]!, base[(i + 1) % 4]!], inside);
  return p.geometry();
}

/** ParallelRamp stand-in: the box with its top face shifted half a unit towards +Z. */
function unitParallelRamp(): MeshGeometry {
  const h = 0.5, s = 0.25;
  const top: Vec3[] = [[-h, h, -h + s], [h, h, -h + s], [h, h, h], [-h, h, h]];
  const bottom: Vec3[] = [[-h, -h, -h], [h, -h, -h], [h, -h, h - s], [-h, -h, h - s]];
  return prismOf(top, bottom);
}

/** A solid between two quads given in the same order (top above bottom). */
function prismOf(top: Vec3[], bottom: Vec3[]): MeshGeometry {
  const inside: Vec3 = [0, 0, 0];
  const p = new Polygons();
  p.add(top, inside);
  p.add(bottom, inside);
  for (let i = 0; i < 4; i++) {
    const j = (i + 1) % 4;
    p.add([bottom[i]!, bottom[j]!, top[j]!, top[i]!], inside);
  }
  return p.geometry();
}

/** Rungs of one truss at most. */
const MAX_TRUSS_SEGMENTS = 1024;

/** Truss: four rails along the longest axis, rungs around every 2-stud segment. */
function truss(size: Vec3): MeshGeometry {
  const axis = size[0] >= size[1] && size[0] >= size[2] ? 0 : size[1] >= size[2] ? 1 : 2;
  const u = ((axis + 1) % 3) as 0 | 1 | 2, v = ((axis + 2) % 3) as 0 | 1 | 2;
  const length = size[axis];
  const half = size.map((s) => s / 2) as Vec3;
  const bar = Math.max(0.05, Math.min(size[u], size[v]) * 0.1);
  const p = new Polygons();
  const box = (centre: Vec3, extent: Vec3): void => {
    boxInto(p, sub(centre, extent), [centre[0] + extent[0], centre[1] + extent[1], centre[2] + extent[2]]);
  };
  for (const su of [-1, 1]) {
    for (const sv of [-1, 1]) {
      const centre: Vec3 = [0, 0, 0];
      centre[u] = su * (half[u] - bar / 2);
      centre[v] = sv * (half[v] - bar / 2);
      const extent: Vec3 = [bar / 2, bar / 2, bar / 2];
      extent[axis] = half[axis];
      box(centre, extent);
    }
  }
  // Past MAX_TRUSS_SEGMENTS (a 2048-stud truss, the largest part) the rungs spread out: a hostile size draws no more.
  const segments = Math.min(MAX_TRUSS_SEGMENTS, Math.max(1, Math.round(length / 2)));
  for (let i = 0; i <= segments; i++) {
    const along = -half[axis] + Math.min(length - bar / 2, Math.max(bar / 2, (i * length) / segments));
    for (const side of [-1, 1]) {
      for (const [across, fixed] of [[u, v], [v, u]] as const) {
        const centre: Vec3 = [0, 0, 0];
        centre[axis] = along;
        centre[fixed] = side * (half[fixed] - bar / 2);
        const extent: Vec3 = [bar / 2, bar / 2, bar / 2];
        extent[across] = half[across] - bar;
        if (extent[across] > 0) box(centre, extent);
      }
    }
  }
  return p.geometry();
}

// ---------------------------------------------------------------------------
// Curved solids

/** A UV sphere of diameter 1: poles on ±Y. */
export function unitSphere(segments: number, rings: number): MeshGeometry {
  const positions: number[] = [], normals: number[] = [], uvs: number[] = [], indices: number[] = [];
  for (let r = 0; r <= rings; r++) {
    const theta = (r / rings) * Math.PI;
    for (let s = 0; s <= segments; s++) {
      const phi = (s / segments) * Math.PI * 2;
      const nx = Math.sin(theta) * Math.cos(phi), ny = Math.cos(theta), nz = -Math.sin(theta) * Math.sin(phi);
      positions.push(nx / 2, ny / 2, nz / 2);
      normals.push(nx, ny, nz);
      uvs.push(s / segments, r / rings);
    }
  }
  const row = segments + 1;
  for (let r = 0; r < rings; r++) {
    for (let s = 0; s < segments; s++) {
      const a = r * row + s, b = a + row;
      if (r > 0) indices.push(a, b, a + 1);
      if (r < rings - 1) indices.push(a + 1, b, b + 1);
    }
  }
  return orientOutward(geometry(positions, normals, uvs, indices));
}

/** A cylinder of diameter 1 and length 1 along X, with flat caps. */
export function unitCylinderX(segments: number): MeshGeometry {
  return lathe(segments, [[-0.5, 0.5], [0.5, 0.5]], 0);
}

/** The same cylinder standing along Y. */
export function unitCylinderY(segments: number): MeshGeometry {
  return lathe(segments, [[-0.5, 0.5], [0.5, 0.5]], 1);
}

/** Head stand-in: a cylinder standing along Y with rounded rims, filling the unit box. */
function unitHead(segments: number): MeshGeometry {
  const profile: [number, number][] = [];
  const bevel = 0.2;
  for (let i = 0; i <= 4; i++) {
    const a = (i / 4) * (Math.PI / 2);
    profile.push([-0.5 + bevel - bevel * Math.cos(a), 0.5 - bevel + bevel * Math.sin(a)]);
  }
  for (let i = 4; i >= 0; i--) {
    const a = (i / 4) * (Math.PI / 2);
    profile.push([0.5 - bevel + bevel * Math.cos(a), 0.5 - bevel + bevel * Math.sin(a)]);
  }
  return lathe(segments, profile, 1);
}

/**
 * Revolves a profile of (position along the axis, radius) points around axis 0 (X) or
 * 1 (Y), closing both ends with flat caps.
 */
function lathe(segments: number, profile: [number, number][], axis: 0 | 1): MeshGeometry {
  const positions: number[] = [], normals: number[] = [], uvs: number[] = [], indices: number[] = [];
  // Around the axis, with the other two axes in right-handed order (X: Y, Z; Y: Z, X).
  const place = (along: number, radius: number, angle: number): Vec3 => {
    const c = Math.cos(angle) * radius, s = Math.sin(angle) * radius;
    return axis === 0 ? [along, c, s] : [s, along, c];
  };
  const around = (along: number, angle: number, n: [number, number]): Vec3 => {
    const c = Math.cos(angle) * n[1], s = Math.sin(angle) * n[1];
    return axis === 0 ? [n[0], c, s] : [s, n[0], c];
  };
  // Side: each profile segment is a band of quads with its own normals (smooth around).
  for (let k = 0; k + 1 < profile.length; k++) {
    const [a0, r0] = profile[k]!, [a1, r1] = profile[k + 1]!;
    const da = a1 - a0, dr = r1 - r0;
    const length = Math.hypot(da, dr) || 1;
    // Outward normal in (along, radial): perpendicular to the segment, pointing away from the axis.
    const n: [number, number] = [-dr / length, da / length];
    if (n[1] < 0 || (n[1] === 0 && ((n[0] > 0) !== (a1 > 0)))) { n[0] = -n[0]; n[1] = -n[1]; }
    const base = positions.length / 3;
    for (let s = 0; s <= segments; s++) {
      const angle = (s / segments) * Math.PI * 2;
      for (const [along, radius] of [[a0, r0], [a1, r1]] as const) {
        positions.push(...place(along, radius, angle));
        normals.push(...around(along, angle, n));
        uvs.push(s / segments, along + 0.5);
      }
    }
    for (let s = 0; s < segments; s++) {
      const i = base + s * 2;
      indices.push(i, i + 1, i + 3, i, i + 3, i + 2);
    }
  }
  // Caps where the profile ends off the axis.
  for (const [end, sign] of [[profile[0]!, -1], [profile[profile.length - 1]!, 1]] as const) {
    if (end[1] <= 0) continue;
    const base = positions.length / 3;
    const normal: Vec3 = axis === 0 ? [sign, 0, 0] : [0, sign, 0];
    positions.push(...place(end[0], 0, 0));
    normals.push(...normal);
    uvs.push(0.5, 0.5);
    for (let s = 0; s <= segments; s++) {
      const angle = (s / segments) * Math.PI * 2;
      positions.push(...place(end[0], end[1], angle));
      normals.push(...normal);
      uvs.push(0.5 + Math.cos(angle) / 2, 0.5 - Math.sin(angle) / 2);
    }
    for (let s = 0; s < segments; s++) indices.push(base, base + 1 + s, base + 2 + s);
  }
  return orientOutward(geometry(positions, normals, uvs, indices));
}

function geometry(positions: number[], normals: number[], uvs: number[], indices: number[]): MeshGeometry {
  return { positions: Float32Array.from(positions), normals: Float32Array.from(normals), uvs: Float32Array.from(uvs), indices: Uint32Array.from(indices) };
}

/** Flips each triangle whose winding disagrees with its vertices' outward normals. */
function orientOutward(g: MeshGeometry): MeshGeometry {
  const p = g.positions, n = g.normals!, idx = g.indices;
  for (let t = 0; t < idx.length; t += 3) {
    const a = idx[t]!, b = idx[t + 1]!, c = idx[t + 2]!;
    const ux = p[b * 3]! - p[a * 3]!, uy = p[b * 3 + 1]! - p[a * 3 + 1]!, uz = p[b * 3 + 2]! - p[a * 3 + 2]!;
    const vx = p[c * 3]! - p[a * 3]!, vy = p[c * 3 + 1]! - p[a * 3 + 1]!, vz = p[c * 3 + 2]! - p[a * 3 + 2]!;
    const fx = uy * vz - uz * vy, fy = uz * vx - ux * vz, fz = ux * vy - uy * vx;
    const sx = n[a * 3]! + n[b * 3]! + n[c * 3]!, sy = n[a * 3 + 1]! + n[b * 3 + 1]! + n[c * 3 + 1]!, sz = n[a * 3 + 2]! + n[b * 3 + 2]! + n[c * 3 + 2]!;
    if (fx * sx + fy * sy + fz * sz < 0) { idx[t + 1] = c; idx[t + 2] = b; }
  }
  return g;
}
