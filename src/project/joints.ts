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
 * frames meet in the world.
 */
import { findService, type Column, type Dom } from '../parser/dom.js';
import type { CFrameValue, Matrix3, Value, Vec3 } from '../parser/values.js';
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
const NEAR = 0.05;

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
  position: Vec3;
  /** Rows as stored: column j is the part's own axis j in world space. */
  rotation: Matrix3;
  half: Vec3;
  /** Surface type per NormalId; -1 for a face that cannot join (round or sloped). */
  surfaces: number[];
  min: Vec3;
  max: Vec3;
}

/** The surface joints `MakeJoints` would make among the Workspace's parts (none unless the place relies on them). */
export function surfaceJoints(dom: Dom, excluded?: Uint8Array): SurfaceJoint[] {
  if (!reliesOnSurfaceJoints(dom)) return [];
  const bodies = collectBodies(dom, excluded);
  const joined = existingPairs(dom);
  bodies.sort((a, b) => a.min[0] - b.min[0]);
  const joints: SurfaceJoint[] = [];
  // Sweep along X: a part meets only those whose X range starts before its own ends.
  for (let i = 0; i < bodies.length; i++) {
    const a = bodies[i]!;
    for (let j = i + 1; j < bodies.length; j++) {
      const b = bodies[j]!;
      if (b.min[0] > a.max[0] + NEAR) break;
      if (b.min[1] > a.max[1] + NEAR || a.min[1] > b.max[1] + NEAR || b.min[2] > a.max[2] + NEAR || a.min[2] > b.max[2] + NEAR) continue;
      // The engine tries the earlier part's faces first; rows keep that order stable.
      const [p, q] = a.row < b.row ? [a, b] : [b, a];
      if (joined.has(pairKey(p.row, q.row))) continue;
      const joint = jointBetween(p, q);
      if (joint) joints.push(joint);
    }
  }
  joints.sort((x, y) => x.part0 - y.part0 || x.part1 - y.part1);
  return joints;
}

