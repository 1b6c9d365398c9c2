/**
 * Hostile requests against a real server on loopback, found by driving one: deletes of
 * one project sent at once, and what a delete gives back to the disk's count; uploads
 * arriving at once, each admitted from its Content-Length against the same room; a
 * disk that fills up under an upload.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../src/http/server.js';
import { isDiskFull } from '../src/store/quota.js';
import { PLACES_DIR } from './support/paths.js';
import {
  HEALTH, analyze, as, assertErrorBody, create, expectError, multipartBody, openUpload, serviceOf, startService, upload, uploadsIn, waitUntil, type Service,
} from './support/service.js';

const PLACE = readFileSync(join(PLACES_DIR, 'rocket-arena-2006.rbxl'));

async function usedBytes(service: Service): Promise<number> {
  const health = await fetch(service.url + HEALTH).then((r) => r.json() as Promise<{ storage: { used_bytes: number } }>);
  return health.storage.used_bytes;
}

test('deletes of one project sent at once: one 204, the rest 404, and the disk\'s count gets the project and its scene back once', async () => {
  // No sweep during the test: it would count the disk again and hide what the deletes did to the count.
  const service = await startService({ sweepIntervalMs: 3_600_000 });
  try {
    const { preview_hash } = await analyze(service, PLACE, 'arena.rbxl', as('dora'));
    const before = await usedBytes(service);
    for (let round = 0; round < 2; round++) {
      const { project_id: id } = await create(service, { preview_hash }, as('dora'));
      const scene = await fetch(`${service.url}/api-rbxl/projects/${id}/scene.glb`, { headers: as('dora') });
      assert.equal(scene.status, 200);
      assert.ok((await scene.arrayBuffer()).byteLength > 0);
      assert.ok(await usedBytes(service) > before, 'the project and its scene are counted');
      const answers = await Promise.all(Array.from({ length: 5 }, () => fetch(`${service.url}/api-rbxl/projects/${id}`, { method: 'DELETE', headers: as('dora') })));
      const statuses = answers.map((answer) => answer.status).sort();
      assert.deepEqual(statuses, [204, 404, 404, 404, 404]);
      for (const answer of answers) {
        const text = await answer.text();
        if (answer.status === 404) assert.equal(JSON.parse(text).error.code, 'not_found');
      }
      assert.equal(await usedBytes(service), before, 'what the project took is given back once, its scene included');
    }
  } finally {
    await service.close();
  }
});

test('uploads arriving at once share the disk\'s room: one that does not fit beside those still arriving is 507, and the room comes back when one ends', async () => {
  const service = await startService({ maxDataBytes: 4_000_000, sweepIntervalMs: 3_600_000 });
  try {
    const boundary = 'room-boundary-3f9a';
    // Each declares 3 MB of the 4 MB: alone it fits; beside another still arriving it does not.
    const junk = Buffer.alloc(3_000_000, 7);
    const body = multipartBody(boundary, [{ name: 'file', fileName: 'junk.rbxl', data: junk }]);
    const first = openUpload(service, boundary, body, as('erin'));
    first.on('error', () => {});
    first.write(body.subarray(0, 2_000_000));
    await waitUntil(async () => (await uploadsIn(service)).length === 1, 'the first upload to arrive');
    const refused = await upload(service, junk, 'junk.rbxl', as('finn'));
    assert.equal(refused.headers.get('retry-after'), '60');
    await expectError(refused, 507, 'storage_full');
    assert.equal((await uploadsIn(service)).length, 1, 'the refused upload wrote nothing');
    // The first goes away: its room comes back, and an upload that ends in a refusal (not a place) gives it back too.
    first.destroy();
    await waitUntil(async () => (await uploadsIn(service)).length === 0, 'the first upload\'s temp file to go');
    for (const user of ['finn', 'gus']) {
      const answer = await upload(service, junk, 'junk.rbxl', as(user));
      await expectError(answer, 422, 'not_a_place');
    }
  } finally {
    await service.close();
  }
});

/** Writes zeros to `path` until its file system has no room left. */
async function fillUp(path: string): Promise<void> {
  const block = Buffer.alloc(64 * 1024);
  for (;;) {
    try {
      await appendFile(path, block);
    } catch (error) {
      if (isDiskFull(error)) return;
      throw error;
    }
  }
}

