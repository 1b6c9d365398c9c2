/**
 * The scene assembly: every BasePart under the Workspace (the Camera's subtree left
 * out, as in the project's scene list; every instance of a model file) with its real
 * shape, placement, colour, transparency and material, the images it shows, and the
 * terrain. One assembly feeds both outputs: scene.glb (glb.ts) and the preview
 * picture (picture.ts).
 *
 * Read straight from the instance table: columns are resolved once per property
 * table, each part costs a few column reads and a look at its children, and parts
 * are typed arrays (nothing per part is an object), so a 200k-part map assembles in
 * a fraction of its analysis.
 *
 * Shapes, per class:
 * - Part and its siblings: Enum.PartType (Block, Ball, Cylinder, Wedge, CornerWedge);
 *   a SpecialMesh child replaces it (its MeshType: a primitive, or FileMesh: the
 *   mesh file), as do BlockMesh and CylinderMesh (scaled by their Scale) and FileMesh;
 * - WedgePart, CornerWedgePart, TrussPart and the 2006-era ramp parts: their class;
 * - MeshPart: its mesh file, fitted from the mesh's bounds to Size;
 * - UnionOperation, NegateOperation, PartOperation, IntersectOperation: the
 *   downloaded model (`AssetId`, CSGMDL) when converted, else the model stored in
 *   `MeshData`, else the collision hulls of `PhysicalConfigData` (CSGPHS, in the file),
 *   scaled from InitialSize to Size.
 * A mesh or union whose geometry is missing is a box of its Size, marked as a
 * placeholder with the reason.
 *
 * Union hulls are decoded once per distinct content (however many SharedStrings or
 * unions hold the same bytes) and within a place-wide budget (`maxPlaceHullWork`,
 * `maxPlaceHullBytes`, src/mesh/limits.ts), checked from each blob's hull headers
 * before it is decoded: past it, the remaining unions are boxes, counted once in
 * `hullBudget.unionsBoxed` and one note. Union models in `MeshData` likewise: once per
 * distinct content, within `maxPlaceModelBytes`, checked from each blob's counts before
 * it is decoded; past it, the remaining unions draw their hulls (else a box), counted in
 * `modelBudget.unionsUndecoded` and one note. Unreadable union data is named in the
 * notes for the first few distinct blobs of each kind, then counted.
 */
import { type Dom, findService } from '../parser/dom.js';
import type { Matrix3, Vec3 } from '../parser/values.js';
import { BASE_PART_CLASSES, CSG_CLASSES, MATERIALS, MESH_TYPES, NORMAL_IDS, PART_TYPES } from '../project/classes.js';
import { asCFrame } from '../project/geometry.js';
import { createHash } from 'node:crypto';
import { decodeMeshAsset, isMeshDecodeError, resolveMeshLimits, unionHullCost, unionModelCost, type MeshLimits } from '../mesh/index.js';
import type { MeshGeometry } from '../geometry/mesh.js';
import { meshObjectShape, partShape, placeholder, type PartShape, type ShapeDetail } from '../geometry/shapes.js';
import { assetIdOf, finiteOr, finiteVec3, partColor, partColumns, sharedStringOf, stringBytes, type PartColumns } from './columns.js';
import { boundsFit, FLAT_BYTES_PER_TRIANGLE, flatShaded, shapeOf, unionFit, type Fit, type SceneShape } from './shapes.js';
import { readSceneTerrain, type SceneTerrain } from './terrain.js';
import { usedPositionsFinite, usedVertices } from './convert.js';
import type { SmoothGrid } from '../terrain/smooth-grid.js';

/** What the assembly may know about downloaded assets (nothing at analysis time). */
export interface SceneAssets {
  /** A mesh or union model asset's geometry; undefined when it was not downloaded. */
  mesh(id: string): MeshLookup | undefined;
}

export type MeshLookup = { ok: true; geometry: MeshGeometry } | { ok: false; reason: string };

export interface AssembleOptions {
  assets?: SceneAssets;
  /** The terrain's grid already read for the report (readTerrainGrid), so it is read once. */
  terrain?: { row: number; grid: SmoothGrid | null; error?: string };
  /** Tessellation of balls and cylinders (default 24 segments, 12 rings; the picture uses fewer). */
  detail?: ShapeDetail;
  /**
   * What union data is decoded under, the place-wide caps included (`maxPlaceHullWork`,
   * `maxPlaceHullBytes`, `maxPlaceModelBytes`): the memory budget's in the service, the defaults otherwise.
   */
  limits?: Partial<MeshLimits>;
}

