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
 * `sceneJson` writes the scene one node at a time in one iterative walk, so a
 * 200k-part scene is never one object tree; `buildScene` parses that JSON (for tests
 * and tools). Numbers are float32 values in their shortest form (json-writer.ts).
 * Columns are resolved once per property table, and asset references are parsed
 * once per distinct string, so a binary place's 200k parts cost a few column reads
 * each.
 */
import { Buffer } from 'node:buffer';
import { findService, getValue, type Dom } from '../parser/dom.js';
import type { Matrix3, Value, Vec3 } from '../parser/values.js';
import { parseAssetUri, uriOf } from '../assets/refs.js';
import {
  BASE_PART_CLASSES, BRICK_COLORS, CLASS_SHAPES, DEFAULT_PART_COLOR, GROUP_CLASSES, MATERIALS,
  MESH_OBJECT_CLASSES, MESH_TYPES, NORMAL_IDS, PART_TYPES,
} from './classes.js';
import { asVec3, cframeNumbersOf, roundVec3, vec3NumbersOf } from './geometry.js';
import { writeId } from './ids.js';
import { JsonWriter } from './json-writer.js';
import { nameWriter } from './row-writers.js';
import { partColumns as scenePartColumns, type PartColumns } from '../scene/columns.js';

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

/** The scene's columns of a part table (src/scene's), with `Content` standing in for a missing `AssetId`. */
function partColumns(dom: Dom, table: number): PartColumns {
  const columns = scenePartColumns(dom, table);
  return columns.assetId !== undefined ? columns : { ...columns, assetId: dom.table(table).columns.get('Content') };
}

/** The scene's root: "Workspace" for a place, null for a model file. */
function sceneRoot(dom: Dom): string | null {
  const workspace = findService(dom, 'Workspace');
  return workspace === -1 ? null : dom.className(workspace);
}

/** The scene as objects: `sceneJson` parsed (for tests and tools; documents stream it). */
export function buildScene(dom: Dom, excluded?: Uint8Array): Scene {
  const w = new JsonWriter();
  const chunks = [...sceneJson(w, dom, excluded), ...w.flush()];
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Scene;
}

/**
 * Writes the scene, `{"root", "children": [...], "parts", "groups"}`, in one pre-order
 * walk of the Workspace (of every instance in a model file): a node is written when
 * its instance is reached and closed when the walk climbs out of it, a group always
 * with `children`, a part only when nodes sit below it. Instances that are not nodes
 * are passed through: nodes below them belong to the nearest node above. Yields the
 * writer's full chunks as they fill; the caller flushes the rest.
 */
export function* sceneJson(w: JsonWriter, dom: Dom, excluded?: Uint8Array): Generator<Buffer> {
  const workspace = findService(dom, 'Workspace');
  w.text(`{"root":${JSON.stringify(sceneRoot(dom))},"children":[`);
  let parts = 0;
  let groups = 0;
  const columnsByTable = new Map<number, PartColumns>();
  // Per open node: whether it is a group, and whether its "children" array was opened.
  const isGroup: boolean[] = [];
  const hasChildren: boolean[] = [];
  // Per level descended into: whether that row opened a node (closed when climbing out).
  const opened: boolean[] = [];
  let first = true;
  const writeName = nameWriter(dom);
  // Per table: `,"class":"Part","name":`, encoded once.
  const classHeads: Uint8Array[] = [];
  const close = (): void => {
    const group = isGroup.pop();
    w.ascii(hasChildren.pop() ? ']}' : group ? ',"children":[]}' : '}');
  };

  let row = workspace === -1 ? dom.firstRoot : dom.firstChild(workspace);
  while (row !== -1) {
    const className = dom.className(row);
    let node = false;
    let descend = true;
    if (className === 'Terrain' || className === 'Camera' || excluded?.[row]) {
      descend = false; // left out, with its subtree
    } else {
      const part = BASE_PART_CLASSES.has(className);
      if (part || GROUP_CLASSES.has(className)) {
        node = true;
        const depth = isGroup.length;
        if (depth === 0) { if (!first) w.byte(0x2c); first = false; }
        else if (hasChildren[depth - 1]) w.byte(0x2c);
        else { w.ascii(',"children":['); hasChildren[depth - 1] = true; }
        w.ascii(part ? '{"type":"part","id":' : '{"type":"group","id":');
        writeId(w, row);
        const table = dom.tableOf(row);
        w.bytes(classHeads[table] ??= Buffer.from(`,"class":${JSON.stringify(className)},"name":`, 'utf8'));
        writeName(w, row);
        if (part) {
          let columns = columnsByTable.get(table);
          if (!columns) columnsByTable.set(table, (columns = partColumns(dom, table)));
          writePart(w, dom, row, className, columns);
          parts++;
        } else {
          groups++;
        }
        isGroup.push(!part);
        hasChildren.push(false);
      }
    }

    const firstChild = descend ? dom.firstChild(row) : -1;
    if (firstChild !== -1) {
      opened.push(node);
      row = firstChild;
      continue;
    }
    if (node) close();
    if (w.ready) yield* w.take();
    // Up to the nearest ancestor with a next sibling, stopping at the Workspace (at the roots in a model).
    for (;;) {
      const sibling = dom.nextSibling(row);
      if (sibling !== -1) { row = sibling; break; }
      row = dom.parent(row);
      if (row === workspace) { row = -1; break; }
      if (opened.pop()) close();
    }
  }
  w.text(`],"parts":${parts},"groups":${groups}}`);
}

