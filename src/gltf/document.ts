/**
 * A glTF 2.0 document being built: geometry, materials, images, meshes, skins and
 * nodes are added one by one and get their index back; `glb.ts` writes the binary.
 *
 * Memory stays proportional to the output, not to JS objects per vertex or per node:
 * - geometry arrays are referenced, not copied (a Float32Array is already glTF's bytes,
 *   little-endian); only what must change is copied once (normals made unit length,
 *   indices narrowed to 16 bits, weights normalised);
 * - each node is kept as its JSON text as soon as it is added, so a 200k-part map
 *   holds 200k short strings, not 200k objects.
 * Instancing: a geometry's accessors are written once, and any number of meshes (one
 * per material set) and nodes can use them.
 *
 * Units and axes: positions are written as given; the scene assembly passes Roblox
 * studs, Y up, right-handed, -Z forward, which is glTF's own frame (glTF calls the
 * unit a metre: 1 stud is 1 unit).
 */
import type { MeshGeometry, MeshSkin } from '../geometry/mesh.js';
import { geometryBounds } from '../geometry/mesh.js';
import { imageMimeType, type ImageMimeType } from './images.js';

export type Vec3 = [number, number, number];
export type Quat = [number, number, number, number];

export interface GltfMaterial {
  name?: string;
  /** Linear RGBA, 0..1. */
  baseColor: [number, number, number, number];
  metallic?: number;
  roughness?: number;
  /** Linear RGB, 0..1. */
  emissive?: [number, number, number];
  /** BLEND when the colour's alpha is below 1 (transparency). */
  alphaMode?: 'OPAQUE' | 'BLEND' | 'MASK';
  doubleSided?: boolean;
  /** Index from `addTexture`, multiplied by baseColor. */
  baseColorTexture?: number;
  /** Tangent-space normal map (OpenGL convention, +Y up, as Roblox's SurfaceAppearance). */
  normalTexture?: number;
  /** Roughness in green, metalness in blue (glTF's packing), multiplied by the factors. */
  metallicRoughnessTexture?: number;
  /** Alpha below this is cut away (MASK only). */
  alphaCutoff?: number;
  extras?: Record<string, unknown>;
}

export interface GltfNode {
  name?: string;
  mesh?: number;
  skin?: number;
  translation?: Vec3;
  rotation?: Quat;
  scale?: Vec3;
  /** Column-major 4x4; exclusive with translation/rotation/scale. */
  matrix?: ArrayLike<number>;
  extras?: Record<string, unknown>;
}

interface BufferView { piece: Uint8Array; target?: number }
interface GeometryRecord {
  attributes: Record<string, number>;
  /** Index accessor per group (or one for the whole geometry). */
  indexAccessors: number[];
  hasUvs: boolean;
}

export interface GltfDocument {
  views: BufferView[];
  accessors: Record<string, unknown>[];
  geometries: GeometryRecord[];
  materials: string[];
  materialIndex: Map<string, number>;
  meshes: Record<string, unknown>[];
  images: Record<string, unknown>[];
  textures: Record<string, unknown>[];
  skins: Record<string, unknown>[];
  /** Each node's JSON without its children. */
  nodes: string[];
  children: Map<number, number[]>;
  roots: number[];
  /** Set by addMesh so textured materials are only used with UVs. */
  texturedMaterials: Set<number>;
  extras?: Record<string, unknown>;
}

export function createGltf(extras?: Record<string, unknown>): GltfDocument {
  return {
    views: [], accessors: [], geometries: [], materials: [], materialIndex: new Map(), meshes: [], images: [],
    textures: [], skins: [], nodes: [], children: new Map(), roots: [], texturedMaterials: new Set(), extras,
  };
}

const ARRAY_BUFFER = 34962;
const ELEMENT_ARRAY_BUFFER = 34963;
const FLOAT = 5126;
const UNSIGNED_BYTE = 5121;
const UNSIGNED_SHORT = 5123;
const UNSIGNED_INT = 5125;

function addView(doc: GltfDocument, piece: Uint8Array, target?: number): number {
  doc.views.push({ piece, target });
  return doc.views.length - 1;
}

function bytesOf(array: ArrayBufferView): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}

function addAccessor(doc: GltfDocument, accessor: Record<string, unknown>): number {
  doc.accessors.push(accessor);
  return doc.accessors.length - 1;
}

/**
 * Writes a geometry's vertex attributes and indices once; the returned index is what
 * `addMesh` takes. Checks the arrays agree before writing anything.
 */