/** What the union hulls of one assembly cost, against the place-wide caps. */
export interface HullBudget {
  /** Distinct hull blobs decoded (by content). */
  decoded: number;
  /** Hull work spent (each computed hull's points squared, as declared before decoding). */
  work: number;
  /** Bytes of hull geometry kept. */
  bytes: number;
  /** Unions drawn as boxes because the place's hulls passed the caps. */
  unionsBoxed: number;
}

/** The placeholder reason of a union whose hulls the place's budget left undrawn. */
export const HULLS_OVER_BUDGET = 'union hulls past the place\'s limit';

/** What the union models (`MeshData`) of one assembly cost, against `maxPlaceModelBytes`. */
export interface ModelBudget {
  /** Distinct MeshData blobs decoded (by content). */
  decoded: number;
  /** Bytes of model geometry decoded, as each blob's counts declared before decoding (36 a vertex, 4 an index), kept or not. */
  bytes: number;
  /** Unions whose MeshData was not decoded because the place's models passed the cap (drawn as their hulls, else a box). */
  unionsUndecoded: number;
}

/** The placeholder reason of a union whose model the place's budget left undecoded and that has no hulls to draw. */
export const MODELS_OVER_BUDGET = 'union models past the place\'s limit';

/** Unreadable union data named in the notes, per kind (MeshData, PhysicalConfigData); past it, counted in one more note. */
export const UNREADABLE_NOTES = 10;

/** Bits of `SceneParts.flags`. */
export const NEON = 1;
export const DOUBLE_SIDED = 2;
/** A union model's own colours show (UsePartColor off). */
export const VERTEX_COLORS = 4;

/** Every part as typed arrays, `count` entries each. */
export interface SceneParts {
  count: number;
  /** The part's DOM row: its instance id and name. */
  rows: Int32Array;
  /** 12 per part: CFrame position x, y, z, then the rotation's rows as Roblox stores them. */
  transforms: Float32Array;
  /** 3 per part: Size (studs). */
  sizes: Float32Array;
  /** 3 per part: the shape's scale in part space. */
  scales: Float32Array;
  /** 3 per part: the shape's offset in part space (after scaling). */
  offsets: Float32Array;
  /** 4 per part: sRGB colour and opacity (255 − 255·Transparency). */
  colors: Uint8Array;
  /** Enum.Material value. */
  materials: Uint16Array;
  /** Index into `shapes`. */
  shapes: Uint32Array;
  flags: Uint8Array;
}

/** A Decal or Texture on one face of a part. */
export interface SceneDecal {
  row: number;
  /** Enum.NormalId: 0 Right (+X), 1 Top (+Y), 2 Back (+Z), 3 Left, 4 Bottom, 5 Front (-Z). */
  face: number;
  image: string;
  color: [number, number, number];
  transparency: number;
  /** Texture only: studs per tile and offset, U then V. */
  tile?: [number, number, number, number];
}

/** A SurfaceAppearance's maps (asset ids) and how its colour map's alpha is used. */
export interface SceneSurface {
  row: number;
  color?: string;
  normal?: string;
  metalness?: string;
  roughness?: string;
  /** Enum.AlphaMode: Overlay (0), Transparency (1), TintMask (2). */
  alphaMode: 'Overlay' | 'Transparency' | 'TintMask';
}

/** Images a part shows; only parts that show any have an entry. */
export interface PartLook {
  /** MeshPart.TextureID or a SpecialMesh's TextureId: the mesh's base colour. */
  texture?: string;
  surface?: SceneSurface;
  decals?: SceneDecal[];
}

export interface SceneAssembly {
  dom: Dom;
  parts: SceneParts;
  shapes: SceneShape[];
  /** Part index → its images. */
  looks: Map<number, PartLook>;
  terrain: SceneTerrain | null;
  /** Parts drawn as placeholder boxes, by reason. */
  placeholders: Record<string, number>;
  /** Things left out or approximated, for the report and the glb's extras. */
  notes: string[];
  hullBudget: HullBudget;
  modelBudget: ModelBudget;
}

