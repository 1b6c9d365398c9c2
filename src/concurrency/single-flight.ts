/**
 * One run per key at a time, however many callers ask for it: later callers join the
 * run in flight. A run gets its own AbortSignal, which aborts once every caller that
 * can give up (it passed a signal) has given up; a caller without a signal waits to
 * the end, so the run never aborts under it. A caller that gives up is rejected with
 * its signal's reason only after the run has settled when it was the last one, so
 * whatever the run holds (temp files) is gone by then.
 */
import type { AbortWatch } from './fan-out.js';

export interface SingleFlight<V> {
  run(key: string, start: (signal: AbortSignal) => Promise<V>, signal?: AbortWatch): Promise<V>;
  /** Aborts every run in flight with `reason` and waits for them to settle. */
  abortAll(reason: unknown): Promise<void>;
  /** Runs in flight. */
  readonly size: number;
  /** Whether a run of `key` is in flight (a caller may join it). */
  has(key: string): boolean;
}

interface Flight<V> {
  promise: Promise<V>;
  controller: AbortController;
  /** Callers still waiting that can give up; Infinity once one cannot. */
  waiters: number;
}

export function createSingleFlight<V>(): SingleFlight<V> {
  const flights = new Map<string, Flight<V>>();

  function run(key: string, start: (signal: AbortSignal) => Promise<V>, signal?: AbortWatch): Promise<V> {
    signal?.throwIfAborted();
    let flight = flights.get(key);
    if (flight === undefined) {
      const controller = new AbortController();
      const created: Flight<V> = { controller, waiters: 0, promise: Promise.resolve().then(() => start(controller.signal)) };
      void created.promise
        .finally(() => {
          if (flights.get(key) === created) flights.delete(key);
        })
        .catch(() => {});
      flights.set(key, created);
      flight = created;
    }
    const current = flight;
    if (signal === undefined) {
      current.waiters = Infinity;
      return current.promise;
    }
    current.waiters += 1;
    return new Promise<V>((resolve, reject) => {
      const onAbort = (): void => {
        current.waiters -= 1;
        if (current.waiters > 0) {
          reject(signal.reason); // others still want it
          return;
        }
        if (flights.get(key) === current) flights.delete(key);
        current.controller.abort(signal.reason);
        const fail = (): void => reject(signal.reason);
        current.promise.then(fail, fail);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      current.promise.then(
        (value) => {
          signal.removeEventListener('abort', onAbort);
          resolve(value);
        },
        (error: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      );
    });
  }

  async function abortAll(reason: unknown): Promise<void> {
    const pending = [...flights.values()];
    for (const flight of pending) flight.controller.abort(reason);
    await Promise.allSettled(pending.map((flight) => flight.promise));
  }

  return { run, abortAll, get size() { return flights.size; }, has: (key) => flights.has(key) };
}