export function addGeometry(doc: GltfDocument, geometry: MeshGeometry): number {
  const vertices = geometry.positions.length / 3;
  if (!Number.isInteger(vertices) || vertices === 0) throw new RangeError('a geometry needs at least one vertex (3 floats each)');
  const { normals, uvs, colors, indices, skin } = geometry;
  if (normals && normals.length !== vertices * 3) throw new RangeError('normals: 3 floats per vertex');
  if (uvs && uvs.length !== vertices * 2) throw new RangeError('uvs: 2 floats per vertex');
  if (colors && colors.length !== vertices * 4) throw new RangeError('colors: 4 bytes per vertex');
  if (indices.length === 0 || indices.length % 3 !== 0) throw new RangeError('indices: 3 per triangle, at least one triangle');
  for (let i = 0; i < indices.length; i++) if (indices[i]! >= vertices) throw new RangeError(`index ${indices[i]} past the ${vertices} vertices`);

  const bounds = geometryBounds(geometry.positions);
  if (!bounds) throw new RangeError('a geometry needs finite positions');
  for (let i = 0; i < geometry.positions.length; i++) {
    if (!Number.isFinite(geometry.positions[i]!)) throw new RangeError('positions must be finite');
  }
  const attributes: Record<string, number> = {};
  attributes.POSITION = addAccessor(doc, {
    bufferView: addView(doc, bytesOf(geometry.positions), ARRAY_BUFFER), componentType: FLOAT, count: vertices, type: 'VEC3',
    min: bounds.min.map(Math.fround), max: bounds.max.map(Math.fround),
  });
  if (normals) {
    attributes.NORMAL = addAccessor(doc, { bufferView: addView(doc, bytesOf(unitNormals(normals)), ARRAY_BUFFER), componentType: FLOAT, count: vertices, type: 'VEC3' });
  }
  if (uvs) attributes.TEXCOORD_0 = addAccessor(doc, { bufferView: addView(doc, bytesOf(finiteUvs(uvs)), ARRAY_BUFFER), componentType: FLOAT, count: vertices, type: 'VEC2' });
  if (colors) {
    attributes.COLOR_0 = addAccessor(doc, { bufferView: addView(doc, bytesOf(colors), ARRAY_BUFFER), componentType: UNSIGNED_BYTE, normalized: true, count: vertices, type: 'VEC4' });
  }
  if (skin) Object.assign(attributes, skinAttributes(doc, skin, vertices));

  // Indices: 16 bits when every vertex fits, one view, one accessor per group.
  const narrow = vertices <= 65535;
  const indexArray = narrow ? Uint16Array.from(indices) : indices;
  const indexView = addView(doc, bytesOf(indexArray), ELEMENT_ARRAY_BUFFER);
  const groups = geometry.groups?.length ? geometry.groups : [{ start: 0, count: indices.length }];
  const indexAccessors = groups.map((group) => {
    if (group.start % 3 !== 0 || group.count % 3 !== 0 || group.count <= 0 || group.start + group.count > indices.length) {
      throw new RangeError(`group ${group.start}+${group.count} is not whole triangles within the ${indices.length} indices`);
    }
    return addAccessor(doc, {
      bufferView: indexView, byteOffset: group.start * (narrow ? 2 : 4), componentType: narrow ? UNSIGNED_SHORT : UNSIGNED_INT,
      count: group.count, type: 'SCALAR',
    });
  });
  doc.geometries.push({ attributes, indexAccessors, hasUvs: !!uvs });
  return doc.geometries.length - 1;
}

/** The normals as unit vectors (a copy only when some are not); zero ones point up. */
function unitNormals(normals: Float32Array): Float32Array {
  let copy: Float32Array | null = null;
  for (let i = 0; i < normals.length; i += 3) {
    const x = normals[i]!, y = normals[i + 1]!, z = normals[i + 2]!;
    const length = Math.hypot(x, y, z);
    if (Math.abs(length - 1) < 5e-4) continue;
    copy ??= Float32Array.from(normals);
    if (length > 0 && Number.isFinite(length)) {
      copy[i] = x / length; copy[i + 1] = y / length; copy[i + 2] = z / length;
    } else {
      copy[i] = 0; copy[i + 1] = 1; copy[i + 2] = 0;
    }
  }
  return copy ?? normals;
}

