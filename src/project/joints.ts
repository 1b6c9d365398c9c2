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
import type { CFrameValue, Value } from '../parser/values.js';
import { BASE_PART_CLASSES, CSG_CLASSES } from './classes.js';
import { cframeNumbersOf, vec3NumbersOf } from './geometry.js';

export type SurfaceJointClass = 'Weld' | 'Snap' | 'Glue' | 'Rotate' | 'RotateV' | 'RotateP';

export interface SurfaceJoint {
  className: SurfaceJointClass;
  /** DOM rows of the joined parts; Part0 is the joint's parent. */
  part0: number;
  part1: number;
  c0: CFrameValue;
  c1: CFrameValue;
}

/** The joint classes, by the index `SurfaceJoints.kinds` holds. */
export const SURFACE_JOINT_CLASSES: readonly SurfaceJointClass[] = ['Weld', 'Snap', 'Glue', 'Rotate', 'RotateV', 'RotateP'];

/**
 * Surface joints as columns, joint i at index i (sorted by Part0's row, then Part1's): a
 * grid of one-stud bricks makes three joints a part, and an object with two CFrames a
 * joint (about 875 bytes) took a 46,656-part place's create past its worker's heap
 * where its analysis passed. `frames` holds C0 then C1 at 24·i, each as `CFrame.new`'s
 * twelve numbers (x, y, z, then the rotation by rows), float32 values.
 */
export interface SurfaceJoints {
  count: number;
  /** Index into SURFACE_JOINT_CLASSES. */
  kinds: Uint8Array;
  part0: Int32Array;
  part1: Int32Array;
  frames: Float32Array;
}

const NO_JOINTS: SurfaceJoints = Object.freeze({
  count: 0, kinds: new Uint8Array(0), part0: new Int32Array(0), part1: new Int32Array(0), frames: new Float32Array(0),
});

/** Joint i as an object (for tests and tools; the document reads the columns). */
export function surfaceJointAt(joints: SurfaceJoints, i: number): SurfaceJoint {
  const f = joints.frames, o = 24 * i;
  const cframe = (at: number): CFrameValue => ({
    position: [f[at]!, f[at + 1]!, f[at + 2]!],
    orientation: [[f[at + 3]!, f[at + 4]!, f[at + 5]!], [f[at + 6]!, f[at + 7]!, f[at + 8]!], [f[at + 9]!, f[at + 10]!, f[at + 11]!]],
  });
  return { className: SURFACE_JOINT_CLASSES[joints.kinds[i]!]!, part0: joints.part0[i]!, part1: joints.part1[i]!, c0: cframe(o), c1: cframe(o + 12) };
}

/** The least overlap (studs, along each axis of the touching faces) for a joint. */
export const JOINT_OVERLAP_MIN = 0.35;
const TIGHT = { angle: 0.01, planar: 0.01 };
const LOOSE = { angle: 0.05, planar: 0.05 };
const ROTATE = { angle: 0.025, planar: 0.05 };
/** The angles' cosines: axes within the angle have a dot product at least this far from 0. */
const COS_TIGHT = Math.cos(TIGHT.angle), COS_LOOSE = Math.cos(LOOSE.angle), COS_ROTATE = Math.cos(ROTATE.angle);
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

/**
 * The parts that can join, as flat records (a 2006 place has thousands; an object and
 * six arrays per part cost more than the whole search). Body b's numbers start at
 * b * BODY in `frames`: its centre, its own axes in world space (axis j at AXES + 3j,
 * the rotation's columns) and its half sizes; its box at b * 6 in `boxes` (min x,y,z,
 * max x,y,z); its surface types at b * 6 in `surfaces`, in NormalId order, -1 for a
 * face that cannot join (round or sloped).
 */
interface Bodies {
  count: number;
  rows: Int32Array;
  frames: Float64Array;
  boxes: Float64Array;
  surfaces: Int8Array;
}

const BODY = 15, AXES = 3, HALF = 12;

/** The surface joints `MakeJoints` would make among the Workspace's parts (none unless the place relies on them, or when the search stopped), as objects. */
export function surfaceJoints(dom: Dom, excluded?: Uint8Array): SurfaceJoint[] {
  const { joints } = searchSurfaceJoints(dom, excluded);
  return Array.from({ length: joints.count }, (_, i) => surfaceJointAt(joints, i));
}

export interface SurfaceJointSearch {
  joints: SurfaceJoints;
  /** The joinable parts when the search stopped at its bounds (SEARCH_BOUNDS), and made no joint; else 0. */
  unsearchedParts: number;
}

/** surfaceJoints, saying whether the search stopped at its bounds: then no joint is made rather than an arbitrary share of them. */
export function searchSurfaceJoints(dom: Dom, excluded?: Uint8Array): SurfaceJointSearch {
  if (!reliesOnSurfaceJoints(dom)) return { joints: NO_JOINTS, unsearchedParts: 0 };
  const bodies = collectBodies(dom, excluded);
  const joined = existingPairs(dom);
  const found = new FoundJoints(bodies.count);
  const search = new JointSearch(bodies, found);
  const complete = forEachNearPair(bodies.boxes, bodies.count, (a, b) => {
    // The engine tries the earlier part's faces first; rows keep that order stable.
    const p = bodies.rows[a]! < bodies.rows[b]! ? a : b;
    const q = p === a ? b : a;
    if (joined.size && joined.has(pairKey(bodies.rows[p]!, bodies.rows[q]!, dom.count))) return;
    search.jointBetween(p, q);
  });
  if (!complete) return { joints: NO_JOINTS, unsearchedParts: bodies.count };
  return { joints: found.sorted(bodies), unsearchedParts: 0 };
}

