/**
 * Asset references in a decoded place: which properties hold them, how a reference
 * string becomes a downloadable numeric id, and the place's list of unique ids.
 *
 * Only ids leave this module. A URL found in a map is never handed on: the
 * downloader builds its own request from the id, so a map cannot make the service
 * talk to a host of its choosing.
 *
 * `AssetKind` is defined here (the source of truth); the downloader imports it.
 */
import type { Column, Dom, PropertyTable } from '../parser/dom.js';
import type { Value } from '../parser/values.js';

export type AssetKind = 'mesh' | 'image' | 'audio' | 'animation' | 'union' | 'other';

export const ASSET_KINDS: readonly AssetKind[] = ['mesh', 'image', 'audio', 'animation', 'union', 'other'];

export type AssetUri =
  | { kind: 'id'; id: string }
  | { kind: 'builtin'; path: string }
  | { kind: 'other'; uri: string };

/** Roblox asset ids are positive 64-bit integers: at most 19 digits. */
const MAX_ID_DIGITS = 19;

/** Hosts whose `/asset` URLs name an asset by `id=`. The host itself is never contacted. */
const ASSET_HOSTS = new Set([
  'roblox.com',
  'www.roblox.com',
  'web.roblox.com',
  'assetgame.roblox.com',
  'www.assetgame.roblox.com',
  'assetdelivery.roblox.com',
]);

/** Paths (lower case, trailing slash removed) that take the id in the query string. */
const ASSET_PATHS = new Set(['/asset', '/v1/asset']);

/**
 * Classifies one content reference:
 * - `rbxassetid://N`, `http(s)://www.roblox.com/asset/?id=N` (also `asset?id=`,
 *   `assetgame.`, `assetdelivery.roblox.com/v1/asset/?id=` and `/v1/assetId/N`,
 *   with any further query such as `&version=2`) → `{kind: 'id', id: 'N'}` with N
 *   in canonical decimal (no leading zeros);
 * - `rbxasset://path` → a built-in file shipped with the client;
 * - anything else (`rbxthumb://`, `rbxhttp://`, other hosts, malformed ids, id 0) → other;
 * - empty or blank → null (no reference at all).
 * Scheme, host and query keys compare case-insensitively; surrounding whitespace is ignored.
 */
export function parseAssetUri(uri: string): AssetUri | null {
  const text = uri.trim();
  if (text === '') return null;
  const lower = text.toLowerCase();

  if (lower.startsWith('rbxassetid://')) {
    const id = leadingId(lower, 'rbxassetid://'.length, true);
    return id ? { kind: 'id', id } : { kind: 'other', uri: text };
  }
  if (lower.startsWith('rbxasset://')) {
    const path = text.slice('rbxasset://'.length);
    return path ? { kind: 'builtin', path } : { kind: 'other', uri: text };
  }
  const id = webAssetId(lower);
  return id ? { kind: 'id', id } : { kind: 'other', uri: text };
}

/**
 * The digits starting at `start`, canonicalised, when they are a valid id and are
 * followed by the end of the text or (when `allowTail`) a query or fragment.
 */
function leadingId(text: string, start: number, allowTail: boolean): string | null {
  let end = start;
  while (end < text.length && isDigit(text.charCodeAt(end))) end++;
  if (end === start) return null;
  if (end < text.length) {
    const next = text[end];
    if (!allowTail || (next !== '?' && next !== '&' && next !== '#' && next !== '/')) return null;
  }
  return canonicalId(text.slice(start, end));
}