const IDENTITY: Matrix3 = [[1, 0, 0], [0, 1, 0], [0, 0, 1]];
const ZERO: Vec3 = [0, 0, 0];
/** Roblox's default part size, for a part that stores none. */
const DEFAULT_SIZE: Vec3 = [4, 1.2, 2];
const RAMP_CLASSES: Readonly<Record<string, string>> = {
  ParallelRampPart: 'ParallelRamp', PrismPart: 'Prism', PyramidPart: 'Pyramid', RightAngleRampPart: 'RightAngleRamp',
};
const ALPHA_MODES = ['Overlay', 'Transparency', 'TintMask'] as const;

export function assembleScene(dom: Dom, options: AssembleOptions = {}): SceneAssembly {
  const workspace = findService(dom, 'Workspace');
  const notes: string[] = [];
  const builder = new ShapeTable(dom, options);
  const parts = newParts(256);
  const looks = new Map<number, PartLook>();
  let columns: PartColumns | null = null;

  // What each property table holds: 1 parts, 2 the Camera (skipped with its subtree).
  const kinds = Uint8Array.from(dom.tables, ({ className }) => (BASE_PART_CLASSES.has(className) ? 1 : className === 'Camera' ? 2 : 0));
  // Pre-order over the Workspace's descendants (every instance of a model file).
  let row = workspace === -1 ? dom.firstRoot : dom.firstChild(workspace);
  while (row !== -1) {
    const table = dom.tableOf(row);
    const kind = kinds[table]!;
    if (kind === 2) { row = dom.after(row, workspace); continue; }
    if (kind === 1) {
      if (!columns || columns.table !== table) columns = partColumns(dom, table);
      addPart(dom, row, columns, parts, builder, looks);
    }
    row = dom.next(row, workspace);
  }

  const placeholders: Record<string, number> = {};
  for (let i = 0; i < parts.count; i++) {
    const shape = builder.shapes[parts.shapes[i]!]!;
    if (shape.kind === 'placeholder') placeholders[shape.reason!] = (placeholders[shape.reason!] ?? 0) + 1;
  }
  const hullBudget = builder.hullBudget(placeholders[HULLS_OVER_BUDGET] ?? 0);
  const modelBudget = builder.modelBudget();
  // First, so a glb's notes (it keeps the first 100) always have them.
  const budgetNotes: string[] = [];
  if (hullBudget.unionsBoxed > 0) {
    budgetNotes.push(`${hullBudget.unionsBoxed} unions drawn as boxes: the place's union hulls pass the limit on computing and keeping them ` +
      `(maxPlaceHullWork ${builder.limits.maxPlaceHullWork}, maxPlaceHullBytes ${builder.limits.maxPlaceHullBytes})`);
  }
  if (modelBudget.unionsUndecoded > 0) {
    budgetNotes.push(`${modelBudget.unionsUndecoded} unions' models (MeshData) not decoded: the place's union models pass the limit on decoding them ` +
      `(maxPlaceModelBytes ${builder.limits.maxPlaceModelBytes}); they are drawn as their hulls, else as boxes`);
  }
  const terrain = readSceneTerrain(dom, notes, options.terrain);
  return {
    dom, parts: trim(parts), shapes: builder.shapes, looks, terrain, placeholders,
    notes: [...budgetNotes, ...builder.unionNotes(), ...notes], hullBudget, modelBudget,
  };
}