// The fixed text around a part's values, encoded once: `,"shape":"Block","color":[`
// per shape name, `],"material":{...},"transparency":` per material value, and the
// four anchored/can_collide pairs (index 2·anchored + can_collide).
const SHAPE_TEXT = new Map<string, Uint8Array>();
function shapeText(shape: string): Uint8Array {
  let text = SHAPE_TEXT.get(shape);
  if (!text) SHAPE_TEXT.set(shape, (text = Buffer.from(`,"shape":${JSON.stringify(shape)},"color":[`, 'utf8')));
  return text;
}
const MATERIAL_TEXT = new Map<number, Uint8Array>();
function materialText(material: number): Uint8Array {
  let text = MATERIAL_TEXT.get(material);
  if (!text) {
    const name = MATERIALS.get(material);
    text = Buffer.from(`],"material":{"value":${material},"name":${name === undefined ? 'null' : JSON.stringify(name)}},"transparency":`, 'utf8');
    // Materials are enum values: a hostile file's other integers are not kept.
    if (MATERIALS.has(material)) MATERIAL_TEXT.set(material, text);
  }
  return text;
}
const FLAGS = [
  ',"anchored":false,"can_collide":false', ',"anchored":false,"can_collide":true',
  ',"anchored":true,"can_collide":false', ',"anchored":true,"can_collide":true',
].map((text) => Buffer.from(text, 'latin1'));

/** Scratch for a CFrame's twelve numbers (Column.numbers). */
const NUMBERS = new Float64Array(12);

/** position and rotation, from the CFrame column's numbers when it has them (binary files), else from its value; the origin without a CFrame. */
function writeTransform(w: JsonWriter, column: PartColumns['cframe'], at: number): void {
  if (!cframeNumbersOf(column, at, NUMBERS)) NUMBERS.set(ORIGIN_CFRAME);
  w.ascii(',"position":');
  w.float32Array(NUMBERS, 0, 3);
  w.ascii(',"rotation":[');
  w.float32Array(NUMBERS, 3, 3); w.byte(0x2c); w.float32Array(NUMBERS, 6, 3); w.byte(0x2c); w.float32Array(NUMBERS, 9, 3);
  w.byte(0x5d);
}

/** A part without a CFrame stands at the origin, unrotated. */
const ORIGIN_CFRAME = Float64Array.of(0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1);

