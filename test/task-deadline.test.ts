/**
 * The worker task deadline (TASK_TIMEOUT_MS): a task that runs past it ends its worker
 * (Piscina starts another) and comes back as a `too_large` refusal; time spent waiting
 * in the queue does not count; through the service, the request gets 413 and /health
 * counts it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createWorkerPool, type WorkerPool } from '../src/workers/pool.js';
import { createDeadlines, TASK_FINISHED, TASK_RUNNING } from '../src/workers/deadlines.js';
import { memoryBudget } from '../src/service/budget.js';
import { configFromEnv, ConfigError, MAX_PREVIEW_TTL_SECONDS, MAX_TIMER_MS } from '../src/config.js';
import { holdingKeys } from '../src/store/backends/keys.js';
import { PLACES_DIR } from './support/paths.js';
import { analyze, as, create, CREATE, expectError, getJson, HEALTH, postJson, startService, upload, serviceOf } from './support/service.js';
import { startServer } from '../src/http/server.js';
import { generatePlace } from '../bench/generate.js';
import { encode } from '../src/parser/writer/index.js';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { assetPath } from '../src/assets/store.js';
import { finishedConversions } from '../src/assets/converted.js';
import { writeMeshV2 } from './support/mesh-writer.js';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

const BUSY_TASK = new URL('./support/busy-task.js', import.meta.url);
/** Far past every deadline here. */
const STUCK = 30_000;

function busyPool(taskTimeoutMs: number, workers = 1): WorkerPool {
  const { task } = memoryBudget({ maxMemoryMb: 1024, workers, previewCacheBytes: 0 });
  return createWorkerPool({ workers, maxQueue: 16, limits: task, taskTimeoutMs, filename: BUSY_TASK });
}

/** Runs the busy worker for `ms` through the pool's public API (the task's kind does not matter to it). */
function busy(pool: WorkerPool, ms: number): Promise<unknown> {
  // (A "stuck" task is 30 s, not for ever: were the deadline broken, the test's timeout fails it and the process still ends.)
  return pool.analyze({ ms } as unknown as Parameters<WorkerPool['analyze']>[0]);
}

test('a task that runs past the deadline is refused, its worker replaced, and the next task runs', { timeout: 20_000 }, async () => {
  const pool = busyPool(300);
  try {
    const started = performance.now();
    const refused = await busy(pool, STUCK);
    const waited = performance.now() - started;
    assert.deepEqual(refused, { ok: false, reason: 'too_large', message: 'the map took more than 300 ms to process here (TASK_TIMEOUT_MS)' });
    // Ended between the deadline and two ticks (75 ms each) after it, with room for a loaded machine.
    assert.ok(waited >= 300 && waited < 3_000, `ended after ${waited} ms`);
    assert.equal(pool.stats().timed_out, 1);
    assert.deepEqual(await busy(pool, 20), { ok: true, ms: 20 });
    assert.equal(pool.stats().workers, 1);
    assert.equal(pool.stats().timed_out, 1);
  } finally {
    await pool.close();
  }
});

test('time in the queue does not count: five tasks of 250 ms on one worker all finish under a 1 s deadline', async () => {
  const pool = busyPool(1_000);
  try {
    const started = performance.now();
    const results = await Promise.all(Array.from({ length: 5 }, () => busy(pool, 250)));
    // The last one was submitted with the others and ended more than a deadline later.
    assert.ok(performance.now() - started >= 1_250);
    assert.deepEqual(results, Array.from({ length: 5 }, () => ({ ok: true, ms: 250 })));
    assert.equal(pool.stats().timed_out, 0);
  } finally {
    await pool.close();
  }
});

test('only the task past its deadline is ended: the others on other workers finish', { timeout: 20_000 }, async () => {
  const pool = busyPool(400, 2);
  try {
    // The second task starts while the first runs and is still running when the first is ended.
    const stuck = busy(pool, STUCK);
    await new Promise((resolve) => setTimeout(resolve, 250));
    const started = performance.now();
    const fine = await busy(pool, 300);
    assert.ok(performance.now() - started >= 300, 'the second task ran its whole time');
    assert.equal((await stuck as { ok: boolean }).ok, false);
    assert.deepEqual(fine, { ok: true, ms: 300 });
    assert.equal(pool.stats().timed_out, 1);
  } finally {
    await pool.close();
  }
});

test('through the service: an analysis past TASK_TIMEOUT_MS answers 413 map_too_large, /health counts it, and no upload is left behind', { timeout: 60_000 }, async () => {
  // 1 ms: no analysis of a real place ends between two of the deadline's 10 ms ticks.
  const service = await startService({ workers: 1, taskTimeoutMs: 1 });
  try {
    const place = readFileSync(join(PLACES_DIR, 'booga.rbxl'));
    const { message } = await expectError(await upload(service, place, 'booga.rbxl', as('ann')), 413, 'map_too_large');
    assert.match(message, /took more than 1 ms .*TASK_TIMEOUT_MS/);
    const health = await getJson(service, HEALTH, {});
    assert.equal(health.body.workers.timed_out, 1);
    assert.equal(health.body.workers.replaced, 0, 'not counted as running out of memory');
    const uploads = await readdir(join(service.dataDir, 'uploads')).catch(() => []);
    assert.deepEqual(uploads, []);
  } finally {
    await service.close();
  }
});