/**
 * The joints as the search finds them, then put in order: typed columns grown by
 * doubling (a joint never an object, nor 24 boxed numbers), each joint as its parts
 * (bodies) and Part0's face; its frames are worked out once it has its place.
 */
class FoundJoints {
  count = 0;
  #kinds: Uint8Array;
  #faces: Uint8Array;
  #body0: Int32Array;
  #body1: Int32Array;

  /** Room for `expected` joints before the columns grow. */
  constructor(expected: number) {
    const room = Math.max(64, expected);
    this.#kinds = new Uint8Array(room);
    this.#faces = new Uint8Array(room);
    this.#body0 = new Int32Array(room);
    this.#body1 = new Int32Array(room);
  }

  /** A joint between bodies `body0` (Part0, at its face `face`) and `body1`. */
  add(kind: number, body0: number, face: number, body1: number): void {
    const at = this.count++;
    if (at === this.#kinds.length) {
      this.#kinds = doubled(this.#kinds, (n) => new Uint8Array(n));
      this.#faces = doubled(this.#faces, (n) => new Uint8Array(n));
      this.#body0 = doubled(this.#body0, (n) => new Int32Array(n));
      this.#body1 = doubled(this.#body1, (n) => new Int32Array(n));
    }
    this.#kinds[at] = kind;
    this.#faces[at] = face;
    this.#body0[at] = body0;
    this.#body1[at] = body1;
  }

  /** Sorted by Part0's row, then Part1's (a pair is joined once, so no two tie): counting sorts by Part1, then, keeping that order, by Part0. */
  sorted(bodies: Bodies): SurfaceJoints {
    const count = this.count, rows = bodies.rows, kinds = this.#kinds, faces = this.#faces, body0 = this.#body0, body1 = this.#body1;
    const joints: SurfaceJoints = {
      count, kinds: new Uint8Array(count), part0: new Int32Array(count), part1: new Int32Array(count), frames: new Float32Array(24 * count),
    };
    // The rows in found order first (in `joints`' columns, overwritten below).
    const part0 = joints.part0, part1 = joints.part1;
    let range = 0;
    for (let i = 0; i < count; i++) {
      part0[i] = rows[body0[i]!]!;
      part1[i] = rows[body1[i]!]!;
      range = Math.max(range, part0[i]! + 1, part1[i]! + 1);
    }
    const identity = new Int32Array(count);
    for (let i = 0; i < count; i++) identity[i] = i;
    const order = orderedBy(part0, orderedBy(part1, identity, range), range);
    for (let at = 0; at < count; at++) {
      const from = order[at]!;
      joints.kinds[at] = kinds[from]!;
      writeJointFrames(bodies.frames, body0[from]!, faces[from]!, body1[from]!, joints.frames, 24 * at);
    }
    for (let at = 0; at < count; at++) {
      part0[at] = rows[body0[order[at]!]!]!;
      part1[at] = rows[body1[order[at]!]!]!;
    }
    return joints;
  }
}

/** `order` (indices into `keys`) stably sorted by the keys, each in 0..range-1, by counting. */
function orderedBy(keys: Int32Array, order: Int32Array, range: number): Int32Array {
  const starts = new Int32Array(range + 1);
  for (let i = 0; i < order.length; i++) starts[keys[order[i]!]! + 1]!++;
  for (let k = 1; k <= range; k++) starts[k]! += starts[k - 1]!;
  const sorted = new Int32Array(order.length);
  for (let i = 0; i < order.length; i++) sorted[starts[keys[order[i]!]!]!++] = order[i]!;
  return sorted;
}

/**
 * How far the broad phase goes before it gives up: `steps`, grid cells filled plus
 * pairs of boxes looked at (a box too large for the grid is one step per other box),
 * and `nearPairs`, pairs handed to the narrow phase (about 0.3 µs each).
 * rocket-arena-2006's 1,790 parts take 33,251 steps and 3,429 near pairs; a 4 KB file
 * of 20,000 parts piled in one place asked for 200 million, a minute of a worker.
 * `cells` bounds the grid's memory: each cell a box fills costs up to about 40 bytes of
 * typed arrays, outside the worker's heap limit, and 120k boxes of 512 cells each (within
 * the steps) took 1.5 GB; a 46,656-brick cube fills about 370k.
 * Past any bound the place gets no generated joints rather than an arbitrary share.
 */
export interface SearchBounds {
  steps: number;
  nearPairs: number;
  cells: number;
}
export const SEARCH_BOUNDS: Readonly<SearchBounds> = Object.freeze({ steps: 64_000_000, nearPairs: 1_000_000, cells: 2_000_000 });

/** A box spanning more grid cells than this is tested against every other box instead. */
const MAX_CELLS = 512;
/** Cells per axis the grid's keys can number: three axes' coordinates packed in one small integer (a key the Map hashes fast). */
const CELL_RANGE = 1 << 10;

