/**
 * Object keys: what a valid key is (the same rule for every store, so a key that works on
 * disk works on S3) and the layout the service stores its state under.
 *
 *   previews/<hash>/place                        the uploaded map file
 *   previews/<hash>/analysis.json                the analysis of those bytes (write-once-or-identical)
 *   previews/<hash>/picture.png                  the analysis's picture of the map, when one was drawn
 *   previews/<hash>/sweeping.<nonce>            empty: while a sweep removes the preview (store/previews.ts)
 *   previews/<hash>/uploaders/<user>.<expires>   one object per upload: {"user", "file_name", "uploaded_at"}
 *   projects/<id>/document.json                  the project document
 *   projects/<id>/summary.json                   what the project page shows (service/summary.ts)
 *   projects/<id>/place                          the map the project was made from (for scene.glb)
 *   projects/<id>/scene-assets.json              asset id → SHA-256 of what its create downloaded
 *   projects/<id>/scene.glb                      the scene, built on its first request
 *   projects/<id>/scene-refused.json             {"code", "message", "limits"}: why it could not be built, under which limits
 *   projects/<id>/meta.json                      {"owner", "assets", "created_at", "bytes"}; written last
 *   assets/sha256/<aa>/<sha256>                  asset bytes, content-addressed (aa = first two hex digits)
 *   assets/sha256/<aa>/<sha256>.json             {"sha256", "size", "content_type"}
 *   assets/ids/<id>.json                         {"id", "sha256"}: which bytes an asset id gave
 *   assets/converted/v<N>/<aa>/<sha256>.glb|.json a mesh or union model converted to glTF, and the record of it
 *   leases/<name>                                {"holder", "expires_at"}: who runs a fleet-wide job now
 *   progress/<user>/<create id>.json             {"progress", "written_at"}: a create's progress, for polls on any instance
 *   holdings/<user>/previews/<hash>.<expires>.<bytes>   empty: a preview the user uploaded, until their own upload expires
 *   holdings/<user>/projects/<id>.<bytes>        empty: one project the user keeps, for their share
 *   holdings/<user>/requests/<kind>.<hash|id|->.<nonce>.<expires>.<bytes>   empty: an upload or create running on some instance
 *   holdings/index-v1                            empty: the holdings above were filled in from what the store held
 *
 * `<hash>` and `<sha256>` are lowercase hex SHA-256; `<user>` is the SHA-256 of the user id
 * (ids may hold any character, keys may not); `<expires>` is the entry's expiry in
 * milliseconds since the epoch, zero-padded to 13 digits, so a listing of a preview's
 * uploaders tells who may use it until when without reading an object.
 */
import { createHash } from 'node:crypto';

/** Longest key, leaving room for an S3 prefix within S3's 1024 bytes. */
export const MAX_KEY_LENGTH = 512;
/** Segments of letters, digits, `.`, `_`, `-`, not starting with `.` (names starting with `.` are the disk store's temp and lock files). */
const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;
/** A list prefix: whole segments, then possibly the start of one. */
const PREFIX = /^(?:[A-Za-z0-9_-][A-Za-z0-9._-]*\/)*(?:[A-Za-z0-9_-][A-Za-z0-9._-]*)?$/;
const SHA256 = /^[0-9a-f]{64}$/;
const PROJECT_ID = /^p_[a-z2-7]{20}$/;
const ASSET_ID = /^\d{1,20}$/;
const EXPIRY_DIGITS = 13;

export function isValidKey(key: string): boolean {
  return key.length > 0 && key.length <= MAX_KEY_LENGTH && key.split('/').every((segment) => SEGMENT.test(segment));
}

/** Throws a TypeError on a malformed key: keys come from our own code, never from a request as they are. */
export function checkKey(key: string): string {
  if (!isValidKey(key)) throw new TypeError(`not a valid object key: ${JSON.stringify(key)}`);
  return key;
}

export function checkPrefix(prefix: string): string {
  if (prefix.length > MAX_KEY_LENGTH || !PREFIX.test(prefix)) throw new TypeError(`not a valid key prefix: ${JSON.stringify(prefix)}`);
  return prefix;
}

function check(value: string, pattern: RegExp, what: string): string {
  if (!pattern.test(value)) throw new TypeError(`not ${what}: ${JSON.stringify(value)}`);
  return value;
}

