/**
 * Meshes `version 2.00`, `3.00` and `3.01`: a header that states its own size and
 * the sizes of its records (vertex 36 or 40 bytes, face 12, LOD entry 4), then
 * vertices, faces and (3.xx) the LOD table. Larger records than these are read for
 * their known fields and stepped over, as Roblox does.
 */
import { lodIndices, lodRanges } from '../geometry.js';
import type { MeshLimits } from '../limits.js';
import { checkCap, checkCount, checkLayout, fail, left, meshReader, take, u16, u32, u8 } from '../reader.js';
import type { FileMeshAsset } from '../types.js';
import { readFaceRecords, readHeaderSize, readVertexRecords } from './vertices.js';

export function decodeMeshV2(bytes: Uint8Array, version: string, bodyStart: number, limits: MeshLimits): FileMeshAsset {
  const r = meshReader(bytes, `mesh ${version}`, bodyStart);
  const lodsStored = version !== '2.00';
  const headerStart = r.pos;
  const headerEnd = readHeaderSize(r, lodsStored ? 16 : 12);
  const vertexSize = u8(r, 'vertex size');
  const faceSize = u8(r, 'face size');
  const lodSize = lodsStored ? u16(r, 'LOD entry size') : 4;
  const lodCount = lodsStored ? u16(r, 'LOD count') : 0;
  const vertexCount = u32(r, 'vertex count');
  const faceCount = u32(r, 'face count');
  if (vertexSize < 36) fail(r, `vertex size ${vertexSize} is below 36`, headerStart + 2);
  if (faceSize < 12) fail(r, `face size ${faceSize} is below 12`, headerStart + 3);
  if (lodSize < 4) fail(r, `LOD entry size ${lodSize} is below 4`, headerStart + 4);
  take(r, headerEnd - r.pos, 'the rest of the header');
  checkCap(r, 'vertex count', vertexCount, limits.maxVertices, r.pos);
  checkCap(r, 'face count', faceCount, limits.maxTriangles, r.pos);
  checkCap(r, 'LOD count', lodCount, limits.maxLods, r.pos);
  checkLayout(r, [['vertices', vertexCount * vertexSize], ['faces', faceCount * faceSize], ['LOD table', lodCount * lodSize]]);

  const vertices = readVertexRecords(r, vertexCount, vertexSize, limits);
  const indices = readFaceRecords(r, faceCount, faceSize, vertexCount, limits);
  checkCount(r, lodCount, lodSize, 'LOD', limits.maxLods);
  const lodAt = take(r, lodCount * lodSize, 'LOD table');
  const lodOffsets: number[] = [];
  for (let i = 0; i < lodCount; i++) lodOffsets.push(r.view.getUint32(lodAt + i * lodSize, true));
  const lods = lodRanges(r, lodOffsets, faceCount, lodAt);
  const notes = left(r) > 0 ? [`${left(r)} bytes after the LOD table were ignored`] : [];
  const [first, end] = lods[0]!;
  return {
    kind: 'mesh',
    version,
    geometry: { ...vertices, indices: lodIndices(indices, first, end) },
    header: {
      vertexCount, faceCount, lodOffsets, lods, lodType: null, highQualityLodCount: null,
      subsetCount: 0, boneCount: 0, boneNames: [], facs: null, vertexSize, draco: false, chunks: null, notes,
    },
  };
}
