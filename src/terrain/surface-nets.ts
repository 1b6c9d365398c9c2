/**
 * Surface nets over one padded block of occupancy samples: the smooth surface of a
 * terrain chunk (or of its water).
 *
 * The block holds the chunk's N³ samples plus a one-sample border from its
 * neighbours ((N+2)³, x fastest, then y, then z). A sample is inside when its value
 * is at least 128 of 255: the surface crosses the line between two samples where one
 * is inside and the other is not, at the linear interpolation of 127.5.
 *
 * Each cell (the cube between 8 samples) that the surface crosses gets one vertex per
 * connected patch: inside corners joined by cube edges form one patch, so diagonal
 * corners never share a vertex. That keeps every mesh edge used by exactly two
 * triangles (no pinched sheets), which is what makes the result watertight. Each
 * crossed sample-to-sample edge owned by the chunk becomes a quad over the four cells
 * around it, wound counter-clockwise seen from outside.
 *
 * Flat runs: quads lying in one axis-aligned plane (same height, material and
 * facing, all four cells crossed only along that axis) are merged greedily into
 * rectangles and drawn as a fan around a centre vertex through every vertex of the
 * rectangle's border, so the neighbours' edges still meet exactly.
 */

export const ISO = 127.5;

/** Growable typed arrays, so a chunk's output is built without per-vertex objects. */
export class FloatBuilder {
  data = new Float32Array(1024);
  length = 0;
  push3(a: number, b: number, c: number): void {
    if (this.length + 3 > this.data.length) this.grow();
    const d = this.data;
    d[this.length] = a; d[this.length + 1] = b; d[this.length + 2] = c;
    this.length += 3;
  }
  private grow(): void {
    const next = new Float32Array(this.data.length * 2);
    next.set(this.data);
    this.data = next;
  }
  take(): Float32Array {
    return this.data.slice(0, this.length);
  }
}

/**
 * Starts empty: a chunk's output has one per material slot (64) and most stay unused, so a
 * 4 KB array each was 256 KB a chunk, most of the time a grid of many small chunks took.
 */
export class IndexBuilder {
  data = new Uint32Array(0);
  length = 0;
  push3(a: number, b: number, c: number): void {
    if (this.length + 3 > this.data.length) {
      const next = new Uint32Array(Math.max(1024, this.data.length * 2));
      next.set(this.data);
      this.data = next;
    }
    const d = this.data;
    d[this.length] = a; d[this.length + 1] = b; d[this.length + 2] = c;
    this.length += 3;
  }
}

// ---------------------------------------------------------------------------
// Cube tables. Corner k has offsets (k & 1, k >> 1 & 1, k >> 2 & 1) along x, y, z.

const EDGE_A = new Int8Array(12);
const EDGE_B = new Int8Array(12);
{
  let e = 0;
  for (const bit of [1, 2, 4]) for (let a = 0; a < 8; a++) if (!(a & bit)) { EDGE_A[e] = a; EDGE_B[e] = a | bit; e++; }
}

/** For mask m and an inside corner k: its patch id (0..3), -1 for outside corners. */
const PATCH = new Int8Array(256 * 8).fill(-1);
for (let mask = 1; mask < 255; mask++) {
  let next = 0;
  for (let start = 0; start < 8; start++) {
    if (!(mask & (1 << start)) || PATCH[mask * 8 + start] !== -1) continue;
    const stack = [start];
    PATCH[mask * 8 + start] = next;
    while (stack.length) {
      const at = stack.pop()!;
      for (const bit of [1, 2, 4]) {
        const to = at ^ bit;
        if (mask & (1 << to) && PATCH[mask * 8 + to] === -1) {
          PATCH[mask * 8 + to] = next;
          stack.push(to);
        }
      }
    }
    next++;
  }
}

/** The one mask per axis and side where a cell is crossed only along that axis. */
function pureMask(axisBit: number, lowInside: boolean): number {
  let mask = 0;
  for (let k = 0; k < 8; k++) if (((k & axisBit) === 0) === lowInside) mask |= 1 << k;
  return mask;
}

const AXIS_BITS = [1, 2, 4];
const ROW_OUT = 0, ROW_IN = 1, ROW_MIXED = 2;

/** A padded block: samples of one field plus per-sample material and (for water) where solid blocks it. */
export interface SampleBlock {
  /** Samples per chunk edge. */
  n: number;
  value: Uint8Array;
  material: Uint8Array;
  /** Samples where no surface of this field is drawn (water against solid terrain); null for none. */
  blocked: Uint8Array | null;
  /** Per axis: no chunk below on that axis, so this block draws the edges from its lower border too. */
  ownsLowBorder: [boolean, boolean, boolean];
}

