/**
 * Issue 10 over HTTP: user ids taken exactly as sent or refused (defect 4); every
 * request answered where uWebSockets.js lets the service answer, and what it closes
 * itself before any handler, pinned (defect 7); a create still open past the shutdown
 * grace answered 503; `Connection: close` sent once; the analysis dedupe (one decode
 * for concurrent uploads of the same bytes) and the file-name sanitising.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { encode } from '../src/parser/writer/index.js';
import { generatePlace } from '../bench/generate.js';
import { cleanFileName } from '../src/service/index.js';
import { ofUser } from '../src/store/previews.js';
import { startServer } from '../src/http/server.js';
import { PLACES_DIR } from './support/paths.js';
import { startAssetServer } from './support/asset-server.js';
import {
  ANALYZE, CREATE, HEALTH, analyze, as, assertErrorBody, create, expectError, getJson, multipartBody, openUpload, postJson, rawRequest,
  startService, upload, uploadsIn, waitUntil, type Service,
} from './support/service.js';

const PLACE = readFileSync(join(PLACES_DIR, 'rocket-arena-2006.rbxl'));
const BOUNDARY = 'hardening-boundary-5d1e';
const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

interface RawAnswer { status: number | null; head: string; body: string; bytes: number; closedByServer: boolean }

/** Sends exactly `bytes` on a new connection; resolves with what came back before the server closed (or after `waitMs`). */
function rawExchange(service: Service, bytes: Buffer | string, waitMs = 500): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect(service.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let closedByServer = false;
    const done = (): void => {
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const head = split === -1 ? text : text.slice(0, split);
      const status = /^HTTP\/1\.1 (\d{3})/.exec(head);
      resolve({ status: status ? Number(status[1]) : null, head, body: split === -1 ? '' : text.slice(split + 4), bytes: text.length, closedByServer });
    };
    const timer = setTimeout(done, waitMs);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('close', () => { closedByServer = true; done(); });
    socket.on('error', () => {});
    socket.write(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes);
  });
}

const withUserId = (value: Buffer, path = HEALTH): Buffer =>
  Buffer.concat([Buffer.from(`GET ${path.replace(HEALTH, '/api-rbxl/projects/p_aaaaaaaaaaaaaaaaaaaa')} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nX-User-Id: `), value, Buffer.from('\r\n\r\n')]);

