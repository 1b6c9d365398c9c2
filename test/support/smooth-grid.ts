/**
 * A small SmoothGrid writer for tests (synthetic terrain and malformed blobs), and a
 * check that a set of chunk meshes is closed: the format as smooth-grid.md describes it.
 */
import type { TerrainChunkMesh } from '../../src/terrain/index.js';

export interface TestChunk {
  at: [number, number, number];
  /** side³ each, indexed x + side·(z + side·y). */
  material: Uint8Array;
  occupancy: Uint8Array;
  water?: Uint8Array;
}

/** Encodes chunks (in the given order) as a SmoothGrid blob with chunk size 2^log2. */
export function writeSmoothGrid(chunks: TestChunk[], log2 = 5): Uint8Array {
  const out: number[] = [1, log2];
  let prev = [0, 0, 0];
  const total = (1 << log2) ** 3;
  for (const chunk of chunks) {
    const delta = chunk.at.map((v, i) => v - prev[i]!);
    prev = chunk.at;
    for (let plane = 0; plane < 4; plane++) {
      for (let axis = 0; axis < 3; axis++) out.push((delta[axis]! >>> (24 - plane * 8)) & 255);
    }
    let i = 0;
    while (i < total) {
      const m = chunk.material[i]!, o = chunk.occupancy[i]!, w = chunk.water?.[i] ?? 0;
      let run = 1;
      if (w === 0) while (i + run < total && run < 256 && chunk.material[i + run] === m && chunk.occupancy[i + run] === o && (chunk.water?.[i + run] ?? 0) === 0) run++;
      const full = m === 0 ? 0 : 255;
      let flag = m;
      if (o !== full) flag |= 64;
      if (run > 1 || w > 0) flag |= 128;
      out.push(flag);
      if (o !== full) out.push(o);
      if (w > 0) out.push(0, w);
      else if (run > 1) out.push(run - 1);
      i += run;
    }
  }
  return Uint8Array.from(out);
}

/**
 * A blob of `count` copies of the one chunk in `blob` (as writeSmoothGrid writes it, at
 * chunk (0, 0, 0)), in a row along x: chunks (0..count-1, 0, 0). Many large chunks
 * without encoding each one's voxels again.
 */
export function repeatChunk(blob: Uint8Array, count: number): Uint8Array {
  const chunk = blob.subarray(2);
  const out = new Uint8Array(2 + count * chunk.length);
  out.set(blob.subarray(0, 2));
  for (let i = 0; i < count; i++) {
    out.set(chunk, 2 + i * chunk.length);
    // The position delta's x: +1 chunk after the first (the least significant byte of the interleaved x is 9 bytes in).
    if (i > 0) out[2 + i * chunk.length + 9] = 1;
  }
  return out;
}

/** A chunk filled by `fill(x, y, z)` → [material, occupancy] (and optional water). */
export function makeChunk(at: [number, number, number], fill: (x: number, y: number, z: number) => [number, number, number?], side = 32): TestChunk {
  const n = side ** 3;
  const chunk: TestChunk = { at, material: new Uint8Array(n), occupancy: new Uint8Array(n), water: new Uint8Array(n) };
  for (let y = 0; y < side; y++) {
    for (let z = 0; z < side; z++) {
      for (let x = 0; x < side; x++) {
        const [m, o, w] = fill(x, y, z);
        const i = x + side * (z + side * y);
        chunk.material[i] = m;
        chunk.occupancy[i] = o;
        chunk.water![i] = w ?? 0;
      }
    }
  }
  return chunk;
}

export interface Closure {
  triangles: number;
  /** Directed edges whose reverse is missing or used a different number of times (holes). */
  unbalanced: number;
  /** Directed edges used more than once (non-manifold). */
  repeated: number;
  degenerate: number;
}

/** Welds the chunks' vertices by world position (within 1e-3 studs) and counts edge uses. */
export function closure(chunks: TerrainChunkMesh[], field: 'solid' | 'water' = 'solid'): Closure {
  const buckets = new Map<string, number[]>();
  const points: number[][] = [];
  const eps = 1e-3, K = 100;
  const find = (p: number[]): number => {
    const b = p.map((x) => Math.floor(x * K));
    for (let dx = -1; dx <= 1; dx++) for (let dy = -1; dy <= 1; dy++) for (let dz = -1; dz <= 1; dz++) {
      for (const id of buckets.get(`${b[0]! + dx},${b[1]! + dy},${b[2]! + dz}`) ?? []) {
        const q = points[id]!;
        if (Math.abs(q[0]! - p[0]!) < eps && Math.abs(q[1]! - p[1]!) < eps && Math.abs(q[2]! - p[2]!) < eps) return id;
      }
    }
    points.push(p);
    const key = b.join(',');
    const list = buckets.get(key) ?? [];
    list.push(points.length - 1);
    buckets.set(key, list);
    return points.length - 1;
  };
  const edges = new Map<number, number>();
  let triangles = 0, degenerate = 0;
  for (const chunk of chunks) {
    const g = chunk[field];
    if (!g) continue;
    const ids = new Int32Array(g.positions.length / 3);
    for (let i = 0; i < ids.length; i++) ids[i] = find([0, 1, 2].map((a) => g.positions[i * 3 + a]! + chunk.origin[a]!));
    for (let t = 0; t < g.indices.length; t += 3) {
      triangles++;
      const a = ids[g.indices[t]!]!, b = ids[g.indices[t + 1]!]!, c = ids[g.indices[t + 2]!]!;
      if (a === b || b === c || a === c) degenerate++;
      for (const [u, v] of [[a, b], [b, c], [c, a]] as const) edges.set(u * 2 ** 26 + v, (edges.get(u * 2 ** 26 + v) ?? 0) + 1);
    }
  }
  let unbalanced = 0, repeated = 0;
  for (const [key, count] of edges) {
    const u = Math.floor(key / 2 ** 26), v = key % 2 ** 26;
    if ((edges.get(v * 2 ** 26 + u) ?? 0) !== count) unbalanced++;
    if (count > 1) repeated++;
  }
  return { triangles, unbalanced, repeated, degenerate };
}
