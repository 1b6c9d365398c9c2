/**
 * The service under load and at shutdown: 50 analyses of different files at once all
 * succeed; a full worker queue answers 503; close() stops accepting but lets an upload
 * already in flight finish.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { decode } from '../src/parser/index.js';
import { PLACES_DIR, TEST_FILES_DIR } from './support/paths.js';
import {
  HEALTH, as, getJson, multipartBody, openUpload, startService, upload, uploadsIn, waitUntil, type RawResponse, type Service,
} from './support/service.js';

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
const BOUNDARY = 'load-test-boundary-3f9a';

/** Distinct bytes, same content: the decoders ignore what follows END (binary) or the root element (XML, as a comment). */
function variant(bytes: Buffer, xml: boolean, tag: string): Buffer {
  return Buffer.concat([bytes, Buffer.from(xml ? `\n<!-- ${tag} -->\n` : tag)]);
}

test('50 concurrent analyses of different files all succeed', async () => {
  const bases = [
    join(TEST_FILES_DIR, 'three-unique-parts.rbxm'),
    join(TEST_FILES_DIR, 'body-movers.rbxm'),
    join(TEST_FILES_DIR, 'baseplate-413.rbxl'),
    join(TEST_FILES_DIR, 'three-unique-parts.rbxmx'),
    join(PLACES_DIR, 'rocket-arena-2006.rbxl'),
  ].map((path) => {
    const bytes = readFileSync(path);
    return { name: path.slice(path.lastIndexOf('/') + 1), bytes, xml: path.endsWith('x'), instances: decode(bytes).count };
  });
  const files = Array.from({ length: 50 }, (_, index) => {
    const base = bases[index % bases.length]!;
    return { ...base, bytes: variant(base.bytes, base.xml, `variant-${index}`), user: `user-${index}` };
  });
  assert.equal(new Set(files.map((file) => sha256(file.bytes))).size, 50);

  const service = await startService({ workers: 2 });
  try {
    const answers = await Promise.all(files.map(async (file) => {
      const response = await upload(service, file.bytes, file.name, as(file.user));
      return { status: response.status, text: await response.text() };
    }));
    for (const [index, answer] of answers.entries()) {
      const file = files[index]!;
      assert.equal(answer.status, 200, `upload ${index}: ${answer.text}`);
      const body = JSON.parse(answer.text);
      assert.equal(body.preview_hash, sha256(file.bytes));
      assert.equal(body.report.file_name, file.name);
      assert.equal(body.report.file_size, file.bytes.length);
      assert.equal(body.report.format, file.xml ? 'xml' : 'binary');
      assert.equal(body.report.instances_total, file.instances);
    }
    assert.deepEqual(await uploadsIn(service), []);
    const health = await getJson(service, HEALTH, {});
    assert.equal(health.status, 200);
  } finally {
    await service.close();
  }
});

test('with every worker busy and no queue, analyze answers 503 with Retry-After', async () => {
  const service = await startService({ workers: 1, maxQueue: 0 });
  try {
    const large = readFileSync(join(PLACES_DIR, 'roblox-dialog-system.rbxlx')); // the slowest corpus decode
    const small = readFileSync(join(PLACES_DIR, 'rocket-arena-2006.rbxl'));
    // The busy window is the large decode; should it end before the small upload
    // arrives (it never has), the attempt is repeated with fresh files.
    for (let attempt = 0; attempt < 3; attempt++) {
      let settled = false;
      const slow = upload(service, variant(large, true, `large-${attempt}`), 'large.rbxlx', as('ann')).finally(() => {
        settled = true;
      });
      await waitUntil(async () => settled || (await getJson(service, HEALTH, {})).body.workers.running === 1, 'the large decode started');
      const quick = await upload(service, variant(small, false, `small-${attempt}`), 'small.rbxl', as('bob'));
      const quickText = await quick.text();
      const slowAnswer = await slow;
      assert.equal(slowAnswer.status, 200, await slowAnswer.text());
      if (quick.status === 200) continue;
      assert.equal(quick.status, 503, quickText);
      assert.deepEqual(JSON.parse(quickText), { error: { code: 'busy', message: JSON.parse(quickText).error.message } });
      assert.ok(Number(quick.headers.get('retry-after')) > 0);
      assert.deepEqual(await uploadsIn(service), []);
      // Once the worker is free, the same upload goes through.
      const retried = await upload(service, variant(small, false, `small-${attempt}`), 'small.rbxl', as('bob'));
      assert.equal(retried.status, 200, await retried.text());
      return;
    }
    assert.fail('no upload was refused while the only worker was busy');
  } finally {
    await service.close();
  }
});

test('close() stops accepting but lets an upload in flight finish', async () => {
  const service: Service = await startService({ workers: 1 });
  const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    // A connection opened before the shutdown, kept alive.
    const before = await requestOn(service, keepAlive, 'GET', HEALTH);
    assert.equal(before.status, 200);

    const bytes = readFileSync(join(PLACES_DIR, 'booga.rbxl')); // 1.5 MB
    const body = multipartBody(BOUNDARY, [{ name: 'file', fileName: 'booga.rbxl', data: bytes }]);
    const request = openUpload(service, BOUNDARY, body, as('ann'));
    const answer = responseOf(request);
    request.write(body.subarray(0, body.length - 1000));
    await waitUntil(async () => (await uploadsIn(service)).length === 1, 'the upload reached its temp file');

    let closed = false;
    const closing = service.server.close().then(() => {
      closed = true;
    });
    // New connections are refused; a request on a kept-alive one is told to go away.
    await assert.rejects(requestOn(service, false, 'GET', HEALTH), { code: 'ECONNREFUSED' });
    const during = await requestOn(service, keepAlive, 'GET', HEALTH);
    assert.equal(during.status, 503);
    assert.equal(JSON.parse(during.text).error.code, 'shutting_down');
    assert.equal(closed, false, 'close() did not wait for the upload in flight');

    request.end(body.subarray(body.length - 1000));
    const response = await answer;
    assert.equal(response.status, 200, response.text);
    const hash = JSON.parse(response.text).preview_hash;
    assert.equal(hash, sha256(bytes));
    await closing;
    assert.ok(existsSync(join(service.dataDir, 'objects', 'previews', hash, 'analysis.json')), 'the preview was not stored');
    assert.deepEqual(await uploadsIn(service), []);
  } finally {
    keepAlive.destroy();
    await service.close();
  }
});

function responseOf(request: ReturnType<typeof httpRequest>): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

function requestOn(service: Service, agent: Agent | false, method: string, path: string): Promise<RawResponse> {
  const request = httpRequest({ host: '127.0.0.1', port: service.port, method, path, agent });
  const answer = responseOf(request);
  request.end();
  return answer;
}
