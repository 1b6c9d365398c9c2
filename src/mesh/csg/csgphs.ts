/**
 * `CSGPHS` collision blobs (`PhysicalConfigData`): a union's convex hulls, in its
 * local space at `InitialSize`. After "CSGPHS" and a u32 version:
 * - 0: the text "BLOCK" (the union collides as its box; no hulls);
 * - 3 and 5: hulls to the end of the blob;
 * - 6: mass properties, then hulls to the end (booga's unions hold up to 19);
 * - 7: a geometry-type byte, mass properties, then hulls to the end;
 * - 8: see csgphs8.ts.
 * A hull is two length-prefixed 16-byte blocks (constant in every known file), a
 * count of floats (3 per point) with the float size (4), the points, then a count
 * of u32 indices (3 per triangle) and the indices. A hull with points and no
 * indices gets its triangles from convexHull().
 */
import type { MeshLimits } from '../limits.js';
import { checkCount, f32, fail, left, meshReader, take, u32, u8, type MeshReader } from '../reader.js';
import { checkIndices, mergeGeometries } from '../geometry.js';
import type { HullGeometry, UnionPhysicsAsset } from '../types.js';
import { convexHull } from './convex-hull.js';
import { decodeCsgphs8 } from './csgphs8.js';

const HEADER_BYTES = 10;
/** Mass properties (versions 6 and 7): volume, centre of gravity, six moments of inertia, as f32. */
const PHYSICS_BYTES = 40;
const MAX_BLOCK_BYTES = 1024;

export function decodeCsgphs(bytes: Uint8Array, version: number, limits: MeshLimits): UnionPhysicsAsset {
  if (version === 8) return decodeCsgphs8(bytes, limits);
  const r = meshReader(bytes, `CSGPHS ${version}`, HEADER_BYTES);
  const header: UnionPhysicsAsset['header'] = { geomType: null, physics: null, bounds: null, rawHullCount: 0 };
  if (version === 0) {
    const at = take(r, 5, 'BLOCK');
    if (String.fromCharCode(...bytes.subarray(at, at + 5)) !== 'BLOCK' || left(r) > 0) fail(r, 'version 0 holds only the text "BLOCK"', at);
    return { kind: 'union_physics', version: '0', geometry: null, hulls: [], block: true, header };
  }
  const hulls: HullGeometry[] = [];
  const totals = { vertices: 0, triangles: 0, hullWork: 0 };
  switch (version) {
    case 3: case 5:
      while (left(r) > 0) hulls.push(readHull(r, limits, totals, hulls.length));
      break;
    case 6:
      header.physics = readPhysics(r);
      while (left(r) > 0) hulls.push(readHull(r, limits, totals, hulls.length));
      break;
    case 7:
      header.geomType = u8(r, 'geometry type');
      header.physics = readPhysics(r);
      while (left(r) > 0) hulls.push(readHull(r, limits, totals, hulls.length));
      break;
    default:
      fail(r, `unsupported CSGPHS version ${version} (known: 0 BLOCK, 3, 5, 6, 7, 8)`, 6);
  }
  if (hulls.length === 0) fail(r, 'no hulls');
  return { kind: 'union_physics', version: String(version), geometry: mergeGeometries(hulls), hulls, block: false, header };
}

/**
 * What decoding a CSGPHS blob of `version` (0, 3, 5, 6 or 7) under `limits` can cost at
 * most, read from its hull headers without decoding anything: `work`, the hull work
 * it would spend (points squared of each hull stored as points only, up to where the
 * decoder would stop: a hull past `maxHullPoints` or `maxHullWork`, or bytes that do not
 * read as a hull), and `triangles`, the most it would keep (a computed hull of n points
 * has at most 2n − 4). Null for CSGPHS 8 and unknown versions: their counts are not
 * readable without decoding.
 */
