/**
 * scene.glb: an assembled map as one binary glTF 2.0 file.
 *
 * - One node per part, named after its instance, `extras.id` its instance id
 *   (src/project/ids.ts), `extras.class` its class, `extras.placeholder` the reason
 *   when a box stands in for a mesh or union. Translation, rotation and scale place
 *   the part's shape (studs, +Y up: Roblox's frame is glTF's, 1 unit = 1 stud).
 * - Shapes are written once and shared (instancing): every Block is one geometry.
 * - Materials: Color (linear), 1 − Transparency as alpha (BLEND below 1), Material as
 *   metallic/roughness, Neon as emissive; a MeshPart's TextureID, a SurfaceAppearance's
 *   colour, normal and metalness/roughness maps (AlphaMode Transparency as BLEND);
 *   vertex colours as glTF multiplies them (a union's own colours when UsePartColor
 *   is off).
 * - Decals and Textures: a quad over their face of the part's box, 0.01 studs out,
 *   in the same mesh as the part (tiled by StudsPerTile for a Texture).
 * - Skinned meshes: the mesh node with its skin; its bones under a root node that
 *   carries the part's placement.
 * - Terrain: one node "Terrain" (a primitive per material, all chunks' surfaces in
 *   world coordinates) and one node "Water" (translucent), both with the Terrain's id.
 * Images come from the project's downloaded assets; one that is not PNG or JPEG
 * (what glTF embeds) is left out and named in the file's extras.
 */
import type { MeshGeometry } from '../geometry/mesh.js';
import {
  addGeometry, addMaterial, addMeshOf, addNode, addSkin, addTexture, createGltf, glbPieces, partMaterial, quaternionOf, srgbToLinear, writeGlbFile,
  type GltfDocument, type GltfMaterial, type GlbPieces,
} from '../gltf/index.js';
import { decodePngChannel, imageMimeType, ImageError, metallicRoughnessPng, unembeddable } from '../gltf/images.js';
import { MATERIALS } from '../project/classes.js';
import { instanceId } from '../project/ids.js';
import type { Vec3 } from '../parser/values.js';
import { meshTerrain, type TerrainMesh, type TerrainMeshOptions } from '../terrain/mesh.js';
import { resolveTerrainLimits } from '../terrain/limits.js';
import { AIR, MATERIAL_SLOTS, TERRAIN_MATERIALS, WATER } from '../terrain/materials.js';
import { DOUBLE_SIDED, NEON, VERTEX_COLORS, type PartLook, type SceneAssembly, type SceneDecal, type SceneSurface } from './assemble.js';

/** Downloaded images by asset id (the bytes as stored); undefined when not downloaded. */
export interface SceneImages {
  image(id: string): Uint8Array | undefined;
}

export interface SceneGlbOptions {
  images?: SceneImages;
  terrain?: TerrainMeshOptions;
  /** Merged into the file's `asset.extras`. */
  extras?: Record<string, unknown>;
}

export interface SceneGlbStats {
  nodes: number;
  parts: number;
  meshes: number;
  images: number;
  /** `sampling` as the mesher's: `point` when the grid was too large to average (named in the notes). */
  terrain: { step: number; sampling: 'mean' | 'point'; solid: number; water: number } | null;
  placeholders: Record<string, number>;
  notes: string[];
}

/** Decals sit this far (studs) in front of their face, so they never fight with it for depth. */
const DECAL_LIFT = 0.01;

export function sceneDocument(assembly: SceneAssembly, options: SceneGlbOptions = {}): { doc: GltfDocument; stats: SceneGlbStats } {
  const writer = new SceneWriter(assembly, options);
  return writer.write();
}

/** scene.glb as byte pieces with the total length known first (see gltf/glb.ts): stream them out. */
export function sceneGlb(assembly: SceneAssembly, options: SceneGlbOptions = {}): GlbPieces & { stats: SceneGlbStats } {
  const { doc, stats } = sceneDocument(assembly, options);
  return { ...glbPieces(doc), stats };
}