/**
 * Texture coordinates as glTF allows them (finite floats): a component that is not a finite
 * number (a damaged mesh or union model) becomes 0. A copy only when one is found.
 */
function finiteUvs(uvs: Float32Array): Float32Array {
  let copy: Float32Array | null = null;
  for (let i = 0; i < uvs.length; i++) {
    if (Number.isFinite(uvs[i]!)) continue;
    copy ??= Float32Array.from(uvs);
    copy[i] = 0;
  }
  return copy ?? uvs;
}

/** JOINTS_0/WEIGHTS_0: weights normalised to sum 1 (an unweighted vertex follows joint 0), unused slots zeroed. */
function skinAttributes(doc: GltfDocument, skin: MeshSkin, vertices: number): Record<string, number> {
  if (skin.joints.length !== vertices * 4 || skin.weights.length !== vertices * 4) throw new RangeError('skin: 4 joints and 4 weights per vertex');
  const joints = new Uint16Array(vertices * 4);
  const weights = new Float32Array(vertices * 4);
  for (let v = 0; v < vertices; v++) {
    let sum = 0;
    for (let k = 0; k < 4; k++) {
      const w = skin.weights[v * 4 + k]!;
      if (w > 0 && Number.isFinite(w)) sum += w;
    }
    if (sum <= 0) {
      weights[v * 4] = 1;
      continue;
    }
    for (let k = 0; k < 4; k++) {
      const w = skin.weights[v * 4 + k]!;
      const joint = skin.joints[v * 4 + k]!;
      if (!(w > 0 && Number.isFinite(w))) continue;
      if (joint >= skin.bones.length) throw new RangeError(`skin: joint ${joint} past the ${skin.bones.length} bones`);
      joints[v * 4 + k] = joint;
      weights[v * 4 + k] = w / sum;
    }
  }
  return {
    JOINTS_0: addAccessor(doc, { bufferView: addView(doc, bytesOf(joints), ARRAY_BUFFER), componentType: UNSIGNED_SHORT, count: vertices, type: 'VEC4' }),
    WEIGHTS_0: addAccessor(doc, { bufferView: addView(doc, bytesOf(weights), ARRAY_BUFFER), componentType: FLOAT, count: vertices, type: 'VEC4' }),
  };
}

/** Adds a material, or returns the index of an identical one. */
export function addMaterial(doc: GltfDocument, material: GltfMaterial): number {
  const pbr: Record<string, unknown> = { baseColorFactor: material.baseColor.map(clamp01) };
  if (material.metallic !== undefined) pbr.metallicFactor = clamp01(material.metallic);
  if (material.roughness !== undefined) pbr.roughnessFactor = clamp01(material.roughness);
  const texture = (index: number | undefined): { index: number } | undefined => {
    if (index === undefined) return undefined;
    if (!(index >= 0 && index < doc.textures.length)) throw new RangeError(`no texture ${index}`);
    return { index };
  };
  const baseColorTexture = texture(material.baseColorTexture);
  if (baseColorTexture) pbr.baseColorTexture = baseColorTexture;
  const metallicRoughnessTexture = texture(material.metallicRoughnessTexture);
  if (metallicRoughnessTexture) pbr.metallicRoughnessTexture = metallicRoughnessTexture;
  const json: Record<string, unknown> = {};
  if (material.name !== undefined) json.name = material.name;
  json.pbrMetallicRoughness = pbr;
  const normalTexture = texture(material.normalTexture);
  if (normalTexture) json.normalTexture = normalTexture;
  if (material.emissive && material.emissive.some((c) => c > 0)) json.emissiveFactor = material.emissive.map(clamp01);
  const alphaMode = material.alphaMode ?? (material.baseColor[3] < 1 ? 'BLEND' : 'OPAQUE');
  if (alphaMode !== 'OPAQUE') json.alphaMode = alphaMode;
  if (alphaMode === 'MASK' && material.alphaCutoff !== undefined) json.alphaCutoff = Math.max(0, material.alphaCutoff);
  if (material.doubleSided) json.doubleSided = true;
  if (material.extras) json.extras = material.extras;
  const text = JSON.stringify(json);
  const known = doc.materialIndex.get(text);
  if (known !== undefined) return known;
  doc.materials.push(text);
  const index = doc.materials.length - 1;
  doc.materialIndex.set(text, index);
  if (baseColorTexture || normalTexture || metallicRoughnessTexture) doc.texturedMaterials.add(index);
  return index;
}

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}

