/**
 * Create progress for a fleet: a poll may land on any instance (the gateway routes
 * without stickiness), so the instance running a create publishes its progress as one
 * small object, `progress/<user>/<create id>.json`, and an instance asked about a
 * create it does not run reads that object.
 *
 * Publishing never slows or fails the create. Per key one write is in flight at a
 * time and the latest state is written after it (a reused id's new create waits for
 * the old one's last write, whose later changes are dropped); a running create is
 * written at most once per PUBLISH_INTERVAL_MS and at least every third of
 * `staleRunningMs` (a build may report nothing for a while), a finished one at once
 * and, when the store fails, again after FINAL_RETRY_MS. Other failures are only
 * reported: the next change writes again.
 *
 * A stored entry is shown while it is fresh: a finished create's for
 * `keepFinishedMs`, a running one's while it was written within `staleRunningMs`
 * (longer means the instance running it is gone). The sweep, under the fleet's sweep
 * lease, deletes entries older than both. Across instances a count may be behind by
 * what the last interval changed.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { listAll, ObjectTooLargeError, progressKeys, type ObjectStore } from '../store/backends/index.js';
import { CREATE_ID, PHASE_ORDER, createProgressBoard, type CreatePhase, type CreateProgress, type CreateTracker, type ProgressBoard } from './progress.js';

export interface SharedProgress {
  /**
   * As ProgressBoard.begin (null while a create of that user and id runs), also across
   * the fleet: a fresh stored entry of a running create is one another instance runs.
   * The create's progress is published to the store.
   */
  begin(user: string, id: string): Promise<CreateTracker | null>;
  /** This instance's entry, else the store's while it is fresh; undefined for unknown, stale or someone else's. */
  get(user: string, id: string): Promise<CreateProgress | undefined>;
  /** Deletes stored entries no one can see any more; returns how many. */
  sweep(): Promise<number>;
  /** Writes what is not written yet and waits (at most `timeoutMs`) for the writes in flight; publishes nothing after. */
  close(timeoutMs?: number): Promise<void>;
}

export interface SharedProgressOptions {
  board?: ProgressBoard;
  keepFinishedMs?: number;
  staleRunningMs?: number;
  now?: () => number;
  /** How often a running create's state may be written (PUBLISH_INTERVAL_MS). */
  publishIntervalMs?: number;
  /** Finished creates kept stored per user by this instance (MAX_STORED_FINISHED_PER_USER). */
  maxStoredFinishedPerUser?: number;
  /** A publish that failed (the store is down): reported, never thrown. */
  onError?: (error: unknown) => void;
}

/** A stored entry is a few hundred bytes; anything larger is not one of ours. */
const MAX_ENTRY_BYTES = 4096;
/** A running create's state is written at most this often. */
export const PUBLISH_INTERVAL_MS = 1000;
/**
 * Finished creates this instance keeps stored per user: past it, the oldest one's entry
 * is deleted. Without a bound, creates refused at once (an unknown preview) each left an
 * object until the sweep, as fast as a client could send them.
 */
export const MAX_STORED_FINISHED_PER_USER = 32;
/** Users whose finished creates are tracked for that bound. */
const MAX_TRACKED_USERS = 1_000;
/** Waits before each new try of a finished create's state that the store refused. */
const FINAL_RETRY_MS = [250, 1000, 4000];

/** One create's publishing: the key it writes, its tracker, and what is pending. */
interface Slot {
  readonly key: string;
  readonly user: string;
  readonly id: string;
  readonly tracker: CreateTracker;
  /** A change not written yet. */
  dirty: boolean;
  writing: Promise<void> | null;
  lastWriteAt: number;
  timer: NodeJS.Timeout | null;
  heartbeat: NodeJS.Timeout | null;
  retries: number;
}

const isFinished = (progress: CreateProgress): boolean => progress.phase === 'done' || progress.phase === 'failed';

