// Create progress shared through the store (src/service/shared-progress.ts): what one
// instance's create publishes, another reads; only while it is fresh; only its owner;
// damaged or foreign objects show nothing; a store that fails never fails the create.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDiskStore, progressKeys, StoreUnavailableError, type ObjectStore } from '../src/store/backends/index.js';
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
    const tracker = running.begin('ann', 'create-0001')!;
    await settled();
    assert.equal((await other.get('ann', 'create-0001'))?.phase, 'starting');
    tracker.assets(3, 10, 1);
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
    running.begin('ann', 'create-0001')!.assets(1, 4, 0);
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
    const tracker = running.begin('ann', 'create-0003')!;
    tracker.assets(1, 1, 0);
    tracker.done('p_aaaaaaaaaaaaaaaaaaaa');
    await settled();
    assert.ok(errors.length >= 1 && errors.every((error) => error === down));
    assert.equal((await running.get('ann', 'create-0003'))?.phase, 'done', 'this instance still knows');
    await assert.rejects(createSharedProgress(failing).get('ann', 'create-0003'), StoreUnavailableError);
  });
});