/** A part's fields after its name: transform, size, look, flags, and the mesh and images it shows. */
function writePart(w: JsonWriter, dom: Dom, row: number, className: string, c: PartColumns): void {
  const at = dom.rowInTable(row);
  writeTransform(w, c.cframe, at);
  w.ascii(',"size":');
  if (vec3NumbersOf(c.size, at, NUMBERS)) w.float32Array(NUMBERS, 0, 3);
  else w.ascii('null');
  w.bytes(shapeText(shapeOf(className, c.shape?.get(at))));
  const color = colorOf(c, at);
  w.int(color[0]); w.byte(0x2c); w.int(color[1]); w.byte(0x2c); w.int(color[2]);
  w.bytes(materialText(numberOr(c.material?.get(at), 256)));
  w.float32(numberOr(c.transparency?.get(at), 0));
  w.bytes(FLAGS[(c.anchored?.get(at) === true ? 2 : 0) + (c.canCollide?.get(at) === false ? 0 : 1)]!);

  let mesh: SceneMesh | null = (c.meshContent && linkOf(c.meshContent.get(at))) ?? (c.meshId && linkOf(c.meshId.get(at))) ?? (c.assetId && linkOf(c.assetId.get(at))) ?? null;
  const textures: SceneTexture[] = [];
  const own = (c.textureContent && textureLink(c.textureContent.get(at), className, 'TextureContent')) ?? (c.textureId && textureLink(c.textureId.get(at), className, 'TextureID'));
  if (own) textures.push(own);

  // Decals, Textures, SurfaceAppearance and mesh objects directly below the part.
  for (let child = dom.firstChild(row); child !== -1; child = dom.nextSibling(child)) {
    const childClass = dom.className(child);
    if (childClass === 'Decal' || childClass === 'Texture') {
      const texture = textureLink(getValue(dom, child, 'TextureContent'), childClass, 'TextureContent')
        ?? textureLink(getValue(dom, child, 'ColorMapContent'), childClass, 'ColorMapContent')
        ?? textureLink(getValue(dom, child, 'Texture'), childClass, 'Texture');
      if (texture) {
        const face = getValue(dom, child, 'Face');
        if (typeof face === 'number' && NORMAL_IDS[face]) texture.face = NORMAL_IDS[face];
        textures.push(texture);
      }
    } else if (childClass === 'SurfaceAppearance') {
      for (const property of SURFACE_MAPS) {
        const texture = textureLink(getValue(dom, child, property + 'Content'), childClass, property + 'Content') ?? textureLink(getValue(dom, child, property), childClass, property);
        if (texture) textures.push(texture);
      }
    } else if (!mesh && MESH_OBJECT_CLASSES.has(childClass)) {
      mesh = meshObject(dom, child);
      const texture = textureLink(getValue(dom, child, 'TextureContent'), childClass, 'TextureContent') ?? textureLink(getValue(dom, child, 'TextureId'), childClass, 'TextureId');
      if (texture) textures.push(texture);
    }
  }
  if (mesh) w.text(`,"mesh":${JSON.stringify(mesh)}`);
  if (textures.length) w.text(`,"textures":${JSON.stringify(textures)}`);
}

const SURFACE_MAPS = ['ColorMap', 'NormalMap', 'MetalnessMap', 'RoughnessMap'] as const;

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

/** An id or built-in path from a reference value; null for empty and not downloadable references. Shared: do not change it. */
export function linkOf(value: Value | undefined): AssetLink | null {
  if (value === '' || value === 'None' || value === undefined) return null;
  const uri = uriOf(value);
  if (uri === null || uri === '') return null;
  let link = LINKS.get(uri);
  if (link === undefined) {
    const parsed = parseAssetUri(uri);
    link = parsed?.kind === 'id' ? Object.freeze({ id: parsed.id }) : parsed?.kind === 'builtin' ? Object.freeze({ builtin: parsed.path }) : null;
    // Maps reuse a few thousand references at most; a hostile one cannot grow the cache without bound.
    if (LINKS.size >= MAX_CACHED_LINKS) LINKS.clear();
    LINKS.set(uri, link);
  }
  return link;
}

/** Parsed references, by string: parts share their mesh and texture ids. */
const LINKS = new Map<string, AssetLink | null>();
const MAX_CACHED_LINKS = 65_536;

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
  if (c.color3uint8?.type === 'Color3uint8' && c.color3uint8.numbers) {
    c.color3uint8.numbers(row, NUMBERS);
    return [NUMBERS[0]!, NUMBERS[1]!, NUMBERS[2]!];
  }
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