/**
 * A mesh: a geometry with one material per group (or one material for all of them).
 * Meshes sharing a geometry share its accessors.
 */
export function addMesh(doc: GltfDocument, geometry: number, materials: number | number[], name?: string): number {
  return addMeshOf(doc, [{ geometry, materials }], name);
}

/** A mesh drawing several geometries (a part and the decals on its faces), each with its materials. */
export function addMeshOf(doc: GltfDocument, parts: { geometry: number; materials: number | number[] }[], name?: string): number {
  const primitives = parts.flatMap(({ geometry, materials }) => {
    const record = doc.geometries[geometry];
    if (!record) throw new RangeError(`no geometry ${geometry}`);
    const list = typeof materials === 'number' ? record.indexAccessors.map(() => materials) : materials;
    if (list.length !== record.indexAccessors.length) throw new RangeError(`${list.length} materials for ${record.indexAccessors.length} groups`);
    return record.indexAccessors.map((indices, i) => {
      const material = list[i]!;
      if (!(material >= 0 && material < doc.materials.length)) throw new RangeError(`no material ${material}`);
      if (doc.texturedMaterials.has(material) && !record.hasUvs) throw new RangeError(`material ${material} has a texture but the geometry has no UVs`);
      return { attributes: record.attributes, indices, material };
    });
  });
  if (primitives.length === 0) throw new RangeError('a mesh needs at least one primitive');
  doc.meshes.push(name === undefined ? { primitives } : { name, primitives });
  return doc.meshes.length - 1;
}

/** An embedded PNG or JPEG image and a texture sampling it (repeat, linear/mipmapped). */
export function addTexture(doc: GltfDocument, bytes: Uint8Array, mimeType: ImageMimeType, name?: string): number {
  if (imageMimeType(bytes) !== mimeType) throw new RangeError(`the bytes are not a ${mimeType} image`);
  const image: Record<string, unknown> = { bufferView: addView(doc, bytes), mimeType };
  if (name !== undefined) image.name = name;
  doc.images.push(image);
  doc.textures.push({ source: doc.images.length - 1, sampler: 0 });
  return doc.textures.length - 1;
}

/** A node; with `parent` it becomes that node's child, else a root of the scene. */
export function addNode(doc: GltfDocument, node: GltfNode, parent?: number): number {
  const json: Record<string, unknown> = {};
  if (node.name !== undefined) json.name = node.name;
  if (node.mesh !== undefined) {
    if (!(node.mesh >= 0 && node.mesh < doc.meshes.length)) throw new RangeError(`no mesh ${node.mesh}`);
    json.mesh = node.mesh;
  }
  if (node.skin !== undefined) {
    if (!(node.skin >= 0 && node.skin < doc.skins.length)) throw new RangeError(`no skin ${node.skin}`);
    json.skin = node.skin;
  }
  if (node.matrix) {
    if (node.translation || node.rotation || node.scale) throw new RangeError('a node has a matrix or translation/rotation/scale, not both');
    if (node.matrix.length !== 16) throw new RangeError('a matrix has 16 numbers');
    const values = finite(Array.from(node.matrix));
    if (values.some((v, i) => v !== (i % 5 === 0 ? 1 : 0))) json.matrix = values;
  } else {
    if (node.translation && node.translation.some((v) => v !== 0)) json.translation = finite(node.translation);
    if (node.rotation && !(node.rotation[0] === 0 && node.rotation[1] === 0 && node.rotation[2] === 0)) json.rotation = unitQuat(node.rotation);
    if (node.scale && node.scale.some((v) => v !== 1)) json.scale = finite(node.scale);
  }
  if (node.extras) json.extras = node.extras;
  doc.nodes.push(JSON.stringify(json));
  const index = doc.nodes.length - 1;
  if (parent === undefined) doc.roots.push(index);
  else {
    if (!(parent >= 0 && parent < index)) throw new RangeError(`no parent node ${parent}`);
    const list = doc.children.get(parent);
    if (list) list.push(index);
    else doc.children.set(parent, [index]);
  }
  return index;
}

function finite(values: number[]): number[] {
  for (const v of values) if (!Number.isFinite(v)) throw new RangeError('node transforms must be finite');
  return values;
}

function unitQuat(q: Quat): number[] {
  const length = Math.hypot(q[0], q[1], q[2], q[3]);
  if (!(length > 0) || !Number.isFinite(length)) throw new RangeError('rotation must be a non-zero finite quaternion');
  return q.map((v) => v / length);
}