test('a deadline watches only what is in flight: a task its worker has finished is never aborted, and the timer stops with the last task', async () => {
  const deadlines = createDeadlines(100);
  try {
    const finishing = deadlines.add();
    const stuck = deadlines.add();
    Atomics.store(finishing.started, 0, TASK_RUNNING);
    Atomics.store(stuck.started, 0, TASK_RUNNING);
    await sleep(60); // both seen running (a tick is 25 ms)
    // The worker is done and its result is on the way: the main thread has not read it yet.
    Atomics.store(finishing.started, 0, TASK_FINISHED);
    await sleep(340);
    assert.equal(stuck.signal.aborted, true);
    assert.equal(finishing.signal.aborted, false);
    assert.deepEqual(deadlines.watching(), { tasks: 1, ticking: true });
    finishing.done();
    stuck.done();
    assert.deepEqual(deadlines.watching(), { tasks: 0, ticking: false });
    // Queued and never started: no deadline runs.
    const queued = deadlines.add();
    await sleep(300);
    assert.equal(queued.signal.aborted, false);
    queued.done();
  } finally {
    deadlines.close();
  }
});

test('a create whose build runs past TASK_TIMEOUT_MS answers 413; no project and no temp file stay', { timeout: 120_000 }, async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'rbxl-deadline-'));
  const config = { host: '127.0.0.1', port: 0, dataDir, log: false, workers: 1 };
  // 150k parts: its build (seconds) is ended while it writes the document, after the decode (a fraction of a second).
  const place = encode(generatePlace({ parts: 150_000, scripts: 20, uniqueAssets: 10, seed: 7 }));
  let server = await startServer(config);
  try {
    const service = serviceOf(server, dataDir);
    const { preview_hash } = await analyze(service, place, 'big.rbxl', as('ann'));
    await server.close(1000);
    // The same data with a deadline this build does not meet.
    server = await startServer({ ...config, taskTimeoutMs: 500 });
    const again = serviceOf(server, dataDir);
    const { message } = await expectError(await postJson(again, CREATE, { preview_hash }, as('ann')), 413, 'map_too_large');
    assert.match(message, /TASK_TIMEOUT_MS/);
    assert.deepEqual(await readdir(join(dataDir, 'objects', 'projects')).catch(() => []), []);
    assert.deepEqual((await readdir(join(dataDir, 'uploads'))).filter((name) => name.endsWith('.tmp')), []);
  } finally {
    await server.close(1000);
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('a scene.glb refused past the deadline is answered again without a build while the limits stay; new limits build it', { timeout: 120_000 }, async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'rbxl-scene-deadline-'));
  const config = { host: '127.0.0.1', port: 0, dataDir, log: false, workers: 1 };
  const place = readFileSync(join(PLACES_DIR, 'rocket-arena-2006.rbxl'));
  let server = await startServer(config);
  try {
    const first = serviceOf(server, dataDir);
    const { preview_hash } = await analyze(first, place, 'rocket.rbxl', as('ann'));
    const { project_id } = await create(first, { preview_hash, scripts_mode: 'skip' }, as('ann'));
    const sceneOf = (service: typeof first) => fetch(`${service.url}/api-rbxl/projects/${project_id}/scene.glb`, { headers: as('ann') });
    await server.close(1000);
    server = await startServer({ ...config, taskTimeoutMs: 1 });
    const tight = serviceOf(server, dataDir);
    for (let i = 0; i < 2; i++) {
      const { message } = await expectError(await sceneOf(tight), 413, 'map_too_large');
      assert.match(message, /TASK_TIMEOUT_MS/);
    }
    const health = await getJson(tight, HEALTH, {});
    assert.equal(health.body.workers.tasks.scene, 1, 'the second answer came without a build');
    await server.close(1000);
    server = await startServer(config);
    const again = await sceneOf(serviceOf(server, dataDir));
    assert.equal(again.status, 200, 'other limits: built');
    assert.equal(Buffer.from(await again.arrayBuffer()).subarray(0, 4).toString('latin1'), 'glTF');
  } finally {
    await server.close(1000);
    await rm(dataDir, { recursive: true, force: true });
  }
});

/** A mesh 2.00 of a grid of `side`² vertices, its heights set by `seed` (distinct bytes, distinct SHA-256). */
function gridMesh(side: number, seed: number): Uint8Array {
  const count = side * side;
  const positions = new Float32Array(count * 3), normals = new Float32Array(count * 3), uvs = new Float32Array(count * 2);
  for (let i = 0; i < count; i++) {
    const x = i % side, z = Math.floor(i / side);
    positions.set([x, Math.sin(x * 0.1 + seed) + Math.cos(z * 0.1), z], i * 3);
    normals.set([0, 1, 0], i * 3);
    uvs.set([x / side, z / side], i * 2);
  }
  const faces = new Uint32Array((side - 1) * (side - 1) * 6);
  let at = 0;
  for (let z = 0; z < side - 1; z++) {
    for (let x = 0; x < side - 1; x++) {
      const i = z * side + x;
      faces.set([i, i + side, i + 1, i + 1, i + side, i + side + 1], at);
      at += 6;
    }
  }
  return writeMeshV2({ positions, normals, uvs, faces, lodOffsets: [] }, '2.00', 36);
}