export interface NetsScratch {
  n: number;
  rows: Uint8Array;
  masks: Uint8Array;
  vertexOf: Int32Array;
  stamps: Int32Array;
  stamp: number;
  quadFlag: Uint8Array;
  quadMaterial: Uint8Array;
  quadFlat: Uint8Array;
  quadHeight: Float32Array;
  used: Uint8Array;
}

export function newNetsScratch(n: number): NetsScratch {
  const cells = (n + 1) ** 3;
  return {
    n,
    rows: new Uint8Array((n + 2) ** 2),
    masks: new Uint8Array(cells),
    vertexOf: new Int32Array(cells * 4),
    stamps: new Int32Array(cells * 4),
    stamp: 0,
    quadFlag: new Uint8Array(n * n),
    quadMaterial: new Uint8Array(n * n),
    quadFlat: new Uint8Array(n * n),
    quadHeight: new Float32Array(n * n),
    used: new Uint8Array(n * n),
  };
}

export interface NetsOutput {
  positions: FloatBuilder;
  normals: FloatBuilder;
  /** Triangle indices per material index. */
  indices: IndexBuilder[];
}

const CORNER_BITS = [0, 0, 0, 0];

/** Everything one call works on, in one object so the hot loops read fields, not closure slots. */
interface Nets {
  n: number;
  P: number;
  C: number;
  unit: number;
  value: Uint8Array;
  masks: Uint8Array;
  vertexOf: Int32Array;
  stamps: Int32Array;
  stamp: number;
  cornerOffset: Int32Array;
  positions: FloatBuilder;
  normals: FloatBuilder;
  cellAt: Int32Array;
}

/**
 * Adds the block's surface to `out`; positions are `unit` studs per sample, with the
 * chunk's minimum corner at 0 (sample i's centre at (i + 0.5)·unit). Returns the
 * number of triangles added.
 */
export function surfaceNets(block: SampleBlock, scratch: NetsScratch, out: NetsOutput, unit: number): number {
  const n = block.n;
  const P = n + 2;
  const C = n + 1;
  const value = block.value;
  const masks = scratch.masks;

  // Rows along x: all outside (0), all inside (1) or mixed (2). Uniform rows let whole
  // runs of cells and edges be skipped, which is most of a terrain chunk.
  const rows = scratch.rows;
  let mixedRows = 0, insideRows = 0;
  for (let r = 0; r < P * P; r++) {
    const from = r * P;
    const first = value[from]! >= 128;
    let state = first ? ROW_IN : ROW_OUT;
    for (let x = 1; x < P; x++) {
      if ((value[from + x]! >= 128) !== first) { state = ROW_MIXED; break; }
    }
    rows[r] = state;
    if (state === ROW_MIXED) mixedRows++;
    else if (state === ROW_IN) insideRows++;
  }
  if (mixedRows === 0 && (insideRows === 0 || insideRows === P * P)) return 0;

  // Cell masks; a block with no crossed cell has no surface.
  let crossed = 0;
  for (let cz = 0; cz < C; cz++) {
    for (let cy = 0; cy < C; cy++) {
      let cell = C * (cy + C * cz);
      const r0 = rows[cy + P * cz]!, r1 = rows[cy + 1 + P * cz]!, r2 = rows[cy + P * (cz + 1)]!, r3 = rows[cy + 1 + P * (cz + 1)]!;
      if (r0 !== ROW_MIXED && r0 === r1 && r0 === r2 && r0 === r3) {
        masks.fill(r0 === ROW_IN ? 255 : 0, cell, cell + C);
        continue;
      }
      let p = P * (cy + P * cz);
      for (let cx = 0; cx < C; cx++, p++, cell++) {
        const m = (value[p]! >= 128 ? 1 : 0) | (value[p + 1]! >= 128 ? 2 : 0)
          | (value[p + P]! >= 128 ? 4 : 0) | (value[p + P + 1]! >= 128 ? 8 : 0)
          | (value[p + P * P]! >= 128 ? 16 : 0) | (value[p + P * P + 1]! >= 128 ? 32 : 0)
          | (value[p + P * P + P]! >= 128 ? 64 : 0) | (value[p + P * P + P + 1]! >= 128 ? 128 : 0);
        masks[cell] = m;
        if (m !== 0 && m !== 255) crossed++;
      }
    }
  }
  if (crossed === 0) return 0;
  // A new stamp instead of clearing every cell's vertex slots.
  scratch.stamp++;
  const nets: Nets = {
    n, P, C, unit, value, masks, vertexOf: scratch.vertexOf, stamps: scratch.stamps, stamp: scratch.stamp,
    cornerOffset: Int32Array.of(0, 1, P, P + 1, P * P, P * P + 1, P * P + P, P * P + P + 1),
    positions: out.positions, normals: out.normals, cellAt: new Int32Array(3),
  };
  let triangles = 0;
  for (let axis = 0; axis < 3; axis++) {
    // Edges from the border sample below the chunk belong to the chunk below, unless there is none.
    const firstLayer = block.ownsLowBorder[axis] ? 0 : 1;
    for (let la = firstLayer; la <= n; la++) {
      if (gatherLayer(nets, scratch, block, axis, la) > 0) triangles += emitLayer(nets, scratch, out, axis, la);
    }
  }
  return triangles;
}

