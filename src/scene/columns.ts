/**
 * The columns the assembly reads from a part's property table, resolved once per
 * table (a binary file has one per class), and the small conversions of their values:
 * colour (Color3uint8, Color, BrickColor), asset ids from content references, and a
 * String property's bytes (binary columns keep them; XML ones carry text or base64).
 */
import { parseAssetUri, uriOf } from '../assets/refs.js';
import { getBytes, getValue, type Column, type Dom } from '../parser/dom.js';
import type { Value, Vec3 } from '../parser/values.js';
import { BRICK_COLORS, DEFAULT_PART_COLOR } from '../project/classes.js';

export interface PartColumns {
  table: number;
  className: string;
  cframe?: Column;
  size?: Column;
  shape?: Column;
  color3uint8?: Column;
  color?: Column;
  brickColor?: Column;
  material?: Column;
  transparency?: Column;
  // MeshPart
  meshId?: Column;
  meshContent?: Column;
  textureId?: Column;
  textureContent?: Column;
  doubleSided?: Column;
  // Unions (and MeshPart's InitialSize)
  initialSize?: Column;
  physicalConfigData?: Column;
  meshData?: Column;
  assetId?: Column;
  usePartColor?: Column;
  anchored?: Column;
  canCollide?: Column;
}

export function partColumns(dom: Dom, table: number): PartColumns {
  const { className, columns: c } = dom.table(table);
  return {
    table,
    className,
    cframe: c.get('CFrame'),
    size: c.get('size') ?? c.get('Size'),
    shape: c.get('shape') ?? c.get('Shape'),
    color3uint8: c.get('Color3uint8'),
    color: c.get('Color'),
    brickColor: c.get('BrickColor') ?? c.get('brickColor'),
    material: c.get('Material'),
    transparency: c.get('Transparency'),
    meshId: c.get('MeshId') ?? c.get('MeshID'),
    meshContent: c.get('MeshContent'),
    textureId: c.get('TextureID') ?? c.get('TextureId'),
    textureContent: c.get('TextureContent'),
    doubleSided: c.get('DoubleSided'),
    initialSize: c.get('InitialSize'),
    physicalConfigData: c.get('PhysicalConfigData'),
    meshData: c.get('MeshData'),
    assetId: c.get('AssetId'),
    usePartColor: c.get('UsePartColor'),
    anchored: c.get('Anchored'),
    canCollide: c.get('CanCollide'),
  };
}

/** Color3uint8, else Color (Color3, 0..1), else the BrickColor palette; Medium stone grey otherwise. */
export function partColor(c: PartColumns, at: number, out: Uint8Array, offset: number): void {
  const bytes = c.color3uint8?.get(at);
  if (Array.isArray(bytes) && bytes.length === 3) {
    out[offset] = clampByte(bytes[0]); out[offset + 1] = clampByte(bytes[1]); out[offset + 2] = clampByte(bytes[2]);
    return;
  }
  // An XML Color3uint8 may arrive packed as 0xAARRGGBB.
  if (typeof bytes === 'number') {
    out[offset] = (bytes >>> 16) & 255; out[offset + 1] = (bytes >>> 8) & 255; out[offset + 2] = bytes & 255;
    return;
  }
  const floats = c.color?.get(at);
  if (Array.isArray(floats) && floats.length === 3) {
    out[offset] = clampByte(Number(floats[0]) * 255); out[offset + 1] = clampByte(Number(floats[1]) * 255); out[offset + 2] = clampByte(Number(floats[2]) * 255);
    return;
  }
  const brick = c.brickColor?.get(at);
  const palette = (typeof brick === 'number' ? BRICK_COLORS.get(brick) : undefined) ?? DEFAULT_PART_COLOR;
  out[offset] = palette[0]; out[offset + 1] = palette[1]; out[offset + 2] = palette[2];
}

export function clampByte(x: unknown): number {
  const n = Math.round(Number(x));
  return n >= 0 ? (n <= 255 ? n : 255) : 0;
}

export function finiteOr(value: Value | undefined, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

/** A Vector3 value with three finite numbers, else null. */
export function finiteVec3(value: Value | undefined): Vec3 | null {
  if (!Array.isArray(value) || value.length !== 3) return null;
  const [x, y, z] = value as unknown[];
  return typeof x === 'number' && typeof y === 'number' && typeof z === 'number' && Number.isFinite(x) && Number.isFinite(y) && Number.isFinite(z) ? [x, y, z] : null;
}

/** The downloadable asset id a content reference names, else null (empty, built-in or foreign references). */
export function assetIdOf(value: Value | undefined): string | null {
  const uri = uriOf(value);
  if (uri === null) return null;
  const parsed = parseAssetUri(uri);
  return parsed?.kind === 'id' ? parsed.id : null;
}

/** A row's content property, first of the names that gives an asset id. */
export function assetIdProperty(dom: Dom, row: number, ...names: string[]): string | null {
  for (const name of names) {
    const id = assetIdOf(getValue(dom, row, name));
    if (id) return id;
  }
  return null;
}

/** A String property's bytes: as stored (binary files), or from its text / base64 value (XML). */
export function stringBytes(dom: Dom, row: number, name: string): Uint8Array | null {
  const raw = getBytes(dom, row, name);
  if (raw) return raw;
  const value = getValue(dom, row, name);
  if (typeof value === 'string') return Buffer.from(value, 'latin1');
  if (value && typeof value === 'object' && 'base64' in value) return Buffer.from((value).base64, 'base64');
  return null;
}

/** A SharedString property's bytes (the index into the file's shared strings), else null. */
export function sharedStringOf(dom: Dom, value: Value | undefined): { index: number; bytes: Uint8Array } | null {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value >= dom.sharedStrings.length) return null;
  return { index: value, bytes: dom.sharedStrings[value]! };
}
