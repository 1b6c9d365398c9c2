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
import { findService, getValue, type Column, type Dom } from '../parser/dom.js';
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
  table: number;
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

function partColumns(dom: Dom, table: number): PartColumns {
  const c = dom.table(table).columns;
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

type Owner = SceneNode[] | ScenePart | SceneGroup;

export function buildScene(dom: Dom): Scene {
  const workspace = findService(dom, 'Workspace');
  const top: SceneNode[] = [];
  let parts = 0;
  let groups = 0;
  let columns: PartColumns | null = null;

  // A pre-order walk of the Workspace's descendants (of every instance in a model
  // file), along the child and sibling links. `owner` is where the current row's node
  // goes; `owners` holds the owner of each ancestor's level, popped while climbing.
  const owners: Owner[] = [];
  let owner: Owner = top;
  let row = workspace === -1 ? dom.firstRoot : dom.firstChild(workspace);
  while (row !== -1) {
    const className = dom.className(row);
    let childOwner: Owner | null = owner;
    if (className === 'Terrain' || className === 'Camera') {
      childOwner = null; // left out, with its subtree
    } else if (BASE_PART_CLASSES.has(className)) {
      if (!columns || columns.table !== dom.tableOf(row)) columns = partColumns(dom, dom.tableOf(row));
      const part = readPart(dom, row, columns);
      attach(owner, part);
      childOwner = part;
      parts++;
    } else if (GROUP_CLASSES.has(className)) {
      const group: SceneGroup = { type: 'group', class: className, name: dom.name(row), children: [] };
      attach(owner, group);
      childOwner = group;
      groups++;
    }

    const first = childOwner ? dom.firstChild(row) : -1;
    if (first !== -1) {
      owners.push(owner);
      owner = childOwner!;
      row = first;
      continue;
    }
    // Up to the nearest ancestor with a next sibling, stopping at the Workspace (at the roots in a model).
    for (;;) {
      const sibling = dom.nextSibling(row);
      if (sibling !== -1) { row = sibling; break; }
      row = dom.parent(row);
      if (row === workspace) { row = -1; break; }
      owner = owners.pop()!;
    }
  }
  return { root: workspace === -1 ? null : dom.className(workspace), parts, groups, children: top };
}

function attach(owner: Owner, node: SceneNode): void {
  if (Array.isArray(owner)) owner.push(node);
  else if (owner.children) owner.children.push(node);
  else owner.children = [node];
}

function readPart(dom: Dom, row: number, c: PartColumns): ScenePart {
  const className = dom.className(row);
  const at = dom.rowInTable(row);
  const cframe = asCFrame(c.cframe?.get(at));
  const size = asVec3(c.size?.get(at));
  const material = numberOr(c.material?.get(at), 256);
  const part: ScenePart = {
    type: 'part',
    class: className,
    name: dom.name(row),
    position: cframe ? roundVec3(cframe.position) : ORIGIN,
    rotation: cframe ? roundMatrix(cframe.orientation) : IDENTITY,
    size: size ? roundVec3(size) : null,
    shape: shapeOf(className, c.shape?.get(at)),
    color: colorOf(c, at),
    material: { value: material, name: MATERIALS.get(material) ?? null },
    transparency: round6(numberOr(c.transparency?.get(at), 0)),
    anchored: c.anchored?.get(at) === true,
    can_collide: c.canCollide ? c.canCollide.get(at) !== false : true,
  };

  const ownMesh = linkOf(c.meshContent?.get(at)) ?? linkOf(c.meshId?.get(at)) ?? linkOf(c.assetId?.get(at));
  if (ownMesh) part.mesh = ownMesh;
  const ownTexture = textureLink(c.textureContent?.get(at), className, 'TextureContent')
    ?? textureLink(c.textureId?.get(at), className, 'TextureID');
  if (ownTexture) part.textures = [ownTexture];

  // Decals, Textures, SurfaceAppearance and mesh objects directly below the part.
  for (let child = dom.firstChild(row); child !== -1; child = dom.nextSibling(child)) {
    const childClass = dom.className(child);
    const value = (name: string) => getValue(dom, child, name);
    if (childClass === 'Decal' || childClass === 'Texture') {
      const texture = textureLink(value('TextureContent'), childClass, 'TextureContent')
        ?? textureLink(value('ColorMapContent'), childClass, 'ColorMapContent')
        ?? textureLink(value('Texture'), childClass, 'Texture');
      if (texture) {
        const face = value('Face');
        if (typeof face === 'number' && NORMAL_IDS[face]) texture.face = NORMAL_IDS[face];
        addTexture(part, texture);
      }
    } else if (childClass === 'SurfaceAppearance') {
      for (const property of SURFACE_MAPS) {
        const texture = textureLink(value(property + 'Content'), childClass, property + 'Content')
          ?? textureLink(value(property), childClass, property);
        if (texture) addTexture(part, texture);
      }
    } else if (MESH_OBJECT_CLASSES.has(childClass) && !part.mesh) {
      const mesh = meshObject(dom, child);
      if (mesh) part.mesh = mesh;
      const texture = textureLink(value('TextureContent'), childClass, 'TextureContent')
        ?? textureLink(value('TextureId'), childClass, 'TextureId');
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
function meshObject(dom: Dom, child: number): SceneMesh | null {
  const value = (name: string) => getValue(dom, child, name);
  const link = linkOf(value('MeshContent')) ?? linkOf(value('MeshId'));
  const meshType = value('MeshType');
  const typeName = dom.className(child) === 'SpecialMesh' && typeof meshType === 'number' ? MESH_TYPES[meshType] : undefined;
  if (!link && typeName === undefined) return null;
  const mesh: SceneMesh = link ? { ...link } : {};
  if (typeName !== undefined) mesh.mesh_type = typeName;
  const scale = asVec3(value('Scale'));
  if (scale) mesh.scale = roundVec3(scale);
  const offset = asVec3(value('Offset'));
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
