// Create progress shared through the store (src/service/shared-progress.ts): what one
// instance's create publishes, another reads; only while it is fresh; only its owner;
// damaged or foreign objects show nothing; a store that fails never fails the create.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDiskStore, listAll, progressKeys, StoreUnavailableError, type ObjectStore } from '../src/store/backends/index.js';
import { createProgressBoard } from '../src/service/progress.js';
import { createSharedProgress } from '../src/service/shared-progress.js';

const MINUTE = 60_000;

async function withStore(run: (objects: ObjectStore) => Promise<void>): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'progress-'));
  const objects = createDiskStore({ root });
  try {
    await run(objects);
  } finally {
    await objects.close();
    await rm(root, { recursive: true, force: true });
  }
}

/** Waits for the publishes in flight (they are fire-and-forget). */
const settled = () => sleep(50);

test('what a create publishes on one instance, another reads: each change, the end, only for its owner', async () => {
  await withStore(async (objects) => {
    let clock = 1_000_000;
    const now = () => clock;
    const running = createSharedProgress(objects, { now });
    const other = createSharedProgress(objects, { now });
    const tracker = (await running.begin('ann', 'create-0001'))!;
    await settled();
    assert.equal((await other.get('ann', 'create-0001'))?.phase, 'starting');
    clock += 1000; // a running create is written at most once a second
    tracker.assets(3, 10, 1);
    await settled();
    clock += 1000;
    tracker.assets(5, 10, 1);
    await settled();
    assert.deepEqual(await other.get('ann', 'create-0001'), { ...(await running.get('ann', 'create-0001'))! });
    assert.equal((await other.get('ann', 'create-0001'))?.assets_done, 5, 'the latest change is the one stored');
    tracker.phase('building');
    tracker.done('p_aaaaaaaaaaaaaaaaaaaa');
    await settled();
    const done = await other.get('ann', 'create-0001');
    assert.equal(done?.phase, 'done');
    assert.equal(done?.project_id, 'p_aaaaaaaaaaaaaaaaaaaa');
    assert.equal(done?.assets_done, 10);
    assert.equal(await other.get('ben', 'create-0001'), undefined, 'someone else\'s');
    assert.equal(await other.get('ann', 'create-0002'), undefined, 'never used');
    assert.equal(await other.get('ann', '../../x'), undefined, 'not a create id');
    // A finished create is shown for keepFinishedMs (10 minutes by default), then no more; the sweep deletes it after.
    clock += 9 * MINUTE;
    assert.equal((await other.get('ann', 'create-0001'))?.phase, 'done');
    clock += 2 * MINUTE;
    assert.equal(await other.get('ann', 'create-0001'), undefined);
  });
});

test('a running create that stopped reporting (its instance is gone) is shown no more; the sweep deletes old entries only', async () => {
  await withStore(async (objects) => {
    let clock = Date.now();
    const now = () => clock;
    const running = createSharedProgress(objects, { now, staleRunningMs: 5 * MINUTE, keepFinishedMs: MINUTE });
    const other = createSharedProgress(objects, { now, staleRunningMs: 5 * MINUTE, keepFinishedMs: MINUTE });
    const tracker = (await running.begin('ann', 'create-0001'))!;
    await settled();
    clock += 1000;
    tracker.assets(1, 4, 0);
    await settled();
    clock += 4 * MINUTE;
    assert.equal((await other.get('ann', 'create-0001'))?.phase, 'assets');
    clock += 2 * MINUTE;
    assert.equal(await other.get('ann', 'create-0001'), undefined);
    // The sweep goes by the object's write time: nothing is old yet by the real clock.
    assert.equal(await createSharedProgress(objects, { staleRunningMs: 5 * MINUTE, keepFinishedMs: MINUTE }).sweep(), 0);
    const later = createSharedProgress(objects, { now: () => Date.now() + 6 * MINUTE, staleRunningMs: 5 * MINUTE, keepFinishedMs: MINUTE });
    assert.equal(await later.sweep(), 1);
    assert.equal(await objects.get(progressKeys.create('ann', 'create-0001')), undefined);
  });
});