function collectBodies(dom: Dom, excluded: Uint8Array | undefined): Body[] {
  const workspace = findService(dom, 'Workspace');
  const bodies: Body[] = [];
  let table = -1;
  let columns: { cframe?: Column; size?: Column; shape?: Column; surfaces: (Column | undefined)[] } | null = null;
  let faces: readonly boolean[] = ALL_FACES;
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
      faces = joinableFaces(className, columns!.shape?.get(at));
      if (cframe && size && faces !== NO_FACES && finite(cframe, size)) {
        const surfaces = columns!.surfaces.map((column, face) => (faces[face] ? numberOr(column?.get(at), 0) : -1));
        bodies.push(body(row, cframe, size, surfaces));
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

function finite(cframe: CFrameValue, size: Vec3): boolean {
  return [...cframe.position, ...cframe.orientation.flat(), ...size].every(Number.isFinite);
}

function numberOr(value: Value | undefined, fallback: number): number {
  return typeof value === 'number' ? value : fallback;
}

function body(row: number, cframe: CFrameValue, size: Vec3, surfaces: number[]): Body {
  const half: Vec3 = [Math.abs(size[0]) / 2, Math.abs(size[1]) / 2, Math.abs(size[2]) / 2];
  const r = cframe.orientation;
  const p = cframe.position;
  const min: Vec3 = [0, 0, 0];
  const max: Vec3 = [0, 0, 0];
  for (let i = 0; i < 3; i++) {
    const reach = Math.abs(r[i]![0]) * half[0] + Math.abs(r[i]![1]) * half[1] + Math.abs(r[i]![2]) * half[2];
    min[i] = p[i]! - reach;
    max[i] = p[i]! + reach;
  }
  return { row, position: p, rotation: r, half, surfaces, min, max };
}

/** The part's own axis `axis` (0 X, 1 Y, 2 Z) in world space: a column of the rotation. */
function axisOf(b: Body, axis: number): Vec3 {
  return [b.rotation[0]![axis]!, b.rotation[1]![axis]!, b.rotation[2]![axis]!];
}

const dot = (a: Vec3, b: Vec3): number => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];

/** Face `face` (NormalId) of a body: outward normal, centre, and its two in-plane axes with half extents. */
function faceOf(b: Body, face: number): { normal: Vec3; centre: Vec3; u: Vec3; v: Vec3; hu: number; hv: number } {
  const axis = face % 3;
  const sign = face < 3 ? 1 : -1;
  const n = axisOf(b, axis);
  const normal: Vec3 = [n[0] * sign, n[1] * sign, n[2] * sign];
  const reach = b.half[axis]!;
  const centre: Vec3 = [b.position[0] + normal[0] * reach, b.position[1] + normal[1] * reach, b.position[2] + normal[2] * reach];
  const ua = (axis + 1) % 3, va = (axis + 2) % 3;
  return { normal, centre, u: axisOf(b, ua), v: axisOf(b, va), hu: b.half[ua]!, hv: b.half[va]! };
}

/** Each axis of `a` within `angle` of some axis of `b` (the parts are aligned up to a right-angle turn). */
function axesAligned(a: Body, b: Body, angle: number): boolean {
  const cos = Math.cos(angle);
  for (let i = 0; i < 3; i++) {
    const ai = axisOf(a, i);
    let best = 0;
    for (let j = 0; j < 3; j++) best = Math.max(best, Math.abs(dot(ai, axisOf(b, j))));
    if (best < cos) return false;
  }
  return true;
}

/** The face of `b` whose outward normal is closest to `direction`. */
function closestFace(b: Body, direction: Vec3): number {
  let best = 0;
  let bestDot = -Infinity;
  for (let face = 0; face < 6; face++) {
    const axis = face % 3;
    const d = dot(axisOf(b, axis), direction) * (face < 3 ? 1 : -1);
    if (d > bestDot) { bestDot = d; best = face; }
  }
  return best;
}

type Face = ReturnType<typeof faceOf>;

/** Faces facing each other in one plane (within `planar`), overlapping by at least JOINT_OVERLAP_MIN along both axes of `f`. */
function touching(f: Face, g: Face, planar: number): boolean {
  const gap = dot([g.centre[0] - f.centre[0], g.centre[1] - f.centre[1], g.centre[2] - f.centre[2]], f.normal);
  if (Math.abs(gap) > planar) return false;
  for (const [axis, half] of [[f.u, f.hu], [f.v, f.hv]] as const) {
    // g's extent along f's axis, relative to f's centre.
    const c = dot([g.centre[0] - f.centre[0], g.centre[1] - f.centre[1], g.centre[2] - f.centre[2]], axis);
    const reach = Math.abs(dot(g.u, axis)) * g.hu + Math.abs(dot(g.v, axis)) * g.hv;
    const overlap = Math.min(half, c + reach) - Math.max(-half, c - reach);
    if (overlap < JOINT_OVERLAP_MIN) return false;
  }
  return true;
}

/** Whether `point` lies on face `f` (within `tolerance`), seen along its normal. */
function onFace(point: Vec3, f: Face, tolerance: number): boolean {
  const d: Vec3 = [point[0] - f.centre[0], point[1] - f.centre[1], point[2] - f.centre[2]];
  return Math.abs(dot(d, f.u)) <= f.hu + tolerance && Math.abs(dot(d, f.v)) <= f.hv + tolerance;
}

const isRotate = (surface: number): boolean => surface === HINGE || surface === MOTOR || surface === STEPPING_MOTOR;
const isSnap = (s: number, t: number): boolean =>
  (s === STUDS && (t === INLET || t === UNIVERSAL)) || (s === INLET && (t === STUDS || t === UNIVERSAL)) || (s === UNIVERSAL && (t === STUDS || t === INLET || t === UNIVERSAL));

function jointBetween(a: Body, b: Body): SurfaceJoint | null {
  if (!axesAligned(a, b, LOOSE.angle)) return null;
  const tight = axesAligned(a, b, TIGHT.angle);
  const rotateAligned = axesAligned(a, b, ROTATE.angle);
  for (let face = 0; face < 6; face++) {
    const s = a.surfaces[face]!;
    if (s < 0) continue;
    const f = faceOf(a, face);
    const other = closestFace(b, [-f.normal[0], -f.normal[1], -f.normal[2]]);
    const t = b.surfaces[other]!;
    if (t < 0) continue;
    const g = faceOf(b, other);
    if (isRotate(s) || isRotate(t)) {
      if (!rotateAligned || !touching(f, g, ROTATE.planar)) continue;
      // The axle is the part with the hinge surface whose face centre lies on the other face.
      const axleA = isRotate(s) && onFace(f.centre, g, LOOSE.planar);
      const axleB = isRotate(t) && onFace(g.centre, f, LOOSE.planar);
      if (axleA) return joint(rotateClass(s), a, face, b);
      if (axleB) return joint(rotateClass(t), b, other, a);
      continue;
    }
    if ((s === WELD || t === WELD) && tight && touching(f, g, TIGHT.planar)) return joint('Weld', a, face, b);
    if (isSnap(s, t) && tight && touching(f, g, TIGHT.planar)) return joint('Snap', a, face, b);
    if ((s === GLUE || t === GLUE) && touching(f, g, LOOSE.planar)) return joint('Glue', a, face, b);
  }
  return null;
}

function rotateClass(surface: number): SurfaceJointClass {
  return surface === MOTOR ? 'RotateV' : surface === STEPPING_MOTOR ? 'RotateP' : 'Rotate';
}

/** A joint between `p0` (at its face `face`) and `p1`, with C0 on that face and C1 meeting it. */
function joint(className: SurfaceJointClass, p0: Body, face: number, p1: Body): SurfaceJoint {
  const axis = face % 3;
  const sign = face < 3 ? 1 : -1;
  // C0 in p0's space: origin at the face centre, Z along the outward normal, X and Y the next axes (right-handed).
  const z: Vec3 = [0, 0, 0];
  z[axis] = sign;
  const x: Vec3 = [0, 0, 0];
  x[(axis + 1) % 3] = 1;
  const y: Vec3 = [z[1] * x[2] - z[2] * x[1], z[2] * x[0] - z[0] * x[2], z[0] * x[1] - z[1] * x[0]];
  const origin: Vec3 = [0, 0, 0];
  origin[axis] = sign * p0.half[axis]!;
  const c0: CFrameValue = { position: origin, orientation: [[x[0], y[0], z[0]], [x[1], y[1], z[1]], [x[2], y[2], z[2]]] };
  const c1 = multiply(inverse(frameOf(p1)), multiply(frameOf(p0), c0));
  return { className, part0: p0.row, part1: p1.row, c0: toFloat32(c0), c1: toFloat32(c1) };
}

function frameOf(b: Body): CFrameValue {
  return { position: b.position, orientation: b.rotation };
}

function multiply(a: CFrameValue, b: CFrameValue): CFrameValue {
  const r = a.orientation, s = b.orientation;
  const orientation = [0, 1, 2].map((i) => [0, 1, 2].map((j) => r[i]![0] * s[0]![j]! + r[i]![1] * s[1]![j]! + r[i]![2] * s[2]![j]!)) as Matrix3;
  const p = b.position;
  const position = [0, 1, 2].map((i) => r[i]![0] * p[0] + r[i]![1] * p[1] + r[i]![2] * p[2] + a.position[i]!) as Vec3;
  return { position, orientation };
}

/** The inverse of a rigid frame (the rotation's transpose). */
function inverse(a: CFrameValue): CFrameValue {
  const r = a.orientation;
  const orientation = [0, 1, 2].map((i) => [0, 1, 2].map((j) => r[j]![i]!)) as Matrix3;
  const p = a.position;
  const position = [0, 1, 2].map((i) => -(orientation[i]![0] * p[0] + orientation[i]![1] * p[1] + orientation[i]![2] * p[2])) as Vec3;
  return { position, orientation };
}

/** Joint frames are stored as float32, as every CFrame a place holds. */
function toFloat32(c: CFrameValue): CFrameValue {
  const f = (x: number) => Math.fround(x) + 0; // + 0: no negative zero
  return {
    position: [f(c.position[0]), f(c.position[1]), f(c.position[2])],
    orientation: c.orientation.map((row) => [f(row[0]), f(row[1]), f(row[2])]) as Matrix3,
  };
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

  const parts: { row: number; anchored: boolean }[] = [];
  if (workspace !== -1) {
    let table = -1;
    let anchoredColumn: Column | undefined;
    for (let row = dom.firstChild(workspace); row !== -1;) {
      if (excluded?.[row]) { row = dom.after(row, workspace); continue; }
      if (BASE_PART_CLASSES.has(dom.className(row))) {
        if (dom.tableOf(row) !== table) { table = dom.tableOf(row); anchoredColumn = dom.table(table).columns.get('Anchored'); }
        parts.push({ row, anchored: anchoredColumn?.get(dom.rowInTable(row)) === true });
      }
      row = dom.next(row, workspace);
    }
  }
  const anchoredRoots = new Set<number>();
  for (const { row, anchored } of parts) if (anchored) anchoredRoots.add(find(row));
  const free: number[] = [];
  let unanchored = 0;
  for (const { row, anchored } of parts) {
    if (anchored) continue;
    unanchored++;
    if (!anchoredRoots.has(find(row))) free.push(row);
  }
  return { unanchored, held: unanchored - free.length, free };
}
