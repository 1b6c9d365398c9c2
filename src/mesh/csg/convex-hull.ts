/**
 * The triangles of a point set's convex hull, for CSGPHS hulls stored as points
 * only (quickhull). From a starting tetrahedron, a point outside the current hull
 * (by more than a tolerance of 1e-6 of the point set's size, about float32
 * precision) replaces the faces it sees, found by a walk across edges from the face
 * it was waiting on, so the removed region stays connected and its border is a
 * single loop. Each face's farthest point goes first, so points within the
 * tolerance of the final surface are never made vertices. Flat point sets give
 * their polygon once, fanned; fewer than three non-collinear points give no
 * triangles. Quadratic in the worst case: callers cap the point count.
 */

const RELATIVE_TOLERANCE = 1e-6;

export function convexHull(positions: Float32Array): Uint32Array {
  const n = Math.floor(positions.length / 3);
  if (n < 3) return new Uint32Array(0);
  const x = (i: number): number => positions[i * 3]!;
  const y = (i: number): number => positions[i * 3 + 1]!;
  const z = (i: number): number => positions[i * 3 + 2]!;
  for (let i = 0; i < positions.length; i++) if (!Number.isFinite(positions[i]!)) return new Uint32Array(0);

  // Extreme points on each axis; the farthest pair of them starts the hull.
  const extremes: number[] = [0, 0, 0, 0, 0, 0];
  for (let i = 1; i < n; i++) {
    if (x(i) < x(extremes[0]!)) extremes[0] = i;
    if (x(i) > x(extremes[1]!)) extremes[1] = i;
    if (y(i) < y(extremes[2]!)) extremes[2] = i;
    if (y(i) > y(extremes[3]!)) extremes[3] = i;
    if (z(i) < z(extremes[4]!)) extremes[4] = i;
    if (z(i) > z(extremes[5]!)) extremes[5] = i;
  }
  const size = Math.max(x(extremes[1]!) - x(extremes[0]!), y(extremes[3]!) - y(extremes[2]!), z(extremes[5]!) - z(extremes[4]!));
  const tolerance = size * RELATIVE_TOLERANCE;
  if (!(size > 0)) return new Uint32Array(0);
  const dist2 = (a: number, b: number): number => (x(a) - x(b)) ** 2 + (y(a) - y(b)) ** 2 + (z(a) - z(b)) ** 2;
  let i0 = extremes[0]!, i1 = extremes[1]!;
  for (const a of extremes) for (const b of extremes) if (dist2(a, b) > dist2(i0, i1)) { i0 = a; i1 = b; }

  // The point farthest from the line i0–i1.
  const ux = x(i1) - x(i0), uy = y(i1) - y(i0), uz = z(i1) - z(i0);
  let i2 = -1, best = tolerance * Math.hypot(ux, uy, uz);
  for (let i = 0; i < n; i++) {
    const vx = x(i) - x(i0), vy = y(i) - y(i0), vz = z(i) - z(i0);
    const cross = Math.hypot(uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx);
    if (cross > best) { best = cross; i2 = i; }
  }
  if (i2 < 0) return new Uint32Array(0);

  // The point farthest from the plane i0, i1, i2.
  const plane = planeOf(positions, i0, i1, i2);
  let i3 = -1, far = tolerance;
  for (let i = 0; i < n; i++) {
    const d = Math.abs(plane.distance(i));
    if (d > far) { far = d; i3 = i; }
  }
  if (i3 < 0) return flatHull(positions, n, i0, i1, plane, tolerance);

  // Faces as three vertex arrays and a plane each; `edges` maps a directed edge a→b to its face.
  const fa: number[] = [], fb: number[] = [], fc: number[] = [], alive: boolean[] = [];
  const planes: Plane[] = [];
  const edges = new Map<number, number>();
  const key = (a: number, b: number): number => a * n + b;
  const addFace = (a: number, b: number, c: number, fallback: Plane | null): number => {
    const f = fa.length;
    fa.push(a); fb.push(b); fc.push(c); alive.push(true);
    const p = planeOf(positions, a, b, c);
    planes.push(p.degenerate && fallback ? fallback.through(positions, a) : p);
    edges.set(key(a, b), f); edges.set(key(b, c), f); edges.set(key(c, a), f);
    return f;
  };
  const removeFace = (f: number): void => {
    alive[f] = false;
    edges.delete(key(fa[f]!, fb[f]!)); edges.delete(key(fb[f]!, fc[f]!)); edges.delete(key(fc[f]!, fa[f]!));
  };
  if (plane.distance(i3) > 0) {
    addFace(i0, i2, i1, null); addFace(i0, i1, i3, null); addFace(i1, i2, i3, null); addFace(i2, i0, i3, null);
  } else {
    addFace(i0, i1, i2, null); addFace(i0, i3, i1, null); addFace(i1, i3, i2, null); addFace(i2, i3, i0, null);
  }

  // Quickhull: each point outside the hull waits on the face it is farthest above; the
  // farthest point of a face is always a vertex of the final hull, so points that end
  // up on a face (within the tolerance) are never made vertices.
  const outside: number[][] = [];
  const assign = (points: Iterable<number>, faces: number[]): void => {
    for (const p of points) {
      let best = -1, top = tolerance;
      for (const f of faces) {
        const d = planes[f]!.distance(p);
        if (d > top) { top = d; best = f; }
      }
      if (best >= 0) (outside[best] ??= []).push(p);
    }
  };
  const initial = [0, 1, 2, 3];
  const seeds = new Set([i0, i1, i2, i3]);
  assign(Array.from({ length: n }, (_, i) => i).filter((i) => !seeds.has(i)), initial);

  const visible: number[] = [];
  let seenFaces = new Uint8Array(16);
  const pendingFaces: number[] = [...initial];
  while (pendingFaces.length > 0) {
    const start = pendingFaces.pop()!;
    const waiting = outside[start];
    if (!alive[start] || !waiting || waiting.length === 0) continue;
    let p = waiting[0]!, top = -Infinity;
    for (const q of waiting) {
      const d = planes[start]!.distance(q);
      if (d > top) { top = d; p = q; }
    }
    if (seenFaces.length < fa.length) seenFaces = new Uint8Array(fa.length * 2);
    else seenFaces.fill(0, 0, fa.length);
    visible.length = 0;
    visible.push(start);
    seenFaces[start] = 1;
    for (let k = 0; k < visible.length; k++) {
      const f = visible[k]!;
      for (const [a, b] of [[fa[f]!, fb[f]!], [fb[f]!, fc[f]!], [fc[f]!, fa[f]!]] as const) {
        const g = edges.get(key(b, a));
        if (g === undefined || seenFaces[g]) continue;
        if (planes[g]!.distance(p) > tolerance) { seenFaces[g] = 1; visible.push(g); }
      }
    }
    // The border of the visible region, each edge kept in its visible face's direction.
    const horizon: Array<[number, number, Plane]> = [];
    for (const f of visible) {
      for (const [a, b] of [[fa[f]!, fb[f]!], [fb[f]!, fc[f]!], [fc[f]!, fa[f]!]] as const) {
        const g = edges.get(key(b, a));
        if (g === undefined || !seenFaces[g]) horizon.push([a, b, planes[f]!]);
      }
    }
    const orphans: number[] = [];
    for (const f of visible) {
      removeFace(f);
      for (const q of outside[f] ?? []) if (q !== p) orphans.push(q);
      outside[f] = [];
    }
    const created = horizon.map(([a, b, fallback]) => addFace(a, b, p, fallback));
    assign(orphans, created);
    pendingFaces.push(...created);
  }

  const out: number[] = [];
  for (let f = 0; f < fa.length; f++) if (alive[f]) out.push(fa[f]!, fb[f]!, fc[f]!);
  return Uint32Array.from(out);
}

