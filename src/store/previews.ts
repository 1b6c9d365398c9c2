/**
 * The preview store: analyses keyed by the upload's SHA-256, kept in the object store
 * (`backends/`: the local disk, or S3 shared by every instance) with a per-instance LRU
 * cache in front. Under `previews/<hash>/` (backends/keys.ts):
 *   place                     the uploaded file, which create decodes again
 *   analysis.json             the analysis of those bytes: nothing per user, written once
 *   picture.png               the analysis's picture of the map, when one was drawn
 *   uploaders/<user>.<expiry> one object per upload: who may use the preview, until when
 *   sweeping.<sweeper>        while a sweep removes the preview (`sweepOne`, `settled`)
 * Every instance answers from the same objects: ownership is a listing of the user's
 * entries, expiry is in each entry's key, so an expired preview is gone for all at once.
 * A request lists and reads only its own user's entries (`getFor`, `addUploader`), so what
 * it costs does not grow with how many others uploaded the same bytes; only `get` (the
 * quota's index at start) reads every uploader's.
 * Entries are separate objects, so concurrent uploads of the same bytes on any number of
 * instances never lose an uploader, on any store.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { LRUCache } from 'lru-cache';
import { ASSET_KINDS, type AssetKind } from '../assets/refs.js';
import { ASSET_ID_PATTERN } from '../assets/store.js';
import type { Report } from '../project/report.js';
import { listAll, listKeys } from './backends/operations.js';
import { parseUploaderKey, previewKeys, userKey } from './backends/keys.js';
import { StoreUnavailableError } from './backends/errors.js';
import type { ObjectInfo, ObjectStore, ObjectStream } from './backends/types.js';

export interface PreviewAsset {
  id: string;
  kind: AssetKind;
}

/** What every uploader of a preview is shown alike: the analysis of its bytes (`analysis.json`), nothing of any user. */
export interface PreviewAnalysis {
  /** Lowercase hex SHA-256 of the uploaded file. */
  hash: string;
  /** The analysis report. */
  report: Report;
  assets: PreviewAsset[];
  fileSize: number;
  format: 'binary' | 'xml';
  /** The picture of the map beside the preview (`openPicture`); absent when none was drawn. */
  picture?: { width: number; height: number };
  /** Each map script's finding codes and the scanner that found them (absent in previews stored before they were kept). */
  scriptCodes?: { scanner: string; bits: number[] };
  /** Milliseconds since the epoch (the store's clock). */
  createdAt: number;
}

/**
 * A preview as one of its uploaders sees it (`getFor`, `addUploader`, `put`): made from that
 * user's own entries alone, so it costs the same however many others uploaded the file,
 * and holds nothing of theirs.
 */
export interface UserPreview extends PreviewAnalysis {
  /** The uploader it was made for. */
  user: string;
  /** The name this user gave the file (a fallback when they gave none). */
  fileName: string;
  /** This user's own latest expiry: until when they may use the preview, and what their share is charged until. */
  expiresAt: number;
}

/**
 * A preview with every unexpired uploader (`get`, `list`): a listing and a read per uploader,
 * so only for what needs them all (the quota's index at start), never per request.
 */
export interface Preview extends PreviewAnalysis {
  /** A name for the file when an uploader's own is unknown (never another user's name). */
  fileName: string;
  /** User ids of everyone whose upload of this file has not expired; only they may create from it. */
  uploaders: string[];
  /** The name each uploader gave the file, so nobody sees another user's file name. */
  fileNames?: Record<string, string>;
  /** The latest expiry among the uploads. */
  expiresAt: number;
  /** Each uploader's own latest expiry (what their share is charged until). */
  expiries?: Record<string, number>;
}

/** A preview's entry for one user (`fileNames`, `expiries`): its own keys only, as a user id may be `constructor`. */
export function ofUser<T>(byUser: Record<string, T> | undefined, user: string): T | undefined {
  return byUser !== undefined && Object.hasOwn(byUser, user) ? byUser[user] : undefined;
}

