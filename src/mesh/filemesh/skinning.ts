/**
 * The skinning records of meshes 4.00 to 7.00: a per-vertex envelope (4 bone slots,
 * 4 weights as u8), bones (name offset, parent, LOD parent, culling distance, a
 * CFrame: 3×3 rotation row by row, then position), the NUL-separated bone name
 * table, and subsets (face and vertex runs, each with up to 26 bones that its
 * vertices' bone slots index).
 */
import type { MeshBone, MeshSkin } from '../../geometry/mesh.js';
import type { MeshLimits } from '../limits.js';
import { checkCount, fail, take, type MeshReader } from '../reader.js';

export const ENVELOPE_BYTES = 8;
export const BONE_BYTES = 60;
export const SUBSET_BYTES = 72;
const SUBSET_BONE_SLOTS = 26;
const NO_BONE = 0xffff;

export interface BoneRecord {
  nameOffset: number;
  parent: number;
  /** Column-major 4×4 (glTF order). */
  matrix: Float64Array;
}

export interface SubsetRecord {
  faceStart: number;
  faceCount: number;
  vertexStart: number;
  vertexCount: number;
  boneCount: number;
  bones: Uint16Array;
}

export function readEnvelopes(r: MeshReader, vertexCount: number, limits: MeshLimits): { at: number; bytes: Uint8Array } {
  checkCount(r, vertexCount, ENVELOPE_BYTES, 'envelope', limits.maxVertices);
  const at = take(r, vertexCount * ENVELOPE_BYTES, 'envelopes');
  return { at, bytes: r.bytes.subarray(at, at + vertexCount * ENVELOPE_BYTES) };
}

export function readBones(r: MeshReader, count: number, limits: MeshLimits): BoneRecord[] {
  checkCount(r, count, BONE_BYTES, 'bone', limits.maxBones);
  const at = take(r, count * BONE_BYTES, 'bones');
  const v = r.view;
  const bones: BoneRecord[] = [];
  for (let i = 0; i < count; i++) {
    const p = at + i * BONE_BYTES;
    const parentId = v.getUint16(p + 4, true);
    if (parentId !== NO_BONE && parentId >= count) fail(r, `bone ${i}'s parent ${parentId} is past the ${count} bones`, p + 4);
    const f = (k: number): number => v.getFloat32(p + 12 + k * 4, true);
    // Rotation r00 r01 r02 r10 … r22 (row by row), then x y z.
    const matrix = Float64Array.of(
      f(0), f(3), f(6), 0,
      f(1), f(4), f(7), 0,
      f(2), f(5), f(8), 0,
      f(9), f(10), f(11), 1,
    );
    bones.push({ nameOffset: v.getUint32(p, true), parent: parentId === NO_BONE ? -1 : parentId, matrix });
  }
  for (let i = 0; i < count; i++) {
    let b = bones[i]!.parent;
    for (let steps = 0; b >= 0; steps++) {
      if (steps >= count) fail(r, `bone ${i}'s parents form a cycle`, at + i * BONE_BYTES + 4);
      b = bones[b]!.parent;
    }
  }
  return bones;
}

export function readNameTable(r: MeshReader, length: number, limits: MeshLimits): Uint8Array {
  if (length > limits.maxNameTableBytes) fail(r, `bone name table of ${length} bytes exceeds the limit of ${limits.maxNameTableBytes}`);
  const at = take(r, length, 'bone name table');
  return r.bytes.subarray(at, at + length);
}

export function readSubsets(r: MeshReader, count: number, limits: MeshLimits): SubsetRecord[] {
  checkCount(r, count, SUBSET_BYTES, 'subset', limits.maxSubsets);
  const at = take(r, count * SUBSET_BYTES, 'subsets');
  const v = r.view;
  const subsets: SubsetRecord[] = [];
  for (let i = 0; i < count; i++) {
    const p = at + i * SUBSET_BYTES;
    const bones = new Uint16Array(SUBSET_BONE_SLOTS);
    for (let k = 0; k < SUBSET_BONE_SLOTS; k++) bones[k] = v.getUint16(p + 20 + k * 2, true);
    subsets.push({
      faceStart: v.getUint32(p, true), faceCount: v.getUint32(p + 4, true),
      vertexStart: v.getUint32(p + 8, true), vertexCount: v.getUint32(p + 12, true),
      boneCount: v.getUint32(p + 16, true), bones,
    });
  }
  return subsets;
}

const utf8 = new TextDecoder('utf-8');

/** Each bone's name: the NUL-terminated run at its offset in the name table. */
export function boneNames(r: MeshReader, bones: BoneRecord[], table: Uint8Array, tableAt: number): string[] {
  return bones.map((bone, i) => {
    if (bone.nameOffset >= table.length) fail(r, `bone ${i}'s name offset ${bone.nameOffset} is past the ${table.length}-byte name table`, tableAt);
    let end = bone.nameOffset;
    while (end < table.length && table[end] !== 0) end++;
    return utf8.decode(table.subarray(bone.nameOffset, end));
  });
}

/**
 * Joints and weights per vertex. A subset's vertices name bones through its 26-slot
 * palette; weights are normalised to sum to 1 (u8 weights sum to 255 only roughly).
 */
export function buildSkin(
  r: MeshReader, envelopes: { at: number; bytes: Uint8Array }, bones: BoneRecord[], names: string[],
  subsets: SubsetRecord[], vertexCount: number, faceCount: number,
): MeshSkin {
  const joints = new Uint16Array(vertexCount * 4);
  const weights = new Float32Array(vertexCount * 4);
  const palette = new Int32Array(vertexCount).fill(-1);
  subsets.forEach((s, i) => {
    if (s.vertexStart + s.vertexCount > vertexCount || s.faceStart + s.faceCount > faceCount) {
      fail(r, `subset ${i} (vertices ${s.vertexStart}+${s.vertexCount}, faces ${s.faceStart}+${s.faceCount}) runs past the mesh`, envelopes.at);
    }
    if (s.boneCount > SUBSET_BONE_SLOTS) fail(r, `subset ${i} names ${s.boneCount} bones, more than ${SUBSET_BONE_SLOTS}`, envelopes.at);
    palette.fill(i, s.vertexStart, s.vertexStart + s.vertexCount);
  });
  const env = envelopes.bytes;
  for (let v = 0; v < vertexCount; v++) {
    const subset = palette[v]! >= 0 ? subsets[palette[v]!]! : null;
    let sum = 0;
    for (let k = 0; k < 4; k++) sum += env[v * 8 + 4 + k]!;
    for (let k = 0; k < 4; k++) {
      const weight = env[v * 8 + 4 + k]!;
      if (weight === 0) continue;
      const slot = env[v * 8 + k]!;
      let bone = slot;
      if (subset) {
        if (slot >= subset.boneCount) fail(r, `vertex ${v} weights bone slot ${slot} of a subset with ${subset.boneCount} bones`, envelopes.at + v * 8);
        bone = subset.bones[slot]!;
      }
      if (bone >= bones.length) fail(r, `vertex ${v} is weighted to bone ${bone}, but there are ${bones.length}`, envelopes.at + v * 8);
      joints[v * 4 + k] = bone;
      weights[v * 4 + k] = weight / sum;
    }
  }
  const meshBones: MeshBone[] = bones.map((b, i) => ({ name: names[i]!, parent: b.parent, matrix: b.matrix }));
  return { joints, weights, bones: meshBones };
}
