/**
 * Races and connection hygiene found in review: a client leaving while others wait
 * on the analysis of the same bytes; an error answered before the body was read;
 * HEAD probes of health.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { encode } from '../src/parser/writer/index.js';
import { generatePlace } from '../bench/generate.js';
import { PLACES_DIR } from './support/paths.js';
import { ANALYZE, HEALTH, analyze, as, create, multipartBody, openUpload, rawRequest, startService, upload, uploadsIn, waitUntil } from './support/service.js';

const BOUNDARY = 'race-test-boundary-81c2';

test('a client leaving does not fail others waiting on the analysis of the same bytes', async () => {
  const service = await startService({ workers: 1 });
  try {
    // Keep the only worker busy, so the shared analysis below is still queued when its first uploader leaves.
    const busy = upload(service, encode(generatePlace({ parts: 60_000, scripts: 200, uniqueAssets: 100, seed: 3 })), 'busy.rbxl', as('carol'));
    await waitUntil(async () => (await fetch(service.url + HEALTH).then((r) => r.json())).workers.running > 0, 'the worker to be busy');
    const place = Buffer.concat([readFileSync(join(PLACES_DIR, 'booga.rbxl')), Buffer.from('race')]);
    const body = multipartBody(BOUNDARY, [{ name: 'file', fileName: 'booga.rbxl', data: place }]);
    const alice = openUpload(service, BOUNDARY, body, as('alice'));
    alice.on('error', () => {});
    alice.end(body);
    // Alice's file is complete and her analysis queued once it sits in the uploads folder and she is waiting.
    await waitUntil(async () => (await uploadsIn(service)).length > 0, 'alice\'s upload to land');
    const bob = upload(service, place, 'booga.rbxl', as('bob'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    alice.destroy();
    const answer = await bob;
    assert.equal(answer.status, 200, await answer.text());
    assert.equal((await busy).status, 200);
    await waitUntil(async () => (await uploadsIn(service)).length === 0, 'temp files to be removed');
  } finally {
    await service.close();
  }
});

test('an error answered before the body is read closes the connection and says so', async () => {
  const service = await startService({ maxUploadBytes: 100_000 });
  try {
    const body = multipartBody(BOUNDARY, [{ name: 'file', fileName: 'big.rbxl', data: Buffer.alloc(400_000, 1) }]);
    const answer = await rawRequest(service, {
      path: ANALYZE,
      // A Content-Length under the limit lets the body start; the multipart parser then finds it too large.
      headers: { ...as('dave'), 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`, 'Content-Length': 150_000 },
      body: [body.subarray(0, 150_000)],
    });
    assert.equal(answer.status, 413);
    assert.equal(answer.headers.connection, 'close');
    assert.deepEqual(await uploadsIn(service), []);
  } finally {
    await service.close();
  }
});

test('HEAD /api-rbxl/health answers the status without a body', async () => {
  const service = await startService();
  try {
    const answer = await fetch(service.url + HEALTH, { method: 'HEAD' });
    assert.equal(answer.status, 200);
    assert.equal(await answer.text(), '');
    assert.equal((await fetch(service.url + HEALTH, { method: 'POST' })).status, 405);
  } finally {
    await service.close();
  }
});

test('a project deleted while its scene.glb is built: the scene is not served and nothing of the project stays', async () => {
  const service = await startService({ workers: 1 });
  try {
    const bytes = encode(generatePlace({ parts: 150_000, scripts: 2, uniqueAssets: 0, seed: 3 }));
    const { preview_hash } = await analyze(service, bytes, 'big.rbxl', as('ann'));
    const { project_id: id } = await create(service, { preview_hash }, as('ann'));
    let answeredAt = Infinity;
    const scene = fetch(`${service.url}/api-rbxl/projects/${id}/scene.glb`, { headers: as('ann') }).then((response) => {
      answeredAt = performance.now();
      return response;
    });
    // The build has started once the worker is busy; building 150,000 parts takes far longer than the delete.
    await waitUntil(async () => (await fetch(service.url + HEALTH).then((r) => r.json() as Promise<{ workers: { running: number } }>)).workers.running > 0, 'the scene build to start');
    const deleted = await fetch(`${service.url}/api-rbxl/projects/${id}`, { method: 'DELETE', headers: as('ann') });
    assert.equal(deleted.status, 204);
    const deletedAt = performance.now();
    const answer = await scene;
    assert.ok(deletedAt < answeredAt, 'the delete finished while the scene was being built (else this test shows nothing)');
    assert.equal(answer.status, 404, 'a deleted project\'s scene is not served');
    await answer.arrayBuffer();
    assert.deepEqual(await readdir(join(service.dataDir, 'objects', 'projects', id)).catch(() => []), []);
    assert.equal((await fetch(`${service.url}/api-rbxl/projects/${id}/scene.glb`, { headers: as('ann') })).status, 404);
  } finally {
    await service.close();
  }
});
