/**
 * Each user's share (USER_MAX_BYTES, USER_MAX_PREVIEWS, USER_MAX_PROJECTS), counted
 * across the fleet: what a user holds is a set of empty objects under
 * `holdings/<user>/` whose keys say everything (keys.ts): one per preview the user
 * uploaded, with its expiry and bytes, and one per project, with its bytes. One listing of the
 * user's prefix is their usage, the same on every instance, with no object read.
 *
 * An entry is written once what it counts is stored (a preview's uploader entry, a
 * project's sidecar); a project's is deleted just before the project, so a failure
 * between the two leaves it uncounted, never counted for ever. A preview's entry runs to
 * the user's own latest upload of it and a later upload replaces it; expired entries
 * stop counting at once and the sweep deletes them. Requests in flight count too
 * (`reserve`, from its check until its entry is written): on this instance as they run,
 * and on every other from an entry under `requests/` written right after the check,
 * renewed while the request runs and deleted when it ends (one of an instance that died
 * expires after REQUEST_ENTRY_MS). A user's concurrent uploads or creates, on one instance
 * or several, cannot all pass a check for the last place; only two whose checks fall
 * within the same entry's write may both pass. Nothing is lost either way.
 */
import { randomBytes } from 'node:crypto';
import { holdingKeys, listKeys, parseHoldingKey, projectKeys, type HoldingKind, type ObjectStore } from './backends/index.js';
import { QuotaExceededError } from './quota.js';

export type { HoldingKind };

export interface ShareLimits {
  userMaxBytes: number;
  userMaxPreviews: number;
  userMaxProjects: number;
}

/** What one user holds now. */
export interface UserUsage {
  bytes: number;
  previews: number;
  projects: number;
  /** Whether the user holds this preview (by hash) or project (by id). */
  holds(kind: HoldingKind, key: string): boolean;
}

export interface Holdings {
  usage(user: string): Promise<UserUsage>;
  /**
   * Throws QuotaExceededError unless `user` may add one more `kind` of `bytes` (one the
   * user already holds is free), then counts the request as held on this instance until
   * `release` (called once its entry is written, or it failed): the check and the count
   * are one step, so concurrent requests of a user see one another.
   */
  reserve(user: string, kind: HoldingKind, bytes: number, key?: string): Promise<Reservation>;
  /** Throws QuotaExceededError unless `user` may add `bytes` (counts are checked by `reserve`, once the entry is known). */
  checkBytes(user: string, bytes: number): Promise<void>;
  /**
   * Deletes the user's entries of projects that are gone (see `dropOrphans` below), at
   * most once per user every ORPHAN_RECHECK_MS; returns whether any went. For a refusal
   * found outside `reserve` and `checkBytes` (a document over the user's room).
   */
  dropOrphans(user: string): Promise<boolean>;
  /** Bytes `user` may still add. */
  room(user: string): Promise<number>;
  addPreview(user: string, hash: string, bytes: number, expiresAt: number): Promise<void>;
  addProject(user: string, id: string, bytes: number): Promise<void>;
  removeProject(user: string, id: string): Promise<void>;
  /** Deletes the entries of expired previews and of requests that stopped renewing theirs; returns how many. */
  sweep(): Promise<number>;
  /**
   * Once per store: entries for what was stored before holdings were kept (or by an
   * instance that did not keep them), then a marker so no later start lists it all again.
   */
  indexOnce(stored: () => Promise<{ previews: StoredPreview[]; projects: StoredProject[] }>): Promise<boolean>;
}

export interface Reservation {
  /** Names the project a create reserved for, once it has an id: its entry, once listed, is not counted twice. */
  identify(id: string): void;
  /** The bytes the request's entry will hold, once known: they count, as the entry would, until it is released. */
  holds(bytes: number): void;
  /** Stops counting the request (idempotent), once its entry is written or it failed. */
  release(): void;
}

/** A request this instance counts against a user's share: a preview by hash, a project by id once known. */
interface InFlight {
  kind: HoldingKind;
  key: string | undefined;
  bytes: number;
  /** When it was released (seq), null while it runs. */
  releasedAt: number | null;
  /** Names its entry under requests/, which other instances count. */
  nonce: string;
  /** That entry's key, once written, until the request is released. */
  entry: string | undefined;
  /** Writes and deletes of its entries under way: the request is remembered until they end, so its entry is never taken for another instance's. */
  writing: number;
  /** Writes begun, and the number of the one whose entry is `entry`: an older write that ends later removes its own. */
  writes: number;
  installed: number;
  /** Entries whose delete failed, tried again at the next renewal and at the release. */
  leftovers: string[];
  renewal: ReturnType<typeof setInterval> | undefined;
}

