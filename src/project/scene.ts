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
 * Terrain and the Camera's subtree are left out, as are instances the document
 * leaves out (`excluded`: script subtrees in `skip` mode). A model file (no
 * Workspace) puts its top-level instances in the scene. Every node carries `id`, the
 * document id of its instance (ids.ts).
 *
 * One iterative walk (`walkScene`) feeds both outputs: `buildScene` (objects) and
 * `sceneJson` (JSON text in pieces, one node at a time, for the project document, so
 * a 200k-part scene is never one object tree). Columns are resolved once per property
 * table, so a binary place's 200k parts cost a few column reads each.
 */
import { findService, getValue, type Column, type Dom } from '../parser/dom.js';
import type { Matrix3, Value, Vec3 } from '../parser/values.js';
import { parseAssetUri, uriOf } from '../assets/refs.js';
import {
  BASE_PART_CLASSES, BRICK_COLORS, CLASS_SHAPES, DEFAULT_PART_COLOR, GROUP_CLASSES, MATERIALS,
  MESH_OBJECT_CLASSES, MESH_TYPES, NORMAL_IDS, PART_TYPES,
} from './classes.js';
import { asCFrame, asVec3, round6, roundVec3 } from './geometry.js';
import { instanceId } from './ids.js';

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
  /** The instance's id in the document. */
  id: string;
  class: string;
  name: string;
  children: SceneNode[];
}

export interface ScenePart {
  type: 'part';
  /** The instance's id in the document. */
  id: string;
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

/**
 * What the scene draws, in pre-order: each part and group (a node without
 * `children`), then `null` when its subtree ends, properly nested. Instances that are
 * not nodes are passed through: nodes below them belong to the nearest node above.
 */
export function* sceneEvents(dom: Dom, excluded?: Uint8Array): Generator<SceneNode | null> {
  const workspace = findService(dom, 'Workspace');
  let columns: PartColumns | null = null;
  // For each level descended into: whether that row opened a node (closed when climbing out).
  const opened: boolean[] = [];
  let row = workspace === -1 ? dom.firstRoot : dom.firstChild(workspace);
  while (row !== -1) {
    const className = dom.className(row);
    let node: SceneNode | null = null;
    let descend = true;
    if (className === 'Terrain' || className === 'Camera' || excluded?.[row]) {
      descend = false; // left out, with its subtree
    } else if (BASE_PART_CLASSES.has(className)) {
      if (!columns || columns.table !== dom.tableOf(row)) columns = partColumns(dom, dom.tableOf(row));
      node = readPart(dom, row, columns);
    } else if (GROUP_CLASSES.has(className)) {
      node = { type: 'group', id: instanceId(row), class: className, name: dom.name(row) } as SceneGroup;
    }
    if (node) yield node;

    const first = descend ? dom.firstChild(row) : -1;
    if (first !== -1) {
      opened.push(node !== null);
      row = first;
      continue;
    }
    if (node) yield null;
    // Up to the nearest ancestor with a next sibling, stopping at the Workspace (at the roots in a model).
    for (;;) {
      const sibling = dom.nextSibling(row);
      if (sibling !== -1) { row = sibling; break; }
      row = dom.parent(row);
      if (row === workspace) { row = -1; break; }
      if (opened.pop()) yield null;
    }
  }
}

/** The scene's root: "Workspace" for a place, null for a model file. */
function sceneRoot(dom: Dom): string | null {
  const workspace = findService(dom, 'Workspace');
  return workspace === -1 ? null : dom.className(workspace);
}

export function buildScene(dom: Dom, excluded?: Uint8Array): Scene {
  const top: SceneNode[] = [];
  const stack: SceneNode[] = [];
  let parts = 0;
  let groups = 0;
  for (const node of sceneEvents(dom, excluded)) {
    if (node === null) { stack.pop(); continue; }
    const owner = stack[stack.length - 1];
    if (!owner) top.push(node);
    else if (owner.children) owner.children.push(node);
    else owner.children = [node];
    if (node.type === 'part') parts++;
    else { groups++; node.children = []; }
    stack.push(node);
  }
  return { root: sceneRoot(dom), parts, groups, children: top };
}

/**
 * The scene's JSON text in pieces of about `pieceChars` characters:
 * `{"root", "children": [...], "parts", "groups"}`, each node as buildScene makes it
 * (a group always has `children`, a part only when nodes sit below it).
 */
export function* sceneJson(dom: Dom, excluded?: Uint8Array, pieceChars = 1 << 16): Generator<string> {
  let piece = `{"root":${JSON.stringify(sceneRoot(dom))},"children":[`;
  let parts = 0;
  let groups = 0;
  // Per open node: whether it is a group, and whether its "children" array was opened.
  const isGroup: boolean[] = [];
  const hasChildren: boolean[] = [];
  let first = true;
  for (const node of sceneEvents(dom, excluded)) {
    if (node === null) {
      const group = isGroup.pop();
      piece += hasChildren.pop() ? ']}' : group ? ',"children":[]}' : '}';
      if (piece.length >= pieceChars) { yield piece; piece = ''; }
      continue;
    }
    const depth = isGroup.length;
    if (depth === 0) { if (!first) piece += ','; first = false; }
    else if (hasChildren[depth - 1]) piece += ',';
    else { piece += ',"children":['; hasChildren[depth - 1] = true; }
    const text = JSON.stringify(node);
    piece += text.slice(0, -1); // without its closing brace: children may follow
    isGroup.push(node.type === 'group');
    hasChildren.push(false);
    if (node.type === 'part') parts++;
    else groups++;
  }
  yield `${piece}],"parts":${parts},"groups":${groups}}`;
}

function readPart(dom: Dom, row: number, c: PartColumns): ScenePart {
  const className = dom.className(row);
  const at = dom.rowInTable(row);
  const cframe = asCFrame(c.cframe?.get(at));
  const size = asVec3(c.size?.get(at));
  const material = numberOr(c.material?.get(at), 256);
  const part: ScenePart = {
    type: 'part',
    id: instanceId(row),
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