/**
 * Calls `visit` once for each pair of boxes (six numbers each in `boxes`: min x,y,z,
 * max x,y,z) that, grown by NEAR, overlap: the broad phase. Boxes go into a uniform
 * grid of cells twice the median box's largest side (a sweep along one axis met 121k
 * pairs on a 2006 arena whose bricks share their X, Y and Z ranges, for 3.4k
 * overlapping boxes); a pair is tested in the first cell both boxes cover, so only
 * once. Boxes covering more than MAX_CELLS cells (baseplates) are tested against all
 * others. Returns false, having stopped, when the search would pass `bounds`.
 *
 * The grid is flat (a table of the cells filled, then each cell's boxes in a run of
 * one array, ascending): a Map of arrays made an allocation a cell. The steps are
 * counted whole before any pair is looked at (the same count, so the same bounds, as
 * when each was counted on the way); cells are visited in the order first filled.
 */
export function forEachNearPair(
  boxes: Float64Array, n: number, visit: (a: number, b: number) => void, bounds: Readonly<SearchBounds> = SEARCH_BOUNDS,
): boolean {
  if (n < 2) return true;
  let nearPairs = 0;
  const extents = new Float64Array(n);
  const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  for (let i = 0; i < n; i++) {
    const o = 6 * i;
    extents[i] = Math.max(boxes[o + 3]! - boxes[o]!, boxes[o + 4]! - boxes[o + 1]!, boxes[o + 5]! - boxes[o + 2]!);
    for (let k = 0; k < 3; k++) { lo[k] = Math.min(lo[k]!, boxes[o + k]!); hi[k] = Math.max(hi[k]!, boxes[o + 3 + k]! + NEAR); }
  }
  let cell = Math.max(2 * median(extents), 4 * NEAR);
  // Wider cells where the place spans more than CELL_RANGE of them.
  const widest = Math.max(hi[0]! - lo[0]!, hi[1]! - lo[1]!, hi[2]! - lo[2]!);
  if (widest / cell >= CELL_RANGE - 1) cell = widest / (CELL_RANGE - 2);
  const first = new Int32Array(3 * n), last = new Int32Array(3 * n);
  const large: number[] = [];
  const isLarge = new Uint8Array(n);
  let filled = 0;
  for (let i = 0; i < n; i++) {
    let cells = 1;
    for (let k = 0; k < 3; k++) {
      first[3 * i + k] = Math.floor((boxes[6 * i + k]! - lo[k]!) / cell);
      last[3 * i + k] = Math.floor((boxes[6 * i + 3 + k]! + NEAR - lo[k]!) / cell);
      cells *= last[3 * i + k]! - first[3 * i + k]! + 1;
    }
    if (cells > MAX_CELLS) { large.push(i); isLarge[i] = 1; continue; }
    if ((filled += cells) > bounds.steps || filled > bounds.cells) return false;
  }
  // Each large box is looked at against every box, and every pair of boxes sharing a cell (counted before any is).
  let steps = filled + large.length * n;
  if (steps > bounds.steps) return false;
  const { cells, keys, starts, ends, boxesIn } = fillGrid(first, last, isLarge, n, filled);
  for (let c = 0; c < cells; c++) {
    const length = ends[c]! - starts[c]!;
    if ((steps += length * (length - 1) / 2) > bounds.steps) return false;
  }
  for (let c = 0; c < cells; c++) {
    const start = starts[c]!, end = ends[c]!;
    if (end - start < 2) continue;
    const key = keys[c]!;
    const z = key % CELL_RANGE, y = Math.floor(key / CELL_RANGE) % CELL_RANGE, x = Math.floor(key / CELL_RANGE / CELL_RANGE);
    for (let s = start; s < end; s++) {
      const i = boxesIn[s]!;
      const fx = first[3 * i]!, fy = first[3 * i + 1]!, fz = first[3 * i + 2]!;
      // In i's own first cell, the first cell of i and any box here is this one.
      const own = fx === x && fy === y && fz === z;
      const minX = boxes[6 * i]!, minY = boxes[6 * i + 1]!, minZ = boxes[6 * i + 2]!;
      const maxX = boxes[6 * i + 3]! + NEAR, maxY = boxes[6 * i + 4]! + NEAR, maxZ = boxes[6 * i + 5]! + NEAR;
      for (let t = s + 1; t < end; t++) {
        const j = boxesIn[t]!;
        // Only in the first cell the two cover (the greater of their first cells per axis).
        if (!own && (Math.max(fx, first[3 * j]!) !== x || Math.max(fy, first[3 * j + 1]!) !== y || Math.max(fz, first[3 * j + 2]!) !== z)) continue;
        if (near(boxes, j, minX, minY, minZ, maxX, maxY, maxZ)) {
          if (++nearPairs > bounds.nearPairs) return false;
          visit(i, j);
        }
      }
    }
  }
  for (const i of large) {
    const minX = boxes[6 * i]!, minY = boxes[6 * i + 1]!, minZ = boxes[6 * i + 2]!;
    const maxX = boxes[6 * i + 3]! + NEAR, maxY = boxes[6 * i + 4]! + NEAR, maxZ = boxes[6 * i + 5]! + NEAR;
    for (let j = 0; j < n; j++) {
      if (j === i || (isLarge[j] && j < i)) continue;
      if (near(boxes, j, minX, minY, minZ, maxX, maxY, maxZ)) {
        if (++nearPairs > bounds.nearPairs) return false;
        visit(i, j);
      }
    }
  }
  return true;
}

