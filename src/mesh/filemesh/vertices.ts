/**
 * The binary vertex record of meshes 2.00 to 6.00: position, normal, uv (f32),
 * tangent (4 × i8, not kept), then RGBA colour (4 × u8) when the record is 40 bytes
 * or more. Faces are three u32 vertex indices.
 */
import { checkIndices } from '../geometry.js';
import { checkCount, fail, take, u16, u32Array, type MeshReader } from '../reader.js';
import type { MeshLimits } from '../limits.js';

/**
 * The header of meshes 2.00 to 5.00 starts with its own size (u16), at least
 * `minimum`: returns where it ends, so fields added by later writers are stepped over.
 */
export function readHeaderSize(r: MeshReader, minimum: number): number {
  const start = r.pos;
  const size = u16(r, 'header size');
  if (size < minimum) fail(r, `header size ${size} is below ${minimum}`, start);
  return start + size;
}

export interface VertexArrays {
  positions: Float32Array;
  normals: Float32Array;
  uvs: Float32Array;
  colors?: Uint8Array;
}

export function readVertexRecords(r: MeshReader, count: number, stride: number, limits: MeshLimits): VertexArrays {
  checkCount(r, count, stride, 'vertex', limits.maxVertices);
  const at = take(r, count * stride, 'vertices');
  const { view } = r;
  const positions = new Float32Array(count * 3);
  const normals = new Float32Array(count * 3);
  const uvs = new Float32Array(count * 2);
  const colors = stride >= 40 ? new Uint8Array(count * 4) : undefined;
  for (let i = 0, p = at; i < count; i++, p += stride) {
    positions[i * 3] = view.getFloat32(p, true);
    positions[i * 3 + 1] = view.getFloat32(p + 4, true);
    positions[i * 3 + 2] = view.getFloat32(p + 8, true);
    normals[i * 3] = view.getFloat32(p + 12, true);
    normals[i * 3 + 1] = view.getFloat32(p + 16, true);
    normals[i * 3 + 2] = view.getFloat32(p + 20, true);
    uvs[i * 2] = view.getFloat32(p + 24, true);
    uvs[i * 2 + 1] = view.getFloat32(p + 28, true);
    if (colors) colors.set(r.bytes.subarray(p + 36, p + 40), i * 4);
  }
  return colors ? { positions, normals, uvs, colors } : { positions, normals, uvs };
}

/** `count` faces of `stride` bytes (three u32 indices first), each index checked against `vertexCount`. */
export function readFaceRecords(r: MeshReader, count: number, stride: number, vertexCount: number, limits: MeshLimits): Uint32Array {
  checkCount(r, count, stride, 'face', limits.maxTriangles);
  const at = r.pos;
  let indices: Uint32Array;
  if (stride === 12) {
    indices = u32Array(r, count * 3, 'faces');
  } else {
    take(r, count * stride, 'faces');
    indices = new Uint32Array(count * 3);
    for (let i = 0; i < count; i++) {
      for (let k = 0; k < 3; k++) indices[i * 3 + k] = r.view.getUint32(at + i * stride + k * 4, true);
    }
  }
  checkIndices(r, indices, vertexCount, 'face', at);
  return indices;
}