/** Records the crossed edges of one layer (sample v at (la, ub, uc) against v + axis); returns how many. */
function gatherLayer(nets: Nets, scratch: NetsScratch, block: SampleBlock, axis: number, la: number): number {
  const { n, P, C, value, masks } = nets;
  const { quadFlag, quadMaterial, quadFlat, quadHeight, used } = scratch;
  const blocked = block.blocked;
  const material = block.material;
  const bAxis = (axis + 1) % 3, cAxis = (axis + 2) % 3;
  const aStride = STRIDES(P, axis), bStride = STRIDES(P, bAxis), cStride = STRIDES(P, cAxis);
  const aCell = STRIDES(C, axis), bCell = STRIDES(C, bAxis), cCell = STRIDES(C, cAxis);
  const aBit = AXIS_BITS[axis]!;
  const pureLow = pureMask(aBit, true), pureHigh = pureMask(aBit, false);
  const rows = scratch.rows;
  quadFlag.fill(0);
  used.fill(0);
  let count = 0;
  const xyz = [0, 0, 0];
  for (let uc = 1; uc <= n; uc++) {
    for (let ub = 1; ub <= n; ub++) {
      // Skip edges between uniform rows that agree (or inside a uniform row).
      xyz[axis] = la; xyz[bAxis] = ub; xyz[cAxis] = uc;
      const row = rows[xyz[1]! + P * xyz[2]!]!;
      if (axis === 0) {
        if (row !== ROW_MIXED) continue;
      } else if (row !== ROW_MIXED && row === rows[xyz[1]! + (axis === 1 ? 1 : 0) + P * (xyz[2]! + (axis === 2 ? 1 : 0))]) {
        continue;
      }
      const q = (ub - 1) + n * (uc - 1);
      const v = la * aStride + ub * bStride + uc * cStride;
      const w = v + aStride;
      const inV = value[v]! >= 128, inW = value[w]! >= 128;
      if (inV === inW) continue;
      if (blocked !== null && (blocked[v] !== 0 || blocked[w] !== 0)) continue;
      quadFlag[q] = inV ? 1 : 2;
      quadMaterial[q] = material[inV ? v : w]!;
      // Flat when the four cells around the edge are crossed only along the axis, all at one height.
      const cell0 = la * aCell + ub * bCell + uc * cCell;
      const sample0 = la * aStride + ub * bStride + uc * cStride;
      const pure = inV ? pureLow : pureHigh;
      let flat = 1;
      let height = NaN;
      for (let k = 0; k < 4; k++) {
        const db = (k & 1) ? 1 : 0, dc = (k & 2) ? 1 : 0;
        if (masks[cell0 - db * bCell - dc * cCell] !== pure) { flat = 0; break; }
        const h = pureHeight(value, sample0 - db * bStride - dc * cStride, aStride, bStride, cStride);
        if (k === 0) height = h;
        else if (h !== height) { flat = 0; break; }
      }
      quadFlat[q] = flat;
      quadHeight[q] = height;
      count++;
    }
  }
  return count;
}

