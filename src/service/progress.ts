/**
 * Progress of creates, for the people waiting on them: a client that wants to show a
 * progress bar names its create with an id of its own choosing (the create route reads
 * it from `X-Create-Id`), then polls that id while the create runs. An entry belongs to
 * the user who started the create; anyone else asking learns nothing (the same answer
 * as for an id never used). Entries live in this process's memory: finished ones are
 * kept a few minutes, and both their number per user and in all are bounded. The
 * service shares them with the other instances through the store (shared-progress.ts).
 */

export type CreatePhase =
  /** Accepted; waiting for the preview and the user's quota checks. */
  | 'starting'
  /** Downloading the map's assets: `assets_done` of `assets_total` settled. */
  | 'assets'
  /** The workers convert the downloaded meshes and union models to glTF (for scene.glb). */
  | 'converting'
  /** A worker builds the project document. */
  | 'building'
  /** The document is moved into the project store. */
  | 'storing'
  | 'done'
  | 'failed';

export interface CreateProgress {
  create_id: string;
  phase: CreatePhase;
  /** Assets settled (downloaded, found in the store, or failed); never decreases. */
  assets_done: number;
  assets_total: number;
  /** Assets of those that failed so far. */
  assets_failed: number;
  started_at: string;
  /** Once `done`. */
  project_id?: string;
  /** Once `failed`: the error the create answered with. */
  error?: { code: string; message: string };
}

/** What the project service reports while it works. */
export interface CreateProgressSink {
  assets(done: number, total: number, failed: number): void;
  phase(phase: 'converting' | 'building' | 'storing'): void;
}

export interface CreateTracker extends CreateProgressSink {
  done(projectId: string): void;
  failed(code: string, message: string): void;
  /** This create's progress now (a copy), whether or not the board still holds it. */
  snapshot(): CreateProgress;
}

export interface ProgressBoard {
  /**
   * Starts tracking `id` for `user`. Null when that user has a create of this id still
   * running (ids are the client's: two tabs could pick the same one).
   */
  begin(user: string, id: string): CreateTracker | null;
  /** The progress of `user`'s create `id`, or undefined (unknown, expired, or someone else's). */
  get(user: string, id: string): CreateProgress | undefined;
  size(): number;
}

/** A create id: what a client may choose (a UUID, or 8 to 64 letters, digits, `-` and `_`). */
export const CREATE_ID = /^[A-Za-z0-9_-]{8,64}$/;

export interface ProgressBoardOptions {
  /** How long a finished create's progress can still be read. */
  keepFinishedMs?: number;
  /** Entries one user may have at once (running and finished). */
  maxPerUser?: number;
  /** Entries in all. */
  maxEntries?: number;
  now?: () => number;
}

interface Entry {
  user: string;
  progress: CreateProgress;
  finishedAt: number | null;
}

export const PHASE_ORDER: Readonly<Record<CreatePhase, number>> = { starting: 0, assets: 1, converting: 2, building: 3, storing: 4, done: 5, failed: 5 };

function copy(progress: CreateProgress): CreateProgress {
  return { ...progress, ...(progress.error ? { error: { ...progress.error } } : {}) };
}

export function createProgressBoard(options: ProgressBoardOptions = {}): ProgressBoard {
  const keepFinishedMs = options.keepFinishedMs ?? 10 * 60 * 1000;
  const maxPerUser = options.maxPerUser ?? 32;
  const maxEntries = options.maxEntries ?? 10_000;
  const now = options.now ?? Date.now;
  // Insertion order is age order: the oldest entries come first when making room.
  const entries = new Map<string, Entry>();
  const keyOf = (user: string, id: string): string => `${user}\n${id}`;

  let expiredAt = -Infinity;
  function expire(): void {
    // Polls come several times a second; a sweep of every entry once a second is enough.
    if (now() - expiredAt < 1000) return;
    expiredAt = now();
    const cutoff = expiredAt - keepFinishedMs;
    for (const [key, entry] of entries) if (entry.finishedAt !== null && entry.finishedAt < cutoff) entries.delete(key);
  }

  /** Frees one slot among `candidates`: the oldest finished entry, else the oldest running one (it keeps running, untracked). */
  function evictOne(candidates: Iterable<[string, Entry]>): void {
    let oldestRunning: string | null = null;
    for (const [key, entry] of candidates) {
      if (entry.finishedAt !== null) {
        entries.delete(key);
        return;
      }
      oldestRunning ??= key;
    }
    if (oldestRunning !== null) entries.delete(oldestRunning);
  }

  function begin(user: string, id: string): CreateTracker | null {
    expire();
    const key = keyOf(user, id);
    const existing = entries.get(key);
    if (existing && existing.finishedAt === null) return null;
    entries.delete(key);
    const mine = () => [...entries].filter(([, entry]) => entry.user === user);
    while (mine().length >= maxPerUser) evictOne(mine());
    while (entries.size >= maxEntries) evictOne(entries);
    const progress: CreateProgress = {
      create_id: id, phase: 'starting', assets_done: 0, assets_total: 0, assets_failed: 0, started_at: new Date(now()).toISOString(),
    };
    const entry: Entry = { user, progress, finishedAt: null };
    entries.set(key, entry);

    // Reports only move forward: a late asset callback never rewinds a later phase.
    const advance = (phase: CreatePhase): boolean => {
      if (entry.finishedAt !== null || PHASE_ORDER[phase] < PHASE_ORDER[progress.phase]) return false;
      progress.phase = phase;
      return true;
    };
    return {
      assets(done, total, failed) {
        if (!advance('assets')) return;
        progress.assets_total = Math.max(progress.assets_total, total);
        progress.assets_done = Math.min(progress.assets_total, Math.max(progress.assets_done, done));
        progress.assets_failed = Math.max(progress.assets_failed, failed);
      },
      phase(phase) {
        advance(phase);
      },
      done(projectId) {
        if (!advance('done')) return;
        progress.assets_done = progress.assets_total;
        progress.project_id = projectId;
        entry.finishedAt = now();
      },
      failed(code, message) {
        if (!advance('failed')) return;
        progress.error = { code, message };
        entry.finishedAt = now();
      },
      snapshot: () => copy(progress),
    };
  }

  function get(user: string, id: string): CreateProgress | undefined {
    expire();
    const entry = entries.get(keyOf(user, id));
    return entry ? copy(entry.progress) : undefined;
  }

  return { begin, get, size: () => entries.size };
}