test('damaged, foreign or oversized objects show nothing; a store that is down answers as one (503), never fails the create', async () => {
  await withStore(async (objects) => {
    const reader = createSharedProgress(objects);
    const key = progressKeys.create('ann', 'create-0001');
    const good = { progress: { create_id: 'create-0001', phase: 'assets', assets_done: 1, assets_total: 2, assets_failed: 0, started_at: 'x' }, written_at: Date.now() };
    assert.equal((await reader.get('ann', 'create-0001')), undefined);
    await objects.put(key, JSON.stringify(good));
    assert.equal((await reader.get('ann', 'create-0001'))?.assets_done, 1);
    for (const damaged of [
      'not json', 'null', '[]', JSON.stringify({ ...good, written_at: 'now' }),
      JSON.stringify({ ...good, progress: { ...good.progress, create_id: 'create-0002' } }),
      JSON.stringify({ ...good, progress: { ...good.progress, phase: 'exploded' } }),
      JSON.stringify({ ...good, progress: { ...good.progress, phase: 'toString' } }),
      JSON.stringify({ ...good, progress: { ...good.progress, assets_done: -1 } }),
      JSON.stringify({ ...good, progress: { ...good.progress, error: 'boom' } }),
      JSON.stringify({ ...good, pad: 'x'.repeat(5000) }),
    ]) {
      await objects.put(key, damaged);
      assert.equal(await reader.get('ann', 'create-0001'), undefined, damaged.slice(0, 60));
    }

    // A store whose writes fail: the create's reports go on, the errors are reported; reads answer 503.
    const down = new StoreUnavailableError('object store unreachable (put)', 'put', key, 'unreachable', 5);
    const failing: ObjectStore = { ...objects, put: () => Promise.reject(down), get: () => Promise.reject(down) };
    const errors: unknown[] = [];
    const running = createSharedProgress(failing, { onError: (error) => errors.push(error) });
    const tracker = (await running.begin('ann', 'create-0003'))!;
    tracker.assets(1, 1, 0);
    tracker.done('p_aaaaaaaaaaaaaaaaaaaa');
    await settled();
    assert.ok(errors.length >= 1 && errors.every((error) => error === down));
    assert.equal((await running.get('ann', 'create-0003'))?.phase, 'done', 'this instance still knows');
    await assert.rejects(createSharedProgress(failing).get('ann', 'create-0003'), StoreUnavailableError);
  });
});

/** A store whose puts wait until the test lets them through (in order), counting them. */
function gated(objects: ObjectStore) {
  const waiting: (() => void)[] = [];
  const bodies: string[] = [];
  const store: ObjectStore = {
    ...objects,
    put: (key, body, options) => new Promise((resolve, reject) => {
      bodies.push(String(body));
      waiting.push(() => { objects.put(key, body, options).then(resolve, reject); });
    }),
  };
  return { store, bodies, release: async () => { waiting.shift()?.(); await settled(); }, waiting };
}

const storedPhase = async (objects: ObjectStore, user: string, id: string): Promise<string | undefined> =>
  (await createSharedProgress(objects).get(user, id))?.phase;

test('one write in flight per create, the latest after it; running states at most once a second, the end at once', async () => {
  await withStore(async (objects) => {
    const gate = gated(objects);
    const tracker = (await createSharedProgress(gate.store).begin('ann', 'create-0001'))!;
    for (let done = 1; done <= 1000; done++) tracker.assets(done, 1000, 0);
    assert.equal(gate.bodies.length, 1, 'the first write is in flight: the thousand changes wait for it');
    await gate.release();
    assert.equal(gate.bodies.length, 1, 'and then for the interval');
    tracker.done('p_aaaaaaaaaaaaaaaaaaaa');
    await settled();
    assert.equal(gate.bodies.length, 2, 'the end is written at once');
    await gate.release();
    const stored = await createSharedProgress(objects).get('ann', 'create-0001');
    assert.equal(stored?.phase, 'done');
    assert.equal(stored?.assets_done, 1000);
  });
});