function addPart(dom: Dom, row: number, c: PartColumns, parts: SceneParts, shapes: ShapeTable, looks: Map<number, PartLook>): void {
  if (parts.count === parts.rows.length) grow(parts);
  const i = parts.count++;
  const at = dom.rowInTable(row);
  parts.rows[i] = row;

  const cframe = asCFrame(c.cframe?.get(at));
  const t = parts.transforms;
  const position = cframe?.position;
  const finitePosition = !!position && Number.isFinite(position[0]) && Number.isFinite(position[1]) && Number.isFinite(position[2]);
  t[i * 12] = finitePosition ? position[0] : 0;
  t[i * 12 + 1] = finitePosition ? position[1] : 0;
  t[i * 12 + 2] = finitePosition ? position[2] : 0;
  const rotation = cframe && finiteMatrix(cframe.orientation) ? cframe.orientation : IDENTITY;
  for (let r = 0; r < 3; r++) {
    const line = rotation[r]!;
    t[i * 12 + 3 + r * 3] = line[0]; t[i * 12 + 4 + r * 3] = line[1]; t[i * 12 + 5 + r * 3] = line[2];
  }

  const stored = finiteVec3(c.size?.get(at));
  const size: Vec3 = stored ? [Math.abs(stored[0]), Math.abs(stored[1]), Math.abs(stored[2])] : DEFAULT_SIZE;
  partColor(c, at, parts.colors, i * 4);
  const transparency = Math.min(1, Math.max(0, finiteOr(c.transparency?.get(at), 0)));
  parts.colors[i * 4 + 3] = Math.round(255 * (1 - transparency));
  const material = finiteOr(c.material?.get(at), 256);
  parts.materials[i] = material >= 0 && material < 65536 ? material : 256;
  let flags = MATERIALS.get(material) === 'Neon' ? NEON : 0;
  if (c.doubleSided?.get(at) === true) flags |= DOUBLE_SIDED;
  parts.flags[i] = flags;

  const look: PartLook = {};
  let meshObject = -1;
  for (let child = dom.firstChild(row); child !== -1; child = dom.nextSibling(child)) {
    const childClass = dom.className(child);
    if (childClass === 'Decal' || childClass === 'Texture') {
      const decal = readDecal(dom, child, childClass);
      if (decal) (look.decals ??= []).push(decal);
    } else if (childClass === 'SurfaceAppearance') {
      look.surface ??= readSurface(dom, child);
    } else if (meshObject === -1 && (childClass === 'SpecialMesh' || childClass === 'FileMesh' || childClass === 'BlockMesh' || childClass === 'CylinderMesh')) {
      meshObject = child;
    }
  }

  const className = c.className;
  let placed: { shape: number; fit: Fit };
  if (className === 'MeshPart') {
    placed = shapes.meshFile(assetIdOf(c.meshContent?.get(at)) ?? assetIdOf(c.meshId?.get(at)), size, 'fit');
    const texture = assetIdOf(c.textureContent?.get(at)) ?? assetIdOf(c.textureId?.get(at));
    if (texture) look.texture = texture;
  } else if (CSG_CLASSES.has(className)) {
    placed = shapes.union(row, c, at, size);
    const shape = shapes.shapes[placed.shape]!;
    if (shape.geometry.colors && shape.source !== 'PhysicalConfigData' && c.usePartColor?.get(at) === false) parts.flags[i] |= VERTEX_COLORS;
  } else if (meshObject !== -1 && !RAMP_CLASSES[className] && className !== 'TrussPart') {
    placed = shapes.meshObject(meshObject, size);
    const texture = assetIdOf(valueOf(dom, meshObject, 'TextureContent')) ?? assetIdOf(valueOf(dom, meshObject, 'TextureId'));
    if (texture && shapes.shapes[placed.shape]!.kind === 'mesh') look.texture = texture;
  } else {
    placed = shapes.primitive(className, c.shape?.get(at), size);
  }
  parts.shapes[i] = placed.shape;
  parts.sizes.set(size, i * 3);
  parts.scales.set(placed.fit.scale, i * 3);
  parts.offsets.set(placed.fit.offset, i * 3);
  if (look.texture || look.surface || look.decals) looks.set(i, look);
}

function finiteMatrix(m: Matrix3): boolean {
  for (let r = 0; r < 3; r++) {
    const line = m[r]!;
    if (!Number.isFinite(line[0]) || !Number.isFinite(line[1]) || !Number.isFinite(line[2])) return false;
  }
  return true;
}

function valueOf(dom: Dom, row: number, name: string) {
  const column = dom.table(dom.tableOf(row)).columns.get(name);
  return column?.get(dom.rowInTable(row));
}

function readDecal(dom: Dom, row: number, className: 'Decal' | 'Texture'): SceneDecal | null {
  const image = assetIdOf(valueOf(dom, row, 'TextureContent')) ?? assetIdOf(valueOf(dom, row, 'ColorMapContent')) ?? assetIdOf(valueOf(dom, row, 'Texture'));
  if (!image) return null;
  const faceValue = valueOf(dom, row, 'Face');
  const face = typeof faceValue === 'number' && NORMAL_IDS[faceValue] ? faceValue : 5;
  const tint = finiteVec3(valueOf(dom, row, 'Color3'));
  const decal: SceneDecal = {
    row, face, image,
    color: tint ? [clamp01(tint[0]), clamp01(tint[1]), clamp01(tint[2])] : [1, 1, 1],
    transparency: Math.min(1, Math.max(0, finiteOr(valueOf(dom, row, 'Transparency'), 0))),
  };
  if (className === 'Texture') {
    decal.tile = [
      Math.max(0.01, finiteOr(valueOf(dom, row, 'StudsPerTileU'), 2)), Math.max(0.01, finiteOr(valueOf(dom, row, 'StudsPerTileV'), 2)),
      finiteOr(valueOf(dom, row, 'OffsetStudsU'), 0), finiteOr(valueOf(dom, row, 'OffsetStudsV'), 0),
    ];
  }
  return decal;
}

