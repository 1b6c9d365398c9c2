/**
 * Joints a place relies on without holding them: the surface joints Roblox made at
 * load (`MakeJoints`) for places saved before joints were stored explicitly, and the
 * connectivity of a place's parts through every joint it has.
 *
 * Which places: those whose Workspace does not say `ExplicitAutoJoints = true` (Studio
 * has written that since automatic joints were saved as instances; 2006–2012 places
 * lack it and hold their buildings together only by surface types).
 *
 * The rule, as Roblox documents MakeJoints and as its 2007 engine applied it: two parts
 * in the Workspace are joined when a face of one and a face of the other touch:
 * - the parts' axes are aligned with each other (within 0.01 rad; 0.05 for Glue);
 * - the faces point at each other and lie in one plane (within 0.01 stud; 0.05 for
 *   Glue; 0.05 and 0.025 rad for hinges);
 * - the faces overlap by at least JOINT_OVERLAP_MIN studs along both of their axes;
 * - their surface types join, checked in the engine's order, the first that applies:
 *   Hinge / Motor / SteppingMotor on either face → Rotate / RotateV / RotateP (the part
 *   with that surface is Part0, the axle; its face centre must lie on the other face);
 *   Weld on either → Weld; Studs with Inlet or Universal, Inlet with Universal,
 *   Universal with Universal → Snap; Glue on either → Glue. Smooth and the rest join
 *   nothing.
 * Balls have no flat faces; a Cylinder joins by its two end faces (±X), a Wedge by its
 * bottom and back, a CornerWedge by its bottom. Mesh and CSG parts are not joined.
 * Each pair of parts gets at most one joint (the first face pair that joins, faces in
 * NormalId order of the earlier part), as the engine's JointBuilder does, and none
 * where the file already joins the pair.
 *
 * A generated joint is parented to Part0 and named after its class; C0 is the joined
 * face's centre in Part0's space with Z along the face's outward normal (the axis a
 * Rotate joint turns about), and C1 = Part1.CFrame⁻¹ · Part0.CFrame · C0, so both
 * frames meet in the world; components within 1e-5 of a multiple of 1e-4 are snapped
 * onto it (float32 noise of the parts' coordinates, not geometry).
 */
import { findService, type Column, type Dom } from '../parser/dom.js';
import type { CFrameValue, Value, Vec3 } from '../parser/values.js';
import { BASE_PART_CLASSES, CSG_CLASSES } from './classes.js';
import { asCFrame, asVec3 } from './geometry.js';

export type SurfaceJointClass = 'Weld' | 'Snap' | 'Glue' | 'Rotate' | 'RotateV' | 'RotateP';

export interface SurfaceJoint {
  className: SurfaceJointClass;
  /** DOM rows of the joined parts; Part0 is the joint's parent. */
  part0: number;
  part1: number;
  c0: CFrameValue;
  c1: CFrameValue;
}

/** The least overlap (studs, along each axis of the touching faces) for a joint. */
export const JOINT_OVERLAP_MIN = 0.35;
const TIGHT = { angle: 0.01, planar: 0.01 };
const LOOSE = { angle: 0.05, planar: 0.05 };
const ROTATE = { angle: 0.025, planar: 0.05 };
/** Parts whose boxes are further apart than this are never joined. */
export const NEAR = 0.05;

// Enum.SurfaceType
const GLUE = 1, WELD = 2, STUDS = 3, INLET = 4, UNIVERSAL = 5, HINGE = 6, MOTOR = 7, STEPPING_MOTOR = 8;

/** Face surface properties in Enum.NormalId order: Right (+X), Top (+Y), Back (+Z), Left (-X), Bottom (-Y), Front (-Z). */
const SURFACE_PROPERTIES = ['RightSurface', 'TopSurface', 'BackSurface', 'LeftSurface', 'BottomSurface', 'FrontSurface'] as const;

/** Whether the place relies on surface joints made at load: its Workspace does not say ExplicitAutoJoints = true. */
export function reliesOnSurfaceJoints(dom: Dom): boolean {
  const workspace = findService(dom, 'Workspace');
  if (workspace === -1) return false;
  const table = dom.table(dom.tableOf(workspace));
  return table.columns.get('ExplicitAutoJoints')?.get(dom.rowInTable(workspace)) !== true;
}