/** Emits one layer's quads: greedy rectangles over the flat ones, single quads for the rest. */
function emitLayer(nets: Nets, scratch: NetsScratch, out: NetsOutput, axis: number, la: number): number {
  const n = nets.n;
  const { quadFlag, quadMaterial, quadFlat, quadHeight, used } = scratch;
  const bAxis = (axis + 1) % 3, cAxis = (axis + 2) % 3;
  const aBit = AXIS_BITS[axis]!, bBit = AXIS_BITS[bAxis]!, cBit = AXIS_BITS[cAxis]!;
  const cellAt = nets.cellAt;
  const C = nets.C;
  const positions = nets.positions;
  let triangles = 0;
  for (let uc = 1; uc <= n; uc++) {
    for (let ub = 1; ub <= n; ub++) {
      const q = (ub - 1) + n * (uc - 1);
      const flag = quadFlag[q]!;
      if (flag === 0 || used[q] !== 0) continue;
      const inV = flag === 1;
      const materialIndex = quadMaterial[q]!;
      const list = out.indices[materialIndex]!;
      let w = 1, h = 1;
      if (quadFlat[q] === 1) {
        const height = quadHeight[q]!;
        while (ub + w <= n && sameFlat(scratch, q + w, flag, materialIndex, height)) w++;
        for (; uc + h <= n; h++) {
          let row = true;
          for (let k = 0; k < w; k++) {
            if (!sameFlat(scratch, q + n * h + k, flag, materialIndex, height)) { row = false; break; }
          }
          if (!row) break;
        }
      }
      if (w * h > w + h) {
        for (let dz = 0; dz < h; dz++) for (let dx = 0; dx < w; dx++) used[q + n * dz + dx] = 1;
        triangles += fan(nets, list, axis, la, ub, uc, w, h, inV, quadHeight[q]!);
        continue;
      }
      used[q] = 1;
      // One quad: the cells with minimum corners v, v - b, v - b - c, v - c.
      for (let k = 0; k < 4; k++) {
        const corner = k === 0 ? 0 : k === 1 ? bBit : k === 2 ? (bBit | cBit) : cBit;
        cellAt[axis] = la;
        cellAt[bAxis] = ub - ((corner & bBit) !== 0 ? 1 : 0);
        cellAt[cAxis] = uc - ((corner & cBit) !== 0 ? 1 : 0);
        const cell = cellAt[0]! + C * (cellAt[1]! + C * cellAt[2]!);
        const insideCorner = inV ? corner : corner | aBit;
        CORNER_BITS[k] = vertex(nets, cellAt[0]!, cellAt[1]!, cellAt[2]!, PATCH[nets.masks[cell]! * 8 + insideCorner]!);
      }
      const i0 = CORNER_BITS[0]!, i2 = CORNER_BITS[2]!;
      let i1 = CORNER_BITS[1]!, i3 = CORNER_BITS[3]!;
      if (!inV) { const t = i1; i1 = i3; i3 = t; }
      // Split along the shorter diagonal.
      if (distance2(positions.data, i0, i2) <= distance2(positions.data, i1, i3)) {
        list.push3(i0, i1, i2);
        list.push3(i0, i2, i3);
      } else {
        list.push3(i1, i2, i3);
        list.push3(i1, i3, i0);
      }
      triangles += 2;
    }
  }
  return triangles;
}

function sameFlat(scratch: NetsScratch, r: number, flag: number, material: number, height: number): boolean {
  return scratch.quadFlag[r] === flag && scratch.used[r] === 0 && scratch.quadFlat[r] === 1
    && scratch.quadMaterial[r] === material && scratch.quadHeight[r] === height;
}

function STRIDES(size: number, axis: number): number {
  return axis === 0 ? 1 : axis === 1 ? size : size * size;
}

