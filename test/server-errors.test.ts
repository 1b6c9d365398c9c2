/**
 * Every error path of the service over real HTTP: the status and the body
 * {"error": {"code", "message"}}; uploads that fail leave no temp file behind, and the
 * service stays healthy after a client walks away mid-upload.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decode } from '../src/parser/index.js';
import { PLACES_DIR } from './support/paths.js';
import { parseCreateRequest } from '../src/http/routes/create.js';
import {
  ANALYZE, CREATE, HEALTH, analyze, as, assertErrorBody, expectError, getJson, multipartBody, openUpload, postJson, rawRequest, startService,
  upload, uploadsIn, waitUntil, type Service,
} from './support/service.js';

const PLACE_NAME = 'rocket-arena-2006.rbxl';
const PLACE = readFileSync(join(PLACES_DIR, PLACE_NAME)); // 23 KB
const MAX_UPLOAD = 64 * 1024;
const BOUNDARY = 'test-boundary-7MA4YWxkTrZu0gW';
const alice = as('alice');

/** The message the decoder itself gives for `bytes`. */
function decoderMessage(bytes: Uint8Array): string {
  try {
    decode(bytes);
  } catch (error) {
    return (error as Error).message;
  }
  assert.fail('the bytes decoded');
}

describe('create errors', () => {
  let service: Service;
  let hash: string;

  before(async () => {
    service = await startService({ maxJsonBytes: 1024 });
    hash = (await analyze(service, PLACE, PLACE_NAME, alice)).preview_hash;
  });
  after(() => service.close());

  test('invalid JSON is 400', async () => {
    for (const body of ['{"preview_hash": ', 'not json at all', '']) {
      await expectError(await postJson(service, CREATE, body, alice), 400, 'invalid_json');
    }
  });

  test('a body that is not an object is 400', async () => {
    for (const body of [[], 'text', 42, null]) {
      await expectError(await postJson(service, CREATE, JSON.stringify(body), alice), 400, 'invalid_body');
    }
  });

  test('an unknown scripts_mode is 400 and names the allowed ones', async () => {
    for (const mode of ['on', 'Disabled', '', 1, null]) {
      const { message } = await expectError(await postJson(service, CREATE, { preview_hash: hash, scripts_mode: mode }, alice), 400, 'invalid_scripts_mode');
      for (const allowed of ['disabled', 'enabled', 'skip']) assert.ok(message.includes(allowed), message);
    }
  });

  test('a missing preview_hash is 400', async () => {
    for (const body of [{}, { title: 'x' }, { preview_hash: '' }, { preview_hash: null }]) {
      const { message } = await expectError(await postJson(service, CREATE, body, alice), 400, 'missing_preview_hash');
      assert.match(message, /preview_hash/);
    }
    await expectError(await postJson(service, CREATE, { preview_hash: 7 }, alice), 400, 'invalid_preview_hash');
  });

  test('a title that is not a string is 400', async () => {
    await expectError(await postJson(service, CREATE, { preview_hash: hash, title: 5 }, alice), 400, 'invalid_title');
  });

  test('a title has at most 200 characters, counted as the user sees them (an emoji is one) after trimming', async () => {
    const body = (title: string): string => JSON.stringify({ preview_hash: hash, title });
    assert.equal(parseCreateRequest(body('😀'.repeat(200))).title, '😀'.repeat(200));
    assert.equal(parseCreateRequest(body(`  ${'a'.repeat(200)}\n`)).title, 'a'.repeat(200));
    for (const title of ['a'.repeat(201), '😀'.repeat(201)]) {
      assert.throws(() => parseCreateRequest(body(title)), (error: Error & { code?: string }) => error.code === 'invalid_title' && /at most 200 characters/.test(error.message));
    }
    const { message } = await expectError(await postJson(service, CREATE, { preview_hash: hash, title: 'é'.repeat(201) }, alice), 400, 'invalid_title');
    assert.match(message, /at most 200 characters/);
  });

  test('a body that is not JSON by its Content-Type is 415', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const response = await fetch(service.url + CREATE, {
        method: 'POST', body: JSON.stringify({ preview_hash: hash }), headers: { ...alice, 'Content-Type': type },
      });
      await expectError(response, 415, 'unsupported_media_type');
    }
    const untyped = await rawRequest(service, { path: CREATE, headers: { ...alice, 'Content-Length': 2 }, body: ['{}'] });
    assertErrorBody(untyped.status, untyped.text, 415, 'unsupported_media_type');
  });

  test('a JSON body above the limit is 413', async () => {
    const body = JSON.stringify({ preview_hash: hash, title: 'x'.repeat(2000) });
    const { message } = await expectError(await postJson(service, CREATE, body, alice), 413, 'payload_too_large');
    assert.match(message, /^the create request exceeds the limit of \d+ bytes$/);
    // Without a Content-Length the limit holds while reading.
    const chunked = await rawRequest(service, { path: CREATE, headers: { ...alice, 'Content-Type': 'application/json' }, body: [body.slice(0, 1000), body.slice(1000)] });
    assert.match(assertErrorBody(chunked.status, chunked.text, 413, 'payload_too_large').message, /^the create request exceeds the limit of \d+ bytes$/);
  });

  test('the JSON error bodies leave the service able to create', async () => {
    const response = await postJson(service, CREATE, { preview_hash: hash, scripts_mode: 'skip' }, alice);
    assert.equal(response.status, 200, await response.text());
  });
});