describe('user ids', () => {
  let service: Service;
  before(async () => { service = await startService({ authMode: 'gateway' }); });
  after(() => service.close());

  test('an id with a byte outside printable ASCII that reaches the service is refused with 400, never mapped to another id', async () => {
    for (const id of ['élève', 'ülève', 'l\u00e8ve', 'x'.repeat(257)]) {
      const answer = await rawExchange(service, withUserId(Buffer.from(id, 'utf8')));
      assert.equal(answer.status, 400, `${JSON.stringify(id)}: ${answer.head}`);
      assertErrorBody(400, answer.body, 400, 'invalid_user');
    }
    // The same ids through a real client: refused too, never the user `lève` (whose project this would be).
    const response = await fetch(service.url + '/api-rbxl/projects/p_aaaaaaaaaaaaaaaaaaaa', { headers: { 'X-User-Id': 'x'.repeat(257) } });
    await expectError(response, 400, 'invalid_user');
    // 256 printable characters is an id.
    await expectError(await fetch(service.url + '/api-rbxl/projects/p_aaaaaaaaaaaaaaaaaaaa', { headers: { 'X-User-Id': '~'.repeat(256) } }), 404);
  });

  test('spaces inside an id are part of it, as the client sends them: taken as sent, another id than without them', async () => {
    const analysis = await analyze(service, encode(generatePlace({ parts: 5, scripts: 1, uniqueAssets: 1, seed: 91 })), 'spaced.rbxl', { 'X-User-Id': 'john  doe' });
    await expectError(await postJson(service, CREATE, { preview_hash: analysis.preview_hash }, { 'X-User-Id': 'john doe' }), 404);
    await expectError(await postJson(service, CREATE, { preview_hash: analysis.preview_hash }, { 'X-User-Id': 'johndoe' }), 404);
    const created = await postJson(service, CREATE, { preview_hash: analysis.preview_hash }, { 'X-User-Id': 'john  doe' });
    assert.equal(created.status, 200, await created.text());
  });

  test('an id made only of bytes the transport drops is refused (400), not taken as no user or as another', async () => {
    for (const id of ['日本', '\u00a0', '\u3000\u3000']) {
      const answer = await rawExchange(service, withUserId(Buffer.from(id, 'utf8')));
      assert.equal(answer.status, 400, `${JSON.stringify(id)}: ${answer.head}`);
    }
  });

  test('X-User-Id sent twice is refused with 400 (which one counts is not for the service to guess)', async () => {
    const answer = await rawExchange(service, 'GET /api-rbxl/projects/p_aaaaaaaaaaaaaaaaaaaa HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nX-User-Id: ann\r\nX-User-Id: bob\r\n\r\n');
    assert.equal(answer.status, 400);
    assert.match(answer.body, /more than once/);
  });

  test('ids that name Object.prototype members are users like any other: each sees their own file name and may create', async () => {
    const bytes = Buffer.concat([PLACE, Buffer.from('prototype-ids')]);
    const users = ['__proto__', 'constructor', 'toString'];
    for (const user of users) {
      const analysis = await analyze(service, bytes, `${user}-map.rbxl`, as(user));
      assert.equal(analysis.report.file_name, `${user}-map.rbxl`, user);
    }
    for (const user of users) {
      const created = await create(service, { preview_hash: sha256(bytes), scripts_mode: 'skip' }, as(user));
      const summary = await getJson(service, `/api-rbxl/projects/${created.project_id}/summary`, as(user));
      assert.equal(summary.body.file_name, `${user}-map.rbxl`, user);
    }
    // Someone who never uploaded it cannot create from it.
    await expectError(await postJson(service, CREATE, { preview_hash: sha256(bytes), scripts_mode: 'skip' }, as('hasOwnProperty')), 404, 'not_found');
    // A preview's per-user record made elsewhere (a plain object) answers for its own keys only.
    assert.equal(ofUser({ ann: 'a.rbxl' }, 'constructor'), undefined);
    assert.equal(ofUser({ ann: 'a.rbxl' }, 'ann'), 'a.rbxl');
  });

  test('uWebSockets.js drops bytes >= 0x80 at the ends of a header value before any handler (why ids must be ASCII: README)', async () => {
    // Evidence for the README's rule, and a guard: if a uWS upgrade keeps these bytes, the rule can be relaxed.
    const seen: string[] = [];
    for (const id of ['bob\u00a0', 'bob\u3000', '\u00e9bob']) {
      const answer = await rawExchange(service, withUserId(Buffer.from(id, 'utf8')));
      // Received as `bob`: the project is looked up for bob (404 here), not refused.
      seen.push(`${answer.status}`);
    }
    assert.deepEqual(seen, ['404', '404', '404']);
  });
});

test('development mode on loopback answers only requests addressed to this machine: a page elsewhere rebinding its name to 127.0.0.1 cannot act as anyone', async (t) => {
  const service = await startService({ authMode: 'development' });
  const gateway = await startService({ authMode: 'gateway' });
  t.after(() => Promise.all([service.close(), gateway.close()]));
  const get = (target: Service, host: string, path = '/api-rbxl/projects/p_aaaaaaaaaaaaaaaaaaaa'): Promise<RawAnswer> =>
    rawExchange(target, `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\nX-Auth-Override: victim\r\n\r\n`);
  // What a rebinding page's requests name: its own site, whatever address it resolved to.
  for (const host of [`attacker.example:${service.port}`, 'attacker.example', `127.0.0.1.attacker.example:${service.port}`, `localhost.attacker.example`, 'notlocalhost', 'x.127.0.0.1', '0.0.0.0', '192.168.1.5']) {
    const answer = await get(service, host);
    assert.equal(answer.status, 403, host);
    assert.equal((JSON.parse(answer.body) as { error: { code: string } }).error.code, 'host_not_allowed', host);
  }
  assert.equal((await get(service, `attacker.example:${service.port}`, '/api-rbxl/')).status, 403, 'the pages too');
  // Addressed to this machine: answered (404: no such project for this user).
  for (const host of [`localhost:${service.port}`, 'LOCALHOST', `127.0.0.1:${service.port}`, '127.0.0.2', `[::1]:${service.port}`, `app.localhost:${service.port}`, `localhost.:${service.port}`, '[::ffff:127.0.0.1]']) {
    assert.equal((await get(service, host)).status, 404, host);
  }
  // Gateway mode takes whatever host the gateway forwards.
  assert.equal((await get(gateway, 'rbxl.example.com')).status, 401);
});