interface Body {
  row: number;
  /** Centre. */
  p: number[];
  /** The part's own axes in world space, axis j at [3j, 3j + 3) (the rotation's columns). */
  axes: number[];
  half: number[];
  /** Surface type per NormalId; -1 for a face that cannot join (round or sloped). */
  surfaces: number[];
  min: number[];
  max: number[];
}

/** The surface joints `MakeJoints` would make among the Workspace's parts (none unless the place relies on them). */
export function surfaceJoints(dom: Dom, excluded?: Uint8Array): SurfaceJoint[] {
  if (!reliesOnSurfaceJoints(dom)) return [];
  const bodies = collectBodies(dom, excluded);
  const joined = existingPairs(dom);
  const joints: SurfaceJoint[] = [];
  const pair = new PairGeometry();
  forEachNearPair(bodies, (a, b) => {
    // The engine tries the earlier part's faces first; rows keep that order stable.
    const [p, q] = a.row < b.row ? [a, b] : [b, a];
    if (joined.size && joined.has(pairKey(p.row, q.row))) return;
    const joint = jointBetween(pair, p, q);
    if (joint) joints.push(joint);
  });
  joints.sort((x, y) => x.part0 - y.part0 || x.part1 - y.part1);
  return joints;
}

/** A box spanning more grid cells than this is tested against every other box instead. */
const MAX_CELLS = 512;
/** Cells per axis the grid's keys can number: three axes' coordinates packed in one small integer (a key the Map hashes fast). */
const CELL_RANGE = 1 << 10;

/**
 * Calls `visit` once for each pair of bodies whose boxes, grown by NEAR, overlap: the
 * broad phase. Boxes go into a uniform grid of cells twice the median box's largest
 * side (a sweep along one axis met 121k pairs on a 2006 arena whose bricks share their
 * X, Y and Z ranges, for 3.4k overlapping boxes); a pair is tested in the first cell
 * both boxes cover, so only once. Boxes covering more than MAX_CELLS cells (baseplates)
 * are tested against all others.
 */
export function forEachNearPair<B extends Pick<Body, 'min' | 'max'>>(bodies: readonly B[], visit: (a: B, b: B) => void): void {
  const n = bodies.length;
  if (n < 2) return;
  const extents = new Float64Array(n);
  const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  for (let i = 0; i < n; i++) {
    const { min, max } = bodies[i]!;
    extents[i] = Math.max(max[0]! - min[0]!, max[1]! - min[1]!, max[2]! - min[2]!);
    for (let k = 0; k < 3; k++) { lo[k] = Math.min(lo[k]!, min[k]!); hi[k] = Math.max(hi[k]!, max[k]! + NEAR); }
  }
  extents.sort();
  let cell = Math.max(2 * extents[n >> 1]!, 4 * NEAR);
  // Wider cells where the place spans more than CELL_RANGE of them.
  const widest = Math.max(hi[0]! - lo[0]!, hi[1]! - lo[1]!, hi[2]! - lo[2]!);
  if (widest / cell >= CELL_RANGE - 1) cell = widest / (CELL_RANGE - 2);
  const first = new Int32Array(3 * n), last = new Int32Array(3 * n);
  const grid = new Map<number, number[]>();
  const large: number[] = [];
  for (let i = 0; i < n; i++) {
    const { min, max } = bodies[i]!;
    let cells = 1;
    for (let k = 0; k < 3; k++) {
      first[3 * i + k] = Math.floor((min[k]! - lo[k]!) / cell);
      last[3 * i + k] = Math.floor((max[k]! + NEAR - lo[k]!) / cell);
      cells *= last[3 * i + k]! - first[3 * i + k]! + 1;
    }
    if (cells > MAX_CELLS) { large.push(i); continue; }
    for (let x = first[3 * i]!; x <= last[3 * i]!; x++) {
      for (let y = first[3 * i + 1]!; y <= last[3 * i + 1]!; y++) {
        for (let z = first[3 * i + 2]!; z <= last[3 * i + 2]!; z++) {
          const key = (x * CELL_RANGE + y) * CELL_RANGE + z;
          const list = grid.get(key);
          if (list) list.push(i); else grid.set(key, [i]);
        }
      }
    }
  }
  const near = (a: B, b: B): boolean => {
    for (let k = 0; k < 3; k++) if (b.min[k]! > a.max[k]! + NEAR || a.min[k]! > b.max[k]! + NEAR) return false;
    return true;
  };
  for (const [key, list] of grid) {
    if (list.length < 2) continue;
    const z = key % CELL_RANGE, y = Math.floor(key / CELL_RANGE) % CELL_RANGE, x = Math.floor(key / CELL_RANGE / CELL_RANGE);
    for (let s = 0; s < list.length; s++) {
      const i = list[s]!;
      for (let t = s + 1; t < list.length; t++) {
        const j = list[t]!;
        // Only in the first cell the two cover (the greater of their first cells per axis).
        if (Math.max(first[3 * i]!, first[3 * j]!) !== x || Math.max(first[3 * i + 1]!, first[3 * j + 1]!) !== y
          || Math.max(first[3 * i + 2]!, first[3 * j + 2]!) !== z) continue;
        if (near(bodies[i]!, bodies[j]!)) visit(bodies[i]!, bodies[j]!);
      }
    }
  }
  const isLarge = new Uint8Array(n);
  for (const i of large) isLarge[i] = 1;
  for (const i of large) {
    for (let j = 0; j < n; j++) {
      if (j === i || (isLarge[j] && j < i)) continue;
      if (near(bodies[i]!, bodies[j]!)) visit(bodies[i]!, bodies[j]!);
    }
  }
}