/** The GLB would be larger than the caller allows: nothing was written. */
export class GlbTooLargeError extends Error {
  override name = 'GlbTooLargeError';
  /** `bytes`: the GLB's size, or (`partial`) what its images and meshes read so far come to. */
  constructor(readonly bytes: number, readonly maxBytes: number, partial = false) {
    super(partial
      ? `scene.glb would be more than the ${maxBytes} bytes allowed here (the images and meshes it holds come to ${bytes} already)`
      : `scene.glb would be ${bytes} bytes, more than the ${maxBytes} allowed here`);
  }
}

/**
 * scene.glb streamed to a file; resolves with its size and what it holds. With
 * `maxBytes`, a larger GLB is refused (GlbTooLargeError) before anything is written.
 */
export async function writeSceneGlbFile(
  assembly: SceneAssembly, path: string | Buffer, options: SceneGlbOptions & { maxBytes?: number } = {},
): Promise<{ bytes: number; stats: SceneGlbStats }> {
  const { doc, stats } = sceneDocument(assembly, options);
  if (options.maxBytes !== undefined) {
    const { byteLength } = glbPieces(doc);
    if (byteLength > options.maxBytes) throw new GlbTooLargeError(byteLength, options.maxBytes);
  }
  return { bytes: await writeGlbFile(doc, path), stats };
}

class SceneWriter {
  readonly doc: GltfDocument;
  readonly notes: string[];
  /** Shape index → glTF geometry index. */
  readonly #geometries: Int32Array;
  readonly #plainGeometries = new Map<number, number>();
  readonly #materials = new Map<string, number>();
  readonly #meshes = new Map<string, number>();
  readonly #textures = new Map<string, number | null>();
  readonly #decalGeometries = new Map<string, number>();

  constructor(readonly assembly: SceneAssembly, readonly options: SceneGlbOptions) {
    this.doc = createGltf();
    this.notes = [...assembly.notes];
    this.#geometries = new Int32Array(assembly.shapes.length).fill(-1);
  }

  write(): { doc: GltfDocument; stats: SceneGlbStats } {
    const { parts, dom } = this.assembly;
    const t = parts.transforms, s = parts.scales, o = parts.offsets;
    for (let i = 0; i < parts.count; i++) {
      const row = parts.rows[i]!;
      const m = i * 12;
      const rotation = [[t[m + 3]!, t[m + 4]!, t[m + 5]!], [t[m + 6]!, t[m + 7]!, t[m + 8]!], [t[m + 9]!, t[m + 10]!, t[m + 11]!]];
      const ox = o[i * 3]!, oy = o[i * 3 + 1]!, oz = o[i * 3 + 2]!;
      const translation: Vec3 = [
        t[m]! + rotation[0]![0]! * ox + rotation[0]![1]! * oy + rotation[0]![2]! * oz,
        t[m + 1]! + rotation[1]![0]! * ox + rotation[1]![1]! * oy + rotation[1]![2]! * oz,
        t[m + 2]! + rotation[2]![0]! * ox + rotation[2]![1]! * oy + rotation[2]![2]! * oz,
      ];
      const scale: Vec3 = [s[i * 3]!, s[i * 3 + 1]!, s[i * 3 + 2]!];
      // A hostile size or mesh scale can overflow float32: such a part cannot stand in a glTF scene.
      if (!allFinite(translation) || !rotation.every(allFinite) || !allFinite(scale)) {
        this.notes.push(`${dom.className(row)} ${instanceId(row)} left out: its place, size or scale is not a finite number`);
        continue;
      }
      const shape = this.assembly.shapes[parts.shapes[i]!]!;
      const extras: Record<string, unknown> = { id: instanceId(row), class: dom.className(row) };
      if (shape.kind === 'placeholder') extras.placeholder = shape.reason;
      // A downloaded mesh or union model: which asset it shows.
      else if (shape.source && /^\d+$/.test(shape.source)) extras.asset = shape.source;
      const mesh = this.#partMesh(i);
      const placement = { translation, rotation: quaternionOf(rotation), scale };
      const skin = shape.geometry.skin;
      if (skin) {
        // A skinned mesh stands where its joints are: the part's placement goes on the bones' root.
        const skinIndex = addSkin(this.doc, skin, undefined, dom.name(row), placement);
        addNode(this.doc, { name: dom.name(row), mesh, skin: skinIndex, extras });
      } else {
        addNode(this.doc, { name: dom.name(row), mesh, ...placement, extras });
      }
    }
    const terrain = this.assembly.terrain ? this.#terrain() : null;
    this.doc.extras = {
      generator: 'rbxl-import', units: 'studs', up: '+Y', parts: parts.count,
      ...(Object.keys(this.assembly.placeholders).length ? { placeholders: this.assembly.placeholders } : {}),
      ...(this.notes.length ? { notes: this.notes.slice(0, 100) } : {}),
      ...this.options.extras,
    };
    return {
      doc: this.doc,
      stats: {
        nodes: this.doc.nodes.length, parts: parts.count, meshes: this.doc.meshes.length, images: this.doc.images.length,
        terrain, placeholders: this.assembly.placeholders, notes: this.notes,
      },
    };
  }

