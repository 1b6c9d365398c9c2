/**
 * Several instances behind a gateway, sharing one S3-compatible store (issue 15): s3rver
 * in a child process on loopback behind the test proxy (support/s3-proxy.ts, which makes
 * it decide conditional writes and replace objects atomically, as S3 does), and three
 * real services on their own ports and data directories, all with STORE_URL on it.
 *
 * - analyze on A, create on B in every script mode; the document, summary and assets
 *   read from C; every asset downloaded once by the whole fleet;
 * - the same upload sent to A and B at once: one analysis, both uploaders;
 * - someone who did not upload gets 404 on every instance;
 * - expiry seen by every instance, and the swept objects gone from the store;
 * - each user's share (previews, projects) counted the same on every instance;
 * - faults: the store stopped mid-upload and mid-create answers 503 with Retry-After and
 *   leaves nothing half-written; /health answers 503 meanwhile; once the store is back
 *   the same instances work again, without a restart of their own.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createS3Store, listAll, storeConfigFromEnv, StoreUnavailableError, type ObjectStore, type S3StoreConfig } from '../src/store/backends/index.js';
import { createPreviewStore } from '../src/store/previews.js';
import { createProjectStore } from '../src/store/projects.js';
import { configFromEnv, ConfigError, type Config } from '../src/config.js';
import { PLACES_DIR } from './support/paths.js';
import { startAssetServer, type AssetServer } from './support/asset-server.js';
import { S3_TEST_ENV, startS3Server, type TestS3Server } from './support/s3-server.js';
import { startS3Proxy, type S3Proxy } from './support/s3-proxy.js';
import {
  CREATE, HEALTH, analyze, as, create, expectError, getJson, multipartBody, openUpload, postJson, startService, upload, uploadsIn, waitUntil, type Service,
} from './support/service.js';

const PLACE = readFileSync(join(PLACES_DIR, 'rocket-arena-2006.rbxl')); // 15 scripts, 18 asset ids
const BOUNDARY = 'scale-test-boundary-3f9a';

/** The same place with other bytes: the decoder ignores anything after the END chunk. */
const variant = (tag: string, padding = 0): Buffer => Buffer.concat([PLACE, Buffer.from(`\n${tag}`), Buffer.alloc(padding)]);
const sha256 = (bytes: Uint8Array | string): string => createHash('sha256').update(bytes).digest('hex');
const bytesOf = (id: string): Buffer => Buffer.from(`asset ${id} `.repeat(50));

interface Fleet {
  s3: TestS3Server;
  proxy: S3Proxy;
  /** A client of the same store, to look at what the instances stored. */
  objects: ObjectStore;
  /** The instances' store configuration, to start another. */
  store: S3StoreConfig;
  instances: Service[];
  close(): Promise<void>;
}

async function startFleet(count: number, overrides: Partial<Config> = {}, env: Record<string, string> = {}): Promise<Fleet> {
  const s3 = await startS3Server();
  const proxy = await startS3Proxy(s3.port, { conditional: true, s3rver: { directory: s3.directory, bucket: s3.bucket } });
  const store = storeConfigFromEnv({
    ...S3_TEST_ENV, STORE_URL: `s3://${s3.bucket}/fleet`, S3_ENDPOINT: proxy.endpoint, S3_TIMEOUT_MS: '2000', S3_MAX_ATTEMPTS: '2', ...env,
  }, '/unused') as S3StoreConfig;
  const objects = createS3Store(store);
  const instances: Service[] = [];
  try {
    for (let i = 0; i < count; i++) instances.push(await startService({ store, workers: 1, ...overrides }));
  } catch (error) {
    await Promise.all(instances.map((instance) => instance.close()));
    throw error;
  }
  return {
    s3, proxy, objects, store, instances,
    async close() {
      await Promise.all(instances.map((instance) => instance.close()));
      await objects.close();
      await proxy.close();
      await s3.close();
    },
  };
}

/**
 * The keys under `prefix`, as the test sees them. s3rver lists by walking its
 * directory tree, and a walk that meets a file or folder an instance removes at that
 * moment (a multipart upload's parts, a sweep) answers 500; the listing is tried again
 * then, as a client of a real store would on a 5xx.
 */
async function keys(objects: ObjectStore, prefix: string): Promise<string[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      const found: string[] = [];
      for await (const info of listAll(objects, prefix)) found.push(info.key);
      return found;
    } catch (error) {
      if (!(error instanceof StoreUnavailableError) || attempt === 5) throw error;
      await sleep(100);
    }
  }
}

