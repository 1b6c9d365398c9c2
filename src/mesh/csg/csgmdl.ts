/**
 * `CSGMDL` versions 2 and 4: union render models, the whole blob XOR-obfuscated
 * (see obfuscation.ts). After the 10-byte magic and version: a content hash (16
 * hexadecimal characters) and 16 more bytes, the vertex count, the vertex record size (84: position, normal,
 * RGBA colour, normal id u32, uv, 16 bytes, tangent, 16 bytes), the vertices, the
 * index count and the u32 indices. Version 4 ends with a counted list of u32s whose
 * meaning is not known (it is checked and stepped over).
 */
import { checkIndices } from '../geometry.js';
import type { MeshLimits } from '../limits.js';
import { checkCount, fail, left, meshReader, take, u32, u32Array } from '../reader.js';
import type { UnionGraphicsAsset } from '../types.js';
import { clearByte, deobfuscate } from './obfuscation.js';

const MAGIC_BYTES = 10;
const VERTEX_BYTES = 84;

export function decodeCsgmdl(bytes: Uint8Array, version: number, limits: MeshLimits): UnionGraphicsAsset {
  csgmdlCounts(bytes, version, limits);
  const clear = deobfuscate(bytes);
  const r = meshReader(clear, `CSGMDL ${version}`, MAGIC_BYTES);
  const hashAt = take(r, 32, 'hash');
  const hash = hashText(clear.subarray(hashAt, hashAt + 16));
  const vertexCount = u32(r, 'vertex count');
  const strideAt = r.pos;
  const stride = u32(r, 'vertex size');
  if (stride < VERTEX_BYTES || stride > 1024) fail(r, `vertex size ${stride} is not ${VERTEX_BYTES}`, strideAt);
  checkCount(r, vertexCount, stride, 'vertex', limits.maxVertices);
  const at = take(r, vertexCount * stride, 'vertices');
  const v = r.view;
  const positions = new Float32Array(vertexCount * 3);
  const normals = new Float32Array(vertexCount * 3);
  const colors = new Uint8Array(vertexCount * 4);
  const uvs = new Float32Array(vertexCount * 2);
  for (let i = 0, p = at; i < vertexCount; i++, p += stride) {
    for (let k = 0; k < 3; k++) {
      positions[i * 3 + k] = v.getFloat32(p + k * 4, true);
      normals[i * 3 + k] = v.getFloat32(p + 12 + k * 4, true);
    }
    colors.set(clear.subarray(p + 24, p + 28), i * 4);
    uvs[i * 2] = v.getFloat32(p + 32, true);
    uvs[i * 2 + 1] = v.getFloat32(p + 36, true);
  }
  const indexCountAt = r.pos;
  const indexCount = u32(r, 'index count');
  if (indexCount % 3 !== 0) fail(r, `index count ${indexCount} is not a whole number of triangles`, indexCountAt);
  checkCount(r, indexCount / 3, 12, 'triangle', limits.maxTriangles);
  const indicesAt = r.pos;
  const indices = u32Array(r, indexCount, 'indices');
  checkIndices(r, indices, vertexCount, 'triangle', indicesAt);
  if (version === 4) {
    const count = u32(r, 'trailing list count');
    checkCount(r, count, 4, 'trailing list', limits.maxVertices);
    take(r, count * 4, 'trailing list');
  }
  if (left(r) > 0) fail(r, `${left(r)} bytes after the end of the model`);
  return {
    kind: 'union_graphics',
    version: String(version),
    geometry: { positions, normals, uvs, colors, indices },
    header: { vertexCount, faceCount: indexCount / 3, hash, extraIndexRanges: 0 },
  };
}

/**
 * Reads the counts through the obfuscation and checks the blob holds what they
 * declare before the whole of it is copied into clear: the vertices and indices
 * decoding it would read (what the scene assembly's place-wide budget counts).
 */
export function csgmdlCounts(bytes: Uint8Array, version: number, limits: MeshLimits): { vertices: number; indices: number } {
  const r = meshReader(bytes, `CSGMDL ${version}`);
  const at = MAGIC_BYTES + 32;
  const clearU32 = (offset: number): number => {
    if (offset + 4 > r.end) fail(r, `unexpected end of data at byte ${offset}`, Math.min(offset, r.end));
    return (clearByte(r.bytes, offset) | (clearByte(r.bytes, offset + 1) << 8) | (clearByte(r.bytes, offset + 2) << 16) | (clearByte(r.bytes, offset + 3) << 24)) >>> 0;
  };
  const vertexCount = clearU32(at);
  const stride = clearU32(at + 4);
  if (vertexCount > limits.maxVertices) fail(r, `vertex count ${vertexCount} exceeds the limit of ${limits.maxVertices}`, at);
  if (stride < VERTEX_BYTES || stride > 1024) fail(r, `vertex size ${stride} is not ${VERTEX_BYTES}`, at + 4);
  const indexCountAt = at + 8 + vertexCount * stride;
  const indexCount = clearU32(indexCountAt);
  if (indexCountAt + 4 + indexCount * 4 > r.end) fail(r, `index count ${indexCount} needs ${indexCount * 4} bytes, only ${r.end - indexCountAt - 4} left`, indexCountAt);
  return { vertices: vertexCount, indices: indexCount };
}

/** The hash as stored: 16 hexadecimal characters in every known file (else the bytes in hex). */
function hashText(bytes: Uint8Array): string {
  const isHexDigit = (b: number): boolean => (b >= 0x30 && b <= 0x39) || (b >= 0x61 && b <= 0x66);
  if (bytes.every(isHexDigit)) return String.fromCharCode(...bytes);
  let text = '';
  for (const b of bytes) text += b.toString(16).padStart(2, '0');
  return text;
}