  /** The glTF mesh of part i: its shape with its material, plus its decals; shared by parts that look alike. */
  #partMesh(i: number): number {
    const { parts } = this.assembly;
    const shapeIndex = parts.shapes[i]!;
    const shape = this.assembly.shapes[shapeIndex]!;
    const look = this.assembly.looks.get(i);
    const vertexColors = (parts.flags[i]! & VERTEX_COLORS) !== 0;
    const geometry = this.#geometry(shapeIndex, vertexColors);
    const material = this.#partMaterial(i, look, vertexColors, !!shape.geometry.uvs);
    const groups = shape.geometry.groups?.length ?? 1;
    if (!look?.decals) {
      const key = `${geometry}:${material}`;
      let mesh = this.#meshes.get(key);
      if (mesh === undefined) {
        mesh = addMeshOf(this.doc, [{ geometry, materials: Array(groups).fill(material) }]);
        this.#meshes.set(key, mesh);
      }
      return mesh;
    }
    const primitives = [{ geometry, materials: Array(groups).fill(material) as number[] }];
    for (const decal of look.decals) {
      const texture = this.#texture(decal.image);
      if (texture === null) continue;
      const decalMaterial = addMaterial(this.doc, {
        name: 'Decal',
        baseColor: [srgbToLinear(decal.color[0] * 255), srgbToLinear(decal.color[1] * 255), srgbToLinear(decal.color[2] * 255), 1 - decal.transparency],
        baseColorTexture: texture, alphaMode: 'BLEND', metallic: 0, roughness: 0.8,
      });
      primitives.push({ geometry: this.#decalGeometry(decal, i), materials: [decalMaterial] });
    }
    return addMeshOf(this.doc, primitives);
  }

  /** A shape's geometry in the file (without vertex colours unless the part shows them). */
  #geometry(shapeIndex: number, vertexColors: boolean): number {
    const shape = this.assembly.shapes[shapeIndex]!;
    if (shape.geometry.colors && !vertexColors) {
      let plain = this.#plainGeometries.get(shapeIndex);
      if (plain === undefined) {
        const { colors: _colors, ...rest } = shape.geometry;
        plain = addGeometry(this.doc, rest);
        this.#plainGeometries.set(shapeIndex, plain);
      }
      return plain;
    }
    if (this.#geometries[shapeIndex] === -1) this.#geometries[shapeIndex] = addGeometry(this.doc, shape.geometry);
    return this.#geometries[shapeIndex]!;
  }

  #partMaterial(i: number, look: PartLook | undefined, vertexColors: boolean, hasUvs: boolean): number {
    const { parts } = this.assembly;
    const r = parts.colors[i * 4]!, g = parts.colors[i * 4 + 1]!, b = parts.colors[i * 4 + 2]!, opacity = parts.colors[i * 4 + 3]!;
    const materialValue = parts.materials[i]!, flags = parts.flags[i]!;
    const texture = hasUvs ? look?.texture : undefined;
    const surface = hasUvs ? look?.surface : undefined;
    const key = `${r},${g},${b},${opacity},${materialValue},${flags & (NEON | DOUBLE_SIDED)},${vertexColors ? 1 : 0},${texture ?? ''},${surface ? surfaceKey(surface) : ''}`;
    const known = this.#materials.get(key);
    if (known !== undefined) return known;
    const name = MATERIALS.get(materialValue) ?? null;
    const material: GltfMaterial = partMaterial({ color: [r, g, b], transparency: 1 - opacity / 255, material: name });
    if (vertexColors) material.baseColor = [1, 1, 1, material.baseColor[3]];
    if (flags & DOUBLE_SIDED) material.doubleSided = true;
    const colorMap = surface?.color ?? texture;
    if (colorMap) {
      const index = this.#texture(colorMap);
      if (index !== null) {
        // Roblox shows a mesh texture as it is (a SurfaceAppearance's colour map as well): white factor.
        material.baseColor = [1, 1, 1, material.baseColor[3]];
        material.baseColorTexture = index;
        if (surface?.alphaMode === 'Transparency') material.alphaMode = 'BLEND';
      }
    }
    if (surface?.normal) {
      const index = this.#texture(surface.normal);
      if (index !== null) material.normalTexture = index;
    }
    if (surface && (surface.metalness || surface.roughness)) {
      const index = this.#metallicRoughness(surface);
      if (index !== null) {
        material.metallicRoughnessTexture = index;
        material.metallic = surface.metalness ? 1 : 0;
        material.roughness = 1;
      }
    }
    const index = addMaterial(this.doc, material);
    this.#materials.set(key, index);
    return index;
  }

