/**
 * The project document's scene: the Workspace tree reduced to what an editor draws.
 *
 * - Groups: Model (and Actor, WorldModel), Folder, Tool and the accessory classes.
 * - Parts: every BasePart (see classes.ts), with class, name, position, rotation
 *   (the CFrame's 3x3 rotation matrix, rows as stored: `rotation[i][j]` is row i,
 *   column j, and column j is the part's own j axis in world space), size, shape,
 *   colour [r, g, b] 0..255, material {value, name}, transparency, anchored,
 *   can_collide, and the mesh and textures it shows as links to `assets` by id.
 * - Everything else (welds, scripts, attachments, decals...) is not a node; parts
 *   below such an instance hang from the nearest group or part above it.
 * Terrain and the Camera's subtree are left out. A model file (no Workspace) puts
 * its top-level instances in the scene.
 *
 * Built in one iterative walk; columns are resolved once per property table, so a
 * binary place's 200k parts cost a few column reads each.
 */
import { getValue, type Column, type Dom, type Instance, type PropertyTable } from '../parser/dom.js';
import type { Matrix3, Value, Vec3 } from '../parser/values.js';
import { parseAssetUri, uriOf } from '../assets/refs.js';
import {
  BASE_PART_CLASSES, BRICK_COLORS, CLASS_SHAPES, DEFAULT_PART_COLOR, GROUP_CLASSES, MATERIALS,
  MESH_OBJECT_CLASSES, MESH_TYPES, NORMAL_IDS, PART_TYPES,
} from './classes.js';
import { asCFrame, asVec3, round6, roundVec3 } from './geometry.js';

/** A reference to an entry of the document's `assets` (by id), or a file built into the client. */
export type AssetLink = { id: string } | { builtin: string };

/** A mesh: its file (`id` or `builtin`; neither for a SpecialMesh of a primitive type such as Sphere). */
export interface SceneMesh {
  id?: string;
  builtin?: string;
  /** SpecialMesh.MeshType name (FileMesh, Sphere, Head...), for meshes that come from a SpecialMesh. */
  mesh_type?: string;
  scale?: Vec3;
  offset?: Vec3;
}

export type SceneTexture = AssetLink & {
  /** Where the image came from: the part itself, or the Decal/Texture/SurfaceAppearance/SpecialMesh under it. */
  class: string;
  property: string;
  /** Decal.Face / Texture.Face (Enum.NormalId name). */
  face?: string;
};

export interface SceneGroup {
  type: 'group';
  class: string;
  name: string;
  children: SceneNode[];
}

export interface ScenePart {
  type: 'part';
  class: string;
  name: string;
  position: Vec3;
  rotation: Matrix3;
  /** null when the file stores no size. */
  size: Vec3 | null;
  /** Enum.PartType name for Part and its siblings; Wedge, CornerWedge, Truss, Mesh, Union... for the other classes. */
  shape: string;
  color: [number, number, number];
  material: { value: number; name: string | null };
  transparency: number;
  anchored: boolean;
  can_collide: boolean;
  /** Present when the part draws a mesh (MeshPart, a CSG asset, or a SpecialMesh/FileMesh under it). */
  mesh?: SceneMesh;
  /** Present when the part shows images. */
  textures?: SceneTexture[];
  /** Present when parts or groups sit below this part. */
  children?: SceneNode[];
}

export type SceneNode = SceneGroup | ScenePart;

export interface Scene {
  /** "Workspace" for a place; null for a model file, whose top-level instances form the scene. */
  root: string | null;
  parts: number;
  groups: number;
  children: SceneNode[];
}

const IDENTITY: Matrix3 = [[1, 0, 0], [0, 1, 0], [0, 0, 1]];
const ORIGIN: Vec3 = [0, 0, 0];

interface PartColumns {
  table: PropertyTable;
  cframe?: Column;
  size?: Column;
  shape?: Column;
  color3uint8?: Column;
  color?: Column;
  brickColor?: Column;
  material?: Column;
  transparency?: Column;
  anchored?: Column;
  canCollide?: Column;
  meshContent?: Column;
  meshId?: Column;
  textureContent?: Column;
  textureId?: Column;
  assetId?: Column;
}