/**
 * The middle value of `values` (the one at n >> 1 once sorted), which it reorders: a
 * selection, halving the part still unsorted around a pivot (a sort of every box was
 * a tenth of the broad phase). Values with NaN (a sort puts them last), or halving
 * that hardly shrinks the part (values laid out against the pivots), are left to a sort.
 */
function median(values: Float64Array): number {
  const middle = values.length >> 1;
  const sorted = (): number => values.sort()[middle]!;
  for (let i = 0; i < values.length; i++) if (Number.isNaN(values[i]!)) return sorted();
  let from = 0, to = values.length - 1;
  for (let rounds = 0; from < to; rounds++) {
    if (rounds > 64) return sorted();
    const pivot = values[(from + to) >> 1]!;
    // Hoare's partition: [from, j] ≤ pivot ≤ [i, to].
    let i = from, j = to;
    while (i <= j) {
      while (values[i]! < pivot) i++;
      while (values[j]! > pivot) j--;
      if (i <= j) { const v = values[i]!; values[i++] = values[j]!; values[j--] = v; }
    }
    if (middle <= j) to = j;
    else if (middle >= i) from = i;
    else return values[middle]!;
  }
  return values[middle]!;
}

/** Whether box `j` and the box min (x, y, z), max (x, y, z) + NEAR overlap once grown by NEAR (in the order of the test a pair gets either way round). */
function near(boxes: Float64Array, j: number, minX: number, minY: number, minZ: number, maxX: number, maxY: number, maxZ: number): boolean {
  const o = 6 * j;
  return !(boxes[o]! > maxX || minX > boxes[o + 3]! + NEAR || boxes[o + 1]! > maxY || minY > boxes[o + 4]! + NEAR
    || boxes[o + 2]! > maxZ || minZ > boxes[o + 5]! + NEAR);
}

/** The grid's filled cells, c < cells in the order first filled: cell c's key (x, y, z packed) and its boxes, boxesIn[starts[c]] up to ends[c], ascending. */
interface Grid {
  cells: number;
  keys: Int32Array;
  starts: Int32Array;
  ends: Int32Array;
  boxesIn: Int32Array;
}

/** Fibonacci hashing's multiplier (2^32 / golden ratio): neighbouring keys spread over the table. */
const HASH = 0x9e3779b1;

/**
 * Puts each box not large into the cells it covers (`filled` in all): a table of the
 * cells, indexed by position in the block of cells the boxes span when that block is
 * small, else a hash table of cell keys grown as cells are found (memory follows the
 * cells, never the place's extent); then the boxes in one array by counting. Four
 * bytes a filled cell for the boxes and four for which cell each filling went to.
 */
function fillGrid(first: Int32Array, last: Int32Array, isLarge: Uint8Array, n: number, filled: number): Grid {
  // The cells the boxes span: when that block is not much larger than the cells filled, a table over the whole block, no hashing.
  const low = [Infinity, Infinity, Infinity], high = [-Infinity, -Infinity, -Infinity];
  for (let i = 0; i < n; i++) {
    if (isLarge[i]) continue;
    for (let k = 0; k < 3; k++) { low[k] = Math.min(low[k]!, first[3 * i + k]!); high[k] = Math.max(high[k]!, last[3 * i + k]!); }
  }
  const spanY = high[1]! - low[1]! + 1, spanZ = high[2]! - low[2]! + 1;
  const block = (high[0]! - low[0]! + 1) * spanY * spanZ;
  const dense = filled > 0 && block <= 4 * filled + 4096;
  let bits = 4;
  let table: Int32Array = new Int32Array(dense ? block : 1 << bits).fill(-1);
  let keys = new Int32Array(16), counts = new Int32Array(16);
  let cells = 0;
  const cellOf = new Int32Array(filled);
  let e = 0;
  for (let i = 0; i < n; i++) {
    if (isLarge[i]) continue;
    for (let x = first[3 * i]!; x <= last[3 * i]!; x++) {
      for (let y = first[3 * i + 1]!; y <= last[3 * i + 1]!; y++) {
        for (let z = first[3 * i + 2]!; z <= last[3 * i + 2]!; z++) {
          const key = (x * CELL_RANGE + y) * CELL_RANGE + z;
          let h: number, c: number;
          if (dense) {
            h = ((x - low[0]!) * spanY + y - low[1]!) * spanZ + z - low[2]!;
            c = table[h]!;
          } else {
            const mask = table.length - 1;
            h = Math.imul(key, HASH) >>> (32 - bits);
            c = table[h]!;
            while (c !== -1 && keys[c] !== key) { h = (h + 1) & mask; c = table[h]!; }
          }
          if (c === -1) {
            c = cells++;
            if (c === keys.length) { keys = doubled(keys, (m) => new Int32Array(m)); counts = doubled(counts, (m) => new Int32Array(m)); }
            keys[c] = key;
            table[h] = c;
            // At most half full: probes stay short.
            if (!dense && 2 * cells > table.length) table = rehashed(keys, cells, ++bits);
          }
          counts[c]!++;
          cellOf[e++] = c;
        }
      }
    }
  }
  const starts = new Int32Array(cells), ends = new Int32Array(cells);
  for (let c = 0, at = 0; c < cells; c++) { starts[c] = ends[c] = at; at += counts[c]!; }
  const boxesIn = new Int32Array(filled);
  e = 0;
  for (let i = 0; i < n; i++) {
    if (isLarge[i]) continue;
    const covered = (last[3 * i]! - first[3 * i]! + 1) * (last[3 * i + 1]! - first[3 * i + 1]! + 1) * (last[3 * i + 2]! - first[3 * i + 2]! + 1);
    for (let m = 0; m < covered; m++) boxesIn[ends[cellOf[e++]!]!++] = i;
  }
  return { cells, keys, starts, ends, boxesIn };
}

