/**
 * Issue 10, defect 5: the data directory has bounds. MAX_DATA_BYTES (and the disk's
 * free space) answer 507 instead of failing writes, and /health says `degraded`; each
 * user has a share (previews, projects, bytes); an owner deletes a project; projects
 * past their retention and every temp file a crash leaves are swept, at start and on
 * the sweeper's interval.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { link, mkdir, mkdtemp, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createProjectStore } from '../src/store/projects.js';
import { createDiskQuota } from '../src/store/quota.js';
import { createDiskStore } from '../src/store/backends/index.js';
import { PLACES_DIR } from './support/paths.js';
import { analyze, as, create, expectError, getJson, HEALTH, postJson, CREATE, startService, upload, waitUntil, serviceOf } from './support/service.js';
import { startServer } from '../src/http/server.js';

const PLACE = readFileSync(join(PLACES_DIR, 'rocket-arena-2006.rbxl'));
const variant = (tag: string): Buffer => Buffer.concat([PLACE, Buffer.from(tag)]);

test('a full data directory answers 507 with Retry-After, /health says degraded, and room made by a sweep brings it back', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'rbxl-disk-'));
  await writeFile(join(dataDir, 'ballast'), Buffer.alloc(200_000));
  const server = await startServer({ host: '127.0.0.1', port: 0, dataDir, log: false, workers: 1, maxDataBytes: 150_000, sweepIntervalMs: 50 });
  try {
    const service = serviceOf(server, dataDir);
    const health = await getJson(service, HEALTH, {});
    assert.equal(health.status, 200);
    assert.equal(health.body.status, 'degraded');
    assert.equal(health.body.storage.full, true);
    const refused = await upload(service, PLACE, 'place.rbxl', as('ann'));
    assert.equal(refused.headers.get('retry-after'), '60');
    const { message } = await expectError(refused, 507, 'storage_full');
    // The operator's figures stay in /health; the user is told what happened and what to do.
    assert.equal(message, 'the service is out of storage space for now; try again later');
    await rm(join(dataDir, 'ballast'));
    await waitUntil(async () => (await getJson(service, HEALTH, {})).body.status === 'ok', 'the sweeper to count the room again');
    await analyze(service, PLACE, 'place.rbxl', as('ann'));
  } finally {
    await server.close(1000);
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('a project document that does not fit in MAX_DATA_BYTES is refused with 507, and nothing of it stays', async () => {
  // Stored documents are Brotli-compressed (rocket-arena's is about 60 KB): a 1.6 MB place whose
  // document is stored in about 2 MB, with room for its preview but not for that.
  const booga = readFileSync(join(PLACES_DIR, 'booga.rbxl'));
  const service = await startService({ maxDataBytes: 2_600_000 });
  try {
    const { preview_hash } = await analyze(service, booga, 'place.rbxl', as('ann'));
    await expectError(await postJson(service, CREATE, { preview_hash }, as('ann')), 507, 'storage_full');
    // Nothing in the store (DATA_DIR/objects/projects), no document left being built (DATA_DIR/uploads).
    assert.deepEqual(await readdir(join(service.dataDir, 'objects', 'projects'), { recursive: true }).catch(() => []), []);
    assert.deepEqual((await readdir(join(service.dataDir, 'uploads'))).filter((name) => name.endsWith('.tmp')), []);
  } finally {
    await service.close();
  }
});

test('each user has a share: previews, projects and bytes; deleting a project frees it', async () => {
  const service = await startService({ userMaxPreviews: 2, userMaxProjects: 1 });
  try {
    const first = await analyze(service, variant('1'), 'a.rbxl', as('ann'));
    await analyze(service, variant('2'), 'b.rbxl', as('ann'));
    await expectError(await upload(service, variant('3'), 'c.rbxl', as('ann')), 507, 'quota_exceeded');
    // Someone else is not affected, and the same bytes again cost ann nothing.
    await analyze(service, variant('3'), 'c.rbxl', as('bob'));
    await analyze(service, variant('1'), 'a.rbxl', as('ann'));

    const project = await create(service, { preview_hash: first.preview_hash }, as('ann'));
    const { message } = await expectError(await postJson(service, CREATE, { preview_hash: first.preview_hash }, as('ann')), 507, 'quota_exceeded');
    assert.match(message, /delete/);
    // Only the owner deletes: anyone else gets the same 404 as for nothing, and the project stays.
    const path = `/api-rbxl/projects/${project.project_id}`;
    await expectError(await fetch(service.url + path, { method: 'DELETE', headers: as('bob') }), 404, 'not_found');
    assert.equal((await getJson(service, path, as('ann'))).status, 200);
    const deleted = await fetch(service.url + path, { method: 'DELETE', headers: as('ann') });
    assert.equal(deleted.status, 204);
    assert.equal((await getJson(service, path, as('ann'))).status, 404);
    await expectError(await fetch(service.url + path, { method: 'DELETE', headers: as('ann') }), 404, 'not_found');
    await create(service, { preview_hash: first.preview_hash }, as('ann'));

    const bytes = await startService({ userMaxBytes: PLACE.length + 1000 });
    try {
      await analyze(bytes, variant('x'), 'x.rbxl', as('cy'));
      await expectError(await upload(bytes, variant('y'), 'y.rbxl', as('cy')), 507, 'quota_exceeded');
    } finally {
      await bytes.close();
    }
  } finally {
    await service.close();
  }
});

test('a user\'s share is counted again from disk when the service restarts', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'rbxl-disk-'));
  const config = { host: '127.0.0.1', port: 0, dataDir, log: false, workers: 1, userMaxPreviews: 1 };
  let server = await startServer(config);
  try {
    const service = serviceOf(server, dataDir);
    await analyze(service, variant('r1'), 'a.rbxl', as('dee'));
    await server.close(1000);
    server = await startServer(config);
    await expectError(await upload(serviceOf(server, dataDir), variant('r2'), 'b.rbxl', as('dee')), 507, 'quota_exceeded');
  } finally {
    await server.close(1000); // (a failed check must not leave it running: the test file would never end)
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('temp files a crash left are swept at start (and stale ones on the interval); fresh ones of a live writer are kept', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'rbxl-disk-'));
  const old = new Date(Date.now() - 2 * 60_000);
  const stale = new Date(Date.now() - 11 * 60_000);
  // The store's objects live under DATA_DIR/objects (the disk object store, src/store/backends/disk.ts).
  const objects = join(dataDir, 'objects');
  const files = {
    project: join(objects, 'projects', 'p_aaaaaaaaaaaaaaaaaaaa', '.document.json.0123456789ab.tmp'),
    orphan: join(objects, 'projects', 'p_bbbbbbbbbbbbbbbbbbbb', 'document.json'),
    index: join(objects, 'assets', 'ids', '.123.json.0123456789ab.tmp'),
    meta: join(objects, 'assets', 'sha256', 'ab', `.${'ab'.repeat(32)}.json.0123456789ab.tmp`),
    part: join(dataDir, 'assets', 'tmp', '0123.part'),
    preview: join(objects, 'previews', 'ab'.repeat(32), '.analysis.json.0123456789ab.tmp'),
    upload: join(dataDir, 'uploads', 'upload-0123.tmp'),
  };
  const fresh = join(objects, 'projects', 'p_cccccccccccccccccccc', '.document.json.0123456789ab.tmp');
  // An upload another process is writing (say a second start over the same DATA_DIR): kept, as it was written to within the minute.
  const freshUpload = join(dataDir, 'uploads', 'upload-4567.tmp');
  for (const path of [...Object.values(files), fresh, freshUpload]) {
    await mkdir(join(path, '..'), { recursive: true });
    await writeFile(path, Buffer.alloc(1000));
    if (path !== fresh && path !== freshUpload) await utimes(path, files.preview === path ? stale : old, files.preview === path ? stale : old);
  }
  const server = await startServer({ host: '127.0.0.1', port: 0, dataDir, log: false, workers: 1, sweepIntervalMs: 50 });
  const exists = (path: string) => stat(path).then(() => true, () => false);
  try {
    for (const [what, path] of Object.entries(files)) assert.equal(await exists(path), false, `${what} was not swept at start`);
    assert.equal(await exists(fresh), true, 'a temp file being written (fresh) was removed');
    assert.equal(await exists(freshUpload), true, 'an upload being written (fresh) was removed at start');
    await utimes(fresh, stale, stale);
    await waitUntil(async () => !(await exists(fresh)), 'the sweeper to remove the stale temp file');
  } finally {
    await server.close(1000);
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('project retention: the store sweeps projects created before the cut-off', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'rbxl-disk-'));
  try {
    const store = createProjectStore({ objects: createDiskStore({ root: join(dataDir, 'objects') }), workDir: join(dataDir, 'uploads') });
    const make = async (createdAt: number) => {
      const { id, tempPath } = await store.prepare();
      await writeFile(tempPath, '{}');
      await store.commit(id, tempPath, { owner: 'ann', assets: [], bytes: 2, createdAt });
      return id;
    };
    const oldId = await make(Date.now() - 10 * 86_400_000);
    const newId = await make(Date.now());
    assert.deepEqual(await store.sweep({ staleMs: 60_000, createdBefore: Date.now() - 5 * 86_400_000 }), [{ id: oldId, owner: 'ann' }]);
    assert.equal(await store.getMeta(oldId), undefined);
    assert.equal((await store.getMeta(newId))?.owner, 'ann');
    assert.deepEqual(await store.sweep({ staleMs: 60_000, createdBefore: 0 }), []);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('an upgrade keeps projects and assets stored before the object store (DATA_DIR/projects, DATA_DIR/assets) by moving them in', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'rbxl-disk-'));
  const id = 'p_legacylegacylegacyle';
  const asset = Buffer.from('legacy asset bytes');
  const sha = createHash('sha256').update(asset).digest('hex');
  const document = JSON.stringify({ format: 'rbxl-import/project', version: 1, owner: 'old-owner', title: 'Old' });
  const files: [string, string | Buffer][] = [
    [join(dataDir, 'projects', `${id}.json`), document],
    [join(dataDir, 'projects', `${id}.summary`), JSON.stringify({ project_id: id, title: 'Old' })],
    [join(dataDir, 'projects', `${id}.meta`), JSON.stringify({ owner: 'old-owner', assets: [sha], bytes: document.length, createdAt: 1 })],
    [join(dataDir, 'assets', 'sha256', sha.slice(0, 2), sha), asset],
    [join(dataDir, 'assets', 'sha256', sha.slice(0, 2), `${sha}.json`), JSON.stringify({ sha256: sha, size: asset.length, contentType: 'image/png' })],
    [join(dataDir, 'assets', 'ids', '77.json'), JSON.stringify({ id: '77', sha256: sha })],
  ];
  for (const [path, data] of files) {
    await mkdir(join(path, '..'), { recursive: true });
    await writeFile(path, data);
  }
  const server = await startServer({ host: '127.0.0.1', port: 0, dataDir, log: false, workers: 1 });
  try {
    const service = serviceOf(server, dataDir);
    const doc = await getJson(service, `/api-rbxl/projects/${id}`, as('old-owner'));
    assert.equal(doc.text, document);
    assert.equal((await getJson(service, `/api-rbxl/projects/${id}/summary`, as('old-owner'))).body.title, 'Old');
    const bytes = await fetch(`${server.url}/api-rbxl/projects/${id}/assets/${sha}`, { headers: as('old-owner') });
    assert.equal(bytes.status, 200);
    assert.deepEqual(Buffer.from(await bytes.arrayBuffer()), asset);
    assert.equal((await getJson(service, `/api-rbxl/projects/${id}`, as('someone'))).status, 404);
    for (const [path] of files) assert.equal(await stat(path).then(() => true, () => false), false, `${path} was left behind`);
  } finally {
    await server.close(1000);
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('disk use counts a hard-linked file once (a project links its map to the preview\'s)', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'rbxl-quota-links-'));
  try {
    const bytes = 100_000;
    await mkdir(join(dataDir, 'objects', 'previews'), { recursive: true });
    await writeFile(join(dataDir, 'objects', 'previews', 'map'), Buffer.alloc(bytes, 1));
    for (let i = 0; i < 4; i++) {
      await mkdir(join(dataDir, 'objects', 'projects', `p${i}`), { recursive: true });
      await link(join(dataDir, 'objects', 'previews', 'map'), join(dataDir, 'objects', 'projects', `p${i}`, 'place'));
    }
    await writeFile(join(dataDir, 'other'), Buffer.alloc(10, 1));
    const quota = createDiskQuota({ dataDir, maxDataBytes: 1_000_000 });
    await quota.start();
    assert.equal(quota.state().used_bytes, bytes + 10);
    assert.equal(quota.room() <= 1_000_000 - bytes - 10, true);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
