/**
 * Meshes `version 6.00` and `7.00`: a run of chunks to the end of the file, each an
 * 8-byte NUL-padded type, a u32 chunk version, a u32 size and that many bytes.
 * COREMESH holds the geometry (version 1: the 4.00 vertex and face records, with
 * counts; version 2: a Draco stream), LODS the LOD table, SKINNING the 4.00 skinning
 * records with counts; FACS and HSRAVIS (and chunk types not known here) are
 * stepped over by their size.
 */
import { lodIndices, lodRanges, subsetGroups } from '../geometry.js';
import type { MeshLimits } from '../limits.js';
import { checkCount, fail, left, meshReader, subReader, take, u16, u32, u32Array, u8, type MeshReader } from '../reader.js';
import type { FileMeshAsset, FileMeshHeader } from '../types.js';
import { decodeDraco, type DracoGeometry } from './draco.js';
import {
  boneNames, buildSkin, readBones, readEnvelopes, readNameTable, readSubsets, type BoneRecord, type SubsetRecord,
} from './skinning.js';
import { readFaceRecords, readVertexRecords } from './vertices.js';

const CHUNK_HEADER_BYTES = 16;

interface Skinning {
  reader: MeshReader;
  vertexCount: number;
  envelopes: { at: number; bytes: Uint8Array };
  bones: BoneRecord[];
  names: string[];
  subsets: SubsetRecord[];
}

export function decodeChunkedMesh(bytes: Uint8Array, version: string, bodyStart: number, limits: MeshLimits): FileMeshAsset {
  const r = meshReader(bytes, `mesh ${version}`, bodyStart);
  const chunks: NonNullable<FileMeshHeader['chunks']> = [];
  const notes: string[] = [];
  let core: (DracoGeometry & { faceCount: number; draco: boolean }) | null = null;
  let lodTable: { offsets: number[]; type: number; highQuality: number; reader: MeshReader; at: number } | null = null;
  let skinning: Skinning | null = null;
  let facs: FileMeshHeader['facs'] = null;

  while (left(r) > 0) {
    if (chunks.length >= limits.maxChunks) fail(r, `more than ${limits.maxChunks} chunks`);
    const headerAt = take(r, CHUNK_HEADER_BYTES, 'chunk header');
    const type = chunkType(bytes, headerAt);
    const chunkVersion = r.view.getUint32(headerAt + 8, true);
    const size = r.view.getUint32(headerAt + 12, true);
    const c = subReader(r, size, `${type} chunk of ${size} bytes`);
    chunks.push({ type, version: chunkVersion, bytes: size });
    switch (type) {
      case 'COREMESH':
        if (core) fail(c, 'a second COREMESH chunk', headerAt);
        if (chunkVersion === 1) core = { ...readCoreMesh(c, limits), draco: false };
        else if (chunkVersion === 2) core = { ...readDracoCoreMesh(c, limits), draco: true };
        else fail(c, `unsupported COREMESH chunk version ${chunkVersion}`, headerAt + 8);
        break;
      case 'LODS':
        if (chunkVersion !== 1) { notes.push(`LODS chunk version ${chunkVersion} not read`); break; }
        lodTable = readLods(c, limits);
        break;
      case 'SKINNING':
        if (chunkVersion !== 1) { notes.push(`SKINNING chunk version ${chunkVersion} not read`); break; }
        skinning = readSkinning(c, limits);
        break;
      case 'FACS':
        facs = { bytes: size, format: chunkVersion };
        break;
      case 'HSRAVIS':
        break;
      default:
        notes.push(`unknown chunk ${JSON.stringify(type)} skipped`);
    }
    if (left(c) > 0 && type !== 'FACS' && type !== 'HSRAVIS') notes.push(`${left(c)} bytes left over in the ${type} chunk`);
  }
  if (!core) fail(r, 'no COREMESH chunk');
  const vertexCount = core.positions.length / 3;
  const faceCount = core.faceCount;
  const lodOffsets = lodTable ? lodTable.offsets : [];
  const lods = lodTable ? lodRanges(lodTable.reader, lodOffsets, faceCount, lodTable.at) : [[0, faceCount] as [number, number]];
  let skin, names: string[] = [], groups;
  if (skinning) {
    if (skinning.vertexCount !== vertexCount) {
      fail(skinning.reader, `SKINNING has ${skinning.vertexCount} envelopes for ${vertexCount} vertices`, skinning.envelopes.at - 4);
    }
    names = skinning.names;
    skin = buildSkin(skinning.reader, skinning.envelopes, skinning.bones, names, skinning.subsets, vertexCount, faceCount);
    groups = subsetGroups(skinning.subsets, lods[0]!);
  }
  const lod0 = lods[0]!;
  const { faceCount: _faces, draco, indices, ...attributes } = core;
  return {
    kind: 'mesh',
    version,
    geometry: { ...attributes, indices: lodIndices(indices, lod0[0], lod0[1]), ...(groups ? { groups } : {}), ...(skin ? { skin } : {}) },
    header: {
      vertexCount, faceCount, lodOffsets, lods,
      lodType: lodTable ? lodTable.type : null, highQualityLodCount: lodTable ? lodTable.highQuality : null,
      subsetCount: skinning ? skinning.subsets.length : 0, boneCount: skinning ? skinning.bones.length : 0, boneNames: names,
      facs, vertexSize: draco ? null : 40, draco, chunks, notes,
    },
  };
}

function chunkType(bytes: Uint8Array, at: number): string {
  let type = '';
  for (let i = at; i < at + 8; i++) {
    const b = bytes[i]!;
    if (b === 0) break;
    type += b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '?';
  }
  return type;
}

function readCoreMesh(c: MeshReader, limits: MeshLimits): DracoGeometry & { faceCount: number } {
  const vertexCount = u32(c, 'vertex count');
  const vertices = readVertexRecords(c, vertexCount, 40, limits);
  const faceCount = u32(c, 'face count');
  const indices = readFaceRecords(c, faceCount, 12, vertexCount, limits);
  return { ...vertices, indices, faceCount };
}

function readDracoCoreMesh(c: MeshReader, limits: MeshLimits): DracoGeometry & { faceCount: number } {
  const length = u32(c, 'Draco stream size');
  const at = take(c, length, 'Draco stream');
  const geometry = decodeDraco(c, at, c.bytes.subarray(at, at + length), limits);
  return { ...geometry, faceCount: geometry.indices.length / 3 };
}

function readLods(c: MeshReader, limits: MeshLimits): { offsets: number[]; type: number; highQuality: number; reader: MeshReader; at: number } {
  const type = u16(c, 'LOD type');
  const highQuality = u8(c, 'high-quality LOD count');
  const count = u32(c, 'LOD count');
  checkCount(c, count, 4, 'LOD', limits.maxLods);
  const at = c.pos;
  return { offsets: Array.from(u32Array(c, count, 'LOD table')), type, highQuality, reader: c, at };
}

function readSkinning(c: MeshReader, limits: MeshLimits): Skinning {
  const vertexCount = u32(c, 'envelope count');
  const envelopes = readEnvelopes(c, vertexCount, limits);
  const bones = readBones(c, u32(c, 'bone count'), limits);
  const tableSize = u32(c, 'bone name table size');
  const tableAt = c.pos;
  const names = boneNames(c, bones, readNameTable(c, tableSize, limits), tableAt);
  const subsets = readSubsets(c, u32(c, 'subset count'), limits);
  return { reader: c, vertexCount, envelopes, bones, names, subsets };
}