function canonicalId(digits: string): string | null {
  let first = 0;
  while (first < digits.length - 1 && digits[first] === '0') first++;
  const id = digits.slice(first);
  if (id === '0' || id.length > MAX_ID_DIGITS) return null;
  if (id.length === MAX_ID_DIGITS && id > '9223372036854775807') return null;
  return id;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/** `http(s)://<roblox asset host>/asset/?id=N...` and friends, on lower-cased text. */
function webAssetId(lower: string): string | null {
  let rest: string;
  if (lower.startsWith('https://')) rest = lower.slice(8);
  else if (lower.startsWith('http://')) rest = lower.slice(7);
  else if (lower.startsWith('//')) rest = lower.slice(2);
  else return null;

  let hostEnd = 0;
  while (hostEnd < rest.length && rest[hostEnd] !== '/' && rest[hostEnd] !== '?' && rest[hostEnd] !== '#') hostEnd++;
  const host = rest.slice(0, hostEnd);
  if (!ASSET_HOSTS.has(host)) return null;

  const fragmentAt = rest.indexOf('#', hostEnd);
  const target = fragmentAt === -1 ? rest.slice(hostEnd) : rest.slice(hostEnd, fragmentAt);
  const queryAt = target.indexOf('?');
  const query = queryAt === -1 ? '' : target.slice(queryAt + 1);
  // Studio wrote `https://www.roblox.com//asset/?id=` for years: empty path segments are ignored.
  const path = '/' + (queryAt === -1 ? target : target.slice(0, queryAt)).split('/').filter(Boolean).join('/');

  // assetdelivery.roblox.com/v1/assetId/N
  if (path.startsWith('/v1/assetid/')) return leadingId(path, '/v1/assetid/'.length, false);
  if (!ASSET_PATHS.has(path)) return null;

  for (const pair of query.split('&')) {
    const eq = pair.indexOf('=');
    if (eq === -1) continue;
    if (pair.slice(0, eq) === 'id') return leadingId(pair, eq + 1, false);
  }
  return null;
}

/** The reference text of a property value: old string/ContentId values and new Content `{Uri}`. */
export function uriOf(value: Value | undefined): string | null {
  if (typeof value === 'string') return value === 'None' ? null : value;
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && 'Uri' in value) {
    return typeof value.Uri === 'string' ? value.Uri : null;
  }
  return null;
}

/**
 * Property name → asset kind, for both generations. Names are matched exactly, so a
 * String property of another meaning (e.g. a StringValue's `Value`) is never read.
 * `Texture` is an image on Decal, Texture, ParticleEmitter, Beam and Trail alike.
 */
const PROPERTY_KINDS: ReadonlyMap<string, AssetKind> = new Map<string, AssetKind>([
  // meshes (MeshPart, SpecialMesh, FileMesh, layered clothing cages)
  ['MeshId', 'mesh'], ['MeshID', 'mesh'], ['MeshContent', 'mesh'],
  ['CageMeshId', 'mesh'], ['CageMeshContent', 'mesh'],
  ['ReferenceMeshId', 'mesh'], ['ReferenceMeshContent', 'mesh'],
  // images
  ['TextureID', 'image'], ['TextureId', 'image'], ['TextureContent', 'image'],
  ['Texture', 'image'], ['ColorMapContent', 'image'],
  ['Image', 'image'], ['ImageContent', 'image'],
  ['HoverImage', 'image'], ['HoverImageContent', 'image'],
  ['PressedImage', 'image'], ['PressedImageContent', 'image'],
  ['SkyboxBk', 'image'], ['SkyboxDn', 'image'], ['SkyboxFt', 'image'],
  ['SkyboxLf', 'image'], ['SkyboxRt', 'image'], ['SkyboxUp', 'image'],
  ['SunTextureId', 'image'], ['MoonTextureId', 'image'],
  ['ShirtTemplate', 'image'], ['PantsTemplate', 'image'], ['Graphic', 'image'],
  ['ColorMap', 'image'], ['MetalnessMap', 'image'], ['NormalMap', 'image'], ['RoughnessMap', 'image'],
  ['MetalnessMapContent', 'image'], ['NormalMapContent', 'image'], ['RoughnessMapContent', 'image'],
  ['EmissiveMaskContent', 'image'], ['CursorIcon', 'image'],
  ['BaseTextureId', 'image'], ['OverlayTextureId', 'image'],
  // audio and animation
  ['SoundId', 'audio'], ['AudioContent', 'audio'],
  ['AnimationId', 'animation'], ['AnimationContent', 'animation'],
]);

/** CSG parts: their `AssetId` / `Content` is the solid-model asset. */
const UNION_CLASSES = new Set(['PartOperation', 'UnionOperation', 'NegateOperation', 'IntersectOperation']);
const UNION_PROPERTIES = new Set(['AssetId', 'Content']);

/**
 * Content-like properties that are not assets to fetch: script code held outside the
 * file (the report counts it as linked code), package links (the package's own
 * source, not content the scene uses), and data Studio derives from real assets and
 * regenerates (SurfaceAppearance.TexturePack, WrapTarget/WrapLayer.HSRAssetId).
 */
const NOT_ASSETS = new Set(['LinkedSource', 'PackageId', 'PackageIdSerialize', 'TexturePack', 'HSRAssetId']);

