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
 * stop counting at once and the sweep deletes them. Two requests of one user on two
 * instances at the same moment may both pass a check, so a share can be exceeded by what
 * was in flight; nothing is lost either way.
 */
import { holdingKeys, listKeys, parseHoldingKey, type ObjectStore } from './backends/index.js';
import { QuotaExceededError } from './quota.js';

export interface ShareLimits {
  userMaxBytes: number;
  userMaxPreviews: number;
  userMaxProjects: number;
}

export type HoldingKind = 'preview' | 'project';

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
  /** Throws QuotaExceededError unless `user` may add one more `kind` of `bytes` (one the user already holds is free); returns the usage it checked. */
  check(user: string, kind: HoldingKind, bytes: number, key?: string): Promise<UserUsage>;
  /** Throws QuotaExceededError unless `user` may add `bytes` (counts are checked by `check`, once the entry is known). */
  checkBytes(user: string, bytes: number): Promise<void>;
  /** Bytes `user` may still add. */
  room(user: string): Promise<number>;
  addPreview(user: string, hash: string, bytes: number, expiresAt: number): Promise<void>;
  addProject(user: string, id: string, bytes: number): Promise<void>;
  removeProject(user: string, id: string): Promise<void>;
  /** Deletes the entries of expired previews; returns how many. */
  sweep(): Promise<number>;
  /**
   * Once per store: entries for what was stored before holdings were kept (or by an
   * instance that did not keep them), then a marker so no later start lists it all again.
   */
  indexOnce(stored: () => Promise<{ previews: StoredPreview[]; projects: StoredProject[] }>): Promise<boolean>;
}

/** One uploader of a stored preview, until their own upload expires. */
export interface StoredPreview { user: string; hash: string; bytes: number; expiresAt: number }
export interface StoredProject { id: string; bytes: number; owner: string }

export function createHoldings(objects: ObjectStore, limits: ShareLimits, now: () => number = Date.now): Holdings {
  async function usage(user: string): Promise<UserUsage> {
    const previews = new Map<string, number>();
    const projects = new Map<string, number>();
    const time = now();
    for await (const key of listKeys(objects, holdingKeys.user(user))) {
      const holding = parseHoldingKey(key);
      if (holding === undefined) continue;
      if (holding.kind === 'project') projects.set(holding.id, Math.max(projects.get(holding.id) ?? 0, holding.bytes));
      else if (holding.expiresAt > time) previews.set(holding.hash, Math.max(previews.get(holding.hash) ?? 0, holding.bytes));
    }
    let bytes = 0;
    for (const size of previews.values()) bytes += size;
    for (const size of projects.values()) bytes += size;
    return {
      bytes,
      previews: previews.size,
      projects: projects.size,
      holds: (kind, key) => (kind === 'preview' ? previews.has(key) : projects.has(key)),
    };
  }

  function refuseBytes(held: number, bytes: number): void {
    if (held + bytes > limits.userMaxBytes) {
      throw new QuotaExceededError(`your previews and projects would take more than ${limits.userMaxBytes} bytes (USER_MAX_BYTES); delete projects or let previews expire`);
    }
  }

  async function check(user: string, kind: HoldingKind, bytes: number, key?: string): Promise<UserUsage> {
    const held = await usage(user);
    if (key !== undefined && held.holds(kind, key)) return held;
    if (kind === 'preview' && held.previews >= limits.userMaxPreviews) {
      throw new QuotaExceededError(`you have ${held.previews} previews, the most one user may have (USER_MAX_PREVIEWS); they expire, or create from them`);
    }
    if (kind === 'project' && held.projects >= limits.userMaxProjects) {
      throw new QuotaExceededError(`you have ${held.projects} projects, the most one user may keep (USER_MAX_PROJECTS); delete some first`);
    }
    refuseBytes(held.bytes, bytes);
    return held;
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
      if (holding?.kind !== 'preview' || holding.expiresAt > time) continue;
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
    check,
    checkBytes: async (user, bytes) => refuseBytes((await usage(user)).bytes, bytes),
    room: async (user) => Math.max(0, limits.userMaxBytes - (await usage(user)).bytes),
    addPreview,
    addProject: async (user, id, bytes) => { await objects.put(holdingKeys.project(user, id, bytes), ''); },
    removeProject,
    sweep,
    indexOnce,
  };
}