/** Who the stored uploader entries of a preview name (one object each). */
async function storedUploaders(objects: ObjectStore, hash: string): Promise<string[]> {
  const users: string[] = [];
  for (const key of await keys(objects, `previews/${hash}/uploaders/`)) {
    const entry = await objects.get(key);
    users.push((JSON.parse(entry!.body.toString('utf8')) as { user: string }).user);
  }
  return users.sort();
}

async function bytesOfResponse(response: Response): Promise<Buffer> {
  return Buffer.from(await response.arrayBuffer());
}

describe('three instances sharing one S3 store', () => {
  let fleet: Fleet;
  let assets: AssetServer;
  let a: Service;
  let b: Service;
  let c: Service;

  before(async () => {
    assets = await startAssetServer({ assets: {} });
    fleet = await startFleet(3, { assetUrlTemplate: assets.templateUrl, assetRetries: 0 });
    [a, b, c] = fleet.instances as [Service, Service, Service];
  });
  after(async () => {
    await fleet.close();
    await assets.close();
  });

  test('analyze on A, create on B in every script mode; document, summary and assets read from C; each asset downloaded once', async () => {
    const analysis = await analyze(a, PLACE, 'rocket.rbxl', as('ann'));
    assert.equal(analysis.preview_hash, sha256(PLACE));
    const stored = await fleet.objects.get(`previews/${analysis.preview_hash}/analysis.json`);
    const ids = [...new Set((JSON.parse(stored!.body.toString('utf8')) as { assets: { id: string }[] }).assets.map((asset) => asset.id))];
    assert.equal(ids.length, analysis.report.assets_total);
    for (const id of ids) assets.assets[id] = { type: 'bytes', body: bytesOf(id) };

    for (const mode of ['disabled', 'enabled', 'skip'] as const) {
      const created = await create(b, { preview_hash: analysis.preview_hash, scripts_mode: mode }, as('ann'));
      assert.equal(created.assets_downloaded, ids.length, mode);
      assert.equal(created.assets_failed, 0);
      const doc = await getJson(c, `/api-rbxl/projects/${created.project_id}`, as('ann'));
      assert.equal(doc.status, 200, doc.text);
      assert.equal(doc.body.owner, 'ann');
      assert.equal(doc.body.scripts_mode, mode);
      assert.equal(doc.body.source.file_name, 'rocket.rbxl');
      assert.equal(mode === 'skip' ? doc.body.scripts.length === 0 : doc.body.scripts.length > 0, true, mode);
      const summary = await getJson(c, `/api-rbxl/projects/${created.project_id}/summary`, as('ann'));
      assert.equal(summary.body.project_id, created.project_id);
      assert.equal(summary.body.assets_downloaded, ids.length);
      // Every asset of the project, from C, is the bytes the asset host served for its id.
      for (const asset of summary.body.assets as { id: string; sha256: string }[]) {
        const response = await fetch(`${c.url}/api-rbxl/projects/${created.project_id}/assets/${asset.sha256}`, { headers: as('ann') });
        assert.equal(response.status, 200);
        assert.deepEqual(await bytesOfResponse(response), bytesOf(asset.id));
      }
      // The owner only, on every instance.
      for (const instance of [a, b, c]) await expectError(await fetch(`${instance.url}/api-rbxl/projects/${created.project_id}`, { headers: as('mallory') }), 404, 'not_found');
    }
    // The analysis's picture and the project's scene.glb, from instances that made neither.
    const picture = await fetch(`${c.url}/api-rbxl/previews/${analysis.preview_hash}/image.png`, { headers: as('ann') });
    assert.equal(picture.status, 200);
    assert.deepEqual((await bytesOfResponse(picture)).subarray(0, 8), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    for (const instance of [a, b, c]) await expectError(await fetch(`${instance.url}/api-rbxl/previews/${analysis.preview_hash}/image.png`, { headers: as('mallory') }), 404, 'not_found');
    const project = (await create(b, { preview_hash: analysis.preview_hash, scripts_mode: 'skip' }, as('ann'))).project_id;
    const scene = await fetch(`${c.url}/api-rbxl/projects/${project}/scene.glb`, { headers: as('ann') });
    assert.equal(scene.status, 200);
    const glb = await bytesOfResponse(scene);
    assert.equal(glb.subarray(0, 4).toString('latin1'), 'glTF');
    assert.ok((await keys(fleet.objects, `projects/${project}/`)).includes(`projects/${project}/scene.glb`), 'built once, stored for every instance');
    const again = await fetch(`${a.url}/api-rbxl/projects/${project}/scene.glb`, { headers: as('ann') });
    assert.deepEqual(await bytesOfResponse(again), glb);
    await expectError(await fetch(`${a.url}/api-rbxl/projects/${project}/scene.glb`, { headers: as('mallory') }), 404, 'not_found');
    // A create on another instance finds every asset in the store: the fleet downloaded each once.
    const onC = await create(c, { preview_hash: analysis.preview_hash }, as('ann'));
    assert.equal(onC.assets_downloaded, ids.length);
    for (const id of ids) assert.equal(assets.count('template', id), 1, `asset ${id} downloaded ${assets.count('template', id)} times`);
    // Content-addressed: one object per distinct body, its meta, and one index entry per id.
    assert.equal((await keys(fleet.objects, 'assets/ids/')).length, ids.length);
    assert.equal((await keys(fleet.objects, 'assets/sha256/')).length, 2 * new Set(ids.map((id) => sha256(bytesOf(id)))).size);
  });

  test('create progress: a create on B that names itself is polled on A and C; no one else sees it', async () => {
    const { preview_hash } = await analyze(a, variant('progress'), 'progress.rbxl', as('ann'));
    const id = 'fleet-progress-0001';
    const response = await fetch(b.url + CREATE, {
      method: 'POST', headers: { ...as('ann'), 'Content-Type': 'application/json', 'X-Create-Id': id }, body: JSON.stringify({ preview_hash, scripts_mode: 'skip' }),
    });
    assert.equal(response.status, 200);
    const { project_id } = (await response.json()) as { project_id: string };
    for (const instance of [a, c]) {
      let last: { status: number; body: any } = { status: 0, body: undefined };
      await waitUntil(async () => {
        last = await getJson(instance, `${CREATE}/${id}`, as('ann'));
        return last.status === 200 && last.body.phase === 'done';
      }, 'the other instances see the create done');
      assert.equal(last.body.project_id, project_id);
      assert.equal(last.body.create_id, id);
      await expectError(await fetch(`${instance.url}${CREATE}/${id}`, { headers: as('mallory') }), 404, 'not_found');
    }
    assert.deepEqual((await keys(fleet.objects, 'progress/')).length, 1, 'one object per create');
  });

  test('the same upload sent to A and B at once: one analysis, both uploaders, each with their own file name', async () => {
    const bytes = variant('twins');
    const [first, second] = await Promise.all([
      analyze(a, bytes, 'from-a.rbxl', as('ann')),
      analyze(b, bytes, 'from-b.rbxl', as('ben')),
    ]);
    assert.equal(first.preview_hash, second.preview_hash);
    assert.equal(first.report.file_name, 'from-a.rbxl');
    assert.equal(second.report.file_name, 'from-b.rbxl');
    const hash = first.preview_hash;
    const stored = await keys(fleet.objects, `previews/${hash}/`);
    assert.deepEqual(stored.filter((key) => !key.includes('/uploaders/')), ['analysis.json', 'picture.png', 'place'].map((name) => `previews/${hash}/${name}`));
    assert.deepEqual(await storedUploaders(fleet.objects, hash), ['ann', 'ben']);
    assert.deepEqual(await uploadsIn(a), []);
    assert.deepEqual(await uploadsIn(b), []);
    // Either may create, on the instance that never saw their upload.
    const annOnB = await create(b, { preview_hash: hash, scripts_mode: 'skip' }, as('ann'));
    const benOnA = await create(a, { preview_hash: hash, scripts_mode: 'skip' }, as('ben'));
    assert.equal((await getJson(c, `/api-rbxl/projects/${annOnB.project_id}`, as('ann'))).body.source.file_name, 'from-a.rbxl');
    assert.equal((await getJson(c, `/api-rbxl/projects/${benOnA.project_id}`, as('ben'))).body.source.file_name, 'from-b.rbxl');
  });

  test('a user who did not upload gets 404 on every instance, even where the preview is cached', async () => {
    const { preview_hash } = await analyze(a, variant('private'), 'mine.rbxl', as('ann'));
    await create(b, { preview_hash, scripts_mode: 'skip' }, as('ann')); // B has it cached now
    for (const instance of [a, b, c]) {
      const refused = await expectError(await postJson(instance, CREATE, { preview_hash }, as('mallory')), 404, 'not_found');
      const unknown = await expectError(await postJson(instance, CREATE, { preview_hash: sha256('nothing') }, as('mallory')), 404, 'not_found');
      assert.equal(refused.text, unknown.text);
    }
    // Once mallory uploads the same bytes (on C), mallory may create on A.
    await analyze(c, variant('private'), 'theirs.rbxl', as('mallory'));
    const created = await create(a, { preview_hash, scripts_mode: 'skip' }, as('mallory'));
    assert.equal((await getJson(b, `/api-rbxl/projects/${created.project_id}`, as('mallory'))).body.source.file_name, 'theirs.rbxl');
  });

  test('/health reports the shared store on every instance', async () => {
    for (const instance of [a, b, c]) {
      const health = await getJson(instance, HEALTH, {});
      assert.equal(health.status, 200);
      assert.equal(health.body.status, 'ok');
      assert.equal(health.body.store.kind, 's3');
      assert.equal(health.body.store.reachable, true);
      assert.match(health.body.store.location, /^s3:\/\/rbxl-test\/fleet\//);
    }
  });
});

describe('expiry across instances', () => {
  let fleet: Fleet;

  before(async () => {
    // No sweep but the one at start: what the instances answer after expiry is their own check on read.
    fleet = await startFleet(3, { previewTtlSeconds: 3, sweepIntervalMs: 600_000 });
  });
  after(() => fleet.close());

  test('a preview expires on every instance at once, whichever made it, and one sweep removes its objects', async () => {
    const [a, b, c] = fleet.instances as [Service, Service, Service];
    const bytes = variant('expiring');
    const { preview_hash } = await analyze(a, bytes, 'soon.rbxl', as('ann'));
    // Seen (and cached) on B and C while it lives.
    for (const instance of [b, c]) await create(instance, { preview_hash, scripts_mode: 'skip' }, as('ann'));
    const status = async (instance: Service): Promise<number> => (await postJson(instance, CREATE, { preview_hash, scripts_mode: 'skip' }, as('ann'))).status;
    // Each entry's key holds its expiry (a create refreshes it): wait past the latest one.
    const expiries = (await keys(fleet.objects, `previews/${preview_hash}/uploaders/`)).map((key) => Number(key.slice(key.lastIndexOf('.') + 1)));
    assert.ok(expiries.length > 0);
    await sleep(Math.max(...expiries) - Date.now() + 50);
    for (const instance of [a, b, c]) assert.equal(await status(instance), 404, 'an instance still serves an expired preview');
    assert.ok((await keys(fleet.objects, `previews/${preview_hash}/`)).length > 0, 'not swept yet');
    // The sweep (what the instances run one at a time, under the lease) removes every object of it.
    const sweeper = createPreviewStore({ objects: fleet.objects, workDir: '/nonexistent', cacheBytes: 0, ttlSeconds: 3 });
    assert.deepEqual(await sweeper.sweep(), [preview_hash]);
    assert.deepEqual(await keys(fleet.objects, `previews/${preview_hash}/`), []);
    // Uploaded again (on C), it lives again everywhere.
    await analyze(c, bytes, 'again.rbxl', as('ann'));
    for (const instance of [a, b]) assert.equal(await status(instance), 200);
  });
});

test('an instance starting on a shared store leaves other instances\' writes in progress alone: only leftovers older than ten minutes go', async () => {
  const fleet = await startFleet(0);
  try {
    // Two projects that never got their meta: one written two minutes ago (another instance's
    // create, still storing on a slow store), one eleven minutes ago (a crash's leftover).
    const written = async (id: string, minutesAgo: number): Promise<void> => {
      for (const name of ['document.json', 'place']) {
        await fleet.objects.put(`projects/${id}/${name}`, 'x');
        const file = join(fleet.s3.directory, fleet.s3.bucket, 'fleet', 'projects', id, `${name}._S3rver_object`);
        const then = new Date(Date.now() - minutesAgo * 60_000);
        await utimes(file, then, then);
      }
    };
    await written('p_aaaaaaaaaaaaaaaaaaaa', 2);
    await written('p_bbbbbbbbbbbbbbbbbbbb', 11);
    fleet.instances.push(await startService({ store: fleet.store, workers: 1 }));
    assert.deepEqual(await keys(fleet.objects, 'projects/'), ['projects/p_aaaaaaaaaaaaaaaaaaaa/document.json', 'projects/p_aaaaaaaaaaaaaaaaaaaa/place']);
  } finally {
    await fleet.close();
  }
});

test('a preview the store gives back damaged is the store\'s fault, never the user\'s file, and the next upload repairs it', async () => {
  const fleet = await startFleet(2);
  try {
    const [a, b] = fleet.instances as [Service, Service];
    const bytes = variant('damaged');
    const { preview_hash } = await analyze(a, bytes, 'damaged.rbxl', as('hal'));
    const stored = (name: string) => join(fleet.s3.directory, fleet.s3.bucket, 'fleet', 'previews', preview_hash, `${name}._S3rver_object`);
    // The map: same length, other bytes, so the store answers it as a good object.
    const place = await readFile(stored('place'));
    place.fill(0x41, 0, 64);
    await writeFile(stored('place'), place);
    const { message } = await expectError(await postJson(a, CREATE, { preview_hash, scripts_mode: 'skip' }, as('hal')), 503, 'store_unavailable');
    assert.match(message, /storage/);
    assert.equal(await fleet.objects.head(`previews/${preview_hash}/place`), undefined, 'read back wrong twice: removed');
    await analyze(a, bytes, 'damaged.rbxl', as('hal'));
    await create(a, { preview_hash, scripts_mode: 'skip' }, as('hal'));
    // The analysis: unreadable for an instance that has not cached it, until an upload replaces it.
    await writeFile(stored('analysis.json'), '{"torn');
    await analyze(b, bytes, 'again.rbxl', as('hal'));
    await create(b, { preview_hash, scripts_mode: 'skip' }, as('hal'));
  } finally {
    await fleet.close();
  }
});

test('close waits for a sweep already running, so nothing of it reaches the store after close', async () => {
  const fleet = await startFleet(1, { sweepIntervalMs: 100 });
  try {
    const [instance] = fleet.instances;
    // The next sweep's first request (its lease) is held unanswered: that sweep is running until it is let go.
    fleet.proxy.fault(/leases\/preview-sweep/, 'hold', 1);
    await waitUntil(() => fleet.proxy.held().length === 1, 'a sweep to be running');
    let closed = false;
    const closing = instance!.server.close(10_000).then(() => { closed = true; });
    await sleep(500);
    assert.equal(closed, false, 'close waits for the running sweep');
    fleet.proxy.releaseHeld();
    await closing;
    const seen = fleet.proxy.requests.length;
    await sleep(500);
    assert.deepEqual(fleet.proxy.requests.slice(seen), [], 'nothing reaches the store after close');
  } finally {
    await fleet.close();
  }
});

test('one shutdown grace covers both a request in flight and a running sweep', async () => {
  // The store's timeout well past the grace: the held sweep lasts until it is let go.
  const fleet = await startFleet(1, { sweepIntervalMs: 100 }, { S3_TIMEOUT_MS: '60000' });
  try {
    const [instance] = fleet.instances;
    fleet.proxy.fault(/leases\/preview-sweep/, 'hold', 1);
    await waitUntil(() => fleet.proxy.held().length === 1, 'a sweep to be running');
    // An upload whose body never ends: in flight until the grace is over.
    const body = multipartBody(BOUNDARY, [{ name: 'file', fileName: 'slow.rbxl', data: variant('grace') }]);
    const request = openUpload(instance!, BOUNDARY, body, as('ann'));
    const answer = new Promise<number>((resolve) => {
      request.on('response', (response) => { response.resume(); resolve(response.statusCode ?? 0); });
      request.on('error', () => resolve(0));
    });
    request.write(body.subarray(0, 1000));
    await waitUntil(async () => (await uploadsIn(instance!)).length === 1, 'the upload to be in flight');
    const grace = 1_000;
    const started = performance.now();
    await instance!.server.close(grace);
    const took = performance.now() - started;
    assert.equal(await answer, 503, 'the upload still open past the grace is answered');
    // Waiting for each in turn would take two graces.
    assert.ok(took >= grace - 50 && took < grace * 1.6, `close took ${Math.round(took)} ms for a grace of ${grace} ms`);
    request.destroy();
    fleet.proxy.releaseHeld();
  } finally {
    await fleet.close();
  }
});

describe('each user\'s share across instances', () => {
  let fleet: Fleet;

  before(async () => {
    fleet = await startFleet(2, { userMaxPreviews: 2, userMaxProjects: 1 });
  });
  after(() => fleet.close());

  test('previews and projects made on one instance count on the other; deleting a project frees it everywhere', async () => {
    const [a, b] = fleet.instances as [Service, Service];
    const first = await analyze(a, variant('share-1'), 'one.rbxl', as('ann'));
    await analyze(b, variant('share-2'), 'two.rbxl', as('ann'));
    // Two previews, one made on each instance: a third is refused on both.
    for (const instance of [a, b]) await expectError(await upload(instance, variant('share-3'), 'three.rbxl', as('ann')), 507, 'quota_exceeded');
    // The same bytes again cost nothing, on the instance that never saw them; someone else is not affected.
    await analyze(a, variant('share-2'), 'two-again.rbxl', as('ann'));
    await analyze(b, variant('share-3'), 'three.rbxl', as('ben'));

    const project = await create(a, { preview_hash: first.preview_hash, scripts_mode: 'skip' }, as('ann'));
    const { message } = await expectError(await postJson(b, CREATE, { preview_hash: first.preview_hash, scripts_mode: 'skip' }, as('ann')), 507, 'quota_exceeded');
    assert.match(message, /USER_MAX_PROJECTS/);
    const held = await keys(fleet.objects, `holdings/${sha256('ann')}/projects/`);
    assert.deepEqual(held.map((key) => key.split('/').pop()!.split('.')[0]), [project.project_id], 'one entry for the project');
    const deleted = await fetch(`${b.url}/api-rbxl/projects/${project.project_id}`, { method: 'DELETE', headers: as('ann') });
    assert.equal(deleted.status, 204);
    assert.deepEqual(await keys(fleet.objects, `holdings/${sha256('ann')}/projects/`), []);
    await create(a, { preview_hash: first.preview_hash, scripts_mode: 'skip' }, as('ann'));
  });
});

/** A project share entry's writes (PUT holdings/<user>/projects/...). */
const entryPuts = /^PUT \S*\/holdings\/[0-9a-f]{64}\/projects\//;

/** A project `user` creates on the fleet's first instance while the store refuses the next `refusals` writes of its share entry. */
async function createWithEntryRefused(fleet: Fleet, user: string, refusals: number) {
  const [instance] = fleet.instances as [Service];
  const { preview_hash } = await analyze(instance, variant(`count-${user}`), 'count.rbxl', as(user));
  fleet.proxy.fault(entryPuts, 'server_error', refusals);
  const project = await create(instance, { preview_hash, scripts_mode: 'skip' }, as(user));
  return { instance, preview_hash, project };
}

test('a project\'s share entry the store refuses at first is written on a later try, after the answer; meanwhile the project counts', async () => {
  const fleet = await startFleet(1, { userMaxProjects: 1 });
  try {
    // The first two tries fail, each twice (S3_MAX_ATTEMPTS is 2): the entry is written on the third, about 1.25 s later.
    const { instance, preview_hash, project } = await createWithEntryRefused(fleet, 'cat', 4);
    const entries = async () => (await keys(fleet.objects, `holdings/${sha256('cat')}/projects/`)).map((key) => key.split('/').pop()!.split('.')[0]);
    assert.deepEqual(await entries(), [], 'the create answered before its share entry was written');
    // Not written yet, and still counted: the share's one project is taken.
    await expectError(await postJson(instance, CREATE, { preview_hash, scripts_mode: 'skip' }, as('cat')), 507, 'quota_exceeded');
    await waitUntil(async () => (await entries()).length === 1, 'the entry to be written');
    assert.deepEqual(await entries(), [project.project_id]);
    await expectError(await postJson(instance, CREATE, { preview_hash, scripts_mode: 'skip' }, as('cat')), 507, 'quota_exceeded');
  } finally {
    await fleet.close();
  }
});

test('a create answers once its share entry is written: another instance counts the project by then', async () => {
  const fleet = await startFleet(2, { userMaxProjects: 1 });
  try {
    const [a, b] = fleet.instances as [Service, Service];
    const { preview_hash } = await analyze(a, variant('count-first'), 'count.rbxl', as('eve'));
    fleet.proxy.fault(entryPuts, 'hold', 1);
    let answered = false;
    const creating = create(a, { preview_hash, scripts_mode: 'skip' }, as('eve')).then((created) => { answered = true; return created; });
    await waitUntil(() => fleet.proxy.held().length === 1, 'the entry\'s write to be held');
    await sleep(300);
    assert.equal(answered, false, 'the create answered before its share entry was written');
    fleet.proxy.releaseHeld();
    await creating;
    await expectError(await postJson(b, CREATE, { preview_hash, scripts_mode: 'skip' }, as('eve')), 507, 'quota_exceeded');
  } finally {
    await fleet.close();
  }
});

test('a project deleted while its share entry is still being tried leaves no entry behind, on either instance', async () => {
  const fleet = await startFleet(2, { userMaxProjects: 1 });
  try {
    const [a, b] = fleet.instances as [Service, Service];
    const entries = async (user: string) => keys(fleet.objects, `holdings/${sha256(user)}/projects/`);
    const entryWrites = () => fleet.proxy.requests.filter((line) => entryPuts.test(line)).length;
    // Deleted on the other instance: A's retry writes the entry after the delete, sees the project gone, removes it.
    const other = await createWithEntryRefused(fleet, 'fay', 2);
    assert.equal((await fetch(`${b.url}/api-rbxl/projects/${other.project.project_id}`, { method: 'DELETE', headers: as('fay') })).status, 204);
    await waitUntil(() => entryWrites() >= 3, 'the retry\'s write');
    await waitUntil(async () => (await entries('fay')).length === 0, 'the late entry to be removed');
    await sleep(300);
    assert.deepEqual(await entries('fay'), []);
    // Deleted on the instance that tries: its tries stop.
    const before = entryWrites();
    const own = await createWithEntryRefused(fleet, 'gus', 2);
    assert.equal((await fetch(`${a.url}/api-rbxl/projects/${own.project.project_id}`, { method: 'DELETE', headers: as('gus') })).status, 204);
    await sleep(1500);
    assert.equal(entryWrites() - before, 2, 'a write after the project was deleted');
    assert.deepEqual(await entries('gus'), []);
  } finally {
    await fleet.close();
  }
});

test('a share entry still refused when the service stops: the retries end with the service, the project stays', async () => {
  const fleet = await startFleet(1);
  try {
    const { instance, project } = await createWithEntryRefused(fleet, 'dan', 1000);
    await waitUntil(() => fleet.proxy.requests.filter((line) => entryPuts.test(line)).length >= 2, 'the first try');
    // The operator is told as the service stops, not after the retries would have run out.
    const said: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => { said.push(String(chunk)); return write(chunk, ...rest); });
    try {
      await instance.server.close(1000);
    } finally {
      process.stderr.write = write;
    }
    assert.ok(said.some((line) => line.includes('project not counted in its owner') && line.includes(project.project_id)), said.join(''));
    const tries = fleet.proxy.requests.filter((line) => entryPuts.test(line)).length;
    await sleep(1500);
    assert.equal(fleet.proxy.requests.filter((line) => entryPuts.test(line)).length, tries, 'a retry after the service stopped');
    assert.ok(tries < 8, `${tries} writes: the retries ran to their end rather than stopping with the service`);
    assert.ok((await keys(fleet.objects, `projects/${project.project_id}/`)).includes(`projects/${project.project_id}/meta.json`), 'the project stays');
  } finally {
    await fleet.close();
  }
});

describe('faults: the store stopped and started again', () => {
  let fleet: Fleet;
  let a: Service;
  let b: Service;
  const PART = 5 * 1024 * 1024;

  before(async () => {
    fleet = await startFleet(2, {}, { S3_PART_SIZE: String(PART) });
    [a, b] = fleet.instances as [Service, Service];
  });
  after(() => fleet.close());

  /** Stops the store when it receives a request matching `pattern`. */
  function stopOn(pattern: RegExp): Promise<void> {
    return new Promise((resolve) => {
      fleet.s3.onRequest((line) => {
        if (!pattern.test(line)) return;
        fleet.s3.onRequest(undefined);
        void fleet.s3.stop().then(resolve);
      });
    });
  }

  async function restart(): Promise<void> {
    await fleet.s3.start();
    // /health reuses the store's answer for ~2 s: both instances say ok again by then.
    for (const instance of [a, b]) await waitUntil(async () => (await getJson(instance, HEALTH, {})).status === 200, 'health is ok again');
  }

  test('stopped mid-upload (a multipart upload of the map): 503 with Retry-After, nothing stored, no temp file; recovers', async () => {
    const bytes = variant('multipart', 2 * PART + 1000); // three parts
    const hash = sha256(bytes);
    const stopped = stopOn(/partNumber=2/);
    const response = await upload(a, bytes, 'big.rbxl', as('ann'));
    await stopped;
    const refused = await expectError(response, 503, 'store_unavailable');
    assert.match(response.headers.get('retry-after') ?? '', /^\d+$/);
    assert.doesNotMatch(refused.message, /s3|rbxl-test|127\.0\.0\.1/i, 'the store\'s address leaks to the client');
    assert.deepEqual(await uploadsIn(a), []);
    // While the store is down: /health answers 503 and says why; every store request answers 503.
    await waitUntil(async () => (await getJson(b, HEALTH, {})).status === 503, 'health answers 503');
    const health = await getJson(b, HEALTH, {});
    assert.equal(health.body.status, 'unavailable');
    assert.equal(health.body.store.reachable, false);
    await expectError(await postJson(b, CREATE, { preview_hash: hash }, as('ann')), 503, 'store_unavailable');

    await restart();
    assert.deepEqual(await keys(fleet.objects, `previews/${hash}/`), [], 'part of a preview is visible');
    // The same instances, not restarted: the upload goes through now, and creates on the other one.
    const analysis = await analyze(a, bytes, 'big.rbxl', as('ann'));
    assert.equal(analysis.preview_hash, hash);
    assert.deepEqual(await keys(fleet.objects, `previews/${hash}/`).then((found) => found.filter((key) => !key.includes('/uploaders/'))),
      ['analysis.json', 'picture.png', 'place'].map((name) => `previews/${hash}/${name}`));
    const created = await create(b, { preview_hash: hash, scripts_mode: 'skip' }, as('ann'));
    assert.equal((await getJson(a, `/api-rbxl/projects/${created.project_id}`, as('ann'))).status, 200);
  });

  test('stopped mid-create (storing the document): 503, no project visible, leftovers swept; recovers', async () => {
    const { preview_hash } = await analyze(a, variant('mid-create'), 'doc.rbxl', as('ann'));
    const before = new Set((await keys(fleet.objects, 'projects/')).map((key) => key.split('/')[1]));
    const stopped = stopOn(/\/projects\/p_[a-z2-7]{20}\/document\.json/);
    const response = await postJson(b, CREATE, { preview_hash, scripts_mode: 'enabled' }, as('ann'));
    await stopped;
    await expectError(response, 503, 'store_unavailable');
    assert.match(response.headers.get('retry-after') ?? '', /^\d+$/);
    assert.deepEqual((await uploadsIn(b)).filter((name) => name.includes('document')), [], 'the document being built was left behind');

    await restart();
    // Whatever reached the store before it stopped has no sidecar: no project exists, none can be read.
    const left = (await keys(fleet.objects, 'projects/')).filter((key) => !before.has(key.split('/')[1]));
    assert.ok(!left.some((key) => key.endsWith('/meta.json')), `a project became visible: ${left.join(', ')}`);
    for (const id of new Set(left.map((key) => key.split('/')[1]!))) {
      for (const instance of [a, b]) await expectError(await fetch(`${instance.url}/api-rbxl/projects/${id}`, { headers: as('ann') }), 404, 'not_found');
    }
    // The sweep takes such leftovers once stale; whole projects stay.
    await createProjectStore({ objects: fleet.objects, workDir: '/nonexistent' }).sweep({ staleMs: 0, createdBefore: 0, now: Date.now() + 1000 });
    assert.deepEqual((await keys(fleet.objects, 'projects/')).filter((key) => !before.has(key.split('/')[1])), []);
    for (const id of before) assert.ok((await keys(fleet.objects, `projects/${id}/`)).includes(`projects/${id}/meta.json`));

    // The same instance, not restarted, creates now.
    const created = await create(b, { preview_hash, scripts_mode: 'enabled' }, as('ann'));
    const doc = await getJson(a, `/api-rbxl/projects/${created.project_id}`, as('ann'));
    assert.equal(doc.status, 200);
    assert.equal(doc.body.scripts_mode, 'enabled');
  });
});

test('the environment chooses the store: unset is the local disk, STORE_URL an S3 store; malformed values stop the start', () => {
  assert.equal(configFromEnv({}).store, null);
  assert.equal(configFromEnv({}).storeSweep, true);
  const config = configFromEnv({ STORE_URL: 's3://fleet-bucket/imports', S3_ENDPOINT: 'http://minio:9000', S3_FORCE_PATH_STYLE: '1', AWS_REGION: 'eu-west-1', STORE_SWEEP: '0' });
  assert.equal(config.store?.kind, 's3');
  assert.deepEqual(config.store?.kind === 's3' && [config.store.bucket, config.store.prefix, config.store.endpoint, config.store.forcePathStyle, config.store.region],
    ['fleet-bucket', 'imports/', 'http://minio:9000', true, 'eu-west-1']);
  assert.equal(config.storeSweep, false);
  assert.throws(() => configFromEnv({ STORE_URL: 'http://bucket' }), (error: unknown) => error instanceof ConfigError && /STORE_URL/.test(error.message));
  assert.throws(() => configFromEnv({ STORE_URL: 's3://b', AWS_ACCESS_KEY_ID: 'x' }), ConfigError);
  assert.throws(() => configFromEnv({ STORE_SWEEP: 'yes' }), ConfigError);
});