test('pages run only their own scripts: the CSP allows \'self\' and the import map by its hash, no inline code, no plugins, no <base>, no framing', async () => {
  const service = await startService();
  try {
    for (const path of ['/api-rbxl/', '/api-rbxl/projects/p_aaaaaaaaaaaaaaaaaaaa/page']) {
      const response = await fetch(service.url + path, { headers: as('ann') });
      const html = await response.text();
      const policy = response.headers.get('content-security-policy') ?? '';
      const maps = [...html.matchAll(/<script type="importmap">([\s\S]*?)<\/script>/g)].map((match) => `'sha256-${createHash('sha256').update(match[1]!).digest('base64')}'`);
      assert.ok(maps.length <= 1, path);
      const directives = new Map(policy.split(';').map((part) => part.trim().split(/\s+/)).map(([name, ...values]) => [name!, values.join(' ')]));
      assert.equal(directives.get('script-src'), ["'self'", ...maps].join(' '), `${path}: ${policy}`);
      assert.equal(directives.get('object-src'), "'none'", path);
      assert.equal(directives.get('base-uri'), "'none'", path);
      assert.equal(directives.get('frame-ancestors'), "'none'", path);
      assert.ok(!policy.includes('unsafe'), path);
      // Every other script of the page is a file of the service.
      for (const match of html.matchAll(/<script(?![^>]*type="importmap")[^>]*>([\s\S]*?)<\/script>/g)) assert.equal(match[1]!.trim(), '', `${path}: an inline script`);
    }
  } finally {
    await service.close();
  }
});