/** A preview to store, with its uploader; the store stamps `createdAt` / `expiresAt` when they are absent. */
export type NewPreview = Omit<UserPreview, 'createdAt' | 'expiresAt'> & Partial<Pick<UserPreview, 'createdAt' | 'expiresAt'>>;

export interface PreviewStoreOptions {
  objects: ObjectStore;
  /** A local folder for copies of place files the workers read (stores without local files). */
  workDir: string;
  /** Bytes of analyses (as JSON) kept in memory; 0 disables the cache. */
  cacheBytes: number;
  ttlSeconds: number;
  /** Milliseconds since the epoch; injectable for tests. */
  now?: () => number;
  /** Users' uploader entries remembered per instance, all previews together (KNOWN_USERS); for tests. */
  knownUsers?: number;
}

/** A local file of a preview's map, for a worker; `release` when done with it. */
export interface LocalPlace {
  path: string;
  release(): Promise<void>;
}

export interface PreviewStore {
  /**
   * The preview with every unexpired uploader, or undefined when unknown, expired or `hash` is
   * not a SHA-256. Lists and reads every uploader's entry: per request, use `getFor`. Treat it as read-only.
   */
  get(hash: string): Promise<Preview | undefined>;
  /** The preview as `user` sees it when one of their own entries is unexpired (checked against the store on a miss); undefined otherwise. */
  getFor(hash: string, user: string): Promise<UserPreview | undefined>;
  /** Whether the analysis and the map file of `hash` are stored (so a new upload of the same bytes can reuse them). */
  hasAnalysis(hash: string): Promise<boolean>;
  /**
   * Stores a preview: the uploaded file (`uploadedTempPath`, taken by the store; when the
   * bytes are stored already it is deleted instead) and its picture, then the analysis
   * (kept as it is when one is stored), then the uploader's entry. Returns it as that uploader sees it.
   */
  put(preview: NewPreview, uploadedTempPath?: string, picture?: Uint8Array): Promise<UserPreview>;
  /**
   * Adds (or refreshes) a user's upload of a stored preview and returns it as they see it;
   * undefined when there is no analysis or, unless `force`, when the user has no unexpired
   * entry of their own (someone else's upload lets nobody else in). Lists and reads only the
   * user's own entries.
   */
  addUploader(hash: string, userId: string, fileName?: string, force?: boolean): Promise<UserPreview | undefined>;
  /** The picture of a preview as stored, or undefined when there is none. */
  openPicture(hash: string): Promise<ObjectStream | undefined>;
  /** The map file as a local path for a worker (copied from the store when it has no local files); undefined when it is not stored. */
  openPlace(hash: string): Promise<LocalPlace | undefined>;
  /**
   * Removes expired uploader entries, then the analysis and map of previews with none left
   * (and leftovers of interrupted puts older than `staleMs`). Safe to run on several
   * instances at once; the service runs it under a lease. Returns the hashes removed.
   */
  sweep(staleMs?: number): Promise<string[]>;
  /** Every unexpired preview (for the quota's per-user index at start). */
  list(): Promise<Preview[]>;
  /** Bytes a preview takes in the store (its map file and its analysis). */
  diskBytes(hash: string): Promise<number>;
  /** What the memory cache holds now. */
  cacheInfo(): { entries: number; bytes: number; maxBytes: number };
}

const HASH = /^[0-9a-f]{64}$/;
/** Objects of a put in progress are younger than this; older ones without an uploader are leftovers of a crash. */
export const STALE_TEMP_MS = 10 * 60 * 1000;
/** An uploader entry refreshed sooner than this fraction of the TTL before its expiry is not written again. */
const REFRESH_FRACTION = 0.5;
/** A sweep's mark older than this was left by a sweeper that died: uploads go by the objects alone, and the sweep removes it. */
const SWEEP_MARK_STALE_MS = 5 * 60 * 1000;
const MAX_ANALYSIS_BYTES = 64 * 1024 * 1024;
const MAX_ENTRY_BYTES = 4096;
const FALLBACK_NAME = 'upload.rbxl';