function readSurface(dom: Dom, row: number): SceneSurface | undefined {
  const map = (name: string) => assetIdOf(valueOf(dom, row, `${name}Content`)) ?? assetIdOf(valueOf(dom, row, name)) ?? undefined;
  const mode = valueOf(dom, row, 'AlphaMode');
  const surface: SceneSurface = { row, alphaMode: typeof mode === 'number' ? ALPHA_MODES[mode] ?? 'Overlay' : 'Overlay' };
  const color = map('ColorMap'), normal = map('NormalMap'), metalness = map('MetalnessMap'), roughness = map('RoughnessMap');
  if (color) surface.color = color;
  if (normal) surface.normal = normal;
  if (metalness) surface.metalness = metalness;
  if (roughness) surface.roughness = roughness;
  return color || normal || metalness || roughness ? surface : undefined;
}

const clamp01 = (x: number): number => Math.min(1, Math.max(0, x));

/**
 * The shapes of one assembly: each distinct geometry once (by key), with the caches
 * of decoded union data and looked-up meshes.
 */
class ShapeTable {
  readonly shapes: SceneShape[] = [];
  /** Union data that could not be read, once per distinct blob, the first UNREADABLE_NOTES of each kind. */
  readonly #notes: string[] = [];
  /** Distinct unreadable blobs, by kind. */
  #unreadableModels = 0;
  #unreadableHulls = 0;
  readonly #index = new Map<string, number>();
  readonly #stretched = new Map<string, number>();
  /** The caps union data is decoded under, the place-wide hull caps included. */
  readonly limits: MeshLimits;
  /** What a PhysicalConfigData SharedString gave (a shape index or a reason), by its index and by its bytes. */
  readonly #hullsByIndex = new Map<number, number | string>();
  readonly #hullsByContent = new Map<string, number | string>();
  #hullsDecoded = 0;
  #hullWork = 0;
  #hullBytes = 0;
  /** Set once a blob did not fit what was left of the place's hull budget. */
  #hullBudgetSpent = false;
  /** What a MeshData blob gave (a shape index, NO_MODEL or MODELS_OVER_BUDGET), by its bytes' SHA-256. */
  readonly #modelsByContent = new Map<string, number | string>();
  #modelsDecoded = 0;
  #modelBytes = 0;
  #unionsUndecoded = 0;
  /** Set once a blob did not fit what was left of the place's model budget. */
  #modelBudgetSpent = false;

  constructor(readonly dom: Dom, readonly options: AssembleOptions) {
    this.limits = resolveMeshLimits(options.limits);
  }