  /** A downloaded image as a texture; null (named in the notes) when it is missing, not PNG/JPEG, damaged or too large (`unembeddable`). */
  #texture(id: string): number | null {
    const known = this.#textures.get(id);
    if (known !== undefined) return known;
    const bytes = this.options.images?.image(id);
    let index: number | null = null;
    if (bytes) {
      const refused = unembeddable(bytes);
      if (refused === null) index = addTexture(this.doc, bytes, imageMimeType(bytes)!, id);
      else this.notes.push(`image ${id} is ${refused}; left out`);
    }
    this.#textures.set(id, index);
    return index;
  }

  #metallicRoughness(surface: SceneSurface): number | null {
    const key = `mr:${surface.metalness ?? ''}:${surface.roughness ?? ''}`;
    const known = this.#textures.get(key);
    if (known !== undefined) return known;
    let index: number | null = null;
    const read = (id: string | undefined) => {
      if (!id) return null;
      const bytes = this.options.images?.image(id);
      return bytes ? decodePngChannel(bytes) : null;
    };
    try {
      const metalness = read(surface.metalness), roughness = read(surface.roughness);
      if (metalness || roughness) index = addTexture(this.doc, metallicRoughnessPng(metalness, roughness), 'image/png', key);
    } catch (error) {
      if (!(error instanceof ImageError)) throw error;
      this.notes.push(`metalness/roughness maps ${surface.metalness ?? '-'}/${surface.roughness ?? '-'} left out: ${error.message}`);
    }
    this.#textures.set(key, index);
    return index;
  }

  /** A decal's quad over its face of part i's box, lifted off the face, in the space of the part's node. */
  #decalGeometry(decal: SceneDecal, i: number): number {
    const { sizes, scales, offsets } = this.assembly.parts;
    const size = Array.from(sizes.subarray(i * 3, i * 3 + 3)) as Vec3;
    const fit = { scale: Array.from(scales.subarray(i * 3, i * 3 + 3)) as Vec3, offset: Array.from(offsets.subarray(i * 3, i * 3 + 3)) as Vec3 };
    const key = `${decal.face}:${size.join(',')}:${fit.scale.join(',')}:${fit.offset.join(',')}:${decal.tile?.join(',') ?? ''}`;
    let geometry = this.#decalGeometries.get(key);
    if (geometry === undefined) {
      geometry = addGeometry(this.doc, decalQuad(decal, size, fit));
      this.#decalGeometries.set(key, geometry);
    }
    return geometry;
  }

  #terrain(): NonNullable<SceneGlbStats['terrain']> {
    const terrain = this.assembly.terrain!;
    const mesh = meshTerrain(terrain.grid, this.options.terrain);
    const id = instanceId(terrain.row);
    if (mesh.sampling === 'point') {
      const { grid } = terrain;
      const limit = resolveTerrainLimits(this.options.terrain?.limits).maxMeshVoxels;
      this.notes.push(
        `terrain sampled sparsely: its ${grid.count} chunks hold ${grid.count * grid.chunkVoxels} voxels, more than the ${limit} `
        + `a meshing pass may average (maxMeshVoxels), so each sample of ${mesh.step}³ voxels is the one voxel near its middle; `
        + 'features thinner than a sample may be missing',
      );
    }
    const solid = mergeChunks(mesh, 'solid');
    if (solid) {
      const materials = solid.groups!.map((group) => {
        const index = TERRAIN_MATERIALS.indexOf(group.material as (typeof TERRAIN_MATERIALS)[number]);
        const slot = index >= 0 && index < MATERIAL_SLOTS ? index : AIR;
        const p = terrain.palette;
        return addMaterial(this.doc, partMaterial({ color: [p[slot * 3]!, p[slot * 3 + 1]!, p[slot * 3 + 2]!], transparency: 0, material: group.material ?? null }));
      });
      addNode(this.doc, {
        name: 'Terrain', mesh: addMeshOf(this.doc, [{ geometry: addGeometry(this.doc, solid), materials }], 'Terrain'),
        extras: { id, kind: 'terrain', step: mesh.step, ...(mesh.sampling === 'point' ? { sampling: 'point' } : {}), triangles: mesh.triangles.solid },
      });
    }
    const water = mergeChunks(mesh, 'water');
    if (water) {
      const p = terrain.palette;
      const material = addMaterial(this.doc, {
        ...partMaterial({ color: [p[WATER * 3]!, p[WATER * 3 + 1]!, p[WATER * 3 + 2]!], transparency: Math.max(0.1, terrain.waterTransparency), material: 'Glass' }),
        name: 'Water', doubleSided: true,
      });
      addNode(this.doc, {
        name: 'Water', mesh: addMeshOf(this.doc, [{ geometry: addGeometry(this.doc, water), materials: material }], 'Water'),
        extras: { id, kind: 'water', triangles: mesh.triangles.water },
      });
    }
    return { step: mesh.step, sampling: mesh.sampling, solid: mesh.triangles.solid, water: mesh.triangles.water };
  }
}