/** The key segment standing for a user id. */
export function userKey(userId: string): string {
  return createHash('sha256').update(userId, 'utf8').digest('hex');
}

export const previewKeys = {
  prefix: (hash: string): string => `previews/${check(hash, SHA256, 'a SHA-256')}/`,
  place: (hash: string): string => `${previewKeys.prefix(hash)}place`,
  analysis: (hash: string): string => `${previewKeys.prefix(hash)}analysis.json`,
  picture: (hash: string): string => `${previewKeys.prefix(hash)}picture.png`,
  /**
   * Present while a sweep removes the preview (previews.ts, `sweepOne`), one per sweeper (two
   * may run at once where a lease overlaps): an upload that finds one after writing its
   * entry cannot count on what it found.
   */
  sweeping: (hash: string, sweeper: string): string => `${previewKeys.sweepingMarks(hash)}${check(sweeper, /^[0-9a-f]{16}$/, 'a sweeper nonce')}`,
  sweepingMarks: (hash: string): string => `${previewKeys.prefix(hash)}sweeping.`,
  uploaders: (hash: string): string => `${previewKeys.prefix(hash)}uploaders/`,
  /** Every entry of one user under one preview (list it to check ownership). */
  uploaderEntries: (hash: string, userId: string): string => `${previewKeys.uploaders(hash)}${userKey(userId)}.`,
  uploader: (hash: string, userId: string, expiresAt: number): string => `${previewKeys.uploaderEntries(hash, userId)}${formatExpiry(expiresAt)}`,
};

/** What an uploader entry's key says: whose it is and until when. Undefined for a key that is not one. */
export function parseUploaderKey(key: string): { hash: string; user: string; expiresAt: number } | undefined {
  const match = /^previews\/([0-9a-f]{64})\/uploaders\/([0-9a-f]{64})\.(\d{13})$/.exec(key);
  if (match === null) return undefined;
  return { hash: match[1]!, user: match[2]!, expiresAt: Number(match[3]) };
}

function formatExpiry(expiresAt: number): string {
  if (!Number.isSafeInteger(expiresAt) || expiresAt < 0 || expiresAt >= 10 ** EXPIRY_DIGITS) throw new RangeError(`not an expiry time: ${expiresAt}`);
  return String(expiresAt).padStart(EXPIRY_DIGITS, '0');
}

export const projectKeys = {
  prefix: (id: string): string => `projects/${check(id, PROJECT_ID, 'a project id')}/`,
  document: (id: string): string => `${projectKeys.prefix(id)}document.json`,
  meta: (id: string): string => `${projectKeys.prefix(id)}meta.json`,
  summary: (id: string): string => `${projectKeys.prefix(id)}summary.json`,
  place: (id: string): string => `${projectKeys.prefix(id)}place`,
  sceneAssets: (id: string): string => `${projectKeys.prefix(id)}scene-assets.json`,
  scene: (id: string): string => `${projectKeys.prefix(id)}scene.glb`,
  /** Why scene.glb could not be built (past a limit, or not a place), with the limits that said so. */
  sceneRefusal: (id: string): string => `${projectKeys.prefix(id)}scene-refused.json`,
};

/** The project id a key under `projects/` belongs to, and the object's name there. */
export function parseProjectKey(key: string): { id: string; name: string } | undefined {
  const match = /^projects\/(p_[a-z2-7]{20})\/([^/]+)$/.exec(key);
  return match === null ? undefined : { id: match[1]!, name: match[2]! };
}

export const assetKeys = {
  bytes: (sha256: string): string => `assets/sha256/${check(sha256, SHA256, 'a SHA-256').slice(0, 2)}/${sha256}`,
  meta: (sha256: string): string => `${assetKeys.bytes(sha256)}.json`,
  id: (id: string): string => `assets/ids/${check(id, ASSET_ID, 'an asset id')}.json`,
  /** A converted mesh (`glb`) or the record of its conversion (`json`), by converter version. */
  converted: (version: number, sha256: string, ext: 'glb' | 'json'): string =>
    `assets/converted/v${version}/${check(sha256, SHA256, 'a SHA-256').slice(0, 2)}/${sha256}.${ext}`,
};