describe('every request gets an answer where the server can give one', () => {
  let service: Service;
  before(async () => { service = await startService(); });
  after(() => service.close());

  const post = (lengthHeaders: string): string =>
    `POST ${ANALYZE} HTTP/1.1\r\nHost: localhost\r\nX-User-Id: ann\r\nContent-Type: multipart/form-data; boundary=b\r\n${lengthHeaders}\r\n`;

  test('Content-Length of 1e9 or more is 413, not digits, negative or padded past 9 digits is 400: JSON answers, connection closed', async () => {
    for (const [header, status, code] of [
      ['Content-Length: 1000000000\r\n', 413, 'payload_too_large'],
      ['Content-Length: 99999999999999999999\r\n', 413, 'payload_too_large'],
      ['Content-Length: abc\r\n', 400, 'bad_content_length'],
      // Under 1e9 but longer than uWS reads: not too large, a length it cannot take.
      ['Content-Length: 0000000002\r\n', 400, 'bad_content_length'],
      ['Content-Length: 00000000001000000000\r\n', 413, 'payload_too_large'],
      ['Content-Length: -5\r\n', 400, 'bad_content_length'],
      ['Content-Length: 5\r\nContent-Length: 6\r\n', 400, 'bad_content_length'],
    ] as const) {
      const answer = await rawExchange(service, post(header));
      assert.equal(answer.status, status, `${header.trim()}: ${answer.head}`);
      assertErrorBody(status, answer.body.trim(), status, code);
      assert.equal(answer.head.match(/^Connection: close$/gim)?.length, 1, answer.head);
    }
  });

  test('a Transfer-Encoding other than chunked alone is refused and its connection closed, never read as chunked (request smuggling)', async () => {
    // What a gateway might forward as the next request, hidden in a chunked body.
    const smuggled = `GET /api-rbxl/import/rbxl/create/smuggled-1 HTTP/1.1\r\nHost: localhost\r\nX-User-Id: victim\r\n\r\n`;
    const chunked = `${smuggled.length.toString(16)}\r\n${smuggled}\r\n0\r\n\r\n`;
    const createWith = (codings: string): string =>
      `POST ${CREATE} HTTP/1.1\r\nHost: localhost\r\nX-User-Id: ann\r\nContent-Type: application/json\r\n${codings}\r\n${chunked}`;
    for (const [codings, status, code] of [
      ['Transfer-Encoding: identity\r\n', 400, 'bad_transfer_encoding'],
      ['Transfer-Encoding: xchunked\r\n', 400, 'bad_transfer_encoding'],
      ['Transfer-Encoding: chunked, identity\r\n', 400, 'bad_transfer_encoding'],
      ['Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n', 400, 'bad_transfer_encoding'],
      ['Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n', 400, 'bad_transfer_encoding'],
      // No coding at all: uWS still reads the body as chunked.
      ['Transfer-Encoding: ,\r\n', 400, 'bad_transfer_encoding'],
      ['Transfer-Encoding: , ,\r\n', 400, 'bad_transfer_encoding'],
      ['Transfer-Encoding: gzip, chunked\r\n', 501, 'unsupported_transfer_encoding'],
      ['Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n', 501, 'unsupported_transfer_encoding'],
    ] as const) {
      const answer = await rawExchange(service, createWith(codings));
      assert.equal(answer.status, status, `${JSON.stringify(codings)}: ${answer.head}`);
      assertErrorBody(status, answer.body.trim(), status, code);
      assert.equal(answer.head.match(/^Connection: close$/gim)?.length, 1, answer.head);
      assert.equal(answer.closedByServer, true, `${JSON.stringify(codings)}: the connection is not kept for a next request`);
    }
    // A GET naming a coding is refused the same way.
    const get = await rawExchange(service, `GET /api-rbxl/config HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: identity\r\n\r\n${chunked}`);
    assert.equal(get.status, 400, get.head);
    assert.equal(get.closedByServer, true);
    // chunked alone (any case, spaces around it) is read as it always was: the body is this JSON.
    const body = JSON.stringify({ preview_hash: 'f'.repeat(64) });
    for (const codings of ['Transfer-Encoding: chunked\r\n', 'Transfer-Encoding:  Chunked \r\n']) {
      const answer = await rawExchange(service,
        `POST ${CREATE} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nX-User-Id: ann\r\nContent-Type: application/json\r\n${codings}\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`);
      assert.equal(answer.status, 404, `${JSON.stringify(codings)}: ${answer.head}`);
      assertErrorBody(404, answer.body.trim(), 404, 'not_found');
    }
  });

  test('what uWebSockets.js 20.30 closes before any handler runs: no bytes come back (README lists them)', async () => {
    for (const request of [
      `POST ${ANALYZE} HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n`,
      `GET ${HEALTH} HTTP/1.0\r\nHost: localhost\r\n\r\n`,
      `GET ${HEALTH} HTTP/1.1\r\n\r\n`, // no Host
      'HELLO WORLD\r\n\r\n',
      `GET ${HEALTH} HTTP/1.1\r\nHost: localhost\r\nX-User-Id: a\u0001b\r\n\r\n`, // a control character in a header value
      `GET ${HEALTH} HTTP/1.1\nHost: localhost\n\n`, // bare LF line ends
    ]) {
      const answer = await rawExchange(service, request);
      assert.equal(answer.bytes, 0, `${JSON.stringify(request.slice(0, 40))} got ${JSON.stringify(answer.head)}`);
    }
    // The service is unaffected.
    assert.equal((await getJson(service, HEALTH, {})).status, 200);
  });

  test('pipelining: requests answered at once are answered in turn; one sent behind an answer still awaited closes the connection unanswered (uWebSockets.js 20.30; README)', async () => {
    const config = `GET /api-rbxl/config HTTP/1.1\r\nHost: localhost\r\n\r\n`;
    const both = await rawExchange(service, config + config);
    assert.equal(both.head.startsWith('HTTP/1.1 200'), true);
    assert.equal((both.head + both.body).split('HTTP/1.1 200').length - 1, 2, 'two answers');
    // A project lookup awaits the store: the request behind it closes the connection, both unanswered.
    const lookup = `GET /api-rbxl/projects/p_aaaaaaaaaaaaaaaaaaaa HTTP/1.1\r\nHost: localhost\r\nX-User-Id: pip\r\n\r\n`;
    const behind = await rawExchange(service, lookup + config);
    assert.equal(behind.bytes, 0, JSON.stringify(behind.head));
    // Alone, the lookup is answered.
    assert.equal((await rawExchange(service, lookup)).status, 404);
  });

  test('an error mid-body sends Connection: close exactly once, whether or not the request asked for close', async () => {
    const big = multipartBody(BOUNDARY, [{ name: 'file', fileName: 'big.rbxl', data: Buffer.alloc(400_000, 1) }]);
    const small = await startService({ maxUploadBytes: 100_000 });
    try {
      for (const connection of ['close', 'keep-alive']) {
        const answer = await rawExchange(small, Buffer.concat([
          Buffer.from(`POST ${ANALYZE} HTTP/1.1\r\nHost: localhost\r\nConnection: ${connection}\r\nX-User-Id: ann\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: 150000\r\n\r\n`),
          big.subarray(0, 150_000),
        ]));
        assert.equal(answer.status, 413);
        assert.equal(answer.head.match(/^Connection: close$/gim)?.length, 1, `${connection}: ${answer.head}`);
      }
    } finally {
      await small.close();
    }
  });
});