test('a reused id: the new create\'s state is written after the old one\'s last write, never under it', async () => {
  await withStore(async (objects) => {
    const gate = gated(objects);
    const shared = createSharedProgress(gate.store);
    const old = (await shared.begin('ann', 'create-0001'))!;
    await gate.release(); // starting
    old.done('p_aaaaaaaaaaaaaaaaaaaa'); // in flight, held
    const fresh = (await shared.begin('ann', 'create-0001'))!;
    assert.ok(fresh);
    assert.equal(gate.bodies.length, 2, 'the new create waits for the old one\'s write');
    await gate.release(); // the old done lands
    assert.equal(gate.bodies.length, 3);
    assert.match(gate.bodies[2]!, /"phase":"starting"/);
    await gate.release();
    assert.equal(await storedPhase(objects, 'ann', 'create-0001'), 'starting');
    old.failed('late', 'a late report of the old create'); // dropped: the key is the new create's
    await settled();
    assert.equal(gate.bodies.length, 3);
  });
});

test('a create the board evicted is still published to its end', async () => {
  await withStore(async (objects) => {
    const shared = createSharedProgress(objects, { board: createProgressBoard({ maxPerUser: 1 }) });
    const first = (await shared.begin('ann', 'create-0001'))!;
    await shared.begin('ann', 'create-0002'); // evicts create-0001 from this instance's board
    first.done('p_aaaaaaaaaaaaaaaaaaaa');
    await settled();
    const seen = await shared.get('ann', 'create-0001'); // from the store now, on this instance too
    assert.equal(seen?.phase, 'done');
    assert.equal(seen?.project_id, 'p_aaaaaaaaaaaaaaaaaaaa');
  });
});

test('a finished create the store refused is tried again; close writes what is pending and then nothing', async () => {
  await withStore(async (objects) => {
    let failures = 2;
    const flaky: ObjectStore = {
      ...objects,
      put: (key, body, options) => (String(body).includes('"done"') && failures-- > 0 ? Promise.reject(new StoreUnavailableError('down', 'put', key, 'unreachable', 5)) : objects.put(key, body, options)),
    };
    const errors: unknown[] = [];
    (await createSharedProgress(flaky, { onError: (error) => errors.push(error) }).begin('ann', 'create-0001'))!.done('p_aaaaaaaaaaaaaaaaaaaa');
    await sleep(1500); // tries after 250 ms and 1 s
    assert.equal(errors.length, 2);
    assert.equal(await storedPhase(objects, 'ann', 'create-0001'), 'done');

    const shared = createSharedProgress(objects);
    const tracker = (await shared.begin('ann', 'create-0002'))!;
    await settled();
    tracker.assets(3, 9, 0); // waits for the interval
    await shared.close();
    assert.equal((await createSharedProgress(objects).get('ann', 'create-0002'))?.assets_done, 3, 'close wrote the pending state');
    tracker.done('p_aaaaaaaaaaaaaaaaaaaa');
    await settled();
    assert.equal(await storedPhase(objects, 'ann', 'create-0002'), 'assets', 'nothing is published after close');
  });
});

test('a running create that reports nothing for a while is rewritten, so it never looks gone', async () => {
  await withStore(async (objects) => {
    const shared = createSharedProgress(objects, { staleRunningMs: 300, publishIntervalMs: 50 });
    const tracker = (await shared.begin('ann', 'create-0001'))!;
    tracker.phase('building');
    await sleep(700);
    assert.equal((await createSharedProgress(objects, { staleRunningMs: 300 }).get('ann', 'create-0001'))?.phase, 'building');
    tracker.done('p_aaaaaaaaaaaaaaaaaaaa');
    await shared.close();
  });
});