  hullBudget(unionsBoxed: number): HullBudget {
    return { decoded: this.#hullsDecoded, work: this.#hullWork, bytes: this.#hullBytes, unionsBoxed };
  }

  modelBudget(): ModelBudget {
    return { decoded: this.#modelsDecoded, bytes: this.#modelBytes, unionsUndecoded: this.#unionsUndecoded };
  }

  /** The notes on unreadable union data: the first few distinct blobs of each kind, then how many more. */
  unionNotes(): string[] {
    const more = (count: number, what: string) => (count > UNREADABLE_NOTES
      ? [`${count - UNREADABLE_NOTES} more distinct ${what} blobs are unreadable (the first ${UNREADABLE_NOTES} are named above)`] : []);
    return [...this.#notes, ...more(this.#unreadableModels, 'MeshData'), ...more(this.#unreadableHulls, 'PhysicalConfigData')];
  }

  #add(shape: SceneShape): number {
    const known = this.#index.get(shape.key);
    if (known !== undefined) return known;
    this.shapes.push(shape);
    this.#index.set(shape.key, this.shapes.length - 1);
    return this.shapes.length - 1;
  }

  #fromPartShape(shape: PartShape): { shape: number; fit: Fit } {
    let index = this.#index.get(shape.key);
    if (index === undefined) index = this.#add(shapeOf(shape.key, shape.geometry, 'primitive', { box: shape.key === 'box' }));
    return { shape: index, fit: { scale: shape.scale, offset: shape.offset } };
  }

  placeholder(size: Vec3, reason: string): { shape: number; fit: Fit } {
    const box = placeholder(size);
    const key = `placeholder:${reason}`;
    let index = this.#index.get(key);
    if (index === undefined) index = this.#add(shapeOf(key, box.geometry, 'placeholder', { reason, box: true }));
    return { shape: index, fit: { scale: box.scale, offset: [0, 0, 0] } };
  }

  primitive(className: string, shapeValue: unknown, size: Vec3): { shape: number; fit: Fit } {
    const ramp = RAMP_CLASSES[className];
    if (ramp) return this.#fromPartShape(meshObjectShape('SpecialMesh', ramp, size, [1, 1, 1], [0, 0, 0], this.options.detail)!);
    const name = className === 'WedgePart' ? 'Wedge' : className === 'CornerWedgePart' ? 'CornerWedge' : className === 'TrussPart' ? 'Truss'
      : typeof shapeValue === 'number' ? PART_TYPES[shapeValue] ?? 'Block' : 'Block';
    // Shapes that stretch to Size (most parts): the unit shape's index is kept per name.
    if (name === 'Block' || name === 'Wedge' || name === 'CornerWedge') {
      let index = this.#stretched.get(name);
      if (index === undefined) {
        index = this.#fromPartShape(partShape(name, [1, 1, 1], this.options.detail)).shape;
        this.#stretched.set(name, index);
      }
      return { shape: index, fit: { scale: size, offset: ZERO } };
    }
    return this.#fromPartShape(partShape(name, size, this.options.detail));
  }

  /** A SpecialMesh, FileMesh, BlockMesh or CylinderMesh under a part. */
  meshObject(row: number, size: Vec3): { shape: number; fit: Fit } {
    const dom = this.dom;
    const className = dom.className(row);
    const scale = finiteVec3(valueOf(dom, row, 'Scale')) ?? [1, 1, 1];
    const offset = finiteVec3(valueOf(dom, row, 'Offset')) ?? [0, 0, 0];
    const meshType = valueOf(dom, row, 'MeshType');
    const typeName = className === 'SpecialMesh' ? (typeof meshType === 'number' ? MESH_TYPES[meshType] : 'Head') : undefined;
    if (className === 'FileMesh' || typeName === 'FileMesh') {
      const id = assetIdOf(valueOf(dom, row, 'MeshContent')) ?? assetIdOf(valueOf(dom, row, 'MeshId'));
      // A SpecialMesh file is drawn at its own size times Scale, moved by Offset (not fitted to the part).
      return this.meshFile(id, size, { scale, offset });
    }
    const shape = meshObjectShape(className, typeName, size, scale, offset, this.options.detail);
    return shape ? this.#fromPartShape(shape) : this.primitive('Part', 1, size);
  }

  /** A mesh file by asset id: fitted to Size (MeshPart) or placed by a SpecialMesh's Scale and Offset. */
  meshFile(id: string | null, size: Vec3, fit: 'fit' | Fit): { shape: number; fit: Fit } {
    if (!id) return this.placeholder(size, 'no mesh id');
    const key = `mesh:${id}`;
    let index = this.#index.get(key);
    if (index === undefined) {
      const found = this.options.assets?.mesh(id);
      if (!found) return this.placeholder(size, 'mesh not downloaded');
      if (!found.ok) return this.placeholder(size, `mesh not converted: ${found.reason}`);
      index = this.#add(shapeOf(key, found.geometry, 'mesh', { source: id }));
    }
    const shape = this.shapes[index]!;
    return { shape: index, fit: fit === 'fit' ? boundsFit(shape, size) : fit };
  }

  /** A union: its downloaded model, else MeshData, else its hulls, else a placeholder. */
  union(row: number, c: PartColumns, at: number, size: Vec3): { shape: number; fit: Fit } {
    const initialSize = finiteVec3(c.initialSize?.get(at));
    // The downloaded model, when there are downloads (none at analysis time: the id is not even parsed).
    const assetId = this.options.assets ? assetIdOf(c.assetId?.get(at)) : null;
    if (assetId) {
      const key = `union:${assetId}`;
      let index = this.#index.get(key);
      if (index === undefined) {
        const found = this.options.assets?.mesh(assetId);
        if (found?.ok) index = this.#add(shapeOf(key, found.geometry, 'union', { source: assetId }));
      }
      if (index !== undefined) return { shape: index, fit: unionFit(this.shapes[index]!, size, initialSize) };
    }
    const inline = this.#meshData(row, c);
    if (typeof inline === 'number') return { shape: inline, fit: unionFit(this.shapes[inline]!, size, initialSize) };
    if (inline === MODELS_OVER_BUDGET) this.#unionsUndecoded++;
    const hulls = this.#hulls(c.physicalConfigData?.get(at));
    if (typeof hulls === 'number') return { shape: hulls, fit: unionFit(this.shapes[hulls]!, size, initialSize) };
    if (hulls === 'block') return this.#fromPartShape(partShape('Block', size));
    // No hulls to fall back on: the box is the model budget's.
    if (inline === MODELS_OVER_BUDGET && hulls === NO_HULLS) return this.placeholder(size, MODELS_OVER_BUDGET);
    return this.placeholder(size, hulls);
  }

  /**
   * The render model a union stores itself (older places): CSGMDL in `MeshData`, decoded
   * once per distinct content (its bytes' SHA-256). A shape index, else NO_MODEL or
   * MODELS_OVER_BUDGET.
   */
  #meshData(row: number, c: PartColumns): number | string {
    if (!c.meshData) return NO_MODEL;
    const bytes = stringBytes(this.dom, row, 'MeshData');
    if (!bytes || bytes.length < 8) return NO_MODEL;
    const key = `meshdata:${createHash('sha256').update(bytes).digest('hex')}`;
    let result = this.#modelsByContent.get(key);
    if (result === undefined) {
      result = this.#decodeModel(bytes, key);
      this.#modelsByContent.set(key, result);
    }
    return result;
  }