test('a conversion task refused part-way: the records of the meshes it had finished are kept, the rest are not claimed', { timeout: 120_000 }, async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'rbxl-convert-deadline-'));
  const { task } = memoryBudget({ maxMemoryMb: 2048, workers: 1, previewCacheBytes: 0 });
  const store = async (bytes: Uint8Array): Promise<string> => {
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    await mkdir(dirname(assetPath(dataDir, sha256)), { recursive: true });
    await writeFile(assetPath(dataDir, sha256), bytes);
    return sha256;
  };
  // Two small meshes converted before; one large enough (a million vertices) that no conversion of it ends within two 10 ms ticks.
  const done = [await store(gridMesh(40, 1)), await store(gridMesh(40, 2))];
  const large = await store(gridMesh(1000, 3));
  const normal = createWorkerPool({ workers: 1, maxQueue: 4, limits: task, taskTimeoutMs: 120_000 });
  const tight = createWorkerPool({ workers: 1, maxQueue: 4, limits: task, taskTimeoutMs: 1 });
  try {
    const first = await normal.convert({ dataDir, sha256s: done });
    assert.ok(first.ok);
    const refused = await tight.convert({ dataDir, sha256s: [...done, large] });
    assert.equal(refused.ok, false);
    assert.equal(tight.stats().timed_out, 1);
    // What the service keeps of the refused batch: the two finished records, as the first run wrote them; nothing for the large mesh.
    assert.deepEqual(finishedConversions(dataDir, [...done, large]), first.ok ? first.records : []);
  } finally {
    await Promise.all([normal.close(), tight.close()]);
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('TASK_TIMEOUT_MS: two minutes unless set; at least 100 ms', () => {
  assert.equal(configFromEnv({}).taskTimeoutMs, 120_000);
  assert.equal(configFromEnv({ TASK_TIMEOUT_MS: '5000' }).taskTimeoutMs, 5_000);
  assert.throws(() => configFromEnv({ TASK_TIMEOUT_MS: '50' }), ConfigError);
  assert.throws(() => configFromEnv({ TASK_TIMEOUT_MS: '2m' }), ConfigError);
});

test('durations longer than a timer can wait stop the start, rather than firing at once', () => {
  // Node runs a setTimeout past 2^31 - 1 ms after 1 ms, and AbortSignal.timeout throws.
  for (const name of ['TASK_TIMEOUT_MS', 'ASSET_TIMEOUT_MS', 'ASSET_TOTAL_TIMEOUT_MS', 'SWEEP_INTERVAL_MS', 'SHUTDOWN_GRACE_MS']) {
    assert.throws(() => configFromEnv({ [name]: String(MAX_TIMER_MS + 1) }), (error: unknown) =>
      error instanceof ConfigError && error.message === `${name} must be an integer from ${name === 'TASK_TIMEOUT_MS' ? 100 : name === 'SWEEP_INTERVAL_MS' ? 1000 : name === 'SHUTDOWN_GRACE_MS' ? 0 : 1} to ${MAX_TIMER_MS}, got "${MAX_TIMER_MS + 1}"`);
    assert.doesNotThrow(() => configFromEnv({ [name]: String(MAX_TIMER_MS) }), name);
  }
  assert.equal(configFromEnv({}).shutdownGraceMs, 30_000);
  assert.equal(configFromEnv({ SHUTDOWN_GRACE_MS: '0' }).shutdownGraceMs, 0);
  assert.throws(() => configFromEnv({ SHUTDOWN_GRACE_MS: '-1' }), ConfigError);
  assert.throws(() => configFromEnv({ PORT: '65536' }), ConfigError);
  assert.throws(() => configFromEnv({ MAX_MEMORY_MB: String(2 ** 24 + 1) }), ConfigError);
  assert.throws(() => configFromEnv({ PREVIEW_TTL_SECONDS: '9'.repeat(400) }), ConfigError);
  // Its expiry must fit the keys' 13 digits of milliseconds.
  assert.throws(() => configFromEnv({ PREVIEW_TTL_SECONDS: String(MAX_PREVIEW_TTL_SECONDS + 1) }), ConfigError);
  holdingKeys.preview('ann', 'a'.repeat(64), 1, Date.now() + configFromEnv({ PREVIEW_TTL_SECONDS: String(MAX_PREVIEW_TTL_SECONDS) }).previewTtlSeconds * 1000);
  assert.throws(() => configFromEnv({ PROJECT_RETENTION_DAYS: '9'.repeat(20) }), ConfigError);
});