test('a disk that fills up while an upload is written to it: 507 storage_full with Retry-After, not a 500, and no temp file stays', async (t) => {
  const mountPoint = await mkdtemp(join(tmpdir(), 'rbxl-full-disk-'));
  try {
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mountPoint], { stdio: 'ignore' });
    } catch {
      t.skip('needs a small file system of its own (root, to mount a tmpfs)');
      return;
    }
    try {
      const dataDir = join(mountPoint, 'data');
      const server = await startServer({ host: '127.0.0.1', port: 0, dataDir, log: false, workers: 1, assetApiKey: null, assetUrlTemplate: null });
      const service = serviceOf(server, dataDir);
      try {
        const boundary = 'full-disk-boundary-77e0';
        const body = multipartBody(boundary, [{ name: 'file', fileName: 'big.rbxl', data: Buffer.alloc(1_000_000, 1) }]);
        const request = openUpload(service, boundary, body, as('hal'));
        request.on('error', () => {}); // the server may close once it has answered
        const answered = new Promise<{ status: number; text: string; retryAfter: string | undefined }>((resolve) => {
          request.on('response', (response) => {
            let text = '';
            response.on('data', (chunk: Buffer) => { text += chunk.toString('utf8'); });
            response.on('end', () => resolve({ status: response.statusCode ?? 0, text, retryAfter: response.headers['retry-after'] }));
          });
        });
        request.write(body.subarray(0, 100_000));
        await waitUntil(async () => (await uploadsIn(service)).length === 1, 'the upload to arrive');
        // Something else on the machine takes the rest of the file system meanwhile.
        await fillUp(join(mountPoint, 'filler'));
        request.end(body.subarray(100_000));
        const answer = await answered;
        assertErrorBody(answer.status, answer.text, 507, 'storage_full');
        assert.equal(answer.retryAfter, '60');
        await waitUntil(async () => (await uploadsIn(service)).length === 0, 'the partial upload to be removed');
      } finally {
        await server.close(2_000);
      }
    } finally {
      execFileSync('umount', [mountPoint]);
    }
  } finally {
    await rm(mountPoint, { recursive: true, force: true });
  }
});

/** Sends `request` on a new connection, half-closing it after when asked; what came back within `waitMs`, and whether the server closed. */
function exchangeRaw(service: Service, request: string, halfClose = false, waitMs = 500): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(service.port, '127.0.0.1');
    let text = '';
    let closed = false;
    const done = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, closed });
    };
    const timer = setTimeout(done, waitMs);
    socket.on('data', (chunk: Buffer) => { text += chunk.toString('latin1'); });
    socket.on('close', () => { closed = true; done(); });
    socket.on('error', () => {});
    socket.write(request);
    if (halfClose) socket.end();
  });
}

test('what uWebSockets.js 20.30 leaves unanswered (README): 49 header lines or more, a header line without a colon, `OPTIONS *`, and a client that half-closes before an awaited answer', async () => {
  const service = await startService();
  try {
    const health = `GET ${HEALTH} HTTP/1.1\r\nHost: localhost\r\n`;
    const headers = (count: number): string => Array.from({ length: count }, (_, i) => `X-H${i}: v\r\n`).join('');
    assert.match((await exchangeRaw(service, `${health}${headers(47)}\r\n`)).text, /^HTTP\/1\.1 200 /, '48 header lines are read');
    for (const request of [`${health}${headers(48)}\r\n`, `${health}foo\r\n\r\n`, 'OPTIONS * HTTP/1.1\r\nHost: localhost\r\n\r\n']) {
      const answer = await exchangeRaw(service, request);
      assert.deepEqual(answer, { text: '', closed: false }, `${JSON.stringify(request.slice(-40))}: no handler runs, the connection waits for uWS's idle timeout`);
    }
    // A FIN after the request is taken as the client gone: what is answered at once leaves, what is awaited (the store) is cut.
    assert.match((await exchangeRaw(service, 'GET /api-rbxl/config HTTP/1.1\r\nHost: localhost\r\n\r\n', true)).text, /^HTTP\/1\.1 200 /);
    const lookup = await exchangeRaw(service, `GET /api-rbxl/projects/p_aaaaaaaaaaaaaaaaaaaa HTTP/1.1\r\nHost: localhost\r\nX-User-Id: ivy\r\n\r\n`, true);
    assert.deepEqual(lookup, { text: '', closed: true });
    assert.equal((await fetch(service.url + HEALTH)).status, 200, 'the service is unaffected');
  } finally {
    await service.close();
  }
});