function partColumns(table: PropertyTable): PartColumns {
  const c = table.columns;
  return {
    table,
    cframe: c.get('CFrame'),
    size: c.get('size') ?? c.get('Size'),
    shape: c.get('shape') ?? c.get('Shape'),
    color3uint8: c.get('Color3uint8'),
    color: c.get('Color'),
    brickColor: c.get('BrickColor') ?? c.get('brickColor'),
    material: c.get('Material'),
    transparency: c.get('Transparency'),
    anchored: c.get('Anchored'),
    canCollide: c.get('CanCollide'),
    meshContent: c.get('MeshContent'),
    meshId: c.get('MeshId') ?? c.get('MeshID'),
    textureContent: c.get('TextureContent'),
    textureId: c.get('TextureID') ?? c.get('TextureId'),
    assetId: c.get('AssetId') ?? c.get('Content'),
  };
}

export function buildScene(dom: Dom): Scene {
  const workspace = dom.roots.find((root) => root.className === 'Workspace');
  const top: SceneNode[] = [];
  let parts = 0;
  let groups = 0;
  let columns: PartColumns | null = null;

  // Parallel stacks: an instance, and where its node (if any) goes.
  const instances: Instance[] = [];
  const owners: (SceneNode[] | ScenePart | SceneGroup)[] = [];
  const starts = workspace ? workspace.children : dom.roots;
  for (let i = starts.length - 1; i >= 0; i--) {
    instances.push(starts[i]!);
    owners.push(top);
  }

  while (instances.length) {
    const instance = instances.pop()!;
    const owner = owners.pop()!;
    const className = instance.className;
    if (className === 'Terrain' || className === 'Camera') continue;

    let childOwner = owner;
    if (BASE_PART_CLASSES.has(className)) {
      if (!columns || columns.table !== instance.table) columns = partColumns(instance.table);
      const part = readPart(instance, columns);
      attach(owner, part);
      childOwner = part;
      parts++;
    } else if (GROUP_CLASSES.has(className)) {
      const group: SceneGroup = { type: 'group', class: className, name: instance.name, children: [] };
      attach(owner, group);
      childOwner = group;
      groups++;
    }
    const children = instance.children;
    for (let i = children.length - 1; i >= 0; i--) {
      instances.push(children[i]!);
      owners.push(childOwner);
    }
  }
  return { root: workspace ? workspace.className : null, parts, groups, children: top };
}

function attach(owner: SceneNode[] | ScenePart | SceneGroup, node: SceneNode): void {
  if (Array.isArray(owner)) owner.push(node);
  else if (owner.children) owner.children.push(node);
  else owner.children = [node];
}

function readPart(instance: Instance, c: PartColumns): ScenePart {
  const row = instance.row;
  const cframe = asCFrame(c.cframe?.get(row));
  const size = asVec3(c.size?.get(row));
  const material = numberOr(c.material?.get(row), 256);
  const part: ScenePart = {
    type: 'part',
    class: instance.className,
    name: instance.name,
    position: cframe ? roundVec3(cframe.position) : ORIGIN,
    rotation: cframe ? roundMatrix(cframe.orientation) : IDENTITY,
    size: size ? roundVec3(size) : null,
    shape: shapeOf(instance.className, c.shape?.get(row)),
    color: colorOf(c, row),
    material: { value: material, name: MATERIALS.get(material) ?? null },
    transparency: round6(numberOr(c.transparency?.get(row), 0)),
    anchored: c.anchored?.get(row) === true,
    can_collide: c.canCollide ? c.canCollide.get(row) !== false : true,
  };

  const ownMesh = linkOf(c.meshContent?.get(row)) ?? linkOf(c.meshId?.get(row)) ?? linkOf(c.assetId?.get(row));
  if (ownMesh) part.mesh = ownMesh;
  const ownTexture = textureLink(c.textureContent?.get(row), instance.className, 'TextureContent')
    ?? textureLink(c.textureId?.get(row), instance.className, 'TextureID');
  if (ownTexture) part.textures = [ownTexture];

  // Decals, Textures, SurfaceAppearance and mesh objects directly below the part.
  for (const child of instance.children) {
    const childClass = child.className;
    if (childClass === 'Decal' || childClass === 'Texture') {
      const texture = textureLink(getValue(child, 'TextureContent'), childClass, 'TextureContent')
        ?? textureLink(getValue(child, 'ColorMapContent'), childClass, 'ColorMapContent')
        ?? textureLink(getValue(child, 'Texture'), childClass, 'Texture');
      if (texture) {
        const face = getValue(child, 'Face');
        if (typeof face === 'number' && NORMAL_IDS[face]) texture.face = NORMAL_IDS[face];
        addTexture(part, texture);
      }
    } else if (childClass === 'SurfaceAppearance') {
      for (const property of SURFACE_MAPS) {
        const texture = textureLink(getValue(child, property + 'Content'), childClass, property + 'Content')
          ?? textureLink(getValue(child, property), childClass, property);
        if (texture) addTexture(part, texture);
      }
    } else if (MESH_OBJECT_CLASSES.has(childClass) && !part.mesh) {
      const mesh = meshObject(child);
      if (mesh) part.mesh = mesh;
      const texture = textureLink(getValue(child, 'TextureContent'), childClass, 'TextureContent')
        ?? textureLink(getValue(child, 'TextureId'), childClass, 'TextureId');
      if (texture) addTexture(part, texture);
    }
  }
  return part;
}