test('a create id another instance is running is in use on every instance; a finished or stale one may be named again', async () => {
  await withStore(async (objects) => {
    let clock = Date.now();
    const now = () => clock;
    const a = createSharedProgress(objects, { now, staleRunningMs: 5 * MINUTE });
    const b = createSharedProgress(objects, { now, staleRunningMs: 5 * MINUTE });
    const running = (await a.begin('ann', 'create-0001'))!;
    await settled();
    assert.equal(await b.begin('ann', 'create-0001'), null, 'running on A: in use on B');
    assert.ok(await b.begin('ben', 'create-0001'), 'another user\'s id is another create');
    running.done('p_aaaaaaaaaaaaaaaaaaaa');
    await settled();
    const again = await b.begin('ann', 'create-0001');
    assert.ok(again, 'finished on A: B may run a create of that name');
    await settled();
    assert.equal(await a.begin('ann', 'create-0001'), null, 'and now it is in use on A');
    // A running entry that is no longer rewritten (its instance died) frees the name once stale.
    clock += 6 * MINUTE;
    assert.ok(await a.begin('ann', 'create-0001'));
    // A store that cannot answer the check does not stop a create.
    const down = new StoreUnavailableError('down', 'get', 'k', 'unreachable', 5);
    const failing: ObjectStore = { ...objects, get: () => Promise.reject(down) };
    const c = createSharedProgress(failing);
    assert.ok(await c.begin('ann', 'create-0009'));
    await Promise.all([a.close(), b.close(), c.close()]);
  });
});

test('an instance keeps at most a bound of finished creates stored per user: creates refused at once do not pile up in the store', async () => {
  await withStore(async (objects) => {
    const shared = createSharedProgress(objects, { maxStoredFinishedPerUser: 3 });
    const stored = async (user: string) => {
      let count = 0;
      for await (const _ of listAll(objects, progressKeys.create(user, 'create-xxxx').replace(/create-xxxx\.json$/, ''))) count++;
      return count;
    };
    for (let i = 0; i < 10; i++) {
      const tracker = (await shared.begin('ann', `create-${String(i).padStart(4, '0')}`))!;
      tracker.failed('not_found', 'preview not found');
      await settled();
    }
    const running = (await shared.begin('ben', 'create-0001'))!;
    await settled();
    assert.equal(await stored('ann'), 3);
    // Another instance reads the store: the latest stay there, the oldest went.
    const other = createSharedProgress(objects);
    assert.equal((await other.get('ann', 'create-0009'))?.phase, 'failed');
    assert.equal(await other.get('ann', 'create-0000'), undefined);
    assert.equal(await stored('ben'), 1, 'another user\'s running create is theirs');
    running.done('p_aaaaaaaaaaaaaaaaaaaa');
    await settled();
  });
});

test('the bound drops only what this instance wrote: an id run again on another instance keeps its entry', async () => {
  await withStore(async (objects) => {
    const a = createSharedProgress(objects, { maxStoredFinishedPerUser: 1 });
    const b = createSharedProgress(objects);
    const first = (await a.begin('ann', 'create-0001'))!;
    first.failed('not_found', 'preview not found');
    await settled();
    // The same id, run again on B: its running entry replaces A's finished one in the store.
    const again = (await b.begin('ann', 'create-0001'))!;
    await settled();
    // A finishes another create: past its bound of 1 it would drop create-0001, which is B's now.
    const second = (await a.begin('ann', 'create-0002'))!;
    second.failed('not_found', 'preview not found');
    await settled();
    const c = createSharedProgress(objects);
    assert.equal((await c.get('ann', 'create-0001'))?.phase, 'starting', 'B\'s running create is still seen');
    assert.equal(await c.begin('ann', 'create-0001'), null, 'and its id is still in use across the fleet');
    again.done('p_aaaaaaaaaaaaaaaaaaaa');
    await settled();
  });
});

test('the bound keeps an id that finished again on another instance: its entry is that instance\'s', async () => {
  await withStore(async (objects) => {
    let clock = 1_000_000;
    const now = () => clock;
    const a = createSharedProgress(objects, { maxStoredFinishedPerUser: 1, now });
    const b = createSharedProgress(objects, { now });
    const first = (await a.begin('ann', 'create-0001'))!;
    first.failed('not_found', 'preview not found');
    await settled();
    clock += 1000;
    const again = (await b.begin('ann', 'create-0001'))!;
    again.done('p_bbbbbbbbbbbbbbbbbbbb');
    await settled();
    const second = (await a.begin('ann', 'create-0002'))!;
    second.failed('not_found', 'preview not found');
    await settled();
    const c = createSharedProgress(objects, { now });
    assert.equal((await c.get('ann', 'create-0001'))?.project_id, 'p_bbbbbbbbbbbbbbbbbbbb');
  });
});