export const leaseKey = (name: string): string => checkKey(`leases/${name}`);

export const progressKeys = {
  prefix: 'progress/',
  /** One user's create of one id (service/shared-progress.ts). */
  /** `createId` has passed the service's CREATE_ID rule; here it need only be one key segment. */
  create: (userId: string, createId: string): string => `progress/${userKey(userId)}/${check(createId, SEGMENT, 'a key segment')}.json`,
};

/**
 * What each user holds, for their share (store/holdings.ts): empty objects whose keys say
 * it all, so one listing of a user's prefix is their usage on every instance.
 */
export const holdingKeys = {
  prefix: 'holdings/',
  /** Written once the holdings were filled in from the previews and projects already stored. */
  indexed: 'holdings/index-v1',
  user: (userId: string): string => `holdings/${userKey(userId)}/`,
  /** Every entry of one preview of one user. */
  previewEntries: (userId: string, hash: string): string => `${holdingKeys.user(userId)}previews/${check(hash, SHA256, 'a SHA-256')}.`,
  preview: (userId: string, hash: string, expiresAt: number, bytes: number): string =>
    `${holdingKeys.previewEntries(userId, hash)}${formatExpiry(expiresAt)}.${formatBytes(bytes)}`,
  /** Every entry of one project of one user (list it to delete the entry, whatever its size). */
  projectEntries: (userId: string, id: string): string => `${holdingKeys.user(userId)}projects/${check(id, PROJECT_ID, 'a project id')}.`,
  project: (userId: string, id: string, bytes: number): string => `${holdingKeys.projectEntries(userId, id)}${formatBytes(bytes)}`,
  /**
   * A request of the user running on some instance (holdings.ts `reserve`): what it will
   * hold (a preview by hash, a project by id, once known), until it ends or `expiresAt`.
   */
  request: (userId: string, of: HoldingKind, subject: string | null, nonce: string, expiresAt: number, bytes: number): string =>
    `${holdingKeys.user(userId)}requests/${of}.${subject === null ? '-' : check(subject, of === 'preview' ? SHA256 : PROJECT_ID, of === 'preview' ? 'a SHA-256' : 'a project id')}.${check(nonce, NONCE, 'a request nonce')}.${formatExpiry(expiresAt)}.${formatBytes(bytes)}`,
};

export type HoldingKind = 'preview' | 'project';

export type Holding =
  | { kind: 'preview'; user: string; hash: string; expiresAt: number; bytes: number }
  | { kind: 'project'; user: string; id: string; bytes: number }
  | { kind: 'request'; user: string; of: HoldingKind; subject: string | null; nonce: string; expiresAt: number; bytes: number };

const NONCE = /^[0-9a-f]{16}$/;

/** What a holding's key says; undefined for a key that is not one. */
export function parseHoldingKey(key: string): Holding | undefined {
  const preview = /^holdings\/([0-9a-f]{64})\/previews\/([0-9a-f]{64})\.(\d{13})\.(\d{1,16})$/.exec(key);
  if (preview !== null) return { kind: 'preview', user: preview[1]!, hash: preview[2]!, expiresAt: Number(preview[3]), bytes: Number(preview[4]) };
  const project = /^holdings\/([0-9a-f]{64})\/projects\/(p_[a-z2-7]{20})\.(\d{1,16})$/.exec(key);
  if (project !== null) return { kind: 'project', user: project[1]!, id: project[2]!, bytes: Number(project[3]) };
  const request = /^holdings\/([0-9a-f]{64})\/requests\/(?:(preview)\.([0-9a-f]{64}|-)|(project)\.(p_[a-z2-7]{20}|-))\.([0-9a-f]{16})\.(\d{13})\.(\d{1,16})$/.exec(key);
  if (request !== null) {
    const subject = request[3] ?? request[5]!;
    return {
      kind: 'request', user: request[1]!, of: (request[2] ?? request[4]) as HoldingKind, subject: subject === '-' ? null : subject,
      nonce: request[6]!, expiresAt: Number(request[7]), bytes: Number(request[8]),
    };
  }
  return undefined;
}

function formatBytes(bytes: number): string {
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`not a byte count: ${bytes}`);
  return String(bytes);
}