function surfaceKey(surface: SceneSurface): string {
  return `${surface.color ?? ''}/${surface.normal ?? ''}/${surface.metalness ?? ''}/${surface.roughness ?? ''}/${surface.alphaMode}`;
}

/**
 * Every chunk's solid (or water) surface as one geometry in world coordinates, its
 * triangles grouped by material across chunks (one glTF primitive per material).
 */
export function mergeChunks(mesh: TerrainMesh, which: 'solid' | 'water'): MeshGeometry | null {
  let vertices = 0;
  const perMaterial = new Map<string, number>();
  for (const chunk of mesh.chunks) {
    const g = chunk[which];
    if (!g) continue;
    vertices += g.positions.length / 3;
    for (const group of g.groups ?? [{ start: 0, count: g.indices.length, material: 'Water' }]) {
      perMaterial.set(group.material ?? '', (perMaterial.get(group.material ?? '') ?? 0) + group.count);
    }
  }
  if (vertices === 0) return null;
  const positions = new Float32Array(vertices * 3);
  const normals = new Float32Array(vertices * 3);
  const names = [...perMaterial.keys()];
  const starts = new Map<string, number>();
  let total = 0;
  for (const name of names) { starts.set(name, total); total += perMaterial.get(name)!; }
  const indices = new Uint32Array(total);
  const cursor = new Map(starts);
  let base = 0;
  for (const chunk of mesh.chunks) {
    const g = chunk[which];
    if (!g) continue;
    const [ox, oy, oz] = chunk.origin;
    const n = g.positions.length / 3;
    for (let v = 0; v < n; v++) {
      positions[(base + v) * 3] = g.positions[v * 3]! + ox;
      positions[(base + v) * 3 + 1] = g.positions[v * 3 + 1]! + oy;
      positions[(base + v) * 3 + 2] = g.positions[v * 3 + 2]! + oz;
    }
    if (g.normals) normals.set(g.normals, base * 3);
    for (const group of g.groups ?? [{ start: 0, count: g.indices.length, material: 'Water' }]) {
      const name = group.material ?? '';
      let at = cursor.get(name)!;
      for (let k = group.start; k < group.start + group.count; k++) indices[at++] = g.indices[k]! + base;
      cursor.set(name, at);
    }
    base += n;
  }
  return { positions, normals, indices, groups: names.map((name) => ({ start: starts.get(name)!, count: perMaterial.get(name)!, material: name })) };
}

