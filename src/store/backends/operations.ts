/** Operations any object store supports, built on the interface: every page of a listing, and a read-modify-write that loses no update. */
import { StoreError, StoreUnavailableError } from './errors.js';
import type { ListOptions, ObjectInfo, ObjectStore, Reachability } from './types.js';

/** Times `probe`; a failure becomes the reachability's reason and message (as `/health` reports them). */
export async function measureReachability(probe: () => Promise<unknown>, mapError: (error: unknown) => StoreError): Promise<Reachability> {
  const started = performance.now();
  try {
    await probe();
    return { ok: true, latencyMs: performance.now() - started };
  } catch (error) {
    const mapped = mapError(error);
    return { ok: false, latencyMs: performance.now() - started, reason: mapped instanceof StoreUnavailableError ? mapped.reason : 'error', message: mapped.message };
  }
}

/** Every key under `prefix`, in key order (without the per-object facts a disk store would stat for). */
export async function* listKeys(store: ObjectStore, prefix: string): AsyncGenerator<string> {
  for await (const info of pages(store, prefix, { keysOnly: true })) yield info.key;
}

/** Every object under `prefix`, page by page, in key order. */
export function listAll(store: ObjectStore, prefix: string, pageSize?: number): AsyncGenerator<ObjectInfo> {
  return pages(store, prefix, pageSize === undefined ? {} : { limit: pageSize });
}

/**
 * A listing must move forward: each cursor is new, and no page starts with a key an earlier
 * page started with (pages hold different keys, in whatever order the store lists them). A
 * store that hands back a page or a cursor again (a broken gateway, a token it does not
 * honour) would otherwise be listed for ever, every caller (an analyze, a delete, the
 * sweeps) hanging with what it collects growing. One key is kept per page.
 */
async function* pages(store: ObjectStore, prefix: string, options: Omit<ListOptions, 'cursor'>): AsyncGenerator<ObjectInfo> {
  let cursor: string | undefined;
  const firstKeys = new Set<string>();
  const seen = new Set<string>();
  do {
    const page = await store.list(prefix, { ...options, ...(cursor === undefined ? {} : { cursor }) });
    const first = page.objects[0]?.key;
    if (first !== undefined) {
      if (firstKeys.has(first)) throw new StoreError(`object store answered unexpectedly (list ${prefix}): a page started at ${first} again`, 'list', prefix);
      firstKeys.add(first);
    }
    yield* page.objects;
    if (page.cursor !== undefined) {
      if (seen.has(page.cursor)) throw new StoreError(`object store answered unexpectedly (list ${prefix}): a listing cursor came back again`, 'list', prefix);
      seen.add(page.cursor);
    }
    cursor = page.cursor;
  } while (cursor !== undefined);
}

export interface UpdateOptions {
  /** Tries before giving up with `StoreUnavailableError` (busy). */
  attempts?: number;
  maxBytes?: number;
}

/**
 * Reads `key`, computes its next value with `change` (given undefined when absent; returning
 * undefined means no write), and writes it only if nobody wrote in between (`If-Match` /
 * `If-None-Match: *`), reading again on a changed ETag. Where the store's conditions are
 * not atomic across clients (see `capabilities()`), two instances can still overwrite each
 * other: keep state that must not be lost as one object per entry instead.
 * Returns the value written (or left as it was).
 */
export async function readModifyWrite(
  store: ObjectStore,
  key: string,
  change: (current: Buffer | undefined) => Uint8Array | string | undefined,
  options: UpdateOptions = {},
): Promise<Uint8Array | string | Buffer | undefined> {
  const attempts = options.attempts ?? 16;
  for (let attempt = 0; attempt < attempts; attempt++) {
    const current = await store.get(key, options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes });
    const next = change(current?.body);
    if (next === undefined) return current?.body;
    const result = await store.put(key, next, current === undefined ? { ifNoneMatch: '*' } : { ifMatch: current.etag });
    if (result.written) return next;
    // Someone else wrote first: back off a little (jittered) so contenders spread out.
    await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 ** attempt)));
  }
  throw new StoreUnavailableError(`object store busy (update ${key}): the object kept changing over ${attempts} tries`, 'update', key, 'busy', 1);
}
