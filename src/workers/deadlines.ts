/**
 * The worker tasks' deadline (TASK_TIMEOUT_MS), counted from when a worker starts a
 * task rather than from when it was queued: time in the queue is not the map's fault.
 * Shared by the pool (which watches) and the worker (which sets the flag), so it
 * imports nothing.
 */
/** What a task's flag says (written by the worker, tasks.ts): not started yet is 0. */
export const TASK_RUNNING = 1;
export const TASK_FINISHED = 2;

export interface Deadline {
  /** The task's flag, in shared memory. */
  started: Int32Array;
  /** Aborted when the task has run past the deadline: Piscina then ends its worker. */
  signal: AbortSignal;
  done(): void;
}

/**
 * Deadlines for tasks in flight. Piscina does not say when a queued task starts, so
 * each task carries a flag in shared memory that its worker sets first thing; one
 * timer, running only while tasks are in flight, notes when each flag was first seen
 * set and aborts a task once it has run for `timeoutMs` since (so a task is ended
 * between `timeoutMs` and `timeoutMs` plus two ticks after it started), unless its
 * worker has set the flag to finished: its result is already on the way.
 */
export function createDeadlines(timeoutMs: number) {
  const tick = Math.min(1000, Math.max(10, Math.floor(timeoutMs / 4)));
  const inFlight = new Set<{ started: Int32Array; controller: AbortController; seenAt: number }>();
  let timer: NodeJS.Timeout | null = null;

  const check = () => {
    const now = performance.now();
    for (const entry of inFlight) {
      const state = Atomics.load(entry.started, 0);
      if (state === TASK_FINISHED) continue;
      if (entry.seenAt < 0) {
        if (state === TASK_RUNNING) entry.seenAt = now;
      } else if (now - entry.seenAt >= timeoutMs) {
        inFlight.delete(entry);
        entry.controller.abort();
      }
    }
  };

  return {
    add(): Deadline {
      const entry = { started: new Int32Array(new SharedArrayBuffer(4)), controller: new AbortController(), seenAt: -1 };
      inFlight.add(entry);
      timer ??= setInterval(check, tick).unref();
      return {
        started: entry.started,
        signal: entry.controller.signal,
        done: () => {
          inFlight.delete(entry);
          if (inFlight.size === 0 && timer !== null) {
            clearInterval(timer);
            timer = null;
          }
        },
      };
    },
    /** Deadlines being watched, and whether the timer runs (for tests). */
    watching: () => ({ tasks: inFlight.size, ticking: timer !== null }),
    close() {
      if (timer !== null) clearInterval(timer);
      timer = null;
      inFlight.clear();
    },
  };
}