const SURFACE_MAPS = ['ColorMap', 'NormalMap', 'MetalnessMap', 'RoughnessMap'] as const;

function addTexture(part: ScenePart, texture: SceneTexture): void {
  if (part.textures) part.textures.push(texture);
  else part.textures = [texture];
}

/** A SpecialMesh/FileMesh/BlockMesh/CylinderMesh: its file (if any), type, scale and offset. */
function meshObject(child: Instance): SceneMesh | null {
  const link = linkOf(getValue(child, 'MeshContent')) ?? linkOf(getValue(child, 'MeshId'));
  const meshType = getValue(child, 'MeshType');
  const typeName = child.className === 'SpecialMesh' && typeof meshType === 'number' ? MESH_TYPES[meshType] : undefined;
  if (!link && typeName === undefined) return null;
  const mesh: SceneMesh = link ? { ...link } : {};
  if (typeName !== undefined) mesh.mesh_type = typeName;
  const scale = asVec3(getValue(child, 'Scale'));
  if (scale) mesh.scale = roundVec3(scale);
  const offset = asVec3(getValue(child, 'Offset'));
  if (offset && (offset[0] !== 0 || offset[1] !== 0 || offset[2] !== 0)) mesh.offset = roundVec3(offset);
  return mesh;
}

/** An id or built-in path from a reference value; null for empty and not downloadable references. */
export function linkOf(value: Value | undefined): AssetLink | null {
  const uri = uriOf(value);
  if (uri === null) return null;
  const parsed = parseAssetUri(uri);
  if (!parsed) return null;
  if (parsed.kind === 'id') return { id: parsed.id };
  if (parsed.kind === 'builtin') return { builtin: parsed.path };
  return null;
}

function textureLink(value: Value | undefined, className: string, property: string): SceneTexture | null {
  const link = linkOf(value);
  return link ? { ...link, class: className, property } : null;
}

function shapeOf(className: string, shape: Value | undefined): string {
  if (typeof shape === 'number') return PART_TYPES[shape] ?? 'Block';
  return CLASS_SHAPES[className] ?? 'Block';
}

/** Color3uint8, else Color (Color3, 0..1), else the BrickColor palette; Medium stone grey otherwise. */
function colorOf(c: PartColumns, row: number): [number, number, number] {
  const bytes = c.color3uint8?.get(row);
  if (Array.isArray(bytes) && bytes.length === 3) return [clampByte(bytes[0]), clampByte(bytes[1]), clampByte(bytes[2])];
  // An XML Color3uint8 may arrive packed as 0xAARRGGBB.
  if (typeof bytes === 'number') return [(bytes >>> 16) & 255, (bytes >>> 8) & 255, bytes & 255];
  const floats = c.color?.get(row);
  if (Array.isArray(floats) && floats.length === 3) {
    return [clampByte(Number(floats[0]) * 255), clampByte(Number(floats[1]) * 255), clampByte(Number(floats[2]) * 255)];
  }
  const brick = c.brickColor?.get(row);
  const palette = typeof brick === 'number' ? BRICK_COLORS.get(brick) : undefined;
  return palette ? [palette[0], palette[1], palette[2]] : [DEFAULT_PART_COLOR[0], DEFAULT_PART_COLOR[1], DEFAULT_PART_COLOR[2]];
}

function clampByte(x: unknown): number {
  const n = Math.round(Number(x));
  return n >= 0 ? (n <= 255 ? n : 255) : 0;
}

function numberOr(value: Value | undefined, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

function roundMatrix(m: Matrix3): Matrix3 {
  return [roundVec3(m[0]), roundVec3(m[1]), roundVec3(m[2])];
}