function collectBodies(dom: Dom, excluded: Uint8Array | undefined): Body[] {
  const workspace = findService(dom, 'Workspace');
  const bodies: Body[] = [];
  let table = -1;
  let columns: { cframe?: Column; size?: Column; shape?: Column; surfaces: (Column | undefined)[] } | null = null;
  for (let row = dom.firstChild(workspace); row !== -1;) {
    if (excluded?.[row]) { row = dom.after(row, workspace); continue; }
    const className = dom.className(row);
    if (BASE_PART_CLASSES.has(className) && className !== 'MeshPart' && !CSG_CLASSES.has(className)) {
      if (dom.tableOf(row) !== table) {
        table = dom.tableOf(row);
        const c = dom.table(table).columns;
        columns = {
          cframe: c.get('CFrame'), size: c.get('size') ?? c.get('Size'), shape: c.get('shape') ?? c.get('Shape'),
          surfaces: SURFACE_PROPERTIES.map((name) => c.get(name)),
        };
      }
      const at = dom.rowInTable(row);
      const cframe = asCFrame(columns!.cframe?.get(at));
      const size = asVec3(columns!.size?.get(at));
      const faces = joinableFaces(className, columns!.shape?.get(at));
      if (cframe && size && faces !== NO_FACES) {
        const body = makeBody(row, cframe, size);
        for (let face = 0; face < 6; face++) body.surfaces[face] = faces[face] ? int8(numberOr(columns!.surfaces[face]?.get(at), 0)) : -1;
        if (body.min.every(Number.isFinite) && body.max.every(Number.isFinite)) bodies.push(body);
      }
    }
    row = dom.next(row, workspace);
  }
  return bodies;
}

const ALL_FACES = [true, true, true, true, true, true] as const;
const NO_FACES = [false, false, false, false, false, false] as const;
const CYLINDER_FACES = [true, false, false, true, false, false] as const;
const WEDGE_FACES = [false, false, true, false, true, false] as const;
const CORNER_WEDGE_FACES = [false, false, false, false, true, false] as const;

/** Faces that are flat rectangles covering the part's side, by class and Enum.PartType (0 Ball, 1 Block, 2 Cylinder, 3 Wedge, 4 CornerWedge). */
function joinableFaces(className: string, shape: Value | undefined): readonly boolean[] {
  if (className === 'WedgePart') return WEDGE_FACES;
  if (className === 'CornerWedgePart') return CORNER_WEDGE_FACES;
  switch (shape) {
    case 0: return NO_FACES;
    case 2: return CYLINDER_FACES;
    case 3: return WEDGE_FACES;
    case 4: return CORNER_WEDGE_FACES;
    default: return ALL_FACES;
  }
}

