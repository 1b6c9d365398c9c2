/**
 * `CSGMDL` version 5: only the magic is obfuscated. Then, each with a u16 count:
 * positions (3 × f32), normals (3 × u16, 0x7FFF is zero, 32767 steps per unit; a u32
 * byte size first), RGBA colours, normal ids (u8), uvs (2 × f32) and tangents (as
 * normals). Every per-vertex array has the positions' count (or none). Then the
 * indices: a count, a byte size and a delta code (one byte for steps of -64..63,
 * three bytes for larger ones, 23-bit wrap-around), and u32 range markers
 * cutting the index list: the first range is the model, further ones (LODs,
 * presumably) are counted but not returned.
 */
import type { MeshLimits } from '../limits.js';
import { checkCount, fail, left, meshReader, take, u16, u32, u8, type MeshReader } from '../reader.js';
import type { UnionGraphicsAsset } from '../types.js';

const MAGIC_BYTES = 10;

export function decodeCsgmdl5(bytes: Uint8Array, limits: MeshLimits): UnionGraphicsAsset {
  const r = meshReader(bytes, 'CSGMDL 5', MAGIC_BYTES);
  const vertexCount = u16(r, 'position count');
  checkCount(r, vertexCount, 12, 'position', limits.maxVertices);
  const positions = readF32s(r, vertexCount * 3, 'positions');
  const normals = readQuantized(r, vertexCount, 'normal');
  const colorCount = sameCount(r, vertexCount, 'colour');
  checkCount(r, colorCount, 4, 'colour', vertexCount);
  const colorAt = take(r, colorCount * 4, 'colours');
  const colors = bytes.slice(colorAt, colorAt + colorCount * 4);
  const idCount = sameCount(r, vertexCount, 'normal id');
  take(r, idCount, 'normal ids');
  const uvCount = sameCount(r, vertexCount, 'uv');
  checkCount(r, uvCount, 8, 'uv', vertexCount);
  const uvs = readF32s(r, uvCount * 2, 'uvs');
  readQuantized(r, vertexCount, 'tangent');
  const { indices, extraRanges } = readIndices(r, vertexCount, limits);
  if (left(r) > 0) fail(r, `${left(r)} bytes after the end of the model`);
  return {
    kind: 'union_graphics',
    version: '5',
    geometry: {
      positions,
      ...(normals ? { normals } : {}),
      ...(uvCount ? { uvs } : {}),
      ...(colorCount ? { colors } : {}),
      indices,
    },
    header: { vertexCount, faceCount: indices.length / 3, hash: null, extraIndexRanges: extraRanges },
  };
}

/**
 * The vertices and indices decoding would read, from the counts alone (every array
 * stepped over, nothing allocated; the same checks as decoding up to the index data):
 * what the scene assembly's place-wide budget counts before it decodes a blob.
 */
export function csgmdl5Counts(bytes: Uint8Array, limits: MeshLimits): { vertices: number; indices: number } {
  const r = meshReader(bytes, 'CSGMDL 5', MAGIC_BYTES);
  const vertexCount = u16(r, 'position count');
  checkCount(r, vertexCount, 12, 'position', limits.maxVertices);
  take(r, vertexCount * 12, 'positions');
  skipQuantized(r, vertexCount, 'normal');
  take(r, sameCount(r, vertexCount, 'colour') * 4, 'colours');
  take(r, sameCount(r, vertexCount, 'normal id'), 'normal ids');
  take(r, sameCount(r, vertexCount, 'uv') * 8, 'uvs');
  skipQuantized(r, vertexCount, 'tangent');
  const countAt = r.pos;
  const count = u32(r, 'index count');
  if (count > limits.maxTriangles * 3) fail(r, `index count ${count} exceeds the limit of ${limits.maxTriangles * 3}`, countAt);
  const size = u32(r, 'index data size');
  take(r, size, 'index data');
  if (count > size) fail(r, `index count ${count} needs at least ${count} bytes of index data, there are ${size}`, countAt);
  return { vertices: vertexCount, indices: count };
}

function skipQuantized(r: MeshReader, vertexCount: number, what: string): void {
  const count = sameCount(r, vertexCount, what);
  const sizeAt = r.pos;
  const size = u32(r, `${what} size`);
  if (size !== count * 6) fail(r, `${what} size ${size} is not 6 bytes for each of ${count}`, sizeAt);
  take(r, size, `${what}s`);
}