interface Plane {
  nx: number; ny: number; nz: number; d: number;
  degenerate: boolean;
  /** Signed distance of point i (positive on the side the normal points to). */
  distance(i: number): number;
  /** The same normal through point i. */
  through(positions: Float32Array, i: number): Plane;
}

function makePlane(positions: Float32Array, nx: number, ny: number, nz: number, px: number, py: number, pz: number, degenerate: boolean): Plane {
  const d = nx * px + ny * py + nz * pz;
  return {
    nx, ny, nz, d, degenerate,
    distance: (i) => nx * positions[i * 3]! + ny * positions[i * 3 + 1]! + nz * positions[i * 3 + 2]! - d,
    through: (pos, i) => makePlane(pos, nx, ny, nz, pos[i * 3]!, pos[i * 3 + 1]!, pos[i * 3 + 2]!, false),
  };
}

function planeOf(positions: Float32Array, a: number, b: number, c: number): Plane {
  const ax = positions[a * 3]!, ay = positions[a * 3 + 1]!, az = positions[a * 3 + 2]!;
  const ux = positions[b * 3]! - ax, uy = positions[b * 3 + 1]! - ay, uz = positions[b * 3 + 2]! - az;
  const vx = positions[c * 3]! - ax, vy = positions[c * 3 + 1]! - ay, vz = positions[c * 3 + 2]! - az;
  let nx = uy * vz - uz * vy, ny = uz * vx - ux * vz, nz = ux * vy - uy * vx;
  const length = Math.hypot(nx, ny, nz);
  if (!(length > 0)) return makePlane(positions, 0, 0, 0, ax, ay, az, true);
  nx /= length; ny /= length; nz /= length;
  return makePlane(positions, nx, ny, nz, ax, ay, az, false);
}