/** A surface type as a signed byte (what an Int8Array element would hold): odd values stay odd, never a joinable type by accident. */
const int8 = (value: number): number => (value << 24) >> 24;

function numberOr(value: Value | undefined, fallback: number): number {
  return typeof value === 'number' ? value : fallback;
}

function makeBody(row: number, cframe: CFrameValue, size: Vec3): Body {
  // Plain arrays: a typed array per field cost more to create than the whole pair search.
  const r = cframe.orientation;
  const axes = [r[0][0], r[1][0], r[2][0], r[0][1], r[1][1], r[2][1], r[0][2], r[1][2], r[2][2]];
  const half = [Math.abs(size[0]) / 2, Math.abs(size[1]) / 2, Math.abs(size[2]) / 2];
  const p = [cframe.position[0], cframe.position[1], cframe.position[2]];
  const min = [0, 0, 0];
  const max = [0, 0, 0];
  for (let i = 0; i < 3; i++) {
    const reach = Math.abs(r[i]![0]) * half[0]! + Math.abs(r[i]![1]) * half[1]! + Math.abs(r[i]![2]) * half[2]!;
    min[i] = p[i]! - reach;
    max[i] = p[i]! + reach;
  }
  return { row, p, axes, half, surfaces: [0, 0, 0, 0, 0, 0], min, max };
}

/**
 * What two parts' faces are checked with, in scalars (no allocation per pair): the
 * dot products of their axes, and of their centres' offset with the first one's axes.
 */
class PairGeometry {
  /** dots[3i + j] = a's axis i · b's axis j. */
  readonly dots = new Float64Array(9);
  /** offset[i] = (b.p - a.p) · a's axis i. */
  readonly offset = new Float64Array(3);

  load(a: Body, b: Body): void {
    const A = a.axes, B = b.axes;
    for (let i = 0; i < 3; i++) {
      for (let j = 0; j < 3; j++) this.dots[3 * i + j] = A[3 * i]! * B[3 * j]! + A[3 * i + 1]! * B[3 * j + 1]! + A[3 * i + 2]! * B[3 * j + 2]!;
      this.offset[i] = (b.p[0]! - a.p[0]!) * A[3 * i]! + (b.p[1]! - a.p[1]!) * A[3 * i + 1]! + (b.p[2]! - a.p[2]!) * A[3 * i + 2]!;
    }
  }

  /** Each axis of a within `angle` of some axis of b (aligned up to right-angle turns). */
  aligned(angle: number): boolean {
    const cos = Math.cos(angle);
    for (let i = 0; i < 3; i++) {
      const d = this.dots;
      if (Math.max(Math.abs(d[3 * i]!), Math.abs(d[3 * i + 1]!), Math.abs(d[3 * i + 2]!)) < cos) return false;
    }
    return true;
  }

  /** b's face closest to pointing against a's face (axis i, sign s): [axis j, sign t]. */
  opposite(i: number, s: number): [number, number] {
    let j = 0;
    for (let k = 1; k < 3; k++) if (Math.abs(this.dots[3 * i + k]!) > Math.abs(this.dots[3 * i + j]!)) j = k;
    // b's normal t·b_j must point along -s·a_i: t = -s · sign(a_i · b_j).
    const t = this.dots[3 * i + j]! >= 0 ? -s : s;
    return [j, t];
  }

  /**
   * a's face (axis i, sign s) and b's face (axis j, sign t) lie in one plane (within
   * `planar`) and overlap by at least JOINT_OVERLAP_MIN along both of a's face axes.
   */
  touching(a: Body, i: number, s: number, b: Body, j: number, t: number, planar: number): boolean {
    const d = this.dots;
    // b's face centre relative to a's face centre, along a's axis k.
    const along = (k: number) => this.offset[k]! + t * b.half[j]! * d[3 * k + j]! - (k === i ? s * a.half[i]! : 0);
    if (Math.abs(s * along(i)) > planar) return false;
    const j1 = (j + 1) % 3, j2 = (j + 2) % 3;
    for (const k of [(i + 1) % 3, (i + 2) % 3]) {
      const c = along(k);
      const reach = Math.abs(d[3 * k + j1]!) * b.half[j1]! + Math.abs(d[3 * k + j2]!) * b.half[j2]!;
      const overlap = Math.min(a.half[k]!, c + reach) - Math.max(-a.half[k]!, c - reach);
      if (overlap < JOINT_OVERLAP_MIN) return false;
    }
    return true;
  }

