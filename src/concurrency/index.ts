/**
 * The service's concurrency primitives, in one place: a fair semaphore (download
 * slots, worker admission), a keyed lock (updates of one preview) and single-flight
 * runs (one analysis per file hash, one download per asset id), and a fan-out of one
 * abort signal to many waiters.
 */
export { createSemaphore, type Release, type Semaphore, type SemaphoreOptions } from './semaphore.js';
export { createKeyedLock, type KeyedLock } from './keyed-lock.js';
export { createSingleFlight, type SingleFlight } from './single-flight.js';
export { fanOutAbort, type AbortFanOut, type AbortWatch } from './fan-out.js';