/** A table of 2^bits slots holding cells 0..cells-1 by their keys. */
function rehashed(keys: Int32Array, cells: number, bits: number): Int32Array {
  const table = new Int32Array(1 << bits).fill(-1);
  const mask = table.length - 1;
  for (let c = 0; c < cells; c++) {
    let h = Math.imul(keys[c]!, HASH) >>> (32 - bits);
    while (table[h] !== -1) h = (h + 1) & mask;
    table[h] = c;
  }
  return table;
}

/**
 * Scratch for one row's numbers (Column.numbers): each read overwrites it, so what a
 * read gives is copied out before the next.
 */
const NUMBERS = new Float64Array(12);

/** An Enum-like row: a number in binary files (`get` reads an Enum row as `numbers` does, without the scratch), whatever it holds in others. */
const readEnum = (column: Column | undefined, at: number): Value | undefined => column?.get(at);

/** The columns a table of joinable parts is read through (looked up once a table, not once a part). */
interface PartColumns {
  cframe: Column | undefined;
  size: Column | undefined;
  shape: Column | undefined;
  surfaces: (Column | undefined)[];
}

/** A table's PartColumns, or null when its class never joins (not a part, a mesh or a CSG part). */
function partColumns(dom: Dom, table: number): PartColumns | null {
  const { className, columns: c } = dom.table(table);
  if (!BASE_PART_CLASSES.has(className) || className === 'MeshPart' || CSG_CLASSES.has(className)) return null;
  return {
    cframe: c.get('CFrame'), size: c.get('size') ?? c.get('Size'), shape: c.get('shape') ?? c.get('Shape'),
    surfaces: SURFACE_PROPERTIES.map((name) => c.get(name)),
  };
}

/** A typed array twice as long holding `from` (columns grown as they fill: bodies, cells, joints). */
function doubled<T extends Uint8Array | Int8Array | Int32Array | Float32Array | Float64Array>(from: T, make: (length: number) => T): T {
  const to = make(from.length * 2);
  to.set(from);
  return to;
}

function collectBodies(dom: Dom, excluded: Uint8Array | undefined): Bodies {
  const workspace = findService(dom, 'Workspace');
  // By table id: null when its parts never join.
  const tableColumns = dom.tables.map((_, table) => partColumns(dom, table));
  // Room for every part of the joinable tables (those of other services too), up to a bound: past it the buffers grow.
  let room = 0;
  for (let table = 0; table < dom.tables.length; table++) if (tableColumns[table]) room += dom.table(table).rows.length;
  room = Math.min(Math.max(room, 64), 1 << 16);
  let rows = new Int32Array(room), frames = new Float64Array(room * BODY), boxes = new Float64Array(room * 6), surfaces = new Int8Array(room * 6);
  let count = 0;
  for (let row = dom.firstChild(workspace); row !== -1;) {
    if (excluded?.[row]) { row = dom.after(row, workspace); continue; }
    const table = dom.tableOf(row);
    const columns = tableColumns[table];
    if (columns) {
      const at = dom.rowInTable(row);
      const faces = joinableFaces(dom.className(row), readEnum(columns.shape, at));
      if (faces !== NO_FACES && cframeNumbersOf(columns.cframe, at, NUMBERS)) {
        if (count === rows.length) {
          rows = doubled(rows, (n) => new Int32Array(n));
          frames = doubled(frames, (n) => new Float64Array(n));
          boxes = doubled(boxes, (n) => new Float64Array(n));
          surfaces = doubled(surfaces, (n) => new Int8Array(n));
        }
        // Written in place at the next body; kept (count moves on) only when its box is finite.
        const o = count * BODY;
        // Axis j of the part is column j of the rotation (rows at NUMBERS[3 + 3i]).
        for (let i = 0; i < 3; i++) {
          frames[o + i] = NUMBERS[i]!;
          for (let j = 0; j < 3; j++) frames[o + AXES + 3 * j + i] = NUMBERS[3 + 3 * i + j]!;
        }
        if (vec3NumbersOf(columns.size, at, NUMBERS)) {
          for (let i = 0; i < 3; i++) frames[o + HALF + i] = Math.abs(NUMBERS[i]!) / 2;
          if (boxOf(frames, o, boxes, 6 * count)) {
            rows[count] = row;
            for (let face = 0; face < 6; face++) surfaces[6 * count + face] = faces[face] ? int8(numberOr(readEnum(columns.surfaces[face], at), 0)) : -1;
            count++;
          }
        }
      }
    }
    row = dom.next(row, workspace);
  }
  return { count, rows, frames, boxes, surfaces };
}

