/**
 * Meshes `version 4.00`, `4.01` and `5.00`: a fixed header (its size first: 24, or
 * 32 with 5.00's FACS fields), 40-byte vertices, per-vertex envelopes when there are
 * bones, faces, the LOD table, bones, the bone name table, subsets, and (5.00) the
 * FACS facial-animation block, which is stepped over by its declared size.
 */
import { lodIndices, lodRanges, subsetGroups } from '../geometry.js';
import type { MeshLimits } from '../limits.js';
import { checkCap, checkCount, checkLayout, left, meshReader, take, u16, u32, u32Array, u8 } from '../reader.js';
import type { FileMeshAsset } from '../types.js';
import {
  BONE_BYTES, boneNames, buildSkin, ENVELOPE_BYTES, readBones, readEnvelopes, readNameTable, readSubsets, SUBSET_BYTES,
} from './skinning.js';
import { readFaceRecords, readHeaderSize, readVertexRecords } from './vertices.js';

const VERTEX_BYTES = 40;
const FACE_BYTES = 12;

export function decodeMeshV4(bytes: Uint8Array, version: string, bodyStart: number, limits: MeshLimits): FileMeshAsset {
  const r = meshReader(bytes, `mesh ${version}`, bodyStart);
  const hasFacs = version === '5.00';
  const headerStart = r.pos;
  const headerEnd = readHeaderSize(r, hasFacs ? 32 : 24);
  const lodType = u16(r, 'LOD type');
  const vertexCount = u32(r, 'vertex count');
  const faceCount = u32(r, 'face count');
  const lodCount = u16(r, 'LOD count');
  const boneCount = u16(r, 'bone count');
  const nameTableBytes = u32(r, 'bone name table size');
  const subsetCount = u16(r, 'subset count');
  const highQualityLodCount = u8(r, 'high-quality LOD count');
  u8(r, 'padding');
  const facsFormat = hasFacs ? u32(r, 'FACS format') : null;
  const facsBytes = hasFacs ? u32(r, 'FACS size') : 0;
  take(r, headerEnd - r.pos, 'the rest of the header');
  checkCap(r, 'vertex count', vertexCount, limits.maxVertices, headerStart + 4);
  checkCap(r, 'face count', faceCount, limits.maxTriangles, headerStart + 8);
  checkCap(r, 'LOD count', lodCount, limits.maxLods, headerStart + 12);
  checkCap(r, 'bone count', boneCount, limits.maxBones, headerStart + 14);
  checkCap(r, 'bone name table size', nameTableBytes, limits.maxNameTableBytes, headerStart + 16);
  checkCap(r, 'subset count', subsetCount, limits.maxSubsets, headerStart + 20);
  checkLayout(r, [
    ['vertices', vertexCount * VERTEX_BYTES], ['envelopes', boneCount > 0 ? vertexCount * ENVELOPE_BYTES : 0],
    ['faces', faceCount * FACE_BYTES], ['LOD table', lodCount * 4], ['bones', boneCount * BONE_BYTES],
    ['bone names', nameTableBytes], ['subsets', subsetCount * SUBSET_BYTES], ['FACS', facsBytes],
  ]);

  const vertices = readVertexRecords(r, vertexCount, VERTEX_BYTES, limits);
  const envelopes = boneCount > 0 ? readEnvelopes(r, vertexCount, limits) : null;
  const indices = readFaceRecords(r, faceCount, FACE_BYTES, vertexCount, limits);
  checkCount(r, lodCount, 4, 'LOD', limits.maxLods);
  const lodAt = r.pos;
  const lodOffsets = Array.from(u32Array(r, lodCount, 'LOD table'));
  const lods = lodRanges(r, lodOffsets, faceCount, lodAt);
  const bones = readBones(r, boneCount, limits);
  const tableAt = r.pos;
  const table = readNameTable(r, nameTableBytes, limits);
  const names = boneNames(r, bones, table, tableAt);
  const subsets = readSubsets(r, subsetCount, limits);
  if (hasFacs) take(r, facsBytes, 'FACS data');
  const notes = left(r) > 0 ? [`${left(r)} bytes after the last section were ignored`] : [];

  const lod0 = lods[0]!;
  const skin = envelopes ? buildSkin(r, envelopes, bones, names, subsets, vertexCount, faceCount) : undefined;
  const groups = subsetGroups(subsets, lod0);
  return {
    kind: 'mesh',
    version,
    geometry: {
      ...vertices,
      indices: lodIndices(indices, lod0[0], lod0[1]),
      ...(groups ? { groups } : {}),
      ...(skin ? { skin } : {}),
    },
    header: {
      vertexCount, faceCount, lodOffsets, lods, lodType, highQualityLodCount,
      subsetCount, boneCount, boneNames: names,
      facs: hasFacs && facsBytes > 0 ? { bytes: facsBytes, format: facsFormat } : null,
      vertexSize: VERTEX_BYTES, draco: false, chunks: null, notes,
    },
  };
}
