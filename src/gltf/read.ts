/**
 * Reading back the GLB files this project writes for one converted mesh (a downloaded
 * Roblox mesh or union model, see src/scene/convert.ts): the first mesh's primitives
 * become one `MeshGeometry` (each primitive a group; they share their vertex
 * attributes, as `addGeometry` writes them), with its skin when the file has one.
 *
 * The files come from the project's own store, but a store on disk can be damaged:
 * every length, offset, count and index is checked before it is used, and anything
 * out of place throws a `GlbReadError`.
 */
import type { MeshBone, MeshGeometry, MeshGroup } from '../geometry/mesh.js';
import { invert } from './document.js';

export class GlbReadError extends Error {
  override name = 'GlbReadError';
}

export interface GlbContent {
  json: GltfJson;
  /** The BIN chunk; null when the file has none. */
  bin: Uint8Array | null;
}

/** The parts of glTF's JSON this reader uses (everything else is ignored). */
export interface GltfJson {
  asset?: { version?: string; extras?: Record<string, unknown> };
  accessors?: { bufferView?: number; byteOffset?: number; componentType: number; count: number; type: string; normalized?: boolean }[];
  bufferViews?: { buffer: number; byteOffset?: number; byteLength: number; byteStride?: number }[];
  meshes?: { primitives: { attributes: Record<string, number>; indices?: number; material?: number; extras?: Record<string, unknown> }[]; extras?: Record<string, unknown> }[];
  nodes?: { name?: string; mesh?: number; skin?: number; children?: number[]; extras?: Record<string, unknown> }[];
  skins?: { joints: number[]; inverseBindMatrices?: number }[];
  materials?: { name?: string; extras?: Record<string, unknown> }[];
}

const GLB_MAGIC = 0x46546c67;
const JSON_CHUNK = 0x4e4f534a;
const BIN_CHUNK = 0x004e4942;
const COMPONENTS: Record<string, number> = { SCALAR: 1, VEC2: 2, VEC3: 3, VEC4: 4, MAT4: 16 };
const COMPONENT_BYTES: Record<number, number> = { 5121: 1, 5123: 2, 5125: 4, 5126: 4 };