  /** a's face centre (axis i, sign s) lies on b's face (axis j), seen along b's normal, within `tolerance`. */
  centreOnFace(a: Body, i: number, s: number, b: Body, j: number, tolerance: number): boolean {
    const d = this.dots;
    for (const k of [(j + 1) % 3, (j + 2) % 3]) {
      // (a's face centre - b.p) · b's axis k = -(offset along b_k) + s·half_a[i]·(a_i · b_k)
      let along = 0;
      for (let m = 0; m < 3; m++) along -= this.offset[m]! * d[3 * m + k]!;
      along += s * a.half[i]! * d[3 * i + k]!;
      if (Math.abs(along) > b.half[k]! + tolerance) return false;
    }
    return true;
  }
}

const isRotate = (surface: number): boolean => surface === HINGE || surface === MOTOR || surface === STEPPING_MOTOR;
const isSnap = (s: number, t: number): boolean =>
  (s === STUDS && (t === INLET || t === UNIVERSAL)) || (s === INLET && (t === STUDS || t === UNIVERSAL)) || (s === UNIVERSAL && (t === STUDS || t === INLET || t === UNIVERSAL));

/** NormalId of axis `axis` with sign `sign`: +X 0, +Y 1, +Z 2, -X 3, -Y 4, -Z 5. */
const normalId = (axis: number, sign: number): number => (sign > 0 ? axis : axis + 3);

function jointBetween(pair: PairGeometry, a: Body, b: Body): SurfaceJoint | null {
  pair.load(a, b);
  if (!pair.aligned(LOOSE.angle)) return null;
  const tight = pair.aligned(TIGHT.angle);
  const rotateAligned = pair.aligned(ROTATE.angle);
  for (let face = 0; face < 6; face++) {
    const s = a.surfaces[face]!;
    if (s < 0) continue;
    const i = face % 3, sign = face < 3 ? 1 : -1;
    const [j, t] = pair.opposite(i, sign);
    const other = normalId(j, t);
    const u = b.surfaces[other]!;
    if (u < 0) continue;
    if (isRotate(s) || isRotate(u)) {
      if (!rotateAligned || !pair.touching(a, i, sign, b, j, t, ROTATE.planar)) continue;
      // The axle is the part with the hinge surface whose face centre lies on the other face.
      if (isRotate(s) && pair.centreOnFace(a, i, sign, b, j, LOOSE.planar)) return joint(rotateClass(s), a, face, b);
      if (isRotate(u) && centreOnFaceReverse(b, j, t, a, i)) return joint(rotateClass(u), b, other, a);
      continue;
    }
    if ((s === WELD || u === WELD) && tight && pair.touching(a, i, sign, b, j, t, TIGHT.planar)) return joint('Weld', a, face, b);
    if (isSnap(s, u) && tight && pair.touching(a, i, sign, b, j, t, TIGHT.planar)) return joint('Snap', a, face, b);
    if ((s === GLUE || u === GLUE) && pair.touching(a, i, sign, b, j, t, LOOSE.planar)) return joint('Glue', a, face, b);
  }
  return null;
}

/** b's face centre (axis j, sign t) on a's face (axis i): the same check with the parts swapped. */
function centreOnFaceReverse(b: Body, j: number, t: number, a: Body, i: number): boolean {
  const swapped = new PairGeometry();
  swapped.load(b, a);
  return swapped.centreOnFace(b, j, t, a, i, LOOSE.planar);
}

function rotateClass(surface: number): SurfaceJointClass {
  return surface === MOTOR ? 'RotateV' : surface === STEPPING_MOTOR ? 'RotateP' : 'Rotate';
}

