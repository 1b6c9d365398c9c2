/**
 * `CSGPHS` version 8: a geometry-type byte, a zero byte, then one ZSTD frame. Its
 * payload: nine u32 (hull count, point count, face count, two sizes of the first
 * hull, the byte size of the raw hulls, the symbol bit count, the symbol byte size,
 * the point byte size), the bounds (6 × f32), the raw hulls (hulls stored as
 * triangle lists: ranges into a face and a point array), the Edgebreaker symbols of
 * the other hulls (edgebreaker.ts), and their points in vertex order.
 */
import { DecodeError } from '../../parser/errors.js';
import { decompressZstd, frameContentSize } from '../../parser/zstd.js';
import { checkIndices, mergeGeometries } from '../geometry.js';
import { expansionCap, type MeshLimits } from '../limits.js';
import { checkCount, f32, fail, left, meshReader, subReader, take, u32, u32Array, u8, type MeshReader } from '../reader.js';
import type { HullGeometry, UnionPhysicsAsset } from '../types.js';
import { ClersBits, decodeEdgebreakerHulls, EdgebreakerError } from './edgebreaker.js';

const FRAME_AT = 12;
const PAYLOAD_HEADER_BYTES = 60;

export function decodeCsgphs8(bytes: Uint8Array, limits: MeshLimits): UnionPhysicsAsset {
  const r = meshReader(bytes, 'CSGPHS 8', 10);
  const geomType = u8(r, 'geometry type');
  const padding = u8(r, 'padding');
  if (padding !== 0) fail(r, `the byte after the geometry type is ${padding}, not 0`, 11);
  const payload = decompress(r, bytes.subarray(FRAME_AT), limits);
  const p = meshReader(payload, 'CSGPHS 8 payload');
  const hullCount = u32(p, 'hull count');
  const pointCount = u32(p, 'point count');
  const faceCount = u32(p, 'face count');
  u32(p, "first hull's point count");
  u32(p, "first hull's face count");
  const rawBytes = u32(p, 'raw hull size');
  const bitCount = u32(p, 'symbol bit count');
  const symbolBytes = u32(p, 'symbol size');
  const pointBytes = u32(p, 'point size');
  const bounds = { min: [f32(p), f32(p), f32(p)] as [number, number, number], max: [f32(p), f32(p), f32(p)] as [number, number, number] };
  if (hullCount > limits.maxHulls) fail(p, `hull count ${hullCount} exceeds the limit of ${limits.maxHulls}`, 0, 'maxHulls');
  if (pointCount > limits.maxVertices) fail(p, `point count ${pointCount} exceeds the limit of ${limits.maxVertices}`, 4, 'maxVertices');
  if (faceCount > limits.maxTriangles) fail(p, `face count ${faceCount} exceeds the limit of ${limits.maxTriangles}`, 8, 'maxTriangles');
  // Every face after a hull's first takes one symbol bit at least.
  if (faceCount > hullCount + bitCount) fail(p, `face count ${faceCount} is more than ${hullCount} hulls and ${bitCount} symbol bits can code`, 8);
  if (pointBytes !== pointCount * 12) fail(p, `point size ${pointBytes} is not 12 bytes for each of ${pointCount} points`, 32);
  if (PAYLOAD_HEADER_BYTES + rawBytes + symbolBytes + pointBytes !== payload.length) {
    fail(p, `the sections (${PAYLOAD_HEADER_BYTES} + ${rawBytes} + ${symbolBytes} + ${pointBytes} bytes) do not add up to the ${payload.length}-byte payload`, 20);
  }
  const hulls: HullGeometry[] = rawBytes > 0 ? readRawHulls(subReader(p, rawBytes, 'raw hulls'), limits) : [];
  const rawHullCount = hulls.length;
  const symbolsAt = take(p, symbolBytes, 'symbols');
  const pointsAt = take(p, pointBytes, 'points');
  let decoded;
  try {
    const bits = new ClersBits(new DataView(payload.buffer, payload.byteOffset + symbolsAt, symbolBytes), bitCount);
    decoded = decodeEdgebreakerHulls(bits, hullCount, faceCount);
    if (bits.remaining !== 0) throw new EdgebreakerError(`${bits.remaining} symbol bits left after the last hull`);
  } catch (error) {
    if (error instanceof EdgebreakerError) fail(p, `Edgebreaker hulls: ${error.message}`, symbolsAt);
    throw error;
  }
  let point = 0;
  for (const hull of decoded.hulls) {
    if (point + hull.vertexCount > pointCount) fail(p, `the hulls use more than the ${pointCount} points stored`, pointsAt);
    const positions = new Float32Array(hull.vertexCount * 3);
    for (let i = 0; i < positions.length; i++) positions[i] = p.view.getFloat32(pointsAt + (point * 3 + i) * 4, true);
    point += hull.vertexCount;
    hulls.push({ positions, indices: decoded.indices.slice(hull.firstFace * 3, (hull.firstFace + hull.faceCount) * 3), computed: false });
  }
  if (point !== pointCount) fail(p, `the hulls use ${point} of the ${pointCount} points stored`, pointsAt);
  if (hulls.length === 0) fail(p, 'no hulls', 0);
  return {
    kind: 'union_physics',
    version: '8',
    geometry: mergeGeometries(hulls),
    hulls,
    block: false,
    header: { geomType, physics: null, bounds, rawHullCount },
  };
}