/**
 * A skin from a MeshSkin: one joint node per bone (its hierarchy from `parent`, each
 * placed relative to its parent from the rest matrices), inverse bind matrices from
 * the rest poses. The bones hang under one root node (with `root`'s transform: where
 * the mesh stands, since a skinned mesh is placed by its joints, not by its own node)
 * under `parent` (a node) or the scene root. Returns the skin index for the node that
 * carries the skinned mesh.
 */
export function addSkin(
  doc: GltfDocument, skin: MeshSkin, parent?: number, name?: string,
  root: Pick<GltfNode, 'translation' | 'rotation' | 'scale' | 'extras'> = {},
): number {
  const count = skin.bones.length;
  if (count === 0) throw new RangeError('a skin needs at least one bone');
  const joints = new Array<number>(count);
  const inverse = new Float32Array(count * 16);
  // Parents before children: bones may list them in any order.
  const order: number[] = [];
  const placed = new Uint8Array(count);
  const visit = (b: number, depth: number): void => {
    if (placed[b]) return;
    if (depth > count) throw new RangeError('skin: bone parents form a cycle');
    const p = skin.bones[b]!.parent;
    if (p >= 0) {
      if (p >= count) throw new RangeError(`skin: bone ${b} has parent ${p} past the ${count} bones`);
      visit(p, depth + 1);
    }
    placed[b] = 1;
    order.push(b);
  };
  for (let b = 0; b < count; b++) visit(b, 0);
  // A common root keeps every joint under one node (the validator requires a common root).
  const rootNode = addNode(doc, { ...root, name: name ? `${name} bones` : 'bones' }, parent);
  for (const b of order) {
    const bone = skin.bones[b]!;
    if (bone.matrix.length !== 16) throw new RangeError(`skin: bone ${b} needs a 4x4 matrix`);
    const local = bone.parent >= 0 ? multiply(invert(skin.bones[bone.parent]!.matrix), bone.matrix) : Float64Array.from(bone.matrix);
    joints[b] = addNode(doc, { name: bone.name, matrix: local }, bone.parent >= 0 ? joints[bone.parent] : rootNode);
    inverse.set(invert(bone.matrix), b * 16);
  }
  const accessor = addAccessor(doc, { bufferView: addView(doc, bytesOf(inverse)), componentType: FLOAT, count, type: 'MAT4' });
  doc.skins.push({ joints, inverseBindMatrices: accessor, skeleton: rootNode, ...(name !== undefined ? { name } : {}) });
  return doc.skins.length - 1;
}

/** Column-major 4x4 product a·b. */
export function multiply(a: ArrayLike<number>, b: ArrayLike<number>): Float64Array {
  const out = new Float64Array(16);
  for (let c = 0; c < 4; c++) {
    for (let r = 0; r < 4; r++) {
      let sum = 0;
      for (let k = 0; k < 4; k++) sum += a[k * 4 + r]! * b[c * 4 + k]!;
      out[c * 4 + r] = sum;
    }
  }
  return out;
}

/** Inverse of an affine column-major 4x4 (rotation/scale plus translation). */
export function invert(m: ArrayLike<number>): Float64Array {
  const a = m[0]!, b = m[4]!, c = m[8]!, d = m[1]!, e = m[5]!, f = m[9]!, g = m[2]!, h = m[6]!, i = m[10]!;
  const det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g);
  if (!(Math.abs(det) > 1e-12)) throw new RangeError('skin: a bone matrix is singular');
  const r = [
    (e * i - f * h) / det, (c * h - b * i) / det, (b * f - c * e) / det,
    (f * g - d * i) / det, (a * i - c * g) / det, (c * d - a * f) / det,
    (d * h - e * g) / det, (b * g - a * h) / det, (a * e - b * d) / det,
  ];
  const tx = m[12]!, ty = m[13]!, tz = m[14]!;
  const out = new Float64Array(16);
  out[0] = r[0]!; out[4] = r[1]!; out[8] = r[2]!;
  out[1] = r[3]!; out[5] = r[4]!; out[9] = r[5]!;
  out[2] = r[6]!; out[6] = r[7]!; out[10] = r[8]!;
  out[12] = -(r[0]! * tx + r[1]! * ty + r[2]! * tz);
  out[13] = -(r[3]! * tx + r[4]! * ty + r[5]! * tz);
  out[14] = -(r[6]! * tx + r[7]! * ty + r[8]! * tz);
  out[15] = 1;
  return out;
}