/** CharacterMesh stores its asset ids as Int64 numbers rather than content strings. */
const NUMERIC_ID_CLASSES = new Set(['CharacterMesh']);

/**
 * The asset kind of `className.property` when it holds a reference, else null.
 * `isContentType` marks a new-generation Content column: any such column with a `Uri`
 * is a reference, its kind `other` when the name is not known.
 */
export function propertyAssetKind(className: string, property: string, isContentType: boolean): AssetKind | null {
  if (NOT_ASSETS.has(property)) return null;
  if (UNION_PROPERTIES.has(property) && UNION_CLASSES.has(className)) return 'union';
  if (property === 'AssetId' && className === 'AudioPlayer') return 'audio';
  return PROPERTY_KINDS.get(property) ?? (isContentType ? 'other' : null);
}

export interface AssetIdRef {
  id: string;
  kind: AssetKind;
  /** How many property values refer to it. */
  count: number;
}

export interface AssetRefs {
  /** Unique downloadable ids, in order of first use. */
  ids: AssetIdRef[];
  /** Unique `rbxasset://` paths (built into the client; never downloaded). */
  builtin: number;
  /** Unique references that are neither (`rbxthumb://`, foreign URLs, malformed ids). */
  other: number;
  /** Unique ids per kind; the values add up to `ids.length`. */
  byKind: Record<AssetKind, number>;
  /** Ids met under a second kind (the first kind is kept), once each: `id (first/later)`. */
  kindConflicts: string[];
}

/** The columns of a table that hold references, with their kind. */
type RefColumns = { column: Column; kind: AssetKind; numeric: boolean }[];

/**
 * Every asset reference in the DOM, whichever its property generation. An id used
 * under two kinds keeps the first kind met in file order (instances in DOM order,
 * properties in column order); the later kind is noted in `kindConflicts`.
 */
export function collectAssetRefs(dom: Dom): AssetRefs {
  const byId = new Map<string, AssetIdRef>();
  const builtin = new Set<string>();
  const other = new Set<string>();
  const kindConflicts: string[] = [];
  const conflicted = new Set<string>();
  // Each table's reference columns, resolved on its first row.
  const byTable: (RefColumns | undefined)[] = new Array<RefColumns | undefined>(dom.tables.length);

  for (let row = 0; row < dom.count; row++) {
    const table = dom.tableOf(row);
    const refs = byTable[table] ??= refColumns(dom.table(table));
    if (refs.length === 0) continue;
    const at = dom.rowInTable(row);
    for (const { column, kind, numeric } of refs) {
      const value = column.get(at);
      let parsed: AssetUri | null;
      if (numeric) {
        const id = typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? String(value)
          : typeof value === 'string' && /^\d+$/.test(value) ? canonicalId(value) : null;
        parsed = id ? { kind: 'id', id } : null;
      } else {
        const uri = uriOf(value);
        parsed = uri === null ? null : parseAssetUri(uri);
      }
      if (!parsed) continue;
      if (parsed.kind === 'builtin') builtin.add(parsed.path);
      else if (parsed.kind === 'other') other.add(parsed.uri);
      else {
        const known = byId.get(parsed.id);
        if (!known) byId.set(parsed.id, { id: parsed.id, kind, count: 1 });
        else {
          known.count++;
          if (known.kind !== kind && !conflicted.has(parsed.id)) {
            conflicted.add(parsed.id);
            kindConflicts.push(`${parsed.id} (${known.kind}/${kind})`);
          }
        }
      }
    }
  }

  const ids = [...byId.values()];
  const byKind = emptyKindCounts();
  for (const ref of ids) byKind[ref.kind]++;
  return { ids, builtin: builtin.size, other: other.size, byKind, kindConflicts };
}

function refColumns({ className, columns }: PropertyTable): RefColumns {
  const refs: RefColumns = [];
  const numeric = NUMERIC_ID_CLASSES.has(className);
  for (const [name, column] of columns) {
    const isContent = column.type === 'Content';
    if (!isContent && column.type !== 'String' && !(numeric && (column.type === 'Int64' || column.type === 'Int32'))) continue;
    const kind = propertyAssetKind(className, name, isContent);
    if (kind) refs.push({ column, kind, numeric: numeric && !isContent && column.type !== 'String' });
  }
  return refs;
}

export function emptyKindCounts(): Record<AssetKind, number> {
  return { mesh: 0, image: 0, audio: 0, animation: 0, union: 0, other: 0 };
}