/** A request running on some instance, as its entry says. */
interface Running {
  of: HoldingKind;
  /** The preview's hash or the project's id, once known. */
  subject: string | null;
  nonce: string;
  bytes: number;
}

interface Listed {
  /** The listing's place in the order of listings and releases. */
  start: number;
  previews: Map<string, number>;
  projects: Map<string, number>;
  /** By nonce: a renewal may briefly leave two entries of one request. */
  requests: Map<string, Running>;
}

/**
 * How long a request's entry counts unless renewed, and how often a running request
 * renews it: the entries of an instance that died stop counting within this time.
 */
export const REQUEST_ENTRY_MS = 15 * 60 * 1000;
const REQUEST_RENEW_MS = 5 * 60 * 1000;
const SHA256 = /^[0-9a-f]{64}$/;

/** A refusal looks for orphan entries of a user at most this often (each look is a HEAD per project). */
export const ORPHAN_RECHECK_MS = 5 * 60 * 1000;
/** Users whose last look is remembered; past this the memory starts over (a look more, not a leak). */
const MAX_ORPHAN_USERS = 10_000;

/** Request entries' timing, injectable for tests. */
export interface RequestTiming {
  entryMs: number;
  renewMs: number;
}

/** Which limit a refusal is about: only a projects or bytes refusal can be eased by dropping project entries. */
class ShareRefusal extends QuotaExceededError {
  constructor(readonly limit: 'previews' | 'projects' | 'bytes', message: string) {
    super(message);
  }
}

/** One uploader of a stored preview, until their own upload expires. */
export interface StoredPreview { user: string; hash: string; bytes: number; expiresAt: number }
export interface StoredProject { id: string; bytes: number; owner: string }

/** Project metas looked up at once when a refusal checks for orphan entries. */
const ORPHAN_CHECKS = 8;