/**
 * A joint between `p0` (at its face `face`) and `p1`. C0, in p0's space: origin at the
 * face centre, Z along the outward normal, X the next axis, Y = Z × X. C1 is the
 * same world frame in p1's space: rotation p1ᵀ·(p0·C0), position p1ᵀ·(world - p1).
 */
function joint(className: SurfaceJointClass, p0: Body, face: number, p1: Body): SurfaceJoint {
  const axis = face % 3;
  const sign = face < 3 ? 1 : -1;
  const xAxis = (axis + 1) % 3;
  // Local frame columns (in p0's space): x = e[xAxis], z = sign·e[axis], y = z × x.
  const x = LOCAL_X, y = LOCAL_Y, z = LOCAL_Z, origin = LOCAL_ORIGIN;
  x.fill(0); z.fill(0); origin.fill(0);
  x[xAxis] = 1;
  z[axis] = sign;
  y[0] = z[1]! * x[2]! - z[2]! * x[1]!;
  y[1] = z[2]! * x[0]! - z[0]! * x[2]!;
  y[2] = z[0]! * x[1]! - z[1]! * x[0]!;
  origin[axis] = sign * p0.half[axis]!;
  // The same frame in world space: p0's axes combined by the local columns.
  const A = p0.axes, B = p1.axes;
  const world = (v: Float64Array, out: Float64Array) => {
    for (let i = 0; i < 3; i++) out[i] = A[i]! * v[0]! + A[3 + i]! * v[1]! + A[6 + i]! * v[2]!;
  };
  const wx = WORLD_X, wy = WORLD_Y, wz = WORLD_Z, wo = WORLD_ORIGIN;
  world(x, wx); world(y, wy); world(z, wz); world(origin, wo);
  for (let i = 0; i < 3; i++) wo[i] = wo[i]! + p0.p[i]! - p1.p[i]!;
  // Into p1's space: dot with p1's axes.
  const local = (v: Float64Array, k: number) => B[3 * k]! * v[0]! + B[3 * k + 1]! * v[1]! + B[3 * k + 2]! * v[2]!;
  const c0: CFrameValue = {
    position: [snap32(origin[0]!), snap32(origin[1]!), snap32(origin[2]!)],
    orientation: [
      [snap32(x[0]!), snap32(y[0]), snap32(z[0]!)],
      [snap32(x[1]!), snap32(y[1]), snap32(z[1]!)],
      [snap32(x[2]!), snap32(y[2]), snap32(z[2]!)],
    ],
  };
  const c1: CFrameValue = {
    position: [snap32(local(wo, 0)), snap32(local(wo, 1)), snap32(local(wo, 2))],
    orientation: [
      [snap32(local(wx, 0)), snap32(local(wy, 0)), snap32(local(wz, 0))],
      [snap32(local(wx, 1)), snap32(local(wy, 1)), snap32(local(wz, 1))],
      [snap32(local(wx, 2)), snap32(local(wy, 2)), snap32(local(wz, 2))],
    ],
  };
  return { className, part0: p0.row, part1: p1.row, c0, c1 };
}

// Scratch vectors of `joint` (one joint at a time).
const LOCAL_X = new Float64Array(3), LOCAL_Y = new Float64Array(3), LOCAL_Z = new Float64Array(3), LOCAL_ORIGIN = new Float64Array(3);
const WORLD_X = new Float64Array(3), WORLD_Y = new Float64Array(3), WORLD_Z = new Float64Array(3), WORLD_ORIGIN = new Float64Array(3);

/**
 * A joint frame's component as float32, as every CFrame a place holds, after snapping
 * what float32 noise left next to a short decimal (1.4999999 from 4.5 - 0.6 - 2.4)
 * back onto it; + 0: no negative zero.
 */
function snap32(v: number): number {
  const snapped = Math.round(v * 1e4) / 1e4;
  return Math.fround(Math.abs(snapped - v) < 1e-5 ? snapped : v) + 0;
}

// ---------------------------------------------------------------------------
// What holds parts together

const pairKey = (a: number, b: number): string => (a < b ? `${a},${b}` : `${b},${a}`);

