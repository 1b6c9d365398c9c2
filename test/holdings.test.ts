/**
 * Each user's share counted from the store (src/store/holdings.ts): the keys say what
 * is held; a preview counts once however often it was uploaded, and not after it
 * expired; projects count until removed; the sweep deletes expired entries; the first
 * start over a store with previews and projects but no holdings fills them in, once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDiskStore, holdingKeys, listAll, parseHoldingKey, parseUploaderKey, previewKeys, projectKeys, userKey, type ObjectStore } from '../src/store/backends/index.js';
import { createHoldings, ORPHAN_RECHECK_MS } from '../src/store/holdings.js';
import { QuotaExceededError } from '../src/store/quota.js';
import { startServer } from '../src/http/server.js';
import { PLACES_DIR } from './support/paths.js';
import { analyze, as, create, expectError, postJson, CREATE, startService, upload, waitUntil, serviceOf } from './support/service.js';

const HASH_A = 'a'.repeat(64);
const HASH_B = 'b'.repeat(64);
const LIMITS = { userMaxBytes: 1000, userMaxPreviews: 2, userMaxProjects: 1 };

async function withStore(run: (objects: ObjectStore, root: string) => Promise<void>): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'holdings-'));
  const objects = createDiskStore({ root });
  try {
    await run(objects, root);
  } finally {
    await objects.close();
    await rm(root, { recursive: true, force: true });
  }
}

test('holding keys say whose, what, until when and how large; anything else is not one', () => {
  const key = holdingKeys.preview('ann', HASH_A, 1_700_000_000_123, 4096);
  assert.equal(key, `holdings/${userKey('ann')}/previews/${HASH_A}.1700000000123.4096`);
  assert.deepEqual(parseHoldingKey(key), { kind: 'preview', user: userKey('ann'), hash: HASH_A, expiresAt: 1_700_000_000_123, bytes: 4096 });
  const project = holdingKeys.project('ann', 'p_aaaaaaaaaaaaaaaaaaaa', 77);
  assert.deepEqual(parseHoldingKey(project), { kind: 'project', user: userKey('ann'), id: 'p_aaaaaaaaaaaaaaaaaaaa', bytes: 77 });
  for (const other of [holdingKeys.indexed, `${key}x`, key.replace('previews', 'projects'), 'holdings/x/previews/y.1.2']) assert.equal(parseHoldingKey(other), undefined, other);
  assert.throws(() => holdingKeys.project('ann', '../x', 1), TypeError);
  assert.throws(() => holdingKeys.preview('ann', HASH_A, 1, -1), RangeError);
});

test('a user\'s usage: previews once each while unexpired, projects until removed; the limits refuse with their names', async () => {
  await withStore(async (objects) => {
    let clock = 1_000_000;
    const holdings = createHoldings(objects, LIMITS, () => clock);
    // The check alone: a reservation let go at once.
    const check = async (user: string, kind: 'preview' | 'project', bytes: number, key?: string) => (await holdings.reserve(user, kind, bytes, key)).release();
    await holdings.addPreview('ann', HASH_A, 300, clock + 100);
    await holdings.addPreview('ann', HASH_A, 300, clock + 500); // uploaded again: one preview, one entry
    assert.equal((await keysUnder(objects, holdingKeys.previewEntries('ann', HASH_A))).length, 1);
    await holdings.addPreview('ben', HASH_B, 300, clock + 100);
    let usage = await holdings.usage('ann');
    assert.deepEqual([usage.previews, usage.projects, usage.bytes], [1, 0, 300]);
    assert.equal(usage.holds('preview', HASH_A), true);
    assert.equal(usage.holds('preview', HASH_B), false, 'ben\'s');
    await objects.put(projectKeys.meta('p_aaaaaaaaaaaaaaaaaaaa'), '{}'); // a project that exists (an entry without one is an orphan)
    await holdings.addProject('ann', 'p_aaaaaaaaaaaaaaaaaaaa', 400);
    await assert.rejects(check('ann', 'project', 0), (error: unknown) => error instanceof QuotaExceededError && /USER_MAX_PROJECTS/.test(error.message));
    await assert.rejects(check('ann', 'preview', 301, HASH_B), /USER_MAX_BYTES/);
    await check('ann', 'preview', 300, HASH_B); // exactly the share
    await check('ann', 'preview', 10_000, HASH_A); // held already: free
    assert.equal(await holdings.room('ann'), 300);
    await holdings.addPreview('ann', HASH_B, 200, clock + 100);
    // What frees a preview is its expiry (a create refreshes it instead), and the message says so.
    await assert.rejects(check('ann', 'preview', 1, 'c'.repeat(64)), /USER_MAX_PREVIEWS\); each expires PREVIEW_TTL_SECONDS after its last upload or create/);
    // Past the first expiry B no longer counts; A's later upload still does.
    clock += 200;
    usage = await holdings.usage('ann');
    assert.deepEqual([usage.previews, usage.projects, usage.bytes], [1, 1, 700]);
    // The sweep deletes the expired entries (ann's B, ben's B), nothing else.
    assert.equal(await holdings.sweep(), 2);
    assert.deepEqual((await holdings.usage('ann')).bytes, 700);
    await holdings.removeProject('ann', 'p_aaaaaaaaaaaaaaaaaaaa');
    assert.deepEqual([(await holdings.usage('ann')).projects, await holdings.room('ann')], [0, 700]);
  });
});

test('an entry whose project is gone is dropped when it would refuse its user (at most once per user every few minutes); one whose project exists still counts', async () => {
  await withStore(async (objects) => {
    let clock = Date.now();
    const holdings = createHoldings(objects, LIMITS, () => clock);
    const check = async (user: string) => (await holdings.reserve(user, 'project', 0)).release();
    const id = 'p_aaaaaaaaaaaaaaaaaaaa';
    await objects.put(projectKeys.meta(id), JSON.stringify({ owner: 'ann' }));
    await holdings.addProject('ann', id, 400);
    await assert.rejects(check('ann'), /USER_MAX_PROJECTS/);
    assert.equal((await keysUnder(objects, holdingKeys.projectEntries('ann', id))).length, 1, 'a real project keeps its entry');
    // The project deleted, and its entry written again afterwards (a late retry on another instance).
    await objects.delete(projectKeys.meta(id));
    await holdings.addProject('ann', id, 400);
    // Looked over moments ago: a refusal repeated at once costs no look (each is a HEAD per project).
    await assert.rejects(check('ann'), /USER_MAX_PROJECTS/);
    clock += ORPHAN_RECHECK_MS;
    await check('ann');
    assert.deepEqual(await keysUnder(objects, holdingKeys.projectEntries('ann', id)), [], 'the orphan entry is gone');
    // A look the store cuts short does not hold back the next one.
    const flaky = 'p_ffffffffffffffffffff';
    let failHead = true;
    const flakyStore: ObjectStore = { ...objects, head: async (key) => { if (failHead) { failHead = false; throw new Error('store hiccup'); } return objects.head(key); } };
    const flakyHoldings = createHoldings(flakyStore, LIMITS, () => clock);
    await holdings.removeProject('ann', 'p_aaaaaaaaaaaaaaaaaaaa');
    await flakyHoldings.addProject('ann', flaky, 10);
    await assert.rejects(flakyHoldings.reserve('ann', 'project', 0), /USER_MAX_PROJECTS/);
    (await flakyHoldings.reserve('ann', 'project', 0)).release();
    assert.deepEqual(await keysUnder(objects, holdingKeys.projectEntries('ann', flaky)), []);
    // A bytes refusal outside reserve (an upload's check) drops them too.
    const other = 'p_bbbbbbbbbbbbbbbbbbbb';
    await holdings.addProject('ann', other, 900);
    clock += ORPHAN_RECHECK_MS;
    await holdings.checkBytes('ann', 500);
    assert.deepEqual(await keysUnder(objects, holdingKeys.projectEntries('ann', other)), []);
    // And a document over the user's room (the create asks for the look itself).
    const third = 'p_gggggggggggggggggggg';
    await holdings.addProject('ann', third, 10);
    assert.equal(await holdings.dropOrphans('ann'), false, 'looked over moments ago');
    clock += ORPHAN_RECHECK_MS;
    assert.equal(await holdings.dropOrphans('ann'), true);
    assert.deepEqual(await keysUnder(objects, holdingKeys.projectEntries('ann', third)), []);
  });
});

test('a request running on one instance counts on every other from its entry, until it ends or its instance stops renewing it', async () => {
  await withStore(async (objects) => {
    let clock = Date.now();
    const limits = { userMaxBytes: 1000, userMaxPreviews: 1, userMaxProjects: 1 };
    const [a, b] = [createHoldings(objects, limits, () => clock), createHoldings(objects, limits, () => clock)];
    const running = await a.reserve('ann', 'project', 0);
    await assert.rejects(b.reserve('ann', 'project', 0), /USER_MAX_PROJECTS/, 'the create running on A counts on B');
    assert.equal((await a.usage('ann')).projects, 1, 'A counts its own once, not again from its entry');
    running.release();
    await waitUntil(async () => (await keysUnder(objects, `${holdingKeys.user('ann')}requests/`)).length === 0, 'the entry to go');
    (await b.reserve('ann', 'project', 0)).release();
    // The same map uploaded on both at once is one preview; another map is refused.
    const upload = await a.reserve('ann', 'preview', 100, HASH_A);
    (await b.reserve('ann', 'preview', 100, HASH_A)).release();
    await assert.rejects(b.reserve('ann', 'preview', 100, HASH_B), /USER_MAX_PREVIEWS/);
    // Bytes of a request running elsewhere count too.
    await assert.rejects(b.checkBytes('ann', 901), /USER_MAX_BYTES/);
    // An instance that died leaves its entry: it stops counting when it expires, and the sweep deletes it.
    await objects.put(holdingKeys.request('ann', 'project', null, '0123456789abcdef', clock + 1000, 0), '');
    await assert.rejects(b.reserve('ann', 'project', 0), /USER_MAX_PROJECTS/);
    clock += 2000;
    (await b.reserve('ann', 'project', 0)).release();
    assert.equal(await b.sweep(), 1);
    upload.release();
  });
});

test('a running request renews its entry, one at a time, and a project\'s names the project once known', async () => {
  await withStore(async (objects) => {
    let writes = 0;
    const counting: ObjectStore = { ...objects, put: (key, body, options) => { if (key.includes('/requests/')) writes++; return objects.put(key, body, options); } };
    const holdings = createHoldings(counting, LIMITS, Date.now, { entryMs: 60_000, renewMs: 40 });
    const entries = async () => (await keysUnder(objects, `${holdingKeys.user('ann')}requests/`)).map((key) => parseHoldingKey(key) as { subject: string | null; expiresAt: number });
    const running = await holdings.reserve('ann', 'project', 0);
    const [first] = await entries();
    assert.equal(first!.subject, null);
    running.identify('p_aaaaaaaaaaaaaaaaaaaa');
    await waitUntil(async () => (await entries()).some((entry) => entry.subject === 'p_aaaaaaaaaaaaaaaaaaaa'), 'the entry to name the project');
    const named = (await entries())[0]!.expiresAt;
    await waitUntil(async () => (await entries()).some((entry) => entry.expiresAt > named), 'a renewal');
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal((await entries()).length, 1, 'a renewal replaces the entry');
    running.release();
    await waitUntil(async () => (await entries()).length === 0, 'the entry to go');
    const after = writes;
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.equal(writes, after, 'a renewal after the release');
    assert.deepEqual(await entries(), []);
    // Named at once, not at the next renewal: then no instance counts it beside the project's own entry.
    const slow = createHoldings(objects, LIMITS, Date.now, { entryMs: 60_000, renewMs: 60_000 });
    const made = await slow.reserve('bob', 'project', 0);
    made.identify('p_bbbbbbbbbbbbbbbbbbbb');
    await waitUntil(async () => (await keysUnder(objects, `${holdingKeys.user('bob')}requests/project.p_bbbbbbbbbbbbbbbbbbbb.`)).length === 1, 'the entry to name the project');
    await objects.put(projectKeys.meta('p_bbbbbbbbbbbbbbbbbbbb'), '{}');
    await slow.addProject('bob', 'p_bbbbbbbbbbbbbbbbbbbb', 10);
    assert.equal((await createHoldings(objects, LIMITS).usage('bob')).projects, 1, 'another instance: the named request and the project\'s entry are one project');
    made.release();
  });
});

test('two entries of one request count once, as the project either names; a write that ends after a later one leaves no entry of its own', async () => {
  await withStore(async (objects) => {
    const id = 'p_cccccccccccccccccccc';
    await objects.put(projectKeys.meta(id), '{}');
    await objects.put(holdingKeys.project('cy', id, 10), '');
    // A naming whose old, unnamed entry could not be deleted: still the one project.
    const expires = Date.now() + 60_000;
    await objects.put(holdingKeys.request('cy', 'project', null, '00000000000000aa', expires, 0), '');
    await objects.put(holdingKeys.request('cy', 'project', id, '00000000000000aa', expires, 0), '');
    assert.equal((await createHoldings(objects, LIMITS).usage('cy')).projects, 1);
    // A write that ends after a later one (a slow renewal or naming, here a naming the request
    // took back): the later write's entry stays, the slow one's goes.
    const delayed: ObjectStore = {
      ...objects,
      put: async (key, body, options) => {
        if (key.includes('/requests/project.p_eeeeeeeeeeeeeeeeeeee.')) await new Promise((resolve) => setTimeout(resolve, 150));
        return objects.put(key, body, options);
      },
    };
    const holdings = createHoldings(delayed, LIMITS, Date.now, { entryMs: 60_000, renewMs: 60_000 });
    const running = await holdings.reserve('dee', 'project', 0);
    running.identify('p_eeeeeeeeeeeeeeeeeeee');
    running.identify('p_dddddddddddddddddddd');
    await new Promise((resolve) => setTimeout(resolve, 400));
    const left = await keysUnder(objects, `${holdingKeys.user('dee')}requests/`);
    assert.equal(left.length, 1, left.join('\n'));
    assert.ok(left[0]!.includes('project.p_dddddddddddddddddddd.'), left[0]);
    running.release();
  });
});

async function keysUnder(objects: ObjectStore, prefix: string): Promise<string[]> {
  const found: string[] = [];
  for await (const info of listAll(objects, prefix)) found.push(info.key);
  return found;
}

test('requests in flight count: concurrent reservations of one user cannot all take the last place, and a released one frees it', async () => {
  await withStore(async (objects) => {
    const holdings = createHoldings(objects, { userMaxBytes: 1000, userMaxPreviews: 2, userMaxProjects: 1 });
    await holdings.addPreview('ann', HASH_A, 100, Date.now() + 60_000);
    // Eight uploads of distinct maps at once: one place left.
    const hashes = Array.from({ length: 8 }, (_, i) => String(i).repeat(64));
    const uploads = await Promise.allSettled(hashes.map((hash) => holdings.reserve('ann', 'preview', 100, hash)));
    assert.equal(uploads.filter((r) => r.status === 'fulfilled').length, 1);
    for (const refused of uploads.filter((r) => r.status === 'rejected')) assert.match(String((refused).reason), /USER_MAX_PREVIEWS/);
    // The same map twice at once, or one already held, is one preview: no place taken.
    const same = await Promise.all([holdings.reserve('ann', 'preview', 100, HASH_A), holdings.reserve('ann', 'preview', 100, HASH_A)]);
    assert.equal((await holdings.usage('ann')).previews, 2);
    // Creates: one place, three at once.
    const creates = await Promise.allSettled([0, 1, 2].map(() => holdings.reserve('ann', 'project', 0)));
    const taken = creates.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    assert.equal(taken.length, 1);
    assert.equal((await holdings.usage('ann')).projects, 1, 'the create in flight');
    taken[0]!.release();
    taken[0]!.release(); // once only
    assert.equal((await holdings.usage('ann')).projects, 0);
    await holdings.reserve('ann', 'project', 0);
    // Bytes in flight count against USER_MAX_BYTES as well; another user is not affected.
    for (const reservation of same) reservation.release();
    for (const upload of uploads) if (upload.status === 'fulfilled') upload.value.release();
    await assert.rejects(holdings.checkBytes('ann', 901), /USER_MAX_BYTES/, 'ann holds 100 bytes');
    const big = await holdings.reserve('ann', 'preview', 800, HASH_B);
    await assert.rejects(holdings.checkBytes('ann', 101), /USER_MAX_BYTES/, '100 held and 800 in flight');
    await holdings.checkBytes('ben', 1000);
    big.release();
    await holdings.checkBytes('ann', 900);
  });
});

test('a reservation checks and counts in one step: listings that answer together still let only one take the last place', async () => {
  await withStore(async (objects) => {
    // A store whose listings of ann's entries all answer at the same moment, once four are asked.
    let waiting: (() => void)[] = [];
    const together: ObjectStore = Object.create(objects, {
      list: {
        value: async (prefix: string, options?: Parameters<ObjectStore['list']>[1]) => {
          const page = await objects.list(prefix, options);
          await new Promise<void>((resolve) => { waiting.push(resolve); if (waiting.length === 4) { for (const go of waiting) go(); waiting = []; } });
          return page;
        },
      },
    }) as ObjectStore;
    const holdings = createHoldings(together, { userMaxBytes: 1000, userMaxPreviews: 5, userMaxProjects: 1 });
    const creates = await Promise.allSettled([0, 1, 2, 3].map(() => holdings.reserve('ann', 'project', 0)));
    assert.equal(creates.filter((r) => r.status === 'fulfilled').length, 1);
  });
});

test('a request that ends while another\'s listing runs still counts for that listing; a create\'s written entry is not counted twice', async () => {
  await withStore(async (objects) => {
    // Listings that take their snapshot at once and answer 30 ms later, as a slow store does.
    const slow: ObjectStore = Object.create(objects, {
      list: { value: async (prefix: string, options?: Parameters<ObjectStore['list']>[1]) => {
        const page = await objects.list(prefix, options);
        await new Promise((resolve) => setTimeout(resolve, 30));
        return page;
      } },
    }) as ObjectStore;
    const holdings = createHoldings(slow, { userMaxBytes: 1000, userMaxPreviews: 5, userMaxProjects: 1 });
    const first = await holdings.reserve('ann', 'project', 0);
    const second = holdings.reserve('ann', 'project', 0); // its listing starts now, before the first's entry
    second.catch(() => undefined); // it may be refused before the assertion below waits for it (a loaded machine)
    await new Promise((resolve) => setTimeout(resolve, 5));
    first.identify('p_aaaaaaaaaaaaaaaaaaaa');
    await objects.put(projectKeys.meta('p_aaaaaaaaaaaaaaaaaaaa'), '{}');
    await holdings.addProject('ann', 'p_aaaaaaaaaaaaaaaaaaaa', 10);
    first.release();
    await assert.rejects(second, /USER_MAX_PROJECTS/);
    assert.equal((await holdings.usage('ann')).projects, 1);
    // Two places: a create whose entry is written but not yet released counts once.
    const two = createHoldings(objects, { userMaxBytes: 1000, userMaxPreviews: 5, userMaxProjects: 2 });
    const bob = await two.reserve('bob', 'project', 0);
    bob.identify('p_bbbbbbbbbbbbbbbbbbbb');
    await two.addProject('bob', 'p_bbbbbbbbbbbbbbbbbbbb', 10);
    assert.equal((await two.usage('bob')).projects, 1);
    (await two.reserve('bob', 'project', 0)).release();
    bob.release();
  });
});

test('a made project waiting for its entry counts with its bytes, once they are known, until the entry is written', async () => {
  await withStore(async (objects) => {
    const holdings = createHoldings(objects, { ...LIMITS, userMaxProjects: 5 }, () => 1_000_000);
    const project = await holdings.reserve('ann', 'project', 0);
    project.identify('p_cccccccccccccccccccc');
    project.holds(700);
    assert.equal((await holdings.usage('ann')).bytes, 700);
    await assert.rejects(holdings.reserve('ann', 'preview', 301, HASH_A), /USER_MAX_BYTES/);
    // Written: the entry counts, the reservation no longer adds to it.
    await holdings.addProject('ann', 'p_cccccccccccccccccccc', 700);
    assert.equal((await holdings.usage('ann')).bytes, 700);
    project.release();
    assert.equal((await holdings.usage('ann')).bytes, 700);
    await holdings.removeProject('ann', 'p_cccccccccccccccccccc');
    assert.equal((await holdings.usage('ann')).bytes, 0);
  });
});

test('filling in holdings runs once per store', async () => {
  await withStore(async (objects) => {
    const holdings = createHoldings(objects, LIMITS);
    let listed = 0;
    const stored = async () => {
      listed++;
      const preview = { hash: HASH_A, bytes: 10, expiresAt: Date.now() + 60_000 };
      return { previews: [{ ...preview, user: 'ann' }, { ...preview, user: 'ben' }], projects: [{ id: 'p_aaaaaaaaaaaaaaaaaaaa', bytes: 20, owner: 'ann' }] };
    };
    assert.equal(await holdings.indexOnce(stored), true);
    assert.equal(await createHoldings(objects, LIMITS).indexOnce(stored), false, 'another instance, or a restart');
    assert.equal(listed, 1);
    assert.deepEqual([(await holdings.usage('ann')).bytes, (await holdings.usage('ben')).bytes], [30, 10]);
  });
});

test('a store from before holdings: the first start fills them in from its previews and projects, and the shares hold', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'holdings-service-'));
  const config = { host: '127.0.0.1', port: 0, dataDir, log: false, workers: 1, userMaxPreviews: 1, userMaxProjects: 1 };
  const place = readFileSync(join(PLACES_DIR, 'rocket-arena-2006.rbxl'));
  let server = await startServer(config);
  try {
    let service = serviceOf(server, dataDir);
    const { preview_hash } = await analyze(service, place, 'a.rbxl', as('dee'));
    await create(service, { preview_hash, scripts_mode: 'skip' }, as('dee'));
    await server.close(1000);
    // As a store written before holdings were kept looks.
    await rm(join(dataDir, 'objects', 'holdings'), { recursive: true });
    server = await startServer(config);
    service = serviceOf(server, dataDir);
    assert.deepEqual((await readdir(join(dataDir, 'objects', 'holdings'))).sort(), [userKey('dee'), 'index-v1'].sort());
    await expectError(await upload(service, Buffer.concat([place, Buffer.from('other')]), 'b.rbxl', as('dee')), 507, 'quota_exceeded');
    await expectError(await postJson(service, CREATE, { preview_hash, scripts_mode: 'skip' }, as('dee')), 507, 'quota_exceeded');
  } finally {
    await server.close(1000);
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('through the service: a user\'s entry for a preview runs to their own upload\'s expiry, one entry however often they upload it; retention removes a project\'s entry', { timeout: 60_000 }, async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'holdings-service-'));
  const place = readFileSync(join(PLACES_DIR, 'rocket-arena-2006.rbxl'));
  const objects = createDiskStore({ root: join(dataDir, 'objects') });
  // A sweep every second: the lease the first server took runs out two seconds after it stops.
  let server = await startServer({ host: '127.0.0.1', port: 0, dataDir, log: false, workers: 1, previewTtlSeconds: 600, sweepIntervalMs: 1000 });
  try {
    let service = serviceOf(server, dataDir);
    const { preview_hash } = await analyze(service, place, 'mine.rbxl', as('ann'));
    await analyze(service, place, 'renamed.rbxl', as('ann')); // a new uploader entry
    await new Promise((resolve) => setTimeout(resolve, 20));
    await analyze(service, place, 'theirs.rbxl', as('ben')); // a later expiry than ann's
    await analyze(service, place, 'renamed.rbxl', as('ann')); // the same name again: ann's entry stays as it was
    const own = async (user: string) => Math.max(...(await keysUnder(objects, previewKeys.uploaderEntries(preview_hash, user))).map((key) => parseUploaderKey(key)!.expiresAt));
    for (const user of ['ann', 'ben']) {
      const entries = await keysUnder(objects, holdingKeys.previewEntries(user, preview_hash));
      assert.equal(entries.length, 1, `${user}: ${entries.join(', ')}`);
      assert.equal((parseHoldingKey(entries[0]!) as { expiresAt: number }).expiresAt, await own(user), `${user}'s own expiry`);
    }
    // A project past retention goes with its entry.
    const { project_id } = await create(service, { preview_hash, scripts_mode: 'skip' }, as('ann'));
    assert.equal((await keysUnder(objects, holdingKeys.user('ann') + 'projects/')).length, 1);
    await server.close(1000);
    const metaPath = join(dataDir, 'objects', 'projects', project_id, 'meta.json');
    const meta = JSON.parse(readFileSync(metaPath, 'utf8')) as { createdAt: number };
    writeFileSync(metaPath, JSON.stringify({ ...meta, createdAt: Date.now() - 3 * 86_400_000 }));
    server = await startServer({ host: '127.0.0.1', port: 0, dataDir, log: false, workers: 1, projectRetentionDays: 2, sweepIntervalMs: 1000 });
    service = serviceOf(server, dataDir);
    await waitUntil(async () => (await keysUnder(objects, `projects/${project_id}/`)).length === 0, 'the sweep to apply retention');
    assert.deepEqual(await keysUnder(objects, holdingKeys.user('ann') + 'projects/'), []);
  } finally {
    await server.close(1000);
    await objects.close();
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('through the service: a user\'s concurrent uploads and creates on one instance stop at the share', { timeout: 120_000 }, async () => {
  const service = await startService({ userMaxPreviews: 2, userMaxProjects: 2 });
  try {
    // Six distinct maps (a byte appended makes each its own upload) sent at once.
    const place = readFileSync(join(PLACES_DIR, 'rocket-arena-2006.rbxl'));
    // A refused upload (not a map) gives its place back.
    await expectError(await upload(service, Buffer.from('not a map at all'), 'junk.rbxl', as('fay')), 422);
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => upload(service, Buffer.concat([place, Buffer.from([i])]), `m${i}.rbxl`, as('fay'))));
    const accepted = answers.filter((answer) => answer.status === 200);
    assert.equal(accepted.length, 2, answers.map((answer) => answer.status).join(','));
    for (const answer of answers) if (answer.status !== 200) await expectError(answer, 507, 'quota_exceeded');
    const { preview_hash } = await accepted[0]!.json() as { preview_hash: string };
    const creates = await Promise.all(Array.from({ length: 5 }, () => postJson(service, CREATE, { preview_hash, scripts_mode: 'skip' }, as('fay'))));
    assert.equal(creates.filter((answer) => answer.status === 200).length, 2, creates.map((answer) => answer.status).join(','));
    for (const answer of creates) if (answer.status !== 200) await expectError(answer, 507, 'quota_exceeded');
  } finally {
    await service.close();
  }
});
