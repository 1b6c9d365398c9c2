/** Helpers every decoder shares: index validation, LOD ranges, groups, merging hull geometry. */
import type { MeshGeometry, MeshGroup } from '../geometry/mesh.js';
import { fail, type MeshReader } from './reader.js';

/** Throws unless every index names a vertex; `at` is where the indices were read, for the error. */
export function checkIndices(r: MeshReader, indices: Uint32Array, vertexCount: number, what: string, at: number): void {
  for (let i = 0; i < indices.length; i++) {
    if (indices[i]! >= vertexCount) fail(r, `${what} ${Math.floor(i / 3)} names vertex ${indices[i]}, but there are ${vertexCount}`, at);
  }
}

/**
 * LOD ranges from a LOD table of face offsets. Roblox ignores tables with fewer than
 * three entries (the whole mesh is LOD 0); a longer table must rise and stay within
 * the stored faces.
 */
export function lodRanges(r: MeshReader, offsets: ArrayLike<number>, faceCount: number, at: number): Array<[number, number]> {
  if (offsets.length < 3) return [[0, faceCount]];
  const ranges: Array<[number, number]> = [];
  for (let i = 0; i + 1 < offsets.length; i++) {
    const start = offsets[i]!, end = offsets[i + 1]!;
    if (end < start || end > faceCount) fail(r, `LOD table entry ${i + 1} (${end}) is out of order or past the ${faceCount} faces`, at);
    ranges.push([start, end]);
  }
  return ranges;
}

/** One LOD's triangles: the stored indices themselves when it spans them all, else a copy of its run. */
export function lodIndices(indices: Uint32Array, firstFace: number, endFace: number): Uint32Array {
  return firstFace === 0 && endFace * 3 === indices.length ? indices : indices.slice(firstFace * 3, endFace * 3);
}

/**
 * Mesh subsets as groups over LOD 0's indices, when there is more than one and,
 * cut to LOD 0, they tile it exactly (otherwise a writer would drop triangles).
 */
export function subsetGroups(subsets: ArrayLike<{ faceStart: number; faceCount: number }>, lod0: [number, number]): MeshGroup[] | undefined {
  if (subsets.length < 2) return undefined;
  const groups: MeshGroup[] = [];
  let next = lod0[0];
  for (let i = 0; i < subsets.length; i++) {
    const { faceStart, faceCount } = subsets[i]!;
    const start = Math.max(faceStart, lod0[0]);
    const end = Math.min(faceStart + faceCount, lod0[1]);
    if (end <= start) continue;
    if (start !== next) return undefined;
    groups.push({ start: (start - lod0[0]) * 3, count: (end - start) * 3, material: `subset ${i}` });
    next = end;
  }
  return next === lod0[1] && groups.length > 1 ? groups : undefined;
}

/** Hulls concatenated into one geometry, each hull's indices moved past the vertices before it. */
export function mergeGeometries(parts: ReadonlyArray<{ positions: Float32Array; indices: Uint32Array }>): MeshGeometry {
  let vertices = 0, indices = 0;
  for (const part of parts) { vertices += part.positions.length; indices += part.indices.length; }
  const positions = new Float32Array(vertices);
  const merged = new Uint32Array(indices);
  let v = 0, k = 0;
  for (const part of parts) {
    positions.set(part.positions, v);
    const base = v / 3;
    for (let i = 0; i < part.indices.length; i++) merged[k++] = part.indices[i]! + base;
    v += part.positions.length;
  }
  return { positions, indices: merged };
}

/**
 * A note when some vertices have non-finite positions (Roblox's LOD simplifier leaves
 * such vertices in real files, unused by LOD 0), so a writer knows to skip them.
 */
export function nonFiniteNote(geometry: MeshGeometry): string | null {
  const p = geometry.positions;
  const vertices = p.length / 3;
  let bad: Uint8Array | null = null;
  let count = 0;
  for (let v = 0; v < vertices; v++) {
    if (Number.isFinite(p[v * 3]!) && Number.isFinite(p[v * 3 + 1]!) && Number.isFinite(p[v * 3 + 2]!)) continue;
    (bad ??= new Uint8Array(vertices))[v] = 1;
    count++;
  }
  if (!bad) return null;
  let used = 0;
  for (const index of geometry.indices) if (bad[index]) used++;
  return `${count} vertices have non-finite positions; ${used ? `LOD 0 uses them ${used} times` : 'LOD 0 does not use them'}`;
}