describe('analyze errors', () => {
  let service: Service;

  before(async () => {
    service = await startService({ maxUploadBytes: MAX_UPLOAD });
  });
  after(() => service.close());

  test('a body that is not multipart is 415', async () => {
    const json = await postJson(service, ANALYZE, { file: 'x' }, alice);
    await expectError(json, 415, 'unsupported_media_type');
    const octets = await fetch(service.url + ANALYZE, { method: 'POST', body: PLACE, headers: { ...alice, 'Content-Type': 'application/octet-stream' } });
    await expectError(octets, 415, 'unsupported_media_type');
  });

  test('multipart without a boundary is 400', async () => {
    const response = await fetch(service.url + ANALYZE, { method: 'POST', body: 'x', headers: { ...alice, 'Content-Type': 'multipart/form-data' } });
    await expectError(response, 400, 'invalid_boundary');
  });

  test('a truncated multipart body is 400 and leaves no temp file', async () => {
    const whole = multipartBody(BOUNDARY, [{ name: 'file', fileName: PLACE_NAME, data: PLACE }]);
    for (const cut of [whole.length - 10, Math.floor(whole.length / 2), 60]) {
      const body = whole.subarray(0, cut);
      const answer = await rawRequest(service, {
        path: ANALYZE,
        headers: { ...alice, 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`, 'Content-Length': body.length },
        body: [body],
      });
      assertErrorBody(answer.status, answer.text, 400, 'truncated');
      assert.deepEqual(await uploadsIn(service), [], `a temp file was left after a body cut at ${cut}`);
    }
  });

  test('malformed multipart is 400', async () => {
    const body = `--${BOUNDARY}\r\nno colon in this header line\r\n\r\ndata\r\n--${BOUNDARY}--\r\n`;
    const response = await fetch(service.url + ANALYZE, { method: 'POST', body, headers: { ...alice, 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` } });
    await expectError(response, 400, 'malformed_multipart');
  });

  test('a form without a `file` part is 400', async () => {
    const forms: FormData[] = [];
    const other = new FormData();
    other.append('upload', new Blob([PLACE]), PLACE_NAME); // a file, but under another name
    forms.push(other);
    const field = new FormData();
    field.append('file', 'just text, not a file part');
    forms.push(field);
    forms.push(new FormData());
    for (const form of forms) {
      const response = await fetch(service.url + ANALYZE, { method: 'POST', body: form, headers: alice });
      await expectError(response, 400, 'missing_file');
    }
    assert.deepEqual(await uploadsIn(service), []);
  });

  test('a file that is not a place is 422 with the decoder\'s message', async () => {
    const samples = [
      Buffer.from('this is a text file, not a map\n'.repeat(20)),
      PLACE.subarray(0, 2000), // a binary place cut short
      Buffer.from('<roblox version="4"><Item class="Part"'), // XML cut short
    ];
    for (const bytes of samples) {
      const { message } = await expectError(await upload(service, bytes, 'notes.rbxl', alice), 422, 'not_a_place');
      assert.equal(message, decoderMessage(bytes));
    }
    assert.deepEqual(await uploadsIn(service), []);
  });

  test('an upload above MAX_UPLOAD_BYTES is 413: by its Content-Length, or once the file part exceeds it', async () => {
    const declaredHuge = Buffer.alloc(4 * MAX_UPLOAD, 0x41);
    await expectError(await upload(service, declaredHuge, 'huge.rbxl', alice), 413, 'payload_too_large');
    // Within the framing allowance on Content-Length, so only the streamed count catches it.
    const justOver = Buffer.concat([PLACE, Buffer.alloc(MAX_UPLOAD, 0x42)]);
    const body = multipartBody(BOUNDARY, [{ name: 'file', fileName: 'over.rbxl', data: justOver }]);
    const answer = await rawRequest(service, {
      path: ANALYZE,
      headers: { ...alice, 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`, 'Content-Length': body.length },
      body: [body],
    });
    assertErrorBody(answer.status, answer.text, 413, 'payload_too_large');
    assert.deepEqual(await uploadsIn(service), []);
  });

  test('an upload without Content-Length (chunked) is 411', async () => {
    const body = multipartBody(BOUNDARY, [{ name: 'file', fileName: PLACE_NAME, data: PLACE }]);
    const answer = await rawRequest(service, {
      path: ANALYZE,
      headers: { ...alice, 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` },
      body: [body.subarray(0, 1000), body.subarray(1000)],
    });
    assertErrorBody(answer.status, answer.text, 411, 'length_required');
    assert.deepEqual(await uploadsIn(service), []);
  });

  test('a client that goes away mid-upload leaves no temp file, and the service stays healthy', async () => {
    const body = multipartBody(BOUNDARY, [{ name: 'file', fileName: PLACE_NAME, data: PLACE }]);
    const request = openUpload(service, BOUNDARY, body, alice, body.length + 50_000);
    request.on('error', () => {}); // the destroy below
    request.write(body.subarray(0, body.length - 100));
    await waitUntil(async () => (await uploadsIn(service)).length === 1, 'the upload reached its temp file');
    request.destroy();
    await waitUntil(async () => (await uploadsIn(service)).length === 0, 'the temp file was removed');
    const health = await getJson(service, HEALTH, {});
    assert.equal(health.status, 200);
    assert.equal(health.body.status, 'ok');
    const analysis = await analyze(service, PLACE, PLACE_NAME, alice);
    assert.equal(analysis.report.scripts_total, 15);
  });
});

describe('routing errors', () => {
  let service: Service;

  before(async () => {
    service = await startService();
  });
  after(() => service.close());

  test('a wrong method is 405 with Allow', async () => {
    const cases: [string, string, string][] = [
      ['GET', ANALYZE, 'POST'], ['PUT', ANALYZE, 'POST'], ['GET', CREATE, 'POST'], ['DELETE', CREATE, 'POST'],
      ['POST', HEALTH, 'GET, HEAD'], ['POST', '/api-rbxl/projects/p_aaaaaaaaaaaaaaaaaaaa', 'GET, HEAD, DELETE'], ['POST', '/', 'GET, HEAD'],
    ];
    for (const [method, path, allow] of cases) {
      const response = await fetch(service.url + path, { method, headers: alice });
      const { message } = await expectError(response, 405, 'method_not_allowed');
      assert.equal(response.headers.get('allow'), allow);
      assert.ok(message.includes(allow));
    }
  });

  test('an unknown route is 404', async () => {
    for (const path of ['/api-rbxl/nothing', '/api-rbxl/import/rbxl', '/api-rbxl/import/rbxl/analyze/extra', '/health']) {
      for (const method of ['GET', 'POST']) {
        await expectError(await fetch(service.url + path, { method, headers: alice }), 404, 'not_found');
      }
    }
  });

  test('the root redirects to the import page (the address the start log prints)', async () => {
    const response = await fetch(service.url + '/', { redirect: 'manual' });
    assert.equal(response.status, 302);
    assert.equal(response.headers.get('location'), '/api-rbxl/');
    const page = await fetch(service.url + '/');
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<title>Import a Roblox map<\/title>/);
  });

  test('the bare prefix redirects to the import page', async () => {
    const response = await fetch(service.url + '/api-rbxl', { redirect: 'manual' });
    assert.equal(response.status, 308);
    assert.equal(response.headers.get('location'), '/api-rbxl/');
    const page = await fetch(service.url + '/api-rbxl');
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
  });

  test('an unknown preview or project is 404 with the same body whatever the id looks like', async () => {
    const bodies = new Set<string>();
    for (const id of ['p_aaaaaaaaaaaaaaaaaaaa', 'nonsense', '..%2F..%2Fetc%2Fpasswd']) {
      const answer = await getJson(service, `/api-rbxl/projects/${id}`, alice);
      assertErrorBody(answer.status, answer.text, 404, 'not_found');
      bodies.add(answer.text);
      const asset = await getJson(service, `/api-rbxl/projects/${id}/assets/${'0'.repeat(64)}`, alice);
      assertErrorBody(asset.status, asset.text, 404, 'not_found');
    }
    assert.equal(bodies.size, 1);
  });
});
