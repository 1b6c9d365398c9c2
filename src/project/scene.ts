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
import { findService, getValue, type Column, type Dom } from '../parser/dom.js';
import { StringColumn } from '../parser/columns/strings.js';
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

// What a table's instances are to the scene, by class, told once per table: the walk
// and the scan of a part's children read one byte per row instead of comparing names.
/** Not a node: walked through, the nodes below it belong to the node above. */
const PASS = 0;
/** Terrain and the Camera: left out with their subtree. */
const LEFT_OUT = 1;
const GROUP = 2;
const PART = 3;
// Classes below a part that give it images or a mesh (passed through by the walk).
const DECAL_OR_TEXTURE = 4;
const SURFACE_APPEARANCE = 5;
const MESH_OBJECT = 6;

function tableKinds(dom: Dom): Uint8Array {
  const kinds = new Uint8Array(dom.tables.length);
  for (let table = 0; table < kinds.length; table++) {
    const name = dom.table(table).className;
    kinds[table] = name === 'Terrain' || name === 'Camera' ? LEFT_OUT
      : BASE_PART_CLASSES.has(name) ? PART
        : GROUP_CLASSES.has(name) ? GROUP
          : name === 'Decal' || name === 'Texture' ? DECAL_OR_TEXTURE
            : name === 'SurfaceAppearance' ? SURFACE_APPEARANCE
              : MESH_OBJECT_CLASSES.has(name) ? MESH_OBJECT
                : PASS;
  }
  return kinds;
}

/**
 * Where a part's images come from, per table: groups of reference columns, each group
 * giving at most one image (its first column with a link). Written as the texture
 * object `{link, "class", "property", "face"?}` JSON.stringify writes for it: the link's
 * fields, then `tail` (`,"class":"Decal","property":"Texture"`), then the face.
 */
interface ImageSource {
  column: Column;
  tail: Uint8Array;
}
interface ImageTable {
  groups: ImageSource[][];
  /** Decal.Face / Texture.Face. */
  face: Column | undefined;
}

function imageTable(dom: Dom, table: number, groups: string[][], face: boolean): ImageTable {
  const { className, columns } = dom.table(table);
  const source = (property: string): ImageSource | undefined => {
    const column = columns.get(property);
    return column && { column, tail: Buffer.from(`,"class":${JSON.stringify(className)},"property":${JSON.stringify(property)}`, 'utf8') };
  };
  return {
    groups: groups.map((names) => names.map(source).filter((s) => s !== undefined)).filter((group) => group.length > 0),
    face: face ? columns.get('Face') : undefined,
  };
}

const SURFACE_MAPS = ['ColorMap', 'NormalMap', 'MetalnessMap', 'RoughnessMap'] as const;

/** The images of an instance of table `table` below a part (a DECAL_OR_TEXTURE, SURFACE_APPEARANCE or MESH_OBJECT). */
function childImageTable(dom: Dom, table: number, kind: number): ImageTable {
  if (kind === DECAL_OR_TEXTURE) return imageTable(dom, table, [['TextureContent', 'ColorMapContent', 'Texture']], true);
  if (kind === SURFACE_APPEARANCE) return imageTable(dom, table, SURFACE_MAPS.map((map) => [map + 'Content', map]), false);
  return imageTable(dom, table, [['TextureContent', 'TextureId']], false);
}

/** A part table's columns and the fixed text of its parts, resolved once. */
interface PartTable {
  columns: PartColumns;
  /** `,"shape":…,"color":[` for the class: parts without a shape number (Enum.PartType). */
  classShape: Uint8Array;
  /** The part's own image: TextureContent, else TextureID. */
  image: ImageTable;
}

function partTable(dom: Dom, table: number): PartTable {
  const className = dom.table(table).className;
  const columns = partColumns(dom, table);
  const source = (column: Column | undefined, property: string): ImageSource[] =>
    column ? [{ column, tail: Buffer.from(`,"class":${JSON.stringify(className)},"property":"${property}"`, 'utf8') }] : [];
  const own = [...source(columns.textureContent, 'TextureContent'), ...source(columns.textureId, 'TextureID')];
  return {
    columns,
    classShape: shapeText(shapeOf(className, undefined)),
    image: { groups: own.length ? [own] : [], face: undefined },
  };
}

/** What sceneJson resolves once per table of a DOM. */
interface SceneTables {
  kinds: Uint8Array;
  parts: (PartTable | undefined)[];
  images: (ImageTable | undefined)[];
}