export function readGlb(bytes: Uint8Array): GlbContent {
  if (bytes.length < 20) throw new GlbReadError(`a GLB has at least 20 bytes, this has ${bytes.length}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0, true) !== GLB_MAGIC) throw new GlbReadError('not a GLB (no "glTF" magic)');
  if (view.getUint32(4, true) !== 2) throw new GlbReadError(`GLB version ${view.getUint32(4, true)}, only 2 is read`);
  if (view.getUint32(8, true) !== bytes.length) throw new GlbReadError(`the header says ${view.getUint32(8, true)} bytes, the file has ${bytes.length}`);
  const jsonLength = view.getUint32(12, true);
  if (view.getUint32(16, true) !== JSON_CHUNK || 20 + jsonLength > bytes.length) throw new GlbReadError('the first chunk is not a whole JSON chunk');
  let json: GltfJson;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(20, 20 + jsonLength))) as GltfJson;
  } catch (error) {
    throw new GlbReadError(`the JSON chunk does not parse: ${(error as Error).message}`);
  }
  if (typeof json !== 'object' || json === null) throw new GlbReadError('the JSON chunk is not an object');
  let bin: Uint8Array | null = null;
  const binAt = 20 + jsonLength;
  if (binAt + 8 <= bytes.length) {
    const binLength = view.getUint32(binAt, true);
    if (view.getUint32(binAt + 4, true) !== BIN_CHUNK || binAt + 8 + binLength > bytes.length) throw new GlbReadError('the second chunk is not a whole BIN chunk');
    bin = bytes.subarray(binAt + 8, binAt + 8 + binLength);
  }
  return { json, bin };
}

/** An accessor's values as a fresh typed array of its component type (tightly packed). */
function accessorArray(content: GlbContent, index: number, expect: { type: string; components?: number[] }): Float32Array | Uint32Array | Uint16Array | Uint8Array {
  const accessor = content.json.accessors?.[index];
  if (!accessor) throw new GlbReadError(`no accessor ${index}`);
  if (accessor.type !== expect.type) throw new GlbReadError(`accessor ${index} is ${accessor.type}, expected ${expect.type}`);
  const size = COMPONENT_BYTES[accessor.componentType];
  if (!size || (expect.components && !expect.components.includes(accessor.componentType))) throw new GlbReadError(`accessor ${index} has component type ${accessor.componentType}`);
  const components = COMPONENTS[accessor.type]!;
  if (!Number.isSafeInteger(accessor.count) || accessor.count < 0) throw new GlbReadError(`accessor ${index} has count ${accessor.count}`);
  const view = accessor.bufferView === undefined ? undefined : content.json.bufferViews?.[accessor.bufferView];
  if (!view || !content.bin || view.buffer !== 0) throw new GlbReadError(`accessor ${index} has no buffer view in the BIN chunk`);
  if (view.byteStride !== undefined && view.byteStride !== size * components) throw new GlbReadError(`accessor ${index}: interleaved views are not read`);
  const viewStart = view.byteOffset ?? 0;
  const start = viewStart + (accessor.byteOffset ?? 0);
  const length = accessor.count * components * size;
  if (!(viewStart >= 0 && view.byteLength >= 0 && viewStart + view.byteLength <= content.bin.length && start >= viewStart && start + length <= viewStart + view.byteLength)) {
    throw new GlbReadError(`accessor ${index} reaches past its buffer view`);
  }
  // A copy: the bytes may not be aligned for a typed view, and the file's buffer is not kept.
  const raw = new Uint8Array(length);
  raw.set(content.bin.subarray(start, start + length)); // (Buffer#slice would share the file's memory)
  switch (accessor.componentType) {
    case 5126: return new Float32Array(raw.buffer, 0, length / 4);
    case 5125: return new Uint32Array(raw.buffer, 0, length / 4);
    case 5123: return new Uint16Array(raw.buffer, 0, length / 2);
    default: return raw;
  }
}

/**
 * The first mesh of a GLB as one geometry: its primitives must share their vertex
 * attributes (each becomes a group, named after its material), with the skin of the
 * node that shows it when there is one.
 */
export function readGlbGeometry(bytes: Uint8Array): MeshGeometry {
  const content = readGlb(bytes);
  const mesh = content.json.meshes?.[0];
  if (!mesh || !Array.isArray(mesh.primitives) || mesh.primitives.length === 0) throw new GlbReadError('the file has no mesh');
  const attributes = mesh.primitives[0]!.attributes ?? {};
  const same = (a: Record<string, number>) => Object.keys(a).length === Object.keys(attributes).length && Object.entries(a).every(([k, v]) => attributes[k] === v);
  if (!mesh.primitives.every((p) => p.attributes && same(p.attributes))) throw new GlbReadError('the mesh\'s primitives do not share their vertices');
  if (attributes.POSITION === undefined) throw new GlbReadError('the mesh has no positions');
  const positions = accessorArray(content, attributes.POSITION, { type: 'VEC3', components: [5126] }) as Float32Array;
  const vertices = positions.length / 3;
  const geometry: MeshGeometry = { positions, indices: new Uint32Array(0) };
  if (attributes.NORMAL !== undefined) geometry.normals = accessorArray(content, attributes.NORMAL, { type: 'VEC3', components: [5126] }) as Float32Array;
  if (attributes.TEXCOORD_0 !== undefined) geometry.uvs = accessorArray(content, attributes.TEXCOORD_0, { type: 'VEC2', components: [5126] }) as Float32Array;
  if (attributes.COLOR_0 !== undefined) geometry.colors = accessorArray(content, attributes.COLOR_0, { type: 'VEC4', components: [5121] }) as Uint8Array;
  for (const [name, array] of [['normals', geometry.normals, 3], ['uvs', geometry.uvs, 2], ['colors', geometry.colors, 4]] as const) {
    if (array && array.length !== vertices * (name === 'uvs' ? 2 : name === 'colors' ? 4 : 3)) throw new GlbReadError(`${name} do not match the ${vertices} vertices`);
  }

  // Indices: every primitive's, one after the other, each a group.
  const lists = mesh.primitives.map((primitive) => {
    if (primitive.indices === undefined) throw new GlbReadError('a primitive without indices');
    return accessorArray(content, primitive.indices, { type: 'SCALAR', components: [5121, 5123, 5125] });
  });
  let total = 0;
  for (const list of lists) total += list.length;
  const indices = new Uint32Array(total);
  const groups: MeshGroup[] = [];
  let at = 0;
  lists.forEach((list, i) => {
    if (list.length % 3 !== 0) throw new GlbReadError(`primitive ${i} has ${list.length} indices, not whole triangles`);
    for (let k = 0; k < list.length; k++) {
      if (list[k]! >= vertices) throw new GlbReadError(`primitive ${i} names vertex ${list[k]}, but there are ${vertices}`);
      indices[at + k] = list[k]!;
    }
    const material = mesh.primitives[i]!.material;
    const name = material === undefined ? undefined : content.json.materials?.[material]?.name;
    groups.push(name === undefined ? { start: at, count: list.length } : { start: at, count: list.length, material: name });
    at += list.length;
  });
  geometry.indices = indices;
  if (groups.length > 1 || groups[0]!.material !== undefined) geometry.groups = groups;

  const skinned = content.json.nodes?.find((node) => node.mesh === 0 && node.skin !== undefined);
  if (skinned && attributes.JOINTS_0 !== undefined && attributes.WEIGHTS_0 !== undefined) {
    const skin = content.json.skins?.[skinned.skin!];
    if (!skin || !Array.isArray(skin.joints) || skin.joints.length === 0 || skin.inverseBindMatrices === undefined) throw new GlbReadError('the skin has no joints or no inverse bind matrices');
    const joints = accessorArray(content, attributes.JOINTS_0, { type: 'VEC4', components: [5121, 5123] });
    const weights = accessorArray(content, attributes.WEIGHTS_0, { type: 'VEC4', components: [5126] }) as Float32Array;
    const inverse = accessorArray(content, skin.inverseBindMatrices, { type: 'MAT4', components: [5126] }) as Float32Array;
    if (joints.length !== vertices * 4 || weights.length !== vertices * 4 || inverse.length !== skin.joints.length * 16) throw new GlbReadError('the skin\'s arrays do not match');
    for (let k = 0; k < joints.length; k++) if (joints[k]! >= skin.joints.length) throw new GlbReadError(`a vertex names joint ${joints[k]}, but the skin has ${skin.joints.length}`);
    const nodes = content.json.nodes ?? [];
    const parentOf = new Map<number, number>();
    nodes.forEach((node, i) => node.children?.forEach((child) => parentOf.set(child, i)));
    const jointIndex = new Map(skin.joints.map((node, i) => [node, i]));
    const bones: MeshBone[] = skin.joints.map((node, i) => {
      let matrix: Float64Array;
      try {
        matrix = invert(inverse.subarray(i * 16, i * 16 + 16));
      } catch {
        throw new GlbReadError(`joint ${i}'s inverse bind matrix is singular`);
      }
      const parent = parentOf.get(node);
      return { name: nodes[node]?.name ?? `bone ${i}`, parent: parent === undefined ? -1 : jointIndex.get(parent) ?? -1, matrix };
    });
    geometry.skin = { joints: Uint16Array.from(joints), weights, bones };
  }
  return geometry;
}