/**
 * Roblox NormalId faces: the outward axis, and the image's right and up as seen from
 * outside (sides upright; Top read with the part's front up, Bottom with its front down).
 */
const FACES: readonly { normal: Vec3; right: Vec3; up: Vec3 }[] = [
  { normal: [1, 0, 0], right: [0, 0, -1], up: [0, 1, 0] }, // Right
  { normal: [0, 1, 0], right: [1, 0, 0], up: [0, 0, -1] }, // Top
  { normal: [0, 0, 1], right: [1, 0, 0], up: [0, 1, 0] }, // Back
  { normal: [-1, 0, 0], right: [0, 0, 1], up: [0, 1, 0] }, // Left
  { normal: [0, -1, 0], right: [-1, 0, 0], up: [0, 0, -1] }, // Bottom
  { normal: [0, 0, -1], right: [-1, 0, 0], up: [0, 1, 0] }, // Front
];

const axisOf = (v: Vec3): number => (v[0] !== 0 ? 0 : v[1] !== 0 ? 1 : 2);

/**
 * The quad of a decal (image stretched over the face) or a Texture (tiled by studs)
 * on the box of `size`, in the space of the part's node (whose shape is placed by
 * `fit`: part space = offset + scale × node space).
 */
export function decalQuad(decal: Pick<SceneDecal, 'face' | 'tile'>, size: Vec3, fit: { scale: Vec3; offset: Vec3 }): MeshGeometry {
  const { normal, right, up } = FACES[decal.face] ?? FACES[5]!;
  const rightAxis = axisOf(right), upAxis = axisOf(up);
  const corner = (r: number, u: number): number[] => [0, 1, 2].map((a) => {
    const part = normal[a]! * (size[a]! / 2 + DECAL_LIFT) + right[a]! * r * (size[a]! / 2) + up[a]! * u * (size[a]! / 2);
    const scale = Math.abs(fit.scale[a]!) > 1e-9 ? fit.scale[a]! : 1;
    return (part - fit.offset[a]!) / scale;
  });
  const positions = Float32Array.from([...corner(-1, 1), ...corner(1, 1), ...corner(1, -1), ...corner(-1, -1)]);
  const normals = Float32Array.from([...normal, ...normal, ...normal, ...normal]);
  let u0 = 0, u1 = 1, v0 = 0, v1 = 1;
  if (decal.tile) {
    const [perU, perV, offsetU, offsetV] = decal.tile;
    const width = size[rightAxis]!, height = size[upAxis]!;
    u0 = offsetU / perU; u1 = u0 + width / perU;
    v0 = offsetV / perV; v1 = v0 + height / perV;
  }
  const uvs = Float32Array.of(u0, v0, u1, v0, u1, v1, u0, v1);
  return { positions, normals, uvs, indices: Uint32Array.of(0, 3, 2, 0, 2, 1) };
}

const allFinite = (v: readonly number[]): boolean => Number.isFinite(v[0]) && Number.isFinite(v[1]) && Number.isFinite(v[2]);