const PART_OPEN = Buffer.from('{"type":"part","id":', 'latin1');
const GROUP_OPEN = Buffer.from('{"type":"group","id":', 'latin1');

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
  const tables: SceneTables = { kinds: tableKinds(dom), parts: [], images: [] };
  const kinds = tables.kinds;
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
    const table = dom.tableOf(row);
    const kind = kinds[table]!;
    let node = false;
    let descend = true;
    if (kind === LEFT_OUT || excluded?.[row]) {
      descend = false; // left out, with its subtree
    } else if (kind === PART || kind === GROUP) {
      const part = kind === PART;
      node = true;
      const depth = isGroup.length;
      if (depth === 0) { if (!first) w.byte(0x2c); first = false; }
      else if (hasChildren[depth - 1]) w.byte(0x2c);
      else { w.ascii(',"children":['); hasChildren[depth - 1] = true; }
      w.bytes(part ? PART_OPEN : GROUP_OPEN);
      writeId(w, row);
      w.bytes(classHeads[table] ??= Buffer.from(`,"class":${JSON.stringify(dom.table(table).className)},"name":`, 'utf8'));
      writeName(w, row);
      if (part) {
        writePart(w, dom, row, tables.parts[table] ??= partTable(dom, table), tables);
        parts++;
      } else {
        groups++;
      }
      isGroup.push(!part);
      hasChildren.push(false);
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
const FLAG_TEXTS = [
  ',"anchored":false,"can_collide":false', ',"anchored":false,"can_collide":true',
  ',"anchored":true,"can_collide":false', ',"anchored":true,"can_collide":true',
];
const FLAGS = FLAG_TEXTS.map((text) => Buffer.from(text, 'latin1'));
/** The same after transparency 0 (most parts): `0,"anchored":…`. */
const OPAQUE_FLAGS = FLAG_TEXTS.map((text) => Buffer.from('0' + text, 'latin1'));
/** Shape texts by Enum.PartType value (the `shape` property of Part and its siblings). */
const PART_TYPE_TEXTS: readonly Uint8Array[] = PART_TYPES.map(shapeText);
const BLOCK_TEXT = shapeText('Block');

/** Scratch for a CFrame's twelve numbers (Column.numbers). */
const NUMBERS = new Float64Array(12);

/**
 * position, rotation and the key of size, from the CFrame column's numbers when it has
 * them (binary files), else from its value; the origin without a CFrame. Most parts
 * are turned by quarter turns or not at all: the text of such a rotation (every entry
 * 0, -0, 1 or -1) is kept, not formatted nine numbers at a time.
 */
function writeTransform(w: JsonWriter, column: PartColumns['cframe'], at: number): void {
  if (!cframeNumbersOf(column, at, NUMBERS)) NUMBERS.set(ORIGIN_CFRAME);
  w.ascii(',"position":');
  w.float32Array(NUMBERS, 0, 3);
  const key = quarterTurnKey(NUMBERS);
  const kept = key === -1 ? undefined : ROTATION_TEXT.get(key);
  if (kept) { w.bytes(kept); return; }
  w.ascii(',"rotation":[');
  w.float32Array(NUMBERS, 3, 3); w.byte(0x2c); w.float32Array(NUMBERS, 6, 3); w.byte(0x2c); w.float32Array(NUMBERS, 9, 3);
  w.ascii('],"size":');
  if (key !== -1 && ROTATION_TEXT.size < MAX_ROTATION_TEXTS) ROTATION_TEXT.set(key, rotationText(NUMBERS));
}

/** Kept rotation texts `,"rotation":[[…],[…],[…]],"size":`, by quarterTurnKey (4^9 keys at most; a few dozen in a map). */
const ROTATION_TEXT = new Map<number, Uint8Array>();
const MAX_ROTATION_TEXTS = 1024;

/** The rotation's nine entries (numbers 3..11) as base-4 digits (0, -0, 1, -1); -1 when an entry is anything else. */
function quarterTurnKey(numbers: Float64Array): number {
  let key = 0;
  for (let i = 3; i < 12; i++) {
    const x = numbers[i]!;
    key *= 4;
    if (x === 1) key += 2;
    else if (x === -1) key += 3;
    else if (x !== 0) return -1;
    else if (1 / x < 0) key += 1;
  }
  return key;
}

function rotationText(numbers: Float64Array): Uint8Array {
  const w = new JsonWriter(64);
  w.ascii(',"rotation":[');
  w.float32Array(numbers, 3, 3); w.byte(0x2c); w.float32Array(numbers, 6, 3); w.byte(0x2c); w.float32Array(numbers, 9, 3);
  w.ascii('],"size":');
  return Buffer.concat(w.flush());
}

/** A part without a CFrame stands at the origin, unrotated. */
const ORIGIN_CFRAME = Float64Array.of(0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1);

/**
 * A part's fields after its name: transform, size, look, flags, and the mesh and images
 * it shows, written as JSON.stringify writes the `mesh` object and `textures` array.
 */
function writePart(w: JsonWriter, dom: Dom, row: number, t: PartTable, tables: SceneTables): void {
  const c = t.columns;
  const at = dom.rowInTable(row);
  writeTransform(w, c.cframe, at);
  if (vec3NumbersOf(c.size, at, NUMBERS)) w.float32Array(NUMBERS, 0, 3);
  else w.ascii('null');
  const shape = c.shape?.get(at);
  w.bytes(typeof shape === 'number' ? PART_TYPE_TEXTS[shape] ?? BLOCK_TEXT : t.classShape);
  writeColor(w, c, at);
  w.bytes(materialText(numberOr(c.material?.get(at), 256)));
  const transparency = numberOr(c.transparency?.get(at), 0);
  const flags = (c.anchored?.get(at) === true ? 2 : 0) + (c.canCollide?.get(at) === false ? 0 : 1);
  if (transparency === 0 && 1 / transparency > 0) {
    w.bytes(OPAQUE_FLAGS[flags]!);
  } else {
    w.float32(transparency);
    w.bytes(FLAGS[flags]!);
  }

  // The mesh: the part's own, else the first a mesh object below it gives (an object: rare).
  const ownMesh = (c.meshContent !== undefined && writeLink(w, c.meshContent, at, MESH_OPEN))
    || (c.meshId !== undefined && writeLink(w, c.meshId, at, MESH_OPEN))
    || (c.assetId !== undefined && writeLink(w, c.assetId, at, MESH_OPEN));
  let meshChild = -1;
  if (ownMesh) {
    w.byte(0x7d);
  } else {
    for (let child = dom.firstChild(row); child !== -1; child = dom.nextSibling(child)) {
      if (tables.kinds[dom.tableOf(child)] !== MESH_OBJECT) continue;
      const mesh = meshObject(dom, child);
      if (mesh) { w.text(`,"mesh":${JSON.stringify(mesh)}`); meshChild = child; break; }
    }
  }

  // Images: the part's own, then those of the Decals, Textures, SurfaceAppearances below
  // it, and of the mesh objects up to the one that gave the mesh (none when the part has its own).
  let images = writeImages(w, 0, t.image, at);
  let pastMesh = ownMesh;
  for (let child = dom.firstChild(row); child !== -1; child = dom.nextSibling(child)) {
    const table = dom.tableOf(child);
    const kind = tables.kinds[table]!;
    if (kind < DECAL_OR_TEXTURE) continue;
    if (kind === MESH_OBJECT) {
      if (pastMesh) continue;
      if (child === meshChild) pastMesh = true;
    }
    images = writeImages(w, images, tables.images[table] ??= childImageTable(dom, table, kind), dom.rowInTable(child));
  }
  if (images > 0) w.byte(0x5d);
}

/** The images of row `at` of an image table, after `written` images; returns how many are written now. */
function writeImages(w: JsonWriter, written: number, table: ImageTable, at: number): number {
  for (const group of table.groups) {
    for (const source of group) {
      if (!writeLink(w, source.column, at, written === 0 ? ',"textures":[{' : ',{')) continue;
      written++;
      w.bytes(source.tail);
      const face = table.face?.get(at);
      const faceText = typeof face === 'number' ? FACE_TEXTS[face] : undefined;
      if (faceText) w.bytes(faceText);
      w.byte(0x7d);
      break;
    }
  }
  return written;
}

const MESH_OPEN = ',"mesh":{';
const FACE_TEXTS: Readonly<Record<number, Uint8Array>> = NORMAL_IDS.map((face) => Buffer.from(`,"face":"${face}"`, 'latin1'));

/**
 * Writes `open`, then the fields of row `at`'s link (`"id":"N"` or `"builtin":"path"`,
 * as JSON.stringify writes linkOf's object), when the row holds one; returns whether it
 * did. In a binary file's String column the usual forms (rbxassetid://N and the
 * roblox.com/asset/?id=N URL) are read from the bytes, no string made and no cache
 * looked up; anything else is a value for linkOf.
 */
function writeLink(w: JsonWriter, column: Column, at: number, open: string): boolean {
  if (column instanceof StringColumn && column.type === 'String') {
    const data = column.data;
    const start = column.byteStart(at);
    const end = column.byteEnd(at);
    if (start === end) return false;
    const from = idStart(data, start, end);
    if (from !== -1) {
      w.ascii(open);
      w.ascii('"id":');
      w.asciiString(data, from, end);
      return true;
    }
  }
  const link = linkOf(column.get(at));
  if (!link) return false;
  w.ascii(open);
  if ('id' in link) {
    w.ascii('"id":');
    w.string(link.id);
  } else {
    w.ascii('"builtin":');
    w.string(link.builtin);
  }
  return true;
}

/** Reference prefixes after which parseAssetUri reads the rest as the id's digits (compared ignoring ASCII case, as it does). */
const ID_PREFIXES = ['rbxassetid://', 'http://www.roblox.com/asset/?id=', 'https://www.roblox.com/asset/?id=']
  .map((prefix) => Buffer.from(prefix, 'latin1'));
/** Ids of up to 18 digits are valid whatever the digits (19 need the comparison with 2^63 - 1: left to parseAssetUri). */
const MAX_FAST_ID_DIGITS = 18;

/**
 * Where the id starts in bytes [start, end) when they are one of ID_PREFIXES and then
 * only the digits of a valid id (leading zeros skipped, as parseAssetUri's canonical
 * form does); -1 for anything else (then the text is parsed).
 */
function idStart(data: Uint8Array, start: number, end: number): number {
  for (let p = 0; p < ID_PREFIXES.length; p++) {
    const prefix = ID_PREFIXES[p]!;
    const length = prefix.length;
    if (end - start <= length) continue;
    let i = 0;
    for (; i < length; i++) {
      const c = data[start + i]!;
      if ((c >= 0x41 && c <= 0x5a ? c | 0x20 : c) !== prefix[i]) break;
    }
    if (i < length) continue;
    let digits = start + length;
    while (digits < end - 1 && data[digits] === 0x30) digits++;
    if (end - digits > MAX_FAST_ID_DIGITS) return -1;
    for (let k = digits; k < end; k++) {
      const c = data[k]!;
      if (c < 0x30 || c > 0x39) return -1;
    }
    return data[digits] === 0x30 ? -1 : digits; // id 0 is no id
  }
  return -1;
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

function shapeOf(className: string, shape: Value | undefined): string {
  if (typeof shape === 'number') return PART_TYPES[shape] ?? 'Block';
  return CLASS_SHAPES[className] ?? 'Block';
}

/** `r,g,b`: Color3uint8, else Color (Color3, 0..1), else the BrickColor palette; Medium stone grey otherwise. Parts share a few colours: their texts are kept. */
function writeColor(w: JsonWriter, c: PartColumns, row: number): void {
  colorInto(c, row, NUMBERS);
  const r = NUMBERS[0]!, g = NUMBERS[1]!, b = NUMBERS[2]!;
  if (!isByte(r) || !isByte(g) || !isByte(b)) { w.int(r); w.byte(0x2c); w.int(g); w.byte(0x2c); w.int(b); return; }
  const key = (r << 16) | (g << 8) | b;
  let text = COLOR_TEXT.get(key);
  if (!text) {
    text = Buffer.from(`${r},${g},${b}`, 'latin1');
    // A map's colours are a palette's worth: a hostile one cannot grow the cache without bound.
    if (COLOR_TEXT.size >= MAX_COLOR_TEXTS) COLOR_TEXT.clear();
    COLOR_TEXT.set(key, text);
  }
  w.bytes(text);
}

const isByte = (x: number): boolean => (x & 255) === x;

/** Kept colour texts by 65536·r + 256·g + b. */
const COLOR_TEXT = new Map<number, Uint8Array>();
const MAX_COLOR_TEXTS = 4096;

function colorInto(c: PartColumns, row: number, out: Float64Array): void {
  if (c.color3uint8?.type === 'Color3uint8' && c.color3uint8.numbers) {
    c.color3uint8.numbers(row, out);
    return;
  }
  const bytes = c.color3uint8?.get(row);
  if (Array.isArray(bytes) && bytes.length === 3) {
    out[0] = clampByte(bytes[0]); out[1] = clampByte(bytes[1]); out[2] = clampByte(bytes[2]);
    return;
  }
  // An XML Color3uint8 may arrive packed as 0xAARRGGBB.
  if (typeof bytes === 'number') {
    out[0] = (bytes >>> 16) & 255; out[1] = (bytes >>> 8) & 255; out[2] = bytes & 255;
    return;
  }
  const floats = c.color?.get(row);
  if (Array.isArray(floats) && floats.length === 3) {
    out[0] = clampByte(Number(floats[0]) * 255); out[1] = clampByte(Number(floats[1]) * 255); out[2] = clampByte(Number(floats[2]) * 255);
    return;
  }
  const brick = c.brickColor?.get(row);
  const palette = (typeof brick === 'number' ? BRICK_COLORS.get(brick) : undefined) ?? DEFAULT_PART_COLOR;
  out[0] = palette[0]; out[1] = palette[1]; out[2] = palette[2];
}

function clampByte(x: unknown): number {
  const n = Math.round(Number(x));
  return n >= 0 ? (n <= 255 ? n : 255) : 0;
}

function numberOr(value: Value | undefined, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