export function csgphsCost(bytes: Uint8Array, version: number, limits: MeshLimits): { work: number; triangles: number } | null {
  if (version === 0) return { work: 0, triangles: 0 };
  if (version !== 3 && version !== 5 && version !== 6 && version !== 7) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = bytes.length;
  let pos = HEADER_BYTES + (version === 6 ? PHYSICS_BYTES : version === 7 ? 1 + PHYSICS_BYTES : 0);
  let work = 0, triangles = 0;
  const u32At = (at: number): number => (at + 4 <= end ? view.getUint32(at, true) : -1);
  for (let index = 0; pos < end && index < limits.maxHulls; index++) {
    for (let block = 0; block < 2; block++) {
      const length = u32At(pos);
      if (length < 0 || length > MAX_BLOCK_BYTES) return { work, triangles };
      pos += 4 + length;
    }
    const floatCount = u32At(pos);
    if (floatCount < 0 || floatCount % 3 !== 0 || u32At(pos + 4) !== 4 || pos + 8 + floatCount * 4 > end) return { work, triangles };
    pos += 8 + floatCount * 4;
    const indexCount = u32At(pos);
    if (indexCount < 0 || indexCount % 3 !== 0 || pos + 4 + indexCount * 4 > end) return { work, triangles };
    pos += 4 + indexCount * 4;
    const points = floatCount / 3;
    if (indexCount === 0 && points > 0) {
      if (points > limits.maxHullPoints || work + points * points > limits.maxHullWork) return { work, triangles };
      work += points * points;
      triangles += Math.max(0, 2 * points - 4);
    } else {
      triangles += indexCount / 3;
    }
  }
  return { work, triangles };
}

function readPhysics(r: MeshReader): NonNullable<UnionPhysicsAsset['header']['physics']> {
  const volume = f32(r, 'volume');
  const centerOfGravity: [number, number, number] = [f32(r, 'centre of gravity'), f32(r, 'centre of gravity'), f32(r, 'centre of gravity')];
  const inertia = [0, 0, 0, 0, 0, 0].map(() => f32(r, 'moment of inertia')) as [number, number, number, number, number, number];
  return { volume, centerOfGravity, inertia };
}

function readHull(r: MeshReader, limits: MeshLimits, totals: { vertices: number; triangles: number; hullWork: number }, index: number): HullGeometry {
  if (index >= limits.maxHulls) fail(r, `more than ${limits.maxHulls} hulls`, r.pos, 'maxHulls');
  for (const block of ['first', 'second']) {
    const length = u32(r, `hull ${index}'s ${block} block size`);
    if (length > MAX_BLOCK_BYTES) fail(r, `hull ${index}'s ${block} block of ${length} bytes exceeds ${MAX_BLOCK_BYTES}`, r.pos - 4);
    take(r, length, `hull ${index}'s ${block} block`);
  }
  const floatsAt = r.pos;
  const floatCount = u32(r, 'float count');
  const floatSize = u32(r, 'float size');
  if (floatCount % 3 !== 0) fail(r, `hull ${index} has ${floatCount} floats, not whole points`, floatsAt);
  if (floatSize !== 4) fail(r, `hull ${index}'s float size is ${floatSize}, not 4`, floatsAt + 4);
  const points = floatCount / 3;
  checkCount(r, points, 12, `hull ${index} point`, limits.maxVertices - totals.vertices, 'maxVertices');
  const at = take(r, floatCount * 4, 'points');
  const positions = new Float32Array(floatCount);
  for (let i = 0; i < floatCount; i++) positions[i] = r.view.getFloat32(at + i * 4, true);
  const indexAt = r.pos;
  const indexCount = u32(r, 'index count');
  if (indexCount % 3 !== 0) fail(r, `hull ${index} has ${indexCount} indices, not whole triangles`, indexAt);
  checkCount(r, indexCount / 3, 12, `hull ${index} triangle`, limits.maxTriangles - totals.triangles, 'maxTriangles');
  const indicesAt = take(r, indexCount * 4, 'indices');
  let indices: Uint32Array = new Uint32Array(indexCount);
  for (let i = 0; i < indexCount; i++) indices[i] = r.view.getUint32(indicesAt + i * 4, true);
  checkIndices(r, indices, points, `hull ${index} triangle`, indicesAt);
  let computed = false;
  if (indexCount === 0 && points > 0) {
    if (points > limits.maxHullPoints) fail(r, `hull ${index} stores ${points} points and no triangles; computing hulls is limited to ${limits.maxHullPoints} points`, floatsAt, 'maxHullPoints');
    totals.hullWork += points * points;
    if (totals.hullWork > limits.maxHullWork) fail(r, `hull ${index}: the blob's hulls stored as points only pass the limit on computing them (maxHullWork ${limits.maxHullWork}, the sum of their points squared)`, floatsAt, 'maxHullWork');
    indices = convexHull(positions);
    computed = true;
    if (indices.length / 3 > limits.maxTriangles - totals.triangles) fail(r, `hull ${index}'s computed triangles exceed the limit`, floatsAt, 'maxTriangles');
  }
  totals.vertices += points;
  totals.triangles += indices.length / 3;
  return { positions, indices, computed };
}