/** A u16 count that must be 0 or the position count. */
function sameCount(r: MeshReader, vertexCount: number, what: string): number {
  const at = r.pos;
  const count = u16(r, `${what} count`);
  if (count !== 0 && count !== vertexCount) fail(r, `${count} ${what}s for ${vertexCount} positions`, at);
  return count;
}

function readF32s(r: MeshReader, count: number, what: string): Float32Array {
  const at = take(r, count * 4, what);
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) out[i] = r.view.getFloat32(at + i * 4, true);
  return out;
}

function readQuantized(r: MeshReader, vertexCount: number, what: string): Float32Array | undefined {
  const count = sameCount(r, vertexCount, what);
  const sizeAt = r.pos;
  const size = u32(r, `${what} size`);
  if (size !== count * 6) fail(r, `${what} size ${size} is not 6 bytes for each of ${count}`, sizeAt);
  const at = take(r, size, `${what}s`);
  if (count === 0) return undefined;
  const out = new Float32Array(count * 3);
  for (let i = 0; i < count * 3; i++) {
    // 16-bit wrap-around of (stored − 0x7FFF), as the format's writer computes it.
    out[i] = (((r.view.getUint16(at + i * 2, true) - 0x7fff) << 16) >> 16) / 32767;
  }
  return out;
}

function readIndices(r: MeshReader, vertexCount: number, limits: MeshLimits): { indices: Uint32Array; extraRanges: number } {
  const countAt = r.pos;
  const count = u32(r, 'index count');
  if (count > limits.maxTriangles * 3) fail(r, `index count ${count} exceeds the limit of ${limits.maxTriangles * 3}`, countAt);
  const size = u32(r, 'index data size');
  const dataAt = take(r, size, 'index data');
  // Each index takes one byte at least: the count cannot outrun the data.
  if (count > size) fail(r, `index count ${count} needs at least ${count} bytes of index data, there are ${size}`, countAt);
  const all = new Uint32Array(count);
  const data = r.bytes;
  let p = dataAt;
  const end = dataAt + size;
  let index = 0;
  for (let i = 0; i < count; i++) {
    if (p >= end) fail(r, `index data ends after ${i} of ${count} indices`, p);
    const b0 = data[p++]!;
    let step: number;
    if (b0 < 0x40) step = b0;
    else if (b0 < 0x80) step = b0 - 0x80;
    else {
      if (p + 2 > end) fail(r, `index data ends inside index ${i}`, p - 1);
      step = ((b0 - 0x80) << 16) | (data[p]! << 8) | data[p + 1]!;
      p += 2;
    }
    index = (index + step) >>> 0;
    all[i] = index & 0x7fffff;
  }
  if (p !== end) fail(r, `${end - p} bytes of index data left after ${count} indices`, p);
  const markerCount = u8(r, 'range marker count');
  const markersAt = r.pos;
  checkCount(r, markerCount, 4, 'range marker', 255);
  const markers: number[] = [];
  for (let i = 0; i < markerCount; i++) markers.push(u32(r, 'range marker'));
  if (markers.length < 2) fail(r, `${markers.length} index range markers; the model needs 2`, markersAt - 1);
  for (let i = 0; i < markers.length; i++) {
    if (markers[i]! > count || (i > 0 && markers[i]! < markers[i - 1]!)) fail(r, `index range marker ${i} (${markers[i]}) is out of order or past the ${count} indices`, markersAt + i * 4);
  }
  // Two markers: the model runs to the end of the list; more: up to the second.
  const first = markers[0]!;
  const last = markers.length === 2 ? count : markers[1]!;
  if ((last - first) % 3 !== 0) fail(r, `the model's index range ${first}..${last} is not whole triangles`, markersAt);
  const indices = all.slice(first, last);
  for (let i = 0; i < indices.length; i++) {
    if (indices[i]! >= vertexCount) fail(r, `triangle ${Math.floor(i / 3)} names vertex ${indices[i]}, but there are ${vertexCount}`, dataAt);
  }
  return { indices, extraRanges: markers.length - 2 };
}