/** The vertex of patch `patch` in the cell with minimum corner (cx, cy, cz), made on first use. */
function vertex(nets: Nets, cx: number, cy: number, cz: number, patch: number): number {
  const C = nets.C, P = nets.P;
  const cell = cx + C * (cy + C * cz);
  const slot = cell * 4 + patch;
  if (nets.stamps[slot] === nets.stamp) return nets.vertexOf[slot]!;
  const mask = nets.masks[cell]!;
  const value = nets.value;
  const offsets = nets.cornerOffset;
  const p = cx + P * (cy + P * cz);
  let sx = 0, sy = 0, sz = 0, count = 0;
  for (let e = 0; e < 12; e++) {
    const a = EDGE_A[e]!, b = EDGE_B[e]!;
    const ia = (mask >> a) & 1, ib = (mask >> b) & 1;
    if (ia === ib) continue;
    if (PATCH[mask * 8 + (ia ? a : b)] !== patch) continue;
    const va = value[p + offsets[a]!]!, vb = value[p + offsets[b]!]!;
    const t = (ISO - va) / (vb - va);
    sx += (a & 1) + t * ((b & 1) - (a & 1));
    sy += ((a >> 1) & 1) + t * (((b >> 1) & 1) - ((a >> 1) & 1));
    sz += ((a >> 2) & 1) + t * (((b >> 2) & 1) - ((a >> 2) & 1));
    count++;
  }
  const unit = nets.unit;
  // Sample (padded) index i has its centre at (i - 0.5)·unit.
  nets.positions.push3((cx + sx / count - 0.5) * unit, (cy + sy / count - 0.5) * unit, (cz + sz / count - 0.5) * unit);
  // The field grows inwards: the outward normal is minus its gradient over the cell.
  const v0 = value[p]!, v1 = value[p + offsets[1]!]!, v2 = value[p + offsets[2]!]!, v3 = value[p + offsets[3]!]!;
  const v4 = value[p + offsets[4]!]!, v5 = value[p + offsets[5]!]!, v6 = value[p + offsets[6]!]!, v7 = value[p + offsets[7]!]!;
  const gx = v1 - v0 + v3 - v2 + v5 - v4 + v7 - v6;
  const gy = v2 - v0 + v3 - v1 + v6 - v4 + v7 - v5;
  const gz = v4 - v0 + v5 - v1 + v6 - v2 + v7 - v3;
  pushNormal(nets.normals, -gx, -gy, -gz);
  const index = nets.positions.length / 3 - 1;
  nets.vertexOf[slot] = index;
  nets.stamps[slot] = nets.stamp;
  return index;
}

/** A w × h rectangle of flat quads from (ub0, uc0): a fan from its centre through every border vertex. */
function fan(nets: Nets, list: IndexBuilder, axis: number, la: number, ub0: number, uc0: number, w: number, h: number, inV: boolean, heightSum: number): number {
  const bAxis = (axis + 1) % 3, cAxis = (axis + 2) % 3;
  const cellAt = nets.cellAt;
  const ring: number[] = [];
  const b0 = ub0 - 1, c0 = uc0 - 1, b1 = ub0 + w - 1, c1 = uc0 + h - 1;
  const at = (b: number, c: number): void => {
    cellAt[axis] = la; cellAt[bAxis] = b; cellAt[cAxis] = c;
    ring.push(vertex(nets, cellAt[0]!, cellAt[1]!, cellAt[2]!, 0));
  };
  for (let b = b0; b < b1; b++) at(b, c0);
  for (let c = c0; c < c1; c++) at(b1, c);
  for (let b = b1; b > b0; b--) at(b, c1);
  for (let c = c1; c > c0; c--) at(b0, c);
  const unit = nets.unit;
  const centre = [0, 0, 0];
  // A pure cell's vertex sits at its centre across the axis and at the mean crossing along it.
  centre[axis] = (la + heightSum / 4 - 0.5) * unit;
  centre[bAxis] = ((b0 + b1) / 2) * unit;
  centre[cAxis] = ((c0 + c1) / 2) * unit;
  nets.positions.push3(centre[0]!, centre[1]!, centre[2]!);
  const normal = [0, 0, 0];
  normal[axis] = inV ? 1 : -1;
  nets.normals.push3(normal[0]!, normal[1]!, normal[2]!);
  const middle = nets.positions.length / 3 - 1;
  for (let k = 0; k < ring.length; k++) {
    const a = ring[k]!, b = ring[(k + 1) % ring.length]!;
    if (inV) list.push3(middle, a, b);
    else list.push3(middle, b, a);
  }
  return ring.length;
}

/** Sum of the crossing fractions of a cell's four edges along the axis (the same order for every cell). */
function pureHeight(value: Uint8Array, p: number, aStride: number, bStride: number, cStride: number): number {
  let sum = 0;
  for (let k = 0; k < 4; k++) {
    const s = p + ((k & 1) ? bStride : 0) + ((k & 2) ? cStride : 0);
    const va = value[s]!, vb = value[s + aStride]!;
    sum += (ISO - va) / (vb - va);
  }
  return sum;
}

function distance2(p: Float32Array, i: number, j: number): number {
  const dx = p[i * 3]! - p[j * 3]!, dy = p[i * 3 + 1]! - p[j * 3 + 1]!, dz = p[i * 3 + 2]! - p[j * 3 + 2]!;
  return dx * dx + dy * dy + dz * dz;
}

function pushNormal(normals: FloatBuilder, x: number, y: number, z: number): void {
  const length = Math.sqrt(x * x + y * y + z * z);
  if (length > 0) normals.push3(x / length, y / length, z / length);
  else normals.push3(0, 1, 0);
}