export function createHoldings(
  objects: ObjectStore, limits: ShareLimits, now: () => number = Date.now,
  timing: RequestTiming = { entryMs: REQUEST_ENTRY_MS, renewMs: REQUEST_RENEW_MS },
): Holdings {
  // What this instance has reserved, per user. A reservation counts from its check until
  // it is released, and after that for every listing that began before the release (that
  // listing may predate the entry the request wrote). `seq` orders listings and releases.
  const inFlight = new Map<string, Set<InFlight>>();
  const listingsRunning = new Map<number, number>(); // start seq → how many
  let seq = 0;

  /**
   * The user's entries in the store: bytes per unexpired preview (by hash) and per project
   * (by id), and when the listing began. It counts as running until `counted` (after its
   * usage is made), so the releases it may have missed are kept for it.
   */
  async function listed(user: string): Promise<Listed> {
    const start = ++seq;
    listingsRunning.set(start, (listingsRunning.get(start) ?? 0) + 1);
    try {
      const previews = new Map<string, number>();
      const projects = new Map<string, number>();
      const requests = new Map<string, Running>();
      const time = now();
      for await (const key of listKeys(objects, holdingKeys.user(user))) {
        const holding = parseHoldingKey(key);
        if (holding?.kind === 'project') projects.set(holding.id, Math.max(projects.get(holding.id) ?? 0, holding.bytes));
        else if (holding?.kind === 'preview' && holding.expiresAt > time) previews.set(holding.hash, Math.max(previews.get(holding.hash) ?? 0, holding.bytes));
        else if (holding?.kind === 'request' && holding.expiresAt > time) {
          // Two entries of one request (a renewal or a naming under way, or a delete that
          // failed) are one: the larger bytes, and the project or preview either names.
          const seen = requests.get(holding.nonce);
          requests.set(holding.nonce, seen === undefined ? holding : {
            of: holding.of, nonce: holding.nonce, bytes: Math.max(seen.bytes, holding.bytes), subject: seen.subject ?? holding.subject,
          });
        }
      }
      return { start, previews, projects, requests };
    } catch (error) {
      counted(start);
      throw error;
    }
  }

  /** The listing begun at `start` is done with. */
  function counted(start: number): void {
    const left = listingsRunning.get(start)! - 1;
    if (left === 0) listingsRunning.delete(start); else listingsRunning.set(start, left);
    forgetReleased();
  }

  /** Drops released reservations that no running listing can have missed. */
  function forgetReleased(): void {
    let oldest = Infinity;
    for (const start of listingsRunning.keys()) oldest = Math.min(oldest, start);
    for (const [user, set] of inFlight) {
      for (const item of set) if (item.releasedAt !== null && item.releasedAt < oldest && item.writing === 0) set.delete(item);
      if (set.size === 0) inFlight.delete(user);
    }
  }

  /** Usage from a listing of the user's entries and what this instance has in flight that the listing may not show. */
  function usageOf(user: string, { start, previews, projects, requests }: Listed): UserUsage {
    const pendingPreviews = new Map<string, number>();
    let pendingProjects = 0;
    let pendingProjectBytes = 0;
    const local = new Set<string>();
    for (const item of inFlight.get(user) ?? []) {
      local.add(item.nonce);
      if (item.releasedAt !== null && item.releasedAt < start) continue; // its entry was written before the listing began
      if (item.kind === 'project') {
        if (item.key === undefined || !projects.has(item.key)) { pendingProjects++; pendingProjectBytes += item.bytes; }
      } else if (!previews.has(item.key!)) {
        pendingPreviews.set(item.key!, Math.max(pendingPreviews.get(item.key!) ?? 0, item.bytes));
      }
    }
    // Other instances' requests, as their entries say (this instance counts its own above).
    for (const request of requests.values()) {
      if (local.has(request.nonce)) continue;
      if (request.of === 'project') {
        // A create whose project's own entry is listed counts by that entry.
        if (request.subject === null || !projects.has(request.subject)) { pendingProjects++; pendingProjectBytes += request.bytes; }
        continue;
      }
      const key = request.subject ?? `running:${request.nonce}`;
      if (!previews.has(key)) pendingPreviews.set(key, Math.max(pendingPreviews.get(key) ?? 0, request.bytes));
    }
    let bytes = 0;
    for (const size of previews.values()) bytes += size;
    for (const size of projects.values()) bytes += size;
    for (const size of pendingPreviews.values()) bytes += size;
    bytes += pendingProjectBytes;
    return {
      bytes,
      previews: previews.size + pendingPreviews.size,
      projects: projects.size + pendingProjects,
      holds: (kind, key) => (kind === 'preview' ? previews.has(key) || pendingPreviews.has(key) : projects.has(key)),
    };
  }

  async function usage(user: string): Promise<UserUsage> {
    const entries = await listed(user);
    try {
      return usageOf(user, entries);
    } finally {
      counted(entries.start);
    }
  }

  function refuseBytes(held: number, bytes: number): void {
    if (held + bytes > limits.userMaxBytes) {
      throw new ShareRefusal('bytes', `your previews and projects would take more than ${limits.userMaxBytes} bytes (USER_MAX_BYTES); delete projects or let previews expire`);
    }
  }

  async function reserve(user: string, kind: HoldingKind, bytes: number, key?: string): Promise<Reservation> {
    const entries = await listed(user);
    let item: InFlight;
    try {
      item = admit(user, entries, kind, bytes, key);
    } catch (error) {
      // A refusal is the moment to drop entries of projects that are gone, then check once more.
      if (!(await easedByOrphans(user, error, entries.projects.keys()))) throw error;
      item = admit(user, await listed(user), kind, bytes, key);
    }
    const release = (): void => {
      if (item.releasedAt !== null) return;
      item.releasedAt = ++seq;
      clearInterval(item.renewal);
      if (item.entry !== undefined) void deleteEntry(item, item.entry);
      item.entry = undefined;
      for (const leftover of item.leftovers.splice(0)) void deleteEntry(item, leftover);
      forgetReleased();
    };
    // Other instances count the request from its entry on: the window in which two can both
    // pass a check for the last place is this one write, not the whole upload or create.
    try {
      await writeEntry(user, item);
    } catch (error) {
      release();
      throw error;
    }
    item.renewal = setInterval(() => { void writeEntry(user, item).catch(() => undefined); }, timing.renewMs);
    item.renewal.unref();
    return {
      identify(id: string) {
        if (item.kind !== 'project' || item.key === id) return;
        item.key = id;
        // The entry names the project from now on, so no instance counts it beside the project's own entry.
        void writeEntry(user, item).catch(() => undefined);
      },
      holds(bytes: number) { item.bytes = bytes; },
      release,
    };
  }

  /**
   * Deletes an entry of a request. One that fails is tried again at the next renewal or
   * at the release (after that it expires; listings count it as one with the request's
   * other entries, so a finished request's is not counted twice meanwhile).
   */
  async function deleteEntry(item: InFlight, entry: string): Promise<void> {
    item.writing++;
    try {
      await objects.delete(entry);
    } catch {
      if (item.releasedAt === null) item.leftovers.push(entry);
    } finally {
      item.writing--;
      forgetReleased();
    }
  }

  /** Writes (or renews) the entry of a running request, then deletes the one it replaces. */
  async function writeEntry(user: string, item: InFlight): Promise<void> {
    for (const leftover of item.leftovers.splice(0)) await deleteEntry(item, leftover);
    const subject = item.key !== undefined && (item.kind === 'project' || SHA256.test(item.key)) ? item.key : null;
    const entry = holdingKeys.request(user, item.kind, subject, item.nonce, now() + timing.entryMs, item.bytes);
    const number = ++item.writes;
    item.writing++;
    try {
      await objects.put(entry, '');
    } finally {
      item.writing--;
    }
    // Released meanwhile, or a later write (a renewal, a naming) already stands: this entry goes.
    if (item.releasedAt !== null || number < item.installed) {
      if (entry !== item.entry) await deleteEntry(item, entry);
      return;
    }
    const previous = item.entry;
    item.entry = entry;
    item.installed = number;
    if (previous !== undefined && previous !== entry) await deleteEntry(item, previous);
  }

  /**
   * Checks the request against the listing and counts it, in one step: nothing awaits
   * between the two, so a concurrent request's check sees this one. Throws
   * QuotaExceededError when it does not fit.
   */
  function admit(user: string, entries: Listed, kind: HoldingKind, bytes: number, key?: string): InFlight {
    try {
      refuse(usageOf(user, entries), kind, bytes, key);
    } finally {
      counted(entries.start);
    }
    const item: InFlight = {
      kind, key: kind === 'preview' ? key ?? `request:${++seq}` : key, bytes, releasedAt: null,
      nonce: randomBytes(8).toString('hex'), entry: undefined, writing: 0, writes: 0, installed: 0, leftovers: [], renewal: undefined,
    };
    let set = inFlight.get(user);
    if (!set) inFlight.set(user, (set = new Set()));
    set.add(item);
    return item;
  }

  /**
   * Deletes the user's entries of projects whose meta is gone; returns whether there were
   * any. A project's entry is written after its meta and deleted before it, so an entry
   * without one is an orphan: a late write (a retry, or a request the store took after its
   * client gave up) that landed after the project was deleted. Left, it would count for ever.
   */
  async function dropOrphans(user: string, ids: Iterable<string>): Promise<boolean> {
    lastOrphanLook.set(user, now());
    let dropped = false;
    const queue = [...ids];
    const check = async (): Promise<void> => {
      for (let id = queue.pop(); id !== undefined; id = queue.pop()) {
        if ((await objects.head(projectKeys.meta(id))) !== undefined) continue;
        await removeProject(user, id);
        dropped = true;
      }
    };
    await Promise.all(Array.from({ length: Math.min(ORPHAN_CHECKS, queue.length) }, check));
    return dropped;
  }

  /** When a user's entries were last looked over for orphans. */
  const lastOrphanLook = new Map<string, number>();

  /** Whether the user's share may be looked over for orphans now (not more often than ORPHAN_RECHECK_MS). */
  function mayLookForOrphans(user: string): boolean {
    const last = lastOrphanLook.get(user);
    if (last !== undefined && now() - last < ORPHAN_RECHECK_MS) return false;
    if (lastOrphanLook.size >= MAX_ORPHAN_USERS) lastOrphanLook.clear();
    return true;
  }

  /** After a refusal: whether dropping orphan entries among `ids` eased it (a store error here leaves the refusal as it was). */
  async function easedByOrphans(user: string, error: unknown, ids: Iterable<string>): Promise<boolean> {
    if (!(error instanceof ShareRefusal) || error.limit === 'previews') return false;
    return lookForOrphans(user, ids).catch(() => false);
  }

  /**
   * Drops the user's orphan entries among `ids` (all of the user's project entries when
   * not given), unless they were looked over within ORPHAN_RECHECK_MS; a look the store
   * cuts short does not count against the next.
   */
  async function lookForOrphans(user: string, ids?: Iterable<string>): Promise<boolean> {
    if (!mayLookForOrphans(user)) return false;
    try {
      if (ids === undefined) {
        const entries = await listed(user);
        counted(entries.start);
        ids = entries.projects.keys();
      }
      return await dropOrphans(user, ids);
    } catch (error) {
      lastOrphanLook.delete(user);
      throw error;
    }
  }

  async function checkBytes(user: string, bytes: number): Promise<void> {
    const entries = await listed(user);
    try {
      refuseBytes(usageOf(user, entries).bytes, bytes);
    } catch (error) {
      if (!(await easedByOrphans(user, error, entries.projects.keys()))) throw error;
      refuseBytes((await usage(user)).bytes, bytes);
    } finally {
      counted(entries.start);
    }
  }

  /** Throws QuotaExceededError unless `held` leaves room for one more `kind` of `bytes` (one already held is free). */
  function refuse(held: UserUsage, kind: HoldingKind, bytes: number, key?: string): void {
    if (key !== undefined && held.holds(kind, key)) return;
    if (kind === 'preview' && held.previews >= limits.userMaxPreviews) {
      throw new ShareRefusal('previews', `you have ${held.previews} previews, the most one user may have (USER_MAX_PREVIEWS); each expires PREVIEW_TTL_SECONDS after its last upload or create, and then a new one fits`);
    }
    if (kind === 'project' && held.projects >= limits.userMaxProjects) {
      throw new ShareRefusal('projects', `you have ${held.projects} projects, the most one user may keep (USER_MAX_PROJECTS); delete some first`);
    }
    refuseBytes(held.bytes, bytes);
  }

  /** One entry per user and preview: the new one is written, then those it supersedes go (one listing of that preview's entries). */
  async function addPreview(user: string, hash: string, bytes: number, expiresAt: number): Promise<void> {
    const key = holdingKeys.preview(user, hash, expiresAt, bytes);
    await objects.put(key, '');
    for await (const other of listKeys(objects, holdingKeys.previewEntries(user, hash))) {
      const holding = parseHoldingKey(other);
      if (other !== key && holding?.kind === 'preview' && holding.expiresAt <= expiresAt) await objects.delete(other);
    }
  }

  async function removeProject(user: string, id: string): Promise<void> {
    for await (const key of listKeys(objects, holdingKeys.projectEntries(user, id))) await objects.delete(key);
  }

  async function sweep(): Promise<number> {
    const time = now();
    let removed = 0;
    for await (const key of listKeys(objects, holdingKeys.prefix)) {
      const holding = parseHoldingKey(key);
      if ((holding?.kind !== 'preview' && holding?.kind !== 'request') || holding.expiresAt > time) continue;
      await objects.delete(key);
      removed++;
    }
    return removed;
  }

  async function indexOnce(stored: () => Promise<{ previews: StoredPreview[]; projects: StoredProject[] }>): Promise<boolean> {
    if ((await objects.head(holdingKeys.indexed)) !== undefined) return false;
    const { previews, projects } = await stored();
    for (const preview of previews) await objects.put(holdingKeys.preview(preview.user, preview.hash, preview.expiresAt, preview.bytes), '');
    for (const project of projects) await objects.put(holdingKeys.project(project.owner, project.id, project.bytes), '');
    await objects.put(holdingKeys.indexed, '');
    return true;
  }

  return {
    usage,
    reserve,
    checkBytes,
    dropOrphans: (user) => lookForOrphans(user),
    room: async (user) => Math.max(0, limits.userMaxBytes - (await usage(user)).bytes),
    addPreview,
    addProject: async (user, id, bytes) => { await objects.put(holdingKeys.project(user, id, bytes), ''); },
    removeProject,
    sweep,
    indexOnce,
  };
}