test('every GET route answers HEAD: the GET\'s status, type and length, and no body', async () => {
  const service = await startService();
  try {
    const { preview_hash } = await analyze(service, PLACE, 'arena.rbxl', as('ann'));
    const created = await postJson(service, CREATE, { preview_hash }, as('ann'));
    const project = `/api-rbxl/projects/${((await created.json()) as { project_id: string }).project_id}`;
    const ann = 'X-User-Id: ann\r\n';
    const cases: [string, string, number][] = [
      [HEALTH, '', 200], ['/api-rbxl/config', '', 200], ['/api-rbxl/', '', 200], ['/api-rbxl/static/app.js', '', 200], ['/', '', 302],
      ['/api-rbxl/vendor/three/examples/jsm/controls/OrbitControls.js', '', 200],
      [project, ann, 200], [project, `${ann}Accept-Encoding: br\r\n`, 200], [`${project}/summary`, ann, 200], [`${project}/page`, '', 200],
      [`${project}/scene.glb`, ann, 200], ['/api-rbxl/projects/p_aaaaaaaaaaaaaaaaaaaa', ann, 404], [project, '', 401],
    ];
    const header = (answer: RawAnswer, name: string): string | undefined =>
      new RegExp(`^${name}: (.*)$`, 'im').exec(answer.head)?.[1];
    for (const [path, headers, status] of cases) {
      const request = (method: string) => `${method} ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n${headers}\r\n`;
      const get = await rawExchange(service, request('GET'), 5000);
      const head = await rawExchange(service, request('HEAD'), 5000);
      const label = `HEAD ${path} ${headers.trim()}`;
      assert.equal(get.status, status, label);
      assert.equal(head.status, status, label);
      assert.equal(head.body, '', `${label}: no body`);
      assert.ok(head.closedByServer, `${label}: the request's Connection: close is honoured`);
      assert.equal(header(head, 'Content-Type'), header(get, 'Content-Type'), label);
      assert.equal(header(head, 'Content-Encoding'), header(get, 'Content-Encoding'), label);
      const length = header(get, 'Content-Length');
      if (length !== undefined) {
        assert.equal(Number(length), Buffer.byteLength(get.body, 'latin1'), `${label}: the GET is whole`);
        assert.equal(header(head, 'Content-Length'), length, `${label}: the GET's length`);
      } else {
        assert.equal(header(get, 'Transfer-Encoding'), 'chunked', label);
        assert.equal(header(head, 'Transfer-Encoding'), 'chunked', `${label}: a streamed body's framing`);
        assert.equal(header(head, 'Content-Length'), undefined, `${label}: a streamed body's length is not known`);
      }
    }
    // Refused framing: a Content-Length uWS cannot parse (it closes the connection as the handler returns)
    // and one sent twice (the service closes it): the GET's status and length, and the connection closes.
    for (const [lengths, status] of [[['abc'], 400], [['1000000000'], 413], [['5', '6'], 400]] as const) {
      const request = (method: string) => `${method} ${HEALTH} HTTP/1.1\r\nHost: localhost\r\n${lengths.map((value) => `Content-Length: ${value}\r\n`).join('')}\r\n`;
      const get = await rawExchange(service, request('GET'), 1000);
      const head = await rawExchange(service, request('HEAD'), 1000);
      const label = `HEAD with Content-Length ${lengths.join(', ')}`;
      assert.deepEqual([get.status, head.status], [status, status], label);
      // The padded answer (uWS closes as the handler returns) has the GET's length; one the service closes says 0.
      assert.equal(header(head, 'Content-Length'), lengths.length === 2 ? '0' : header(get, 'Content-Length'), label);
      assert.equal(header(head, 'Connection'), 'close', label);
      assert.ok(head.closedByServer, `${label}: the connection is closed, not left open`);
      if (lengths.length === 2) assert.equal(head.body, '', `${label}: no body`);
    }
    // A kept-alive connection goes on after a HEAD: the GET behind it is answered, whole.
    for (const path of [HEALTH, project, `${project}/scene.glb`]) {
      const answers = await new Promise<string>((resolve) => {
        const socket = connect(service.port, '127.0.0.1');
        let text = '';
        socket.on('data', (chunk: Buffer) => {
          text += chunk.toString('latin1');
          if (text.includes('\r\n\r\n') && !text.includes('GET-SENT')) {
            text += 'GET-SENT';
            socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n${ann}Connection: close\r\n\r\n`);
          }
        });
        socket.on('close', () => resolve(text));
        socket.on('error', () => resolve(text));
        socket.write(`HEAD ${path} HTTP/1.1\r\nHost: localhost\r\n${ann}\r\n`);
      });
      const [headAnswer, getAnswer = ''] = answers.split('GET-SENT');
      assert.match(headAnswer!, /^HTTP\/1\.1 200 [^]*\r\n\r\n$/, `HEAD ${path} on a kept-alive connection: headers only`);
      assert.match(getAnswer, /^HTTP\/1\.1 200 /, `GET ${path} after it on the same connection`);
      const length = /^Content-Length: (\d+)$/im.exec(getAnswer)?.[1];
      if (length !== undefined) assert.equal(Buffer.byteLength(getAnswer.slice(getAnswer.indexOf('\r\n\r\n') + 4), 'latin1'), Number(length), `GET ${path}: whole`);
    }
    // Allow names HEAD wherever GET is allowed.
    const wrong = await rawExchange(service, `POST ${project} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n${ann}Content-Length: 0\r\n\r\n`);
    assert.equal(wrong.status, 405);
    assert.equal(header(wrong, 'Allow'), 'GET, HEAD, DELETE');
  } finally {
    await service.close();
  }
});

test('a create still open when the shutdown grace ends is answered 503 shutting_down, and its progress says so', async () => {
  const assets = await startAssetServer();
  const overrides = { assetUrlTemplate: assets.templateUrl, assetTimeoutMs: 60_000, assetRetries: 0 };
  const service = await startService(overrides);
  try {
    const place = readFileSync(join(PLACES_DIR, 'slime-defense.rbxl'));
    const { preview_hash } = await analyze(service, place, 'slime.rbxl', as('ann'));
    // Every asset hangs: the create waits on its downloads.
    const stall = { type: 'bytes' as const, body: 'x', delayMs: 60_000 };
    assets.assets['5572530342'] = stall;
    const pending = rawRequest(service, {
      path: CREATE, headers: { ...as('ann'), 'Content-Type': 'application/json', 'X-Create-Id': 'stopped-by-shutdown' }, body: [JSON.stringify({ preview_hash })],
    });
    await waitUntil(() => assets.inFlight > 0, 'the create to be downloading');
    await service.server.close(300);
    const answer = await pending;
    assertErrorBody(answer.status, answer.text, 503, 'shutting_down');
    assert.equal(answer.headers['retry-after'], '5');
    assert.equal(answer.headers.connection, 'close', 'once');
    // The next instance on the same store tells the create's poller why it stopped: not that its client left.
    const next = await startServer({ host: '127.0.0.1', port: 0, dataDir: service.dataDir, log: false, workers: 1, ...overrides });
    try {
      const progress = await getJson({ ...service, url: next.url }, `${CREATE}/stopped-by-shutdown`, as('ann'));
      assert.equal(progress.status, 200);
      assert.deepEqual([progress.body.phase, (progress.body.error as { code?: string } | undefined)?.code], ['failed', 'shutting_down']);
    } finally {
      await next.close(1000);
    }
  } finally {
    await service.close();
    await assets.close();
  }
});

describe('the analysis service', () => {
  test('concurrent uploads of the same bytes are decoded once', async () => {
    const service = await startService({ workers: 1 });
    try {
      // Keep the only worker busy, so every upload below is waiting on the analysis at once.
      const busy = upload(service, encode(generatePlace({ parts: 40_000, scripts: 100, uniqueAssets: 50, seed: 5 })), 'busy.rbxl', as('zed'));
      await waitUntil(async () => (await getJson(service, HEALTH, {})).body.workers.running > 0, 'the worker to be busy');
      const before = (await getJson(service, HEALTH, {})).body.workers.tasks.analyze as number;
      const bytes = Buffer.concat([PLACE, Buffer.from('dedupe-count')]);
      const users = Array.from({ length: 6 }, (_, i) => `user${i}`);
      const answers = await Promise.all(users.map((user) => analyze(service, bytes, 'same.rbxl', as(user))));
      assert.equal(new Set(answers.map((answer) => answer.preview_hash)).size, 1);
      assert.equal((await busy).status, 200);
      const after = (await getJson(service, HEALTH, {})).body.workers.tasks.analyze as number;
      assert.equal(after - before, 1, 'one decode for six uploads of the same bytes');
    } finally {
      await service.close();
    }
  });

  test('the file name a user gave is cleaned before it is shown back: base name, no control characters, bounded', async () => {
    assert.equal(cleanFileName('../../etc/passwd'), 'passwd');
    assert.equal(cleanFileName('C:\\Users\\ann\\map.rbxl'), 'map.rbxl');
    assert.equal(cleanFileName('a\u0000b\u001f\u007fc.rbxl'), 'abc.rbxl');
    assert.equal(cleanFileName('  '), 'upload.rbxl');
    assert.equal(cleanFileName(null), 'upload.rbxl');
    assert.equal(cleanFileName('x'.repeat(300)).length, 255);
    const service = await startService();
    try {
      for (const [given, shown] of [['../../secret/dir/map.rbxl', 'map.rbxl'], ['C:\\maps\\win.rbxl', 'win.rbxl'], ['tab\there.rbxl', 'tabhere.rbxl']] as const) {
        const body = multipartBody(BOUNDARY, [{ name: 'file', fileName: given, data: Buffer.concat([PLACE, Buffer.from(given)]) }]);
        const request = openUpload(service, BOUNDARY, body, as('ann'));
        const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
          request.on('response', (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          });
          request.on('error', reject);
          request.end(body);
        });
        assert.equal(answer.status, 200, answer.text);
        assert.equal(JSON.parse(answer.text).report.file_name, shown);
      }
    } finally {
      await service.close();
    }
  });
});

test('close() without a grace uses the configured one (SHUTDOWN_GRACE_MS)', async () => {
  const service = await startService({ shutdownGraceMs: 300 });
  try {
    const body = multipartBody(BOUNDARY, [{ name: 'file', fileName: 'slow.rbxl', data: PLACE }]);
    const request = openUpload(service, BOUNDARY, body, as('ann'));
    const answer = new Promise<number>((resolve) => {
      request.on('response', (response) => { response.resume(); resolve(response.statusCode ?? 0); });
      request.on('error', () => resolve(0));
    });
    request.write(body.subarray(0, 1000));
    await waitUntil(async () => (await uploadsIn(service)).length === 1, 'the upload to be in flight');
    const closed = await Promise.race([service.server.close().then(() => 'closed'), new Promise((resolve) => setTimeout(() => resolve('still waiting after 10 s'), 10_000))]);
    assert.equal(closed, 'closed');
    assert.equal(await answer, 503);
    request.destroy();
  } finally {
    await service.close();
  }
});

test('a request past the shutdown is refused with 503 and Retry-After', async () => {
  const service = await startService();
  const closing = service.server.close(2_000);
  try {
    const answer = await postJson(service, CREATE, { preview_hash: 'ab'.repeat(32) }, as('ann')).catch(() => null);
    // The listen socket is closed at once: a new connection is refused, or answered 503.
    if (answer) await expectError(answer, 503, 'shutting_down');
  } finally {
    await closing;
    await service.close();
  }
});
