/**
 * Many waiters on one abort signal, through one listener on it. Node's EventTarget
 * looks through a signal's listeners on every `addEventListener` (for a duplicate), so
 * 100,000 asset ids each listening on one create's signal took most of a minute of
 * quadratic work on the main thread, and every other request waited. A fan-out keeps its
 * listeners in a Set: adding and removing one costs the same however many there are.
 */

/** What a waiter needs of an abort signal: AbortSignal has it, and so has a fan-out. */
export interface AbortWatch {
  readonly aborted: boolean;
  readonly reason: unknown;
  throwIfAborted(): void;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

export interface AbortFanOut extends AbortWatch {
  /** Stops listening to the common signal (its waiters are done). */
  release(): void;
}

/** A watch that aborts when `common` does, with its reason; its listeners run once each. */
export function fanOutAbort(common: AbortSignal): AbortFanOut {
  const listeners = new Set<() => void>();
  const onAbort = (): void => {
    const waiting = [...listeners];
    listeners.clear();
    for (const listener of waiting) listener();
  };
  common.addEventListener('abort', onAbort, { once: true });
  return {
    get aborted() { return common.aborted; },
    get reason() { return common.reason as unknown; },
    throwIfAborted: () => common.throwIfAborted(),
    addEventListener: (_type, listener) => { if (!common.aborted) listeners.add(listener); },
    removeEventListener: (_type, listener) => { listeners.delete(listener); },
    release: () => {
      common.removeEventListener('abort', onAbort);
      listeners.clear();
    },
  };
}