export function isPreviewHash(hash: string): boolean {
  return HASH.test(hash);
}

interface Uploader {
  user: string;
  fileName: string | undefined;
  expiresAt: number;
  key: string;
}

/**
 * What a cached analysis takes on the heap per byte of its JSON: its objects, not its
 * text (an analysis naming 100,000 assets is 3.8 MB of JSON and 12 MB of heap), so
 * PREVIEW_CACHE_BYTES bounds memory, as the budget counts it.
 */
export const HEAP_BYTES_PER_JSON_BYTE = 3.2;

/**
 * Users whose uploader entries an instance remembers, all previews together: what it
 * remembers answers a user's ownership without asking the store, and a miss asks the
 * store about that user alone, so the bound costs lookups, never answers. Each user of
 * a preview counts one (a preview none, beside its users): without the bound, one file
 * uploaded under ever more user ids grew the main thread without end (a few hundred
 * bytes a user). A preview with more users than the whole bound is not remembered.
 */
export const KNOWN_USERS = 50_000;

const heapBytes = (jsonBytes: number): number => Math.max(1, Math.ceil(jsonBytes * HEAP_BYTES_PER_JSON_BYTE));

export function createPreviewStore(options: PreviewStoreOptions): PreviewStore {
  const { objects, cacheBytes, ttlSeconds, workDir } = options;
  const now = options.now ?? Date.now;
  const ttlMs = ttlSeconds * 1000;
  const analyses =
    cacheBytes > 0
      ? new LRUCache<string, PreviewAnalysis>({ maxSize: cacheBytes, sizeCalculation: (analysis) => heapBytes(Buffer.byteLength(JSON.stringify(analysis))) })
      : null;
  /**
   * Uploader entries this instance has seen, per hash and then per user: a hit answers that
   * user's ownership until the entry's expiry; a miss asks the store about that user only.
   */
  const known = new LRUCache<string, Map<string, Uploader[]>>({
    max: cacheBytes > 0 ? 50_000 : 1,
    maxSize: options.knownUsers ?? KNOWN_USERS,
    sizeCalculation: (users) => Math.max(1, users.size),
  });

  const checkHash = (hash: string): string => {
    if (!HASH.test(hash)) throw new RangeError(`not a SHA-256 preview hash: ${JSON.stringify(hash)}`);
    return hash;
  };

  async function readAnalysis(hash: string): Promise<PreviewAnalysis | undefined> {
    const cached = analyses?.get(hash);
    if (cached !== undefined) return cached;
    const stored = await objects.get(previewKeys.analysis(hash), { maxBytes: MAX_ANALYSIS_BYTES });
    if (stored === undefined) return undefined;
    let analysis: unknown;
    try {
      analysis = JSON.parse(stored.body.toString('utf8'));
    } catch {
      return undefined; // only outside damage can tear a whole-object write
    }
    if (!isAnalysis(analysis) || analysis.hash !== hash) return undefined;
    // Codes of another shape are dropped, not trusted: create then scans the scripts again.
    if (analysis.scriptCodes !== undefined && !isCodesShape(analysis.scriptCodes)) delete analysis.scriptCodes;
    analyses?.set(hash, analysis, { size: heapBytes(stored.body.byteLength) });
    return analysis;
  }

  /** The uploader entries of `hash` under `prefix` (expired ones included), with their bodies: everyone's only for `get`, else one user's (`listOwn`). */
  async function listUploaders(hash: string, prefix = previewKeys.uploaders(hash)): Promise<Uploader[]> {
    const found: Uploader[] = [];
    for await (const info of listAll(objects, prefix)) {
      const parsed = parseUploaderKey(info.key);
      if (parsed === undefined) continue;
      const body = await objects.get(info.key, { maxBytes: MAX_ENTRY_BYTES });
      const entry = body === undefined ? undefined : parseEntry(body.body);
      if (entry === undefined || userKey(entry.user) !== parsed.user) continue;
      found.push({ user: entry.user, fileName: entry.fileName, expiresAt: parsed.expiresAt, key: info.key });
    }
    return found;
  }

  /** The entries of `user` for `hash` this instance has seen (listed, or written since). */
  function seen(hash: string, user: string): Uploader[] {
    return known.get(hash)?.get(user) ?? [];
  }

  /** Sets what this instance knows of `user`'s entries for `hash` (a listing of their prefix is the store's answer). */
  function learn(hash: string, user: string, entries: Uploader[]): void {
    let users = known.get(hash);
    const added = users === undefined || !users.has(user);
    users ??= new Map();
    users.set(user, entries);
    // Counted again with its new user (a set of the same Map would keep its old size); past the bound the cache drops it.
    if (added) { known.delete(hash); known.set(hash, users); }
  }

  /**
   * The entries of `user` for `hash` in the store now: a listing of their own prefix and a
   * read of each of their entries, never anyone else's, so it costs the same however many
   * others uploaded the same file.
   */
  async function listOwn(hash: string, user: string): Promise<Uploader[]> {
    const entries = await listUploaders(hash, previewKeys.uploaderEntries(hash, user));
    learn(hash, user, entries);
    return entries;
  }

  /** Whether anyone's entry for `hash` is unexpired: keys only (each carries its expiry), up to the first live one. */
  async function anyLive(hash: string, time: number): Promise<boolean> {
    for await (const key of listKeys(objects, previewKeys.uploaders(hash))) {
      if ((parseUploaderKey(key)?.expiresAt ?? 0) > time) return true;
    }
    return false;
  }

  /** The unexpired entries, earliest expiry first: the last one of a user is their latest. */
  function liveByExpiry(entries: readonly Uploader[]): Uploader[] {
    const time = now();
    return entries.filter((entry) => entry.expiresAt > time).sort((a, b) => a.expiresAt - b.expiresAt);
  }

  /** A user's latest unexpired entry, or undefined when they have none. */
  function latestLive(entries: readonly Uploader[]): Uploader | undefined {
    return liveByExpiry(entries).at(-1);
  }

  /** The preview with every uploader in `entries` (all of them, for `get`). */
  function compose(analysis: PreviewAnalysis, entries: readonly Uploader[]): Preview | undefined {
    const live = liveByExpiry(entries);
    if (live.length === 0) return undefined;
    // Keyed by user id, which may be any name (`__proto__`, `constructor`): no prototype, and read through `ofUser`.
    const fileNames = Object.create(null) as Record<string, string>;
    const expiries = Object.create(null) as Record<string, number>;
    // In order of expiry: the last entry of each user is their latest.
    for (const entry of live) {
      if (entry.fileName !== undefined) fileNames[entry.user] = entry.fileName;
      expiries[entry.user] = entry.expiresAt;
    }
    return {
      ...analysis,
      fileName: FALLBACK_NAME,
      uploaders: [...new Set(live.map((entry) => entry.user))],
      fileNames,
      expiresAt: live[live.length - 1]!.expiresAt,
      expiries,
    };
  }

  /** The preview as `user` sees it, from their own entries; undefined when none is unexpired. */
  function composeFor(analysis: PreviewAnalysis, user: string, own: readonly Uploader[]): UserPreview | undefined {
    const live = liveByExpiry(own);
    const latest = live.at(-1);
    if (latest === undefined) return undefined;
    // The latest name they gave, as `compose` keeps it: an entry written without one keeps the earlier name.
    const named = live.filter((entry) => entry.fileName !== undefined).at(-1);
    return { ...analysis, user, fileName: named?.fileName ?? FALLBACK_NAME, expiresAt: latest.expiresAt };
  }

  async function get(hash: string): Promise<Preview | undefined> {
    if (!HASH.test(hash)) return undefined;
    const analysis = await readAnalysis(hash);
    if (analysis === undefined) return undefined;
    return compose(analysis, await listUploaders(hash));
  }

  async function getFor(hash: string, user: string): Promise<UserPreview | undefined> {
    if (!HASH.test(hash)) return undefined;
    let own = seen(hash, user);
    // Not known here (an upload on another instance, or a newer one): the store decides.
    if (latestLive(own) === undefined) own = await listOwn(hash, user);
    if (latestLive(own) === undefined) return undefined;
    const analysis = await readAnalysis(hash);
    return analysis === undefined ? undefined : composeFor(analysis, user, own);
  }

  async function hasAnalysis(hash: string): Promise<boolean> {
    if (!HASH.test(hash)) return false;
    if ((await readAnalysis(hash)) === undefined) return false;
    return (await objects.head(previewKeys.place(hash))) !== undefined;
  }

  /**
   * Writes a new entry of `user`'s; resolves with it and their entries as now known. The
   * caller answers from those, not from `known`: past KNOWN_USERS the cache may already
   * have dropped them (the preview's new user pushed it past the bound, or other users
   * since), and the upload that wrote them was answered as not kept.
   */
  async function writeEntry(hash: string, user: string, fileName: string | undefined, expiresAt: number): Promise<{ entry: Uploader; entries: Uploader[] }> {
    const key = previewKeys.uploader(hash, user, expiresAt);
    const body = JSON.stringify({ user, ...(fileName === undefined ? {} : { file_name: fileName }), uploaded_at: now() });
    // A new key per upload: a plain put never overwrites another uploader's entry.
    await objects.put(key, body);
    const entry = { user, fileName, expiresAt, key };
    const entries = [...seen(hash, user), entry];
    learn(hash, user, entries);
    return { entry, entries };
  }

  /**
   * Entries of `user` that a newer one supersedes: removed so listings stay short (the sweep
   * would take them at expiry anyway). Resolves with the entries kept.
   */
  async function dropSuperseded(hash: string, user: string, keep: Uploader, entries: Uploader[]): Promise<Uploader[]> {
    const stale = entries.filter((entry) => entry.key !== keep.key && entry.expiresAt <= keep.expiresAt);
    if (stale.length === 0) return entries;
    const kept = entries.filter((entry) => !stale.includes(entry));
    learn(hash, user, kept);
    await Promise.all(stale.map((entry) => objects.delete(entry.key).catch(() => {})));
    return kept;
  }

  async function put(preview: NewPreview, uploadedTempPath?: string, picture?: Uint8Array): Promise<UserPreview> {
    const hash = checkHash(preview.hash);
    // The map first, the analysis next, the uploaders last: an entry always finds both.
    if (uploadedTempPath !== undefined) {
      try {
        await objects.putFile(previewKeys.place(hash), uploadedTempPath, { ifNoneMatch: '*', moveSource: true });
      } finally {
        await rm(uploadedTempPath, { force: true });
      }
    }
    // The same bytes draw the same picture: whoever stores it first, it is the one.
    if (picture !== undefined) await objects.put(previewKeys.picture(hash), picture, { ifNoneMatch: '*' });
    const analysis: PreviewAnalysis = {
      hash, report: preview.report, assets: preview.assets, fileSize: preview.fileSize, format: preview.format,
      ...(preview.scriptCodes === undefined ? {} : { scriptCodes: preview.scriptCodes }),
      ...(preview.picture === undefined ? {} : { picture: preview.picture }),
      createdAt: preview.createdAt ?? now(),
    };
    const json = JSON.stringify(analysis);
    let written = await objects.put(previewKeys.analysis(hash), json, { ifNoneMatch: '*' });
    // Another upload of the same bytes stored its analysis first: the same result, kept as it is.
    let stored = written.written ? analysis : await readAnalysis(hash);
    if (stored === undefined) {
      // What is stored cannot be read (damaged outside the service): this analysis replaces it,
      // unless another upload replaced it first.
      const info = await objects.head(previewKeys.analysis(hash));
      written = info === undefined
        ? await objects.put(previewKeys.analysis(hash), json, { ifNoneMatch: '*' })
        : await objects.put(previewKeys.analysis(hash), json, { ifMatch: info.etag });
      stored = written.written ? analysis : (await readAnalysis(hash)) ?? analysis;
    }
    if (written.written) analyses?.set(hash, analysis, { size: heapBytes(Buffer.byteLength(json)) });
    const expiresAt = preview.expiresAt ?? now() + ttlMs;
    const { entries } = await writeEntry(hash, preview.user, preview.fileName, expiresAt);
    // Stored before (the same bytes, uploaded earlier) or just now, a sweep may be taking them: one
    // that listed them before, running beside another (a lease overlapping), deletes even what was written since.
    const relied = [
      previewKeys.analysis(hash),
      ...(uploadedTempPath === undefined ? [] : [previewKeys.place(hash)]),
      ...(picture === undefined ? [] : [previewKeys.picture(hash)]),
    ];
    if (!(await settled(hash, relied, 'put'))) {
      analyses?.delete(hash);
      throw new StoreUnavailableError('the stored map of this file was removed (it had expired) while the upload was added to it; send the file again', 'put', hash, 'server_error', 5);
    }
    return composeFor(stored, preview.user, entries)!;
  }

  async function addUploader(hash: string, userId: string, fileName?: string, force = false): Promise<UserPreview | undefined> {
    if (!HASH.test(hash)) return undefined;
    const analysis = await readAnalysis(hash);
    if (analysis === undefined) return undefined;
    const answer = await joinedBy(hash, analysis, userId, fileName, force);
    // An upload (`force`) looks for a sweep after its entry is there, whether it wrote one or
    // found one of the user's: an entry written after a sweep's last look (by an upload of
    // theirs refused for the mark, or not yet through its own look, on any instance) stops
    // nothing, and the same user's upload sent again at once was answered over a removed map.
    // A refresh (a create) goes by the user's own entry, kept by an upload answered 200.
    if (answer === undefined || !force) return answer;
    const relied = [previewKeys.analysis(hash), previewKeys.place(hash), ...(analysis.picture === undefined ? [] : [previewKeys.picture(hash)])];
    if (!(await settled(hash, relied, 'addUploader'))) {
      analyses?.delete(hash);
      return undefined; // gone: the upload stores its bytes anew
    }
    return answer;
  }

  /** `addUploader` up to the check for a sweep: the user's entry, found fresh enough or written. */
  async function joinedBy(hash: string, analysis: PreviewAnalysis, userId: string, fileName: string | undefined, force: boolean): Promise<UserPreview | undefined> {
    const time = now();
    // This user's entry, seen here, still good for long enough and with the same name: nothing to write, nothing to ask.
    if (isFresh(latestLive(seen(hash, userId)), fileName, time)) return composeFor(analysis, userId, seen(hash, userId));
    const own = await listOwn(hash, userId);
    const latest = latestLive(own);
    // Only an upload adds a user (`force`); a refresh needs the user's own unexpired entry.
    if (!force && latest === undefined) return undefined;
    const name = fileName ?? latest?.fileName;
    if (isFresh(latest, name, time)) return composeFor(analysis, userId, own);
    const { entry, entries } = await writeEntry(hash, userId, name, Math.max(time + ttlMs, latest?.expiresAt ?? 0));
    return composeFor(analysis, userId, await dropSuperseded(hash, userId, entry, entries));
  }

  /**
   * Whether the objects an upload relies on (`keys`: analysis, map, picture) are there for
   * good, once it has written its entry; throws
   * StoreUnavailableError while a sweep is removing the preview. A sweep marks a preview
   * before its last look for live entries, and an upload looks for the mark after writing
   * its entry, so one of the two sees the other: no mark means any sweep that missed the
   * entry has finished, and what is still there stays while the entry lives. Before, a
   * sweep that looked just before the entry came removed the map under an upload answered
   * 200, whose create then answered 404.
   */
  async function settled(hash: string, keys: readonly string[], operation: string): Promise<boolean> {
    let marked = false;
    for await (const mark of listAll(objects, previewKeys.sweepingMarks(hash))) marked ||= mark.lastModified >= Date.now() - SWEEP_MARK_STALE_MS;
    if (marked) {
      analyses?.delete(hash);
      throw new StoreUnavailableError('this file\'s stored map is being removed (it had expired) as the upload was added to it; send the file again', operation, hash, 'server_error', 5);
    }
    return (await Promise.all(keys.map((key) => objects.head(key)))).every((info) => info !== undefined);
  }

  /** An entry good for more than half the TTL, with the name asked for (any, when none is), needs no new object. */
  function isFresh(entry: Uploader | undefined, fileName: string | undefined, time: number): boolean {
    return entry !== undefined && (fileName === undefined || entry.fileName === fileName) && entry.expiresAt - time > ttlMs * REFRESH_FRACTION;
  }

  async function openPicture(hash: string): Promise<ObjectStream | undefined> {
    return HASH.test(hash) ? objects.getStream(previewKeys.picture(hash)) : undefined;
  }

  async function openPlace(hash: string): Promise<LocalPlace | undefined> {
    const key = previewKeys.place(checkHash(hash));
    if (objects.localPath !== undefined) {
      if ((await objects.head(key)) === undefined) return undefined;
      return { path: objects.localPath(key), release: async () => {} };
    }
    await mkdir(workDir, { recursive: true });
    // The map's name is its SHA-256: a copy that does not match is the store's fault, not
    // a map the user should be told is broken. A garbled answer is read again; an object
    // that reads back wrong twice is damaged, and goes, so the next upload stores it anew.
    for (let tries = 1; ; tries++) {
      const copied = await copyPlace(key);
      if (copied === undefined) return undefined;
      if (copied.matches === hash) return { path: copied.path, release: () => rm(copied.path, { force: true }) };
      await rm(copied.path, { force: true });
      if (tries === 2) {
        await objects.delete(key);
        throw new StoreUnavailableError(`object store server error (getStream ${key}): the map read back twice does not match its hash; it was removed, upload it again`, 'getStream', key, 'server_error', 5);
      }
    }
  }

  /** The stored map copied to a local file, with the SHA-256 of what was copied; undefined when there is none. */
  async function copyPlace(key: string): Promise<{ path: string; matches: string } | undefined> {
    const stream = await objects.getStream(key);
    if (stream === undefined) return undefined;
    const path = join(workDir, `place-${randomBytes(12).toString('hex')}.tmp`);
    const digest = createHash('sha256');
    try {
      await pipeline(stream.body, async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) { digest.update(chunk); yield chunk; }
      }, createWriteStream(path, { flags: 'wx', mode: 0o600 }));
    } catch (error) {
      await rm(path, { force: true });
      throw error;
    }
    return { path, matches: digest.digest('hex') };
  }

  async function sweep(staleMs = STALE_TEMP_MS): Promise<string[]> {
    const time = now();
    const wallCutoff = Date.now() - staleMs;
    const removed: string[] = [];
    let current: string | undefined;
    let group: ObjectInfo[] = [];
    const finish = async (): Promise<void> => {
      if (current !== undefined && (await sweepOne(current, group, time, wallCutoff))) removed.push(current);
    };
    for await (const info of listAll(objects, 'previews/')) {
      const hash = info.key.slice('previews/'.length, 'previews/'.length + 64);
      if (!HASH.test(hash)) continue;
      if (hash !== current) {
        await finish();
        current = hash;
        group = [];
      }
      group.push(info);
    }
    await finish();
    return removed;
  }

  /** Sweeps one preview's objects; true when the preview went. */
  async function sweepOne(hash: string, group: ObjectInfo[], time: number, wallCutoff: number): Promise<boolean> {
    let live = 0;
    let expired = 0;
    for (const info of group) {
      const entry = parseUploaderKey(info.key);
      if (entry === undefined) continue;
      if (entry.expiresAt > time) live++;
      else {
        expired++;
        await objects.delete(info.key);
      }
    }
    const isMark = (info: ObjectInfo): boolean => info.key.startsWith(previewKeys.sweepingMarks(hash));
    // A mark this old is a sweeper's that died mid-way.
    for (const mark of group.filter(isMark)) if (mark.lastModified < Date.now() - SWEEP_MARK_STALE_MS) await objects.delete(mark.key);
    if (live > 0) return false;
    const rest = group.filter((info) => parseUploaderKey(info.key) === undefined && !isMark(info));
    if (rest.length === 0) return false;
    // With no entry ever written, objects younger than the cutoff belong to a put in progress.
    if (expired === 0 && rest.some((info) => info.lastModified >= wallCutoff)) return false;
    // Marked before the last look for entries: an upload of the same bytes writes its entry
    // and then looks for the mark (`settled`), so either this look sees its entry or it sees the mark.
    const markKey = previewKeys.sweeping(hash, randomBytes(8).toString('hex'));
    await objects.put(markKey, '');
    try {
      if (await anyLive(hash, time)) return false;
      analyses?.delete(hash);
      known.delete(hash);
      // The analysis before the map: a reader that finds an analysis finds its map.
      const order = (info: ObjectInfo): number => (info.key.endsWith('/analysis.json') ? 0 : 1);
      for (const info of rest.sort((a, b) => order(a) - order(b))) await objects.delete(info.key);
    } finally {
      await objects.delete(markKey);
    }
    return expired > 0 || rest.some((info) => info.key.endsWith('/analysis.json'));
  }

  async function list(): Promise<Preview[]> {
    const hashes = new Set<string>();
    for await (const info of listAll(objects, 'previews/')) {
      const entry = parseUploaderKey(info.key);
      if (entry !== undefined && entry.expiresAt > now()) hashes.add(entry.hash);
    }
    const found: Preview[] = [];
    for (const hash of hashes) {
      const preview = await get(hash);
      if (preview !== undefined) found.push(preview);
    }
    return found;
  }

  async function diskBytes(hash: string): Promise<number> {
    if (!HASH.test(hash)) return 0;
    const sizes = await Promise.all([previewKeys.place(hash), previewKeys.analysis(hash), previewKeys.picture(hash)].map((key) => objects.head(key)));
    return sizes.reduce((sum, info) => sum + (info?.size ?? 0), 0);
  }

  function cacheInfo(): { entries: number; bytes: number; maxBytes: number } {
    return { entries: analyses?.size ?? 0, bytes: analyses?.calculatedSize ?? 0, maxBytes: cacheBytes };
  }

  return { get, getFor, hasAnalysis, put, addUploader, openPicture, openPlace, sweep, list, diskBytes, cacheInfo };
}

