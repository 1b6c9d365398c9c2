/**
 * A counting semaphore whose waiters can give up (AbortSignal), shared fairly
 * between groups: each group (a create, say) holds at most `perGroup` slots, and a
 * freed slot goes to the next waiting group in turn (round robin), not to whoever
 * asked first. Without groups it is a plain FIFO semaphore.
 */
export type Release = () => void;

export interface Semaphore {
  /** Waits for a slot; rejects with the signal's reason if it aborts first. The release is idempotent. */
  acquire(signal?: AbortSignal, group?: unknown): Promise<Release>;
  /** A slot now, or null when none is free (for admission: refuse instead of queueing). */
  tryAcquire(group?: unknown): Release | null;
  /** Slots held now. */
  readonly active: number;
  /** Callers waiting now. */
  readonly waiting: number;
}

export interface SemaphoreOptions {
  /** Most slots one group holds at once (default: all of them). */
  perGroup?: number;
}

interface Waiter {
  grant: () => void;
}

const NO_GROUP = Symbol('no group');

export function createSemaphore(limit: number, options: SemaphoreOptions = {}): Semaphore {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`semaphore limit must be an integer >= 1, got ${limit}`);
  const perGroup = Math.max(1, Math.min(limit, options.perGroup ?? limit));
  let active = 0;
  let waitingCount = 0;
  /** Slots held per group. */
  const held = new Map<unknown, number>();
  /** Waiters per group, groups in the order they take turns (Map keeps insertion order). */
  const queues = new Map<unknown, Waiter[]>();

  const canTake = (group: unknown): boolean => active < limit && (held.get(group) ?? 0) < perGroup;

  function take(group: unknown): Release {
    active += 1;
    held.set(group, (held.get(group) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      active -= 1;
      const count = (held.get(group) ?? 1) - 1;
      if (count === 0) held.delete(group);
      else held.set(group, count);
      dispatch();
    };
  }

  /** Hands free slots to waiting groups in turn: a served group goes to the back of the line. */
  function dispatch(): void {
    let progressed = true;
    while (active < limit && queues.size > 0 && progressed) {
      progressed = false;
      for (const [group, queue] of queues) {
        if (!canTake(group)) continue;
        const waiter = queue.shift()!;
        queues.delete(group);
        if (queue.length > 0) queues.set(group, queue); // back of the line
        waitingCount -= 1;
        waiter.grant();
        progressed = true;
        break;
      }
    }
  }

  function tryAcquire(group: unknown = NO_GROUP): Release | null {
    return canTake(group) && !queues.has(group) ? take(group) : null;
  }

  function acquire(signal?: AbortSignal, group: unknown = NO_GROUP): Promise<Release> {
    signal?.throwIfAborted();
    // dispatch() runs after every change, so a free slot means every waiting group is at its cap.
    const now = tryAcquire(group);
    if (now !== null) return Promise.resolve(now);
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(take(group));
        },
      };
      const onAbort = (): void => {
        const queue = queues.get(group);
        const index = queue?.indexOf(waiter) ?? -1;
        if (queue === undefined || index === -1) return;
        queue.splice(index, 1);
        if (queue.length === 0) queues.delete(group);
        waitingCount -= 1;
        reject(signal!.reason);
      };
      const queue = queues.get(group);
      if (queue) queue.push(waiter);
      else queues.set(group, [waiter]);
      waitingCount += 1;
      signal?.addEventListener('abort', onAbort, { once: true });
      dispatch();
    });
  }

  return {
    acquire,
    tryAcquire,
    get active() { return active; },
    get waiting() { return waitingCount; },
  };
}
