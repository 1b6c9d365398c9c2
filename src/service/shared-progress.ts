/**
 * Create progress for a fleet: a poll may land on any instance (the gateway routes
 * without stickiness), so the instance running a create publishes each change of its
 * board (progress.ts) as one small object, `progress/<user>/<create id>.json`, and an
 * instance asked about a create it does not run reads that object.
 *
 * Publishing never slows or fails the create: at most one write per create is in
 * flight, the latest state is written after it, and a store error is only reported
 * (the next change writes again). A stored entry is shown while it is fresh: a
 * finished create's for `keepFinishedMs`, a running one's while it was written within
 * `staleRunningMs` (a create reports every asset that settles and every phase, so
 * silence that long means the instance running it is gone). The sweep, under the
 * fleet's sweep lease, deletes entries older than both.
 */
import { isStoreUnavailable, listAll, progressKeys, StoreError, type ObjectStore } from '../store/backends/index.js';
import { CREATE_ID, PHASE_ORDER, createProgressBoard, type CreatePhase, type CreateProgress, type CreateTracker, type ProgressBoard } from './progress.js';

export interface SharedProgress {
  /** As ProgressBoard.begin; the create's changes are published to the store. */
  begin(user: string, id: string): CreateTracker | null;
  /** This instance's entry, else the store's while it is fresh; undefined for unknown, stale or someone else's. */
  get(user: string, id: string): Promise<CreateProgress | undefined>;
  /** Deletes stored entries no one can see any more; returns how many. */
  sweep(): Promise<number>;
}

export interface SharedProgressOptions {
  board?: ProgressBoard;
  keepFinishedMs?: number;
  staleRunningMs?: number;
  now?: () => number;
  /** A publish that failed (the store is down): reported, never thrown. */
  onError?: (error: unknown) => void;
}

/** A stored entry is a few hundred bytes; anything larger is not one of ours. */
const MAX_ENTRY_BYTES = 4096;

export function createSharedProgress(objects: ObjectStore, options: SharedProgressOptions = {}): SharedProgress {
  const board = options.board ?? createProgressBoard();
  const keepFinishedMs = options.keepFinishedMs ?? 10 * 60 * 1000;
  const staleRunningMs = options.staleRunningMs ?? 10 * 60 * 1000;
  const now = options.now ?? Date.now;

  function begin(user: string, id: string): CreateTracker | null {
    const tracker = board.begin(user, id);
    if (tracker === null) return null;
    const key = progressKeys.create(user, id);
    let writing = false;
    let again = false;
    const publish = (): void => {
      if (writing) { again = true; return; }
      const progress = board.get(user, id);
      if (progress === undefined) return; // evicted from this instance's board: nothing to tell
      writing = true;
      objects.put(key, JSON.stringify({ progress, written_at: now() }))
        .catch((error: unknown) => options.onError?.(error))
        .finally(() => {
          writing = false;
          if (again) { again = false; publish(); }
        });
    };
    publish();
    return {
      assets(done, total, failed) { tracker.assets(done, total, failed); publish(); },
      phase(phase) { tracker.phase(phase); publish(); },
      done(projectId) { tracker.done(projectId); publish(); },
      failed(code, message) { tracker.failed(code, message); publish(); },
    };
  }

  async function get(user: string, id: string): Promise<CreateProgress | undefined> {
    const local = board.get(user, id);
    if (local !== undefined || !CREATE_ID.test(id)) return local;
    const stored = await objects.get(progressKeys.create(user, id), { maxBytes: MAX_ENTRY_BYTES }).catch((error: unknown) => {
      // Larger than an entry can be: not ours, nothing to show. A store that is down answers 503.
      if (error instanceof StoreError && !isStoreUnavailable(error)) return undefined;
      throw error;
    });
    if (stored === undefined) return undefined;
    const entry = parseEntry(stored.body.toString('utf8'), id);
    if (entry === undefined) return undefined;
    const finished = entry.progress.phase === 'done' || entry.progress.phase === 'failed';
    return now() - entry.writtenAt <= (finished ? keepFinishedMs : staleRunningMs) ? entry.progress : undefined;
  }

  async function sweep(): Promise<number> {
    const cutoff = now() - Math.max(keepFinishedMs, staleRunningMs);
    let removed = 0;
    for await (const info of listAll(objects, progressKeys.prefix)) {
      if (info.lastModified >= cutoff) continue;
      await objects.delete(info.key);
      removed++;
    }
    return removed;
  }

  return { begin, get, sweep };
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