function parseEntry(body: Buffer): { user: string; fileName: string | undefined } | undefined {
  try {
    const value = JSON.parse(body.toString('utf8')) as { user?: unknown; file_name?: unknown };
    if (typeof value.user !== 'string') return undefined;
    return { user: value.user, fileName: typeof value.file_name === 'string' ? value.file_name : undefined };
  } catch {
    return undefined;
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

const isCodesShape = (value: unknown): boolean =>
  isRecord(value) && typeof value.scanner === 'string' && Array.isArray(value.bits) && value.bits.every(isCount);

/**
 * Whether an analysis read back from the store has the shape the service relies on: an
 * object written by another version, or damaged, counts as absent rather than as a crash later.
 */
function isAnalysis(value: unknown): value is PreviewAnalysis {
  if (!isRecord(value)) return false;
  const { hash, report, assets, fileSize, format, createdAt } = value;
  return (
    typeof hash === 'string' && HASH.test(hash) &&
    isRecord(report) && isCount(report.scripts_total) &&
    Array.isArray(assets) && assets.every((asset) => isRecord(asset) && typeof asset.id === 'string' && ASSET_ID_PATTERN.test(asset.id)
      && (ASSET_KINDS as readonly unknown[]).includes(asset.kind)) &&
    isCount(fileSize) && (format === 'binary' || format === 'xml') &&
    typeof createdAt === 'number'
  );
}