  /**
   * Decodes one distinct MeshData blob within what is left of the place's model budget,
   * checked from its counts first and charged whether or not a model comes out; a blob
   * that does not fit spends the budget: no MeshData is decoded from then on.
   */
  #decodeModel(bytes: Uint8Array, key: string): number | string {
    const caps = this.limits;
    try {
      // Counts first, whatever is left of the budget: what holds no union model (a mesh
      // file, CSGK, hulls) or cannot be read is said as such, not as over the budget.
      const cost = unionModelCost(bytes, caps);
      if (cost === null) return NO_MODEL;
      if (this.#modelBudgetSpent) return MODELS_OVER_BUDGET;
      if (cost.bytes > caps.maxPlaceModelBytes - this.#modelBytes) {
        this.#modelBudgetSpent = true;
        return MODELS_OVER_BUDGET;
      }
      this.#modelBytes += cost.bytes;
      this.#modelsDecoded++;
      const asset = decodeMeshAsset(bytes, caps);
      if (asset.kind !== 'union_graphics' || asset.geometry.indices.length === 0) return NO_MODEL;
      // As a downloaded model is converted (convert.ts): a triangle on a vertex that is not a
      // finite number cannot be drawn (scene.glb's writer refuses it), and such vertices no
      // triangle uses are left out.
      let geometry = asset.geometry;
      if (!usedPositionsFinite(geometry.positions, geometry.indices)) {
        return this.#unreadableModel(`CSGMDL ${asset.version}: the triangles use vertices that are not finite numbers`);
      }
      if (!geometry.positions.every(Number.isFinite)) geometry = usedVertices(geometry);
      return this.#add(shapeOf(key, geometry, 'union', { source: 'MeshData' }));
    } catch (error) {
      if (!isMeshDecodeError(error)) throw error;
      return this.#unreadableModel(error.message);
    }
  }

  #unreadableModel(why: string): string {
    if (++this.#unreadableModels <= UNREADABLE_NOTES) this.#notes.push(`a union's MeshData is unreadable (${why}); its hulls are drawn`);
    return NO_MODEL;
  }