/** All points within the tolerance of one plane: the polygon around them, fanned, facing the plane's normal. */
function flatHull(positions: Float32Array, n: number, i0: number, i1: number, plane: Plane, tolerance: number): Uint32Array {
  // An orthonormal basis (u, w) of the plane, with u × w along its normal.
  const ax = positions[i0 * 3]!, ay = positions[i0 * 3 + 1]!, az = positions[i0 * 3 + 2]!;
  let ux = positions[i1 * 3]! - ax, uy = positions[i1 * 3 + 1]! - ay, uz = positions[i1 * 3 + 2]! - az;
  const ul = Math.hypot(ux, uy, uz);
  ux /= ul; uy /= ul; uz /= ul;
  const wx = plane.ny * uz - plane.nz * uy, wy = plane.nz * ux - plane.nx * uz, wz = plane.nx * uy - plane.ny * ux;
  const order = Array.from({ length: n }, (_, i) => i);
  const s = new Float64Array(n), t = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const dx = positions[i * 3]! - ax, dy = positions[i * 3 + 1]! - ay, dz = positions[i * 3 + 2]! - az;
    s[i] = dx * ux + dy * uy + dz * uz;
    t[i] = dx * wx + dy * wy + dz * wz;
  }
  order.sort((a, b) => s[a]! - s[b]! || t[a]! - t[b]!);
  // Andrew's monotone chain, counter-clockwise in (u, w); turns within the tolerance count as straight.
  const left = (o: number, a: number, b: number): boolean => {
    const cross = (s[a]! - s[o]!) * (t[b]! - t[o]!) - (t[a]! - t[o]!) * (s[b]! - s[o]!);
    return cross > tolerance * Math.hypot(s[b]! - s[o]!, t[b]! - t[o]!);
  };
  const half = (sequence: number[]): number[] => {
    const part: number[] = [];
    for (const i of sequence) {
      while (part.length >= 2 && !left(part[part.length - 2]!, part[part.length - 1]!, i)) part.pop();
      part.push(i);
    }
    part.pop();
    return part;
  };
  const chain = [...half(order), ...half(order.slice().reverse())];
  const out: number[] = [];
  for (let k = 1; k + 1 < chain.length; k++) out.push(chain[0]!, chain[k]!, chain[k + 1]!);
  return Uint32Array.from(out);
}