function decompress(r: MeshReader, frame: Uint8Array, limits: MeshLimits): Uint8Array {
  try {
    if (frame.length < 4 || frame[0] !== 0x28 || frame[1] !== 0xb5 || frame[2] !== 0x2f || frame[3] !== 0xfd) fail(r, 'the hull data is not a ZSTD frame', FRAME_AT);
    const size = frameContentSize(frame);
    if (size === null) fail(r, 'the ZSTD frame does not declare its size', FRAME_AT);
    if (size > limits.maxDecompressedBytes) fail(r, `the ZSTD frame declares ${size} bytes, past the limit of ${limits.maxDecompressedBytes}`, FRAME_AT, 'maxDecompressedBytes');
    if (size > expansionCap(limits, frame.length)) fail(r, `the ZSTD frame declares ${size} bytes from ${frame.length}, past ${limits.maxExpansion}× its size`, FRAME_AT, 'maxExpansion');
    if (size < PAYLOAD_HEADER_BYTES) fail(r, `the ZSTD frame declares ${size} bytes, less than the ${PAYLOAD_HEADER_BYTES}-byte header`, FRAME_AT);
    return decompressZstd(frame, size);
  } catch (error) {
    if (error instanceof DecodeError) fail(r, error.reason, FRAME_AT);
    throw error;
  }
}

/** Hulls stored as plain triangle lists: face ranges, faces, point ranges (in floats), points. */
function readRawHulls(r: MeshReader, limits: MeshLimits): HullGeometry[] {
  const faceRanges = readRanges(r, 'face', limits);
  const faceEnd = faceRanges[faceRanges.length - 1] ?? 0;
  checkCount(r, faceEnd, 4, 'raw hull index', limits.maxTriangles * 3, 'maxTriangles');
  const facesAt = r.pos;
  const faces = u32Array(r, faceEnd, 'raw hull indices');
  const pointRanges = readRanges(r, 'point', limits);
  const pointEnd = pointRanges[pointRanges.length - 1] ?? 0;
  checkCount(r, pointEnd, 4, 'raw hull coordinate', limits.maxVertices * 3, 'maxVertices');
  const points = new Float32Array(pointEnd);
  const pointsAt = take(r, pointEnd * 4, 'raw hull points');
  for (let i = 0; i < pointEnd; i++) points[i] = r.view.getFloat32(pointsAt + i * 4, true);
  if (faceRanges.length !== pointRanges.length) fail(r, `${faceRanges.length - 1} raw hulls by faces, ${pointRanges.length - 1} by points`, facesAt);
  if (left(r) > 0) fail(r, `${left(r)} bytes left in the raw hulls`);
  const hulls: HullGeometry[] = [];
  for (let h = 0; h + 1 < faceRanges.length; h++) {
    const [f0, f1] = [faceRanges[h]!, faceRanges[h + 1]!];
    const [p0, p1] = [pointRanges[h]!, pointRanges[h + 1]!];
    if ((f1 - f0) % 3 !== 0 || (p1 - p0) % 3 !== 0) fail(r, `raw hull ${h} is not whole triangles and points`, facesAt);
    const indices = faces.slice(f0, f1);
    checkIndices(r, indices, (p1 - p0) / 3, `raw hull ${h} triangle`, facesAt + f0 * 4);
    hulls.push({ positions: points.slice(p0, p1), indices, computed: false });
  }
  return hulls;
}

/** A counted list of rising offsets starting at 0. */
function readRanges(r: MeshReader, what: string, limits: MeshLimits): Uint32Array {
  const at = r.pos;
  const count = u32(r, `raw hull ${what} range count`);
  checkCount(r, count, 4, `raw hull ${what} range`, limits.maxHulls + 1, 'maxHulls');
  const ranges = u32Array(r, count, `raw hull ${what} ranges`);
  for (let i = 0; i < count; i++) {
    if (i === 0 ? ranges[0] !== 0 : ranges[i]! < ranges[i - 1]!) fail(r, `raw hull ${what} ranges do not rise from 0`, at + 4 + i * 4);
  }
  return ranges;
}