/** Pairs of parts the file already joins (Part0/Part1 of joints and WeldConstraints). */
function existingPairs(dom: Dom): Set<string> {
  const pairs = new Set<string>();
  for (const [a, b] of jointLinks(dom)) pairs.add(pairKey(a, b));
  return pairs;
}

/**
 * Every link the file makes between two parts: Part0/Part1 of joints (JointInstance
 * classes, WeldConstraint, NoCollisionConstraint excepted) and Attachment0/Attachment1
 * of constraints (the attachments' parent parts). Rows; links to nothing are left out.
 */
export function* jointLinks(dom: Dom): Generator<[number, number]> {
  for (const { className, columns, rows } of dom.tables) {
    if (className === 'NoCollisionConstraint') continue;
    const part0 = columns.get('Part0'), part1 = columns.get('Part1');
    const attachment0 = columns.get('Attachment0'), attachment1 = columns.get('Attachment1');
    const [first, second, viaAttachments] = part0?.type === 'Ref' && part1?.type === 'Ref'
      ? [part0, part1, false]
      : attachment0?.type === 'Ref' && attachment1?.type === 'Ref' ? [attachment0, attachment1, true] : [undefined, undefined, false];
    if (!first || !second) continue;
    for (let i = 0; i < rows.length; i++) {
      let a = dom.rowOf(first.get(i) as number);
      let b = dom.rowOf(second.get(i) as number);
      if (viaAttachments) {
        a = a === -1 ? -1 : dom.parent(a);
        b = b === -1 ? -1 : dom.parent(b);
      }
      if (a !== -1 && b !== -1 && a !== b) yield [a, b];
    }
  }
}

export interface Assemblies {
  /** Unanchored parts in the Workspace. */
  unanchored: number;
  /** Of those, parts joined (through any chain of joints) to an anchored part. */
  held: number;
  /** DOM rows of the unanchored Workspace parts joined to no anchored part: they fall or move when the game runs. */
  free: number[];
}

/**
 * Which unanchored Workspace parts are joined, through joints of the file and `extra`
 * ones (the generated surface joints), to an anchored part. Links leading outside the
 * Workspace's parts are followed too (a weld to a part in a model counts).
 */
export function assemblies(dom: Dom, extra: readonly SurfaceJoint[] = [], excluded?: Uint8Array): Assemblies {
  const workspace = findService(dom, 'Workspace');
  const parent = new Int32Array(dom.count);
  for (let i = 0; i < parent.length; i++) parent[i] = i;
  const find = (x: number): number => {
    while (parent[x] !== x) { parent[x] = parent[parent[x]!]!; x = parent[x]!; }
    return x;
  };
  const union = (a: number, b: number) => { const ra = find(a), rb = find(b); if (ra !== rb) parent[ra] = rb; };
  for (const [a, b] of jointLinks(dom)) if (!excluded?.[a] && !excluded?.[b]) union(a, b);
  for (const j of extra) union(j.part0, j.part1);

  // Workspace parts as rows and flags (a 200k-part map makes no object per part).
  const rows: number[] = [];
  const anchoredFlags: number[] = [];
  if (workspace !== -1) {
    const partTables = dom.tables.map(({ className }) => BASE_PART_CLASSES.has(className));
    const anchoredColumns: (Column | undefined)[] = [];
    for (let row = dom.firstChild(workspace); row !== -1;) {
      if (excluded?.[row]) { row = dom.after(row, workspace); continue; }
      const table = dom.tableOf(row);
      if (partTables[table]) {
        const column = anchoredColumns[table] ??= dom.table(table).columns.get('Anchored');
        rows.push(row);
        anchoredFlags.push(column?.get(dom.rowInTable(row)) === true ? 1 : 0);
      }
      row = dom.next(row, workspace);
    }
  }
  const anchoredRoot = new Uint8Array(dom.count);
  for (let i = 0; i < rows.length; i++) if (anchoredFlags[i]) anchoredRoot[find(rows[i]!)] = 1;
  const free: number[] = [];
  let unanchored = 0;
  for (let i = 0; i < rows.length; i++) {
    if (anchoredFlags[i]) continue;
    unanchored++;
    if (!anchoredRoot[find(rows[i]!)]) free.push(rows[i]!);
  }
  return { unanchored, held: unanchored - free.length, free };
}