/** The box (min x,y,z, max x,y,z) of the body at `o` in `frames`, into `boxes` at `to`; false when it is not finite: a part at NaN or Infinity joins nothing. */
function boxOf(frames: Float64Array, o: number, boxes: Float64Array, to: number): boolean {
  let finite = true;
  for (let i = 0; i < 3; i++) {
    // World axis i reaches sum_j |axis j's i-th component| * half j.
    const reach = Math.abs(frames[o + AXES + i]!) * frames[o + HALF]! + Math.abs(frames[o + AXES + 3 + i]!) * frames[o + HALF + 1]!
      + Math.abs(frames[o + AXES + 6 + i]!) * frames[o + HALF + 2]!;
    const min = boxes[to + i] = frames[o + i]! - reach;
    const max = boxes[to + 3 + i] = frames[o + i]! + reach;
    finite &&= Number.isFinite(min) && Number.isFinite(max);
  }
  return finite;
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

const isRotate = (surface: number): boolean => surface === HINGE || surface === MOTOR || surface === STEPPING_MOTOR;
const isSnap = (s: number, t: number): boolean =>
  (s === STUDS && (t === INLET || t === UNIVERSAL)) || (s === INLET && (t === STUDS || t === UNIVERSAL)) || (s === UNIVERSAL && (t === STUDS || t === INLET || t === UNIVERSAL));

/** NormalId of axis `axis` with sign `sign`: +X 0, +Y 1, +Z 2, -X 3, -Y 4, -Z 5. */
const normalId = (axis: number, sign: number): number => (sign > 0 ? axis : axis + 3);

/** Of b's axes, the one closest to a's axis i (the first of equals), from dots[3i + j] = a_i · b_j. */
function nearestAxis(dots: Float64Array, i: number): number {
  let j = 0;
  for (let k = 1; k < 3; k++) if (Math.abs(dots[3 * i + k]!) > Math.abs(dots[3 * i + j]!)) j = k;
  return j;
}

/**
 * The narrow phase over `bodies`: whether and how two parts join, in scalars (no
 * allocation per pair). `load` fills the dot products of the pair's axes and their
 * centres' offset along the first one's axes.
 */
class JointSearch {
  readonly #f: Float64Array;
  readonly #s: Int8Array;
  /** dots[3i + j] = a's axis i · b's axis j. */
  readonly #dots = new Float64Array(9);
  /** offset[i] = (b's centre - a's) · a's axis i. */
  readonly #offset = new Float64Array(3);
  /** nearest[i] = b's axis closest to a's axis i (either way round). */
  readonly #nearest = new Int32Array(3);

  readonly #found: FoundJoints;

  constructor(bodies: Bodies, found: FoundJoints) {
    this.#f = bodies.frames;
    this.#s = bodies.surfaces;
    this.#found = found;
  }

  /** Adds the joint between `a` and `b` to the found ones, if they join; says whether they did. */
  jointBetween(a: number, b: number): boolean {
    this.#load(a, b);
    // Each axis of a within an angle of some axis of b (aligned up to right-angle turns): the largest |a_i · b_j| of each i at least the angle's cosine.
    const d = this.#dots;
    const m0 = Math.max(Math.abs(d[0]!), Math.abs(d[1]!), Math.abs(d[2]!));
    const m1 = Math.max(Math.abs(d[3]!), Math.abs(d[4]!), Math.abs(d[5]!));
    const m2 = Math.max(Math.abs(d[6]!), Math.abs(d[7]!), Math.abs(d[8]!));
    if (m0 < COS_LOOSE || m1 < COS_LOOSE || m2 < COS_LOOSE) return false;
    const tight = !(m0 < COS_TIGHT || m1 < COS_TIGHT || m2 < COS_TIGHT);
    const rotateAligned = !(m0 < COS_ROTATE || m1 < COS_ROTATE || m2 < COS_ROTATE);
    const nearest = this.#nearest;
    for (let i = 0; i < 3; i++) nearest[i] = nearestAxis(d, i);
    for (let face = 0; face < 6; face++) {
      const s = this.#s[6 * a + face]!;
      if (s < 0) continue;
      const i = face % 3, sign = face < 3 ? 1 : -1;
      // b's face pointing against a's: along b's axis nearest a_i, t·b_j along -sign·a_i: t = -sign · sign(a_i · b_j).
      const j = nearest[i]!, t = d[3 * i + j]! >= 0 ? -sign : sign;
      const other = normalId(j, t);
      const u = this.#s[6 * b + other]!;
      if (u < 0) continue;
      if (isRotate(s) || isRotate(u)) {
        if (!rotateAligned || !this.#touching(a, i, sign, b, j, t, ROTATE.planar)) continue;
        // The axle is the part with the hinge surface whose face centre lies on the other face.
        if (isRotate(s) && this.#centreOnFace(a, i, sign, b, j, LOOSE.planar)) return this.#joint(rotateKind(s), a, face, b);
        if (isRotate(u)) {
          // The same check with the parts swapped (loads b, a; a's turn comes back after).
          this.#load(b, a);
          const onFace = this.#centreOnFace(b, j, t, a, i, LOOSE.planar);
          this.#load(a, b);
          if (onFace) return this.#joint(rotateKind(u), b, other, a);
        }
        continue;
      }
      if ((s === WELD || u === WELD) && tight && this.#touching(a, i, sign, b, j, t, TIGHT.planar)) return this.#joint(KIND_WELD, a, face, b);
      if (isSnap(s, u) && tight && this.#touching(a, i, sign, b, j, t, TIGHT.planar)) return this.#joint(KIND_SNAP, a, face, b);
      if ((s === GLUE || u === GLUE) && this.#touching(a, i, sign, b, j, t, LOOSE.planar)) return this.#joint(KIND_GLUE, a, face, b);
    }
    return false;
  }

  #load(a: number, b: number): void {
    const f = this.#f, dots = this.#dots, offset = this.#offset, A = a * BODY + AXES, B = b * BODY + AXES, pa = a * BODY, pb = b * BODY;
    const dx = f[pb]! - f[pa]!, dy = f[pb + 1]! - f[pa + 1]!, dz = f[pb + 2]! - f[pa + 2]!;
    for (let i = 0; i < 3; i++) {
      const x = f[A + 3 * i]!, y = f[A + 3 * i + 1]!, z = f[A + 3 * i + 2]!;
      for (let j = 0; j < 3; j++) dots[3 * i + j] = x * f[B + 3 * j]! + y * f[B + 3 * j + 1]! + z * f[B + 3 * j + 2]!;
      offset[i] = dx * x + dy * y + dz * z;
    }
  }

  /** b's face centre (axis j, sign t) relative to a's face centre (axis i, sign s), along a's axis k. */
  #along(a: number, i: number, s: number, b: number, j: number, t: number, k: number): number {
    return this.#offset[k]! + t * this.#f[b * BODY + HALF + j]! * this.#dots[3 * k + j]! - (k === i ? s * this.#f[a * BODY + HALF + i]! : 0);
  }

  /**
   * a's face (axis i, sign s) and b's face (axis j, sign t) lie in one plane (within
   * `planar`) and overlap by at least JOINT_OVERLAP_MIN along both of a's face axes.
   */
  #touching(a: number, i: number, s: number, b: number, j: number, t: number, planar: number): boolean {
    if (Math.abs(s * this.#along(a, i, s, b, j, t, i)) > planar) return false;
    const f = this.#f, d = this.#dots, ha = a * BODY + HALF, hb = b * BODY + HALF;
    const j1 = (j + 1) % 3, j2 = (j + 2) % 3;
    for (let n = 1; n <= 2; n++) {
      const k = (i + n) % 3;
      const c = this.#along(a, i, s, b, j, t, k);
      const reach = Math.abs(d[3 * k + j1]!) * f[hb + j1]! + Math.abs(d[3 * k + j2]!) * f[hb + j2]!;
      const overlap = Math.min(f[ha + k]!, c + reach) - Math.max(-f[ha + k]!, c - reach);
      if (overlap < JOINT_OVERLAP_MIN) return false;
    }
    return true;
  }

  /** a's face centre (axis i, sign s) lies on b's face (axis j), seen along b's normal, within `tolerance`. */
  #centreOnFace(a: number, i: number, s: number, b: number, j: number, tolerance: number): boolean {
    const f = this.#f, d = this.#dots;
    for (let n = 1; n <= 2; n++) {
      const k = (j + n) % 3;
      // (a's face centre - b's centre) · b's axis k = -(offset along b_k) + s·half_a[i]·(a_i · b_k)
      let along = 0;
      for (let m = 0; m < 3; m++) along -= this.#offset[m]! * d[3 * m + k]!;
      along += s * f[a * BODY + HALF + i]! * d[3 * i + k]!;
      if (Math.abs(along) > f[b * BODY + HALF + k]! + tolerance) return false;
    }
    return true;
  }

  /** The joint between `p0` (at its face `face`) and `p1`, found (its frames are made once the joints are in order). */
  #joint(kind: number, p0: number, face: number, p1: number): true {
    this.#found.add(kind, p0, face, p1);
    return true;
  }
}

/**
 * The frames of a joint between bodies `p0` (at its face `face`) and `p1`, into `out`
 * at `at`. C0, in p0's space: origin at the face centre, Z along the outward normal,
 * X the next axis, Y = Z × X. C1 is the same world frame in p1's space: rotation
 * p1ᵀ·(p0·C0), position p1ᵀ·(world - p1). Every component is a float32 (snap32, or
 * 0 and ±1), so `out` holds it as it is.
 */
function writeJointFrames(f: Float64Array, p0: number, face: number, p1: number, out: Float32Array, at: number): void {
  const A = p0 * BODY + AXES, B = p1 * BODY + AXES;
  const axis = face % 3;
  const sign = face < 3 ? 1 : -1;
  const half = sign * f[p0 * BODY + HALF + axis]!;
  // In the world, C0's X is p0's next axis, Y = sign · the axis after, Z = sign · the face's axis.
  const xa = A + 3 * ((axis + 1) % 3), ya = A + 3 * ((axis + 2) % 3), za = A + 3 * axis;
  const frame = FRAME;
  for (let i = 0; i < 3; i++) {
    frame[i] = f[xa + i]!;
    frame[3 + i] = sign * f[ya + i]!;
    frame[6 + i] = sign * f[za + i]!;
    frame[9 + i] = f[za + i]! * half + f[p0 * BODY + i]! - f[p1 * BODY + i]!;
  }
  // Into p1's space: dot with p1's axes (a world vector along p1's axis k).
  // `sign * 0` above can be -0; snap32 adds + 0, so no frame holds one.
  const r = C0_ROTATIONS[face]!;
  // C0: the face centre, rotated by the face's rotation.
  for (let i = 0; i < 3; i++) out[at + i] = axis === i ? snap32(half) : 0;
  for (let i = 0; i < 9; i++) out[at + 3 + i] = r[i]!;
  // C1: the same frame in p1's space; rotation row k is the frame's X, Y and Z along p1's axis k.
  for (let k = 0; k < 3; k++) {
    const ax = f[B + 3 * k]!, ay = f[B + 3 * k + 1]!, az = f[B + 3 * k + 2]!;
    out[at + 12 + k] = snap32(ax * frame[9]! + ay * frame[10]! + az * frame[11]!);
    out[at + 15 + 3 * k] = snap32(ax * frame[0]! + ay * frame[1]! + az * frame[2]!);
    out[at + 16 + 3 * k] = snap32(ax * frame[3]! + ay * frame[4]! + az * frame[5]!);
    out[at + 17 + 3 * k] = snap32(ax * frame[6]! + ay * frame[7]! + az * frame[8]!);
  }
}

/** A joint's frame in the world while it is made: X, Y, Z and the origin relative to Part1's centre. */
const FRAME = new Float64Array(12);

/** C0's rotation per face (NormalId), rows of [X Y Z]: X the next axis, Z the face's normal, Y = Z × X. */
const C0_ROTATIONS = [0, 1, 2, 3, 4, 5].map((face) => {
  const axis = face % 3, sign = face < 3 ? 1 : -1;
  const columns = [unit((axis + 1) % 3, 1), unit((axis + 2) % 3, sign), unit(axis, sign)];
  return [0, 1, 2].flatMap((row) => columns.map((column) => column[row]!));
});

function unit(axis: number, sign: number): number[] {
  const v = [0, 0, 0];
  v[axis] = sign;
  return v;
}

// Indices into SURFACE_JOINT_CLASSES.
const KIND_WELD = 0, KIND_SNAP = 1, KIND_GLUE = 2, KIND_ROTATE = 3, KIND_ROTATE_V = 4, KIND_ROTATE_P = 5;

function rotateKind(surface: number): number {
  return surface === MOTOR ? KIND_ROTATE_V : surface === STEPPING_MOTOR ? KIND_ROTATE_P : KIND_ROTATE;
}


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

/** Rows a and b, either way round, as one number: exact below 2^53 (rows are fewer than the instance limit, 10^7). */
const pairKey = (a: number, b: number, rows: number): number => (a < b ? a * rows + b : b * rows + a);

/** Pairs of parts the file already joins (Part0/Part1 of joints and WeldConstraints). */
function existingPairs(dom: Dom): Set<number> {
  const pairs = new Set<number>();
  for (const [a, b] of jointLinks(dom)) pairs.add(pairKey(a, b, dom.count));
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
export function assemblies(dom: Dom, extra: SurfaceJoints = NO_JOINTS, excluded?: Uint8Array): Assemblies {
  const workspace = findService(dom, 'Workspace');
  const parent = new Int32Array(dom.count);
  for (let i = 0; i < parent.length; i++) parent[i] = i;
  const find = (x: number): number => {
    while (parent[x] !== x) { parent[x] = parent[parent[x]!]!; x = parent[x]!; }
    return x;
  };
  const union = (a: number, b: number) => { const ra = find(a), rb = find(b); if (ra !== rb) parent[ra] = rb; };
  for (const [a, b] of jointLinks(dom)) if (!excluded?.[a] && !excluded?.[b]) union(a, b);
  for (let i = 0; i < extra.count; i++) union(extra.part0[i]!, extra.part1[i]!);

  // Workspace parts: an anchored one marks its assembly; the others are kept (rows in a typed
  // array, walk order: a 200k-part map makes no object per part) and looked at once all are marked.
  const anchoredRoot = new Uint8Array(dom.count);
  let loose = new Int32Array(1024);
  let unanchored = 0;
  if (workspace !== -1) {
    const partTables = dom.tables.map(({ className }) => BASE_PART_CLASSES.has(className));
    const anchoredColumns: (Column | undefined)[] = [];
    for (let row = dom.firstChild(workspace); row !== -1;) {
      if (excluded?.[row]) { row = dom.after(row, workspace); continue; }
      const table = dom.tableOf(row);
      if (partTables[table]) {
        const column = anchoredColumns[table] ??= dom.table(table).columns.get('Anchored');
        if (column?.get(dom.rowInTable(row)) === true) anchoredRoot[find(row)] = 1;
        else {
          if (unanchored === loose.length) loose = doubled(loose, (n) => new Int32Array(n));
          loose[unanchored++] = row;
        }
      }
      row = dom.next(row, workspace);
    }
  }
  const free: number[] = [];
  for (let i = 0; i < unanchored; i++) if (!anchoredRoot[find(loose[i]!)]) free.push(loose[i]!);
  return { unanchored, held: unanchored - free.length, free };
}