export function createSharedProgress(objects: ObjectStore, options: SharedProgressOptions = {}): SharedProgress {
  const board = options.board ?? createProgressBoard();
  const keepFinishedMs = options.keepFinishedMs ?? 10 * 60 * 1000;
  const staleRunningMs = options.staleRunningMs ?? 10 * 60 * 1000;
  const now = options.now ?? Date.now;
  const publishIntervalMs = options.publishIntervalMs ?? PUBLISH_INTERVAL_MS;
  /** The slot that owns each key: the latest create of that user and id on this instance. */
  const slots = new Map<string, Slot>();
  /** Finished creates this instance stored, per user, oldest first, with the time each entry says it was written. */
  const storedFinished = new Map<string, { id: string; writtenAt: number }[]>();
  const maxStoredFinished = options.maxStoredFinishedPerUser ?? MAX_STORED_FINISHED_PER_USER;
  let closed = false;

  /**
   * Records a finished create's stored entry; past the bound, deletes the user's oldest
   * one, but only while it is still what this instance wrote: a create of that id may
   * have run since, here or on another instance, and its entry is not this one's to drop.
   */
  function keepFinished(slot: Slot): void {
    const kept = (storedFinished.get(slot.user) ?? []).filter((entry) => entry.id !== slot.id);
    kept.push({ id: slot.id, writtenAt: slot.lastWriteAt });
    while (kept.length > maxStoredFinished) {
      const oldest = kept.shift()!;
      dropIfOurs(slot.user, oldest).catch((error: unknown) => options.onError?.(error));
    }
    // Most recent user last; past MAX_TRACKED_USERS the longest idle is forgotten (the sweep deletes its entries in time).
    storedFinished.delete(slot.user);
    storedFinished.set(slot.user, kept);
    if (storedFinished.size > MAX_TRACKED_USERS) storedFinished.delete(storedFinished.keys().next().value!);
  }

  async function dropIfOurs(user: string, { id, writtenAt }: { id: string; writtenAt: number }): Promise<void> {
    const key = progressKeys.create(user, id);
    if (slots.has(key)) return; // running again here
    const stored = await objects.get(key, { maxBytes: MAX_ENTRY_BYTES }).catch(() => undefined);
    const entry = stored === undefined ? undefined : parseEntry(stored.body.toString('utf8'), id);
    if (entry !== undefined && isFinished(entry.progress) && entry.writtenAt === writtenAt && !slots.has(key)) await objects.delete(key);
  }

  async function begin(user: string, id: string): Promise<CreateTracker | null> {
    const key = progressKeys.create(user, id);
    // Another instance may be running a create of this id: its entry is fresh and not finished.
    // (This instance's own creates are the board's to judge.) A store that cannot answer does not stop the create.
    if (!slots.has(key)) {
      const stored = await readStored(user, id).catch(() => undefined);
      if (stored !== undefined && !isFinished(stored)) return null;
    }
    const tracker = board.begin(user, id);
    if (tracker === null) return null;
    const slot: Slot = { key, user, id, tracker, dirty: true, writing: null, lastWriteAt: -Infinity, timer: null, heartbeat: null, retries: 0 };
    const replaced = slots.get(key);
    slots.set(key, slot);
    if (replaced) {
      stopTimers(replaced);
      // The old create's last write lands first; this one's first write follows it.
      if (replaced.writing) slot.writing = replaced.writing.finally(() => { slot.writing = null; schedule(slot); });
    }
    slot.heartbeat = setInterval(() => { slot.dirty = true; schedule(slot); }, Math.max(1, Math.floor(staleRunningMs / 3))).unref();
    schedule(slot);
    const changed = (): void => { slot.dirty = true; schedule(slot); };
    return {
      assets(done, total, failed) { tracker.assets(done, total, failed); changed(); },
      phase(phase) { tracker.phase(phase); changed(); },
      done(projectId) { tracker.done(projectId); changed(); },
      failed(code, message) { tracker.failed(code, message); changed(); },
      snapshot: () => tracker.snapshot(),
    };
  }

  function stopTimers(slot: Slot): void {
    if (slot.timer) clearTimeout(slot.timer);
    if (slot.heartbeat) clearInterval(slot.heartbeat);
    slot.timer = slot.heartbeat = null;
  }

  /** Writes the slot's state now, or once the interval allows; nothing while a write of its key is in flight. */
  function schedule(slot: Slot): void {
    if (closed || slots.get(slot.key) !== slot || slot.writing || !slot.dirty) return;
    const finished = isFinished(slot.tracker.snapshot());
    if (finished && slot.heartbeat) { clearInterval(slot.heartbeat); slot.heartbeat = null; }
    const wait = finished ? 0 : slot.lastWriteAt + publishIntervalMs - now();
    if (wait > 0) {
      slot.timer ??= setTimeout(() => { slot.timer = null; schedule(slot); }, wait).unref();
      return;
    }
    if (slot.timer) { clearTimeout(slot.timer); slot.timer = null; }
    write(slot);
  }

  function write(slot: Slot): void {
    const progress = slot.tracker.snapshot();
    slot.dirty = false;
    slot.lastWriteAt = now();
    slot.writing = objects.put(slot.key, JSON.stringify({ progress, written_at: slot.lastWriteAt })).then(
      () => { slot.retries = 0; },
      (error: unknown) => {
        options.onError?.(error);
        // A finished create has no next change to write it again: it is tried again here.
        if (!closed && isFinished(progress) && slot.retries < FINAL_RETRY_MS.length) {
          slot.dirty = true;
          slot.timer = setTimeout(() => { slot.timer = null; schedule(slot); }, FINAL_RETRY_MS[slot.retries++]).unref();
        }
      },
    ).finally(() => {
      slot.writing = null;
      if (slot.dirty) { if (!slot.timer) schedule(slot); return; }
      if (isFinished(progress) && slots.get(slot.key) === slot) {
        stopTimers(slot);
        slots.delete(slot.key);
        if (slot.retries === 0) keepFinished(slot);
      }
    });
  }

  async function get(user: string, id: string): Promise<CreateProgress | undefined> {
    const local = board.get(user, id);
    if (local !== undefined || !CREATE_ID.test(id)) return local;
    return readStored(user, id);
  }

  /** The stored entry of a create while it is fresh; undefined for none, stale or not one of ours. */
  async function readStored(user: string, id: string): Promise<CreateProgress | undefined> {
    const stored = await objects.get(progressKeys.create(user, id), { maxBytes: MAX_ENTRY_BYTES }).catch((error: unknown) => {
      // Larger than an entry can be: not ours, nothing to show. Other store errors (a store that is down: 503) go on.
      if (error instanceof ObjectTooLargeError) return undefined;
      throw error;
    });
    if (stored === undefined) return undefined;
    const entry = parseEntry(stored.body.toString('utf8'), id);
    if (entry === undefined) return undefined;
    return now() - entry.writtenAt <= (isFinished(entry.progress) ? keepFinishedMs : staleRunningMs) ? entry.progress : undefined;
  }

  async function sweep(): Promise<number> {
    // A running create rewrites its entry every third of staleRunningMs, so an entry this old is no running create's.
    const cutoff = now() - Math.max(keepFinishedMs, staleRunningMs);
    let removed = 0;
    for await (const info of listAll(objects, progressKeys.prefix)) {
      if (info.lastModified >= cutoff) continue;
      await objects.delete(info.key);
      removed++;
    }
    return removed;
  }

  async function close(timeoutMs = 2000): Promise<void> {
    const pending: Promise<void>[] = [];
    for (const slot of slots.values()) {
      stopTimers(slot);
      if (slot.dirty && !slot.writing) write(slot);
      if (slot.writing) pending.push(slot.writing);
    }
    closed = true;
    await Promise.race([Promise.allSettled(pending), sleep(timeoutMs, undefined, { ref: false })]);
  }

  return { begin, get, sweep, close };
}