  /** Hull geometry from a PhysicalConfigData SharedString: a shape index, or a string: 'block' (a plain box), or why there is none. */
  #hulls(value: unknown): number | string {
    const shared = sharedStringOf(this.dom, value as number);
    if (!shared || shared.bytes.length === 0) return NO_HULLS;
    let result = this.#hullsByIndex.get(shared.index);
    if (result !== undefined) return result;
    // By content: a place repeating one union's physics under many SharedStrings decodes it once.
    const key = `hulls:${createHash('sha256').update(shared.bytes).digest('hex')}`;
    result = this.#hullsByContent.get(key);
    if (result === undefined) {
      result = this.#decodeHulls(shared.bytes, key);
      this.#hullsByContent.set(key, result);
    }
    this.#hullsByIndex.set(shared.index, result);
    return result;
  }

  /**
   * Decodes one distinct blob's hulls within what is left of the place's budget, checked
   * from its hull headers first; a blob that does not fit spends the budget: every union
   * not yet drawn is a box from then on.
   */
  #decodeHulls(bytes: Uint8Array, key: string): number | string {
    if (this.#hullBudgetSpent) return HULLS_OVER_BUDGET;
    const caps = this.limits;
    let cost: ReturnType<typeof unionHullCost>;
    try {
      cost = unionHullCost(bytes, caps);
    } catch (error) {
      if (!isMeshDecodeError(error)) throw error;
      return this.#unreadable(error);
    }
    if (cost === null) return NO_HULLS;
    const roomBytes = caps.maxPlaceHullBytes - this.#hullBytes;
    if (cost.work > caps.maxPlaceHullWork - this.#hullWork) return this.#overBudget();
    if (cost.triangles !== null && cost.triangles * FLAT_BYTES_PER_TRIANGLE > roomBytes) return this.#overBudget();
    this.#hullWork += cost.work;
    this.#hullsDecoded++;
    // CSGPHS 8 declares its counts inside its ZSTD frame: its decode may keep no more than the room left.
    const maxTriangles = Math.min(caps.maxTriangles, Math.floor(roomBytes / FLAT_BYTES_PER_TRIANGLE));
    try {
      const asset = decodeMeshAsset(bytes, { ...caps, maxTriangles });
      if (asset.kind === 'union_physics' && asset.block) return 'block';
      if (asset.kind !== 'union_physics' || !asset.geometry) return NO_HULLS;
      const geometry = flatShaded(asset.geometry.positions, asset.geometry.indices);
      const kept = geometry.positions.byteLength + (geometry.normals?.byteLength ?? 0) + geometry.indices.byteLength;
      if (kept > roomBytes) return this.#overBudget();
      this.#hullBytes += kept;
      if (geometry.indices.length === 0) return 'union hulls have no area';
      return this.#add(shapeOf(key, geometry, 'union', { source: 'PhysicalConfigData' }));
    } catch (error) {
      if (!isMeshDecodeError(error)) throw error;
      if (error.limit === 'maxTriangles' && maxTriangles < caps.maxTriangles) return this.#overBudget();
      return this.#unreadable(error);
    }
  }

  #overBudget(): string {
    this.#hullBudgetSpent = true;
    return HULLS_OVER_BUDGET;
  }

  #unreadable(error: Error): string {
    if (++this.#unreadableHulls <= UNREADABLE_NOTES) this.#notes.push(`a union's PhysicalConfigData is unreadable: ${error.message}`);
    return 'union hulls unreadable';
  }
}

/** A union's MeshData holds no model to draw (none, unreadable, or no union model). */
const NO_MODEL = 'no model';
/** The placeholder reason of a union with neither a model nor hulls. */
const NO_HULLS = 'union without hulls or model';

function newParts(capacity: number): SceneParts {
  return {
    count: 0,
    rows: new Int32Array(capacity),
    transforms: new Float32Array(capacity * 12),
    sizes: new Float32Array(capacity * 3),
    scales: new Float32Array(capacity * 3),
    offsets: new Float32Array(capacity * 3),
    colors: new Uint8Array(capacity * 4),
    materials: new Uint16Array(capacity),
    shapes: new Uint32Array(capacity),
    flags: new Uint8Array(capacity),
  };
}

function grow(parts: SceneParts): void {
  const bigger = newParts(parts.rows.length * 2);
  bigger.rows.set(parts.rows);
  bigger.transforms.set(parts.transforms);
  bigger.sizes.set(parts.sizes);
  bigger.scales.set(parts.scales);
  bigger.offsets.set(parts.offsets);
  bigger.colors.set(parts.colors);
  bigger.materials.set(parts.materials);
  bigger.shapes.set(parts.shapes);
  bigger.flags.set(parts.flags);
  Object.assign(parts, { ...bigger, count: parts.count });
}

function trim(parts: SceneParts): SceneParts {
  const n = parts.count;
  return {
    count: n,
    rows: parts.rows.slice(0, n),
    transforms: parts.transforms.slice(0, n * 12),
    sizes: parts.sizes.slice(0, n * 3),
    scales: parts.scales.slice(0, n * 3),
    offsets: parts.offsets.slice(0, n * 3),
    colors: parts.colors.slice(0, n * 4),
    materials: parts.materials.slice(0, n),
    shapes: parts.shapes.slice(0, n),
    flags: parts.flags.slice(0, n),
  };
}