const count = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;
const text = (value: unknown): value is string => typeof value === 'string' && value.length <= 1024;

/** A stored entry, checked field by field (another writer, or a damaged object, gives undefined). */
function parseEntry(json: string, id: string): { progress: CreateProgress; writtenAt: number } | undefined {
  let entry: unknown;
  try {
    entry = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (typeof entry !== 'object' || entry === null) return undefined;
  const { progress: p, written_at: writtenAt } = entry as { progress?: Record<string, unknown>; written_at?: unknown };
  if (typeof p !== 'object' || p === null || !count(writtenAt)) return undefined;
  if (p.create_id !== id || !text(p.phase) || !Object.hasOwn(PHASE_ORDER, p.phase)) return undefined;
  if (!count(p.assets_done) || !count(p.assets_total) || !count(p.assets_failed) || !text(p.started_at)) return undefined;
  const progress: CreateProgress = {
    create_id: id, phase: p.phase as CreatePhase, assets_done: p.assets_done, assets_total: p.assets_total, assets_failed: p.assets_failed, started_at: p.started_at,
  };
  if (p.project_id !== undefined) {
    if (!text(p.project_id)) return undefined;
    progress.project_id = p.project_id;
  }
  if (p.error !== undefined) {
    const error = p.error as Record<string, unknown> | null;
    if (typeof error !== 'object' || error === null || !text(error.code) || !text(error.message)) return undefined;
    progress.error = { code: error.code, message: error.message };
  }
  return { progress, writtenAt };
}
