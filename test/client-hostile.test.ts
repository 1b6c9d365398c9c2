/**
 * The client library against a server on loopback that answers badly: a body that breaks
 * off after its status came is an answer not read whole (status UNREAD, the status in the
 * message), never "the service could not be reached"; an error's body is read bounded on
 * every route, downloads included; an upload whose file changes while it is sent is said as
 * such, not as a service that could not be reached.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClientError, createClient, describeFailure } from '../src/client/index.js';
import { UNREAD, UNSENT } from '../src/client/errors.js';
import { uploadFromPath } from '../src/client/node.js';
import { MAX_ANSWER_BYTES } from '../src/client/transport.js';

type Answer = (req: IncomingMessage, res: ServerResponse) => void;

let answer: Answer;
let server: Server;
let baseUrl: string;

before(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => answer(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.closeAllConnections();
  return new Promise<void>((resolve) => server.close(() => resolve()));
});

/** A 200 that promises 1000 bytes, sends a few and closes the connection. */
const cutShort: Answer = (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
  res.write('{"preview_hash": "');
  setTimeout(() => res.socket?.destroy(), 20);
};

async function failureOf(run: () => Promise<unknown>): Promise<ClientError> {
  try {
    await run();
  } catch (error) {
    assert.ok(error instanceof ClientError, String(error));
    return error;
  }
  assert.fail('the call succeeded');
}

test('a body cut short after its status came is an answer not read whole, not an unreachable service', async () => {
  answer = cutShort;
  const client = createClient({ baseUrl, token: 't' });
  const calls: [string, () => Promise<unknown>][] = [
    ['analyze', () => client.analyze(new Blob(['x']))],
    ['analyze', () => client.analyze(new Blob(['x']), { onProgress: () => undefined })],
    ['create', () => client.create('a'.repeat(64))],
    ['download', () => client.download('/api-rbxl/projects/p_x/scene.glb')],
    ['download', () => client.projectDocument('p_x')],
  ];
  for (const [operation, call] of calls) {
    const error = await failureOf(call);
    assert.equal(error.status, UNREAD, error.message);
    assert.match(error.message, new RegExp(`^${operation} failed \\(200\\): the answer was cut short: `));
    const described = describeFailure(error, operation);
    assert.doesNotMatch(described.message, /could not be reached/);
  }
  // A service that is not there at all is still status 0.
  const gone = createClient({ baseUrl: 'http://127.0.0.1:1', token: 't' });
  assert.equal((await failureOf(() => gone.create('h'))).status, 0);
});

test('an endless error body to a download is read up to MAX_ANSWER_BYTES, not held whole', async () => {
  answer = (_req, res) => {
    res.writeHead(500, { 'content-type': 'text/plain' });
    const piece = Buffer.alloc(1 << 20, 0x41);
    let sent = 0;
    const more = (): void => {
      while (sent <= MAX_ANSWER_BYTES + (8 << 20)) {
        sent += piece.length;
        if (!res.write(piece)) { res.once('drain', more); return; }
      }
      res.end();
    };
    res.on('close', () => { sent = Infinity; });
    more();
  };
  const client = createClient({ baseUrl, token: 't' });
  for (const call of [() => client.download('/api-rbxl/projects/p_x/scene.glb'), () => client.projectDocument('p_x')]) {
    const error = await failureOf(call);
    assert.equal(error.status, UNREAD);
    assert.equal(error.message, 'download failed (500): the answer is larger than the client reads (64 MiB)');
  }
});

test('an upload whose file changed after it was opened fails as such, not as an unreachable service', async () => {
  answer = (_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ preview_hash: 'h', report: { scripts_total: 0 } })); };
  const dir = await mkdtemp(join(tmpdir(), 'rbxl-client-'));
  try {
    const path = join(dir, 'map.rbxl');
    const client = createClient({ baseUrl, token: 't' });
    for (const options of [{}, { onProgress: () => undefined }]) {
      await writeFile(path, Buffer.alloc(64 * 1024, 1));
      const upload = await uploadFromPath(path);
      // Saved again (a Studio save, a copy still running) between opening it and sending it.
      await appendFile(path, 'more');
      const error = await failureOf(() => client.analyze(upload, options));
      assert.equal(error.status, UNSENT, error.message);
      assert.match(error.message, /^analyze failed: the file could not be read while it was sent \(it changed or was removed\): /);
      const described = describeFailure(error, 'analyze');
      assert.equal(described.message, 'The file changed or was removed while it was being sent.');
      assert.equal(described.status, 0);
    }
    // The same file left alone is sent.
    await writeFile(path, Buffer.alloc(1024, 1));
    assert.equal((await client.analyze(await uploadFromPath(path), { onProgress: () => undefined })).preview_hash, 'h');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a redirect is a non-2xx answer that fails with its status: not followed to another path or origin with the credentials', async () => {
  const elsewhere: string[] = [];
  const other = createServer((req, res) => { elsewhere.push(`${req.method} ${req.url} ${String(req.headers['x-auth-override'])}`); req.resume(); res.writeHead(200).end('{}'); });
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
  try {
    const client = createClient({ baseUrl, token: 'a.eyJpZCI6N30.s' });
    for (const [status, location] of [[301, `${otherUrl}/moved`], [302, '/moved'], [307, `${otherUrl}/moved`], [308, '/api-rbxl/import/rbxl/analyze']] as const) {
      answer = (_req, res) => { res.writeHead(status, { location, 'content-type': 'text/plain' }).end('moved'); };
      for (const [operation, call] of [
        ['analyze', () => client.analyze(new Blob(['x']))],
        ['analyze', () => client.analyze(new Blob(['x']), { onProgress: () => undefined })],
        ['create', () => client.create('h')],
        ['download', () => client.download('/api-rbxl/projects/p_x/scene.glb')],
      ] as const) {
        const error = await failureOf(call);
        assert.equal(error.status, status);
        assert.equal(error.message, `${operation} failed (${status}): moved`);
        assert.match(describeFailure(error, operation).message, /redirect/);
      }
    }
    assert.deepEqual(elsewhere, []);
  } finally {
    other.closeAllConnections();
    await new Promise<void>((resolve) => other.close(() => resolve()));
  }
});

test('a call stopped by its signal with a reason of its own (AbortSignal.timeout) rejects with that reason, not as an unreachable service', async () => {
  const client = createClient({ baseUrl, token: 't' });
  const expectTimeout = async (call: () => Promise<unknown>): Promise<void> => {
    const started = Date.now();
    await assert.rejects(call, (error: unknown) => {
      assert.ok(!(error instanceof ClientError), String(error));
      assert.equal((error as Error).name, 'TimeoutError');
      assert.equal(describeFailure(error, 'create').message, 'Stopped: it took longer than allowed.');
      return true;
    });
    assert.ok(Date.now() - started < 5000);
  };
  // No answer at all.
  answer = () => undefined;
  await expectTimeout(() => client.create('h', { signal: AbortSignal.timeout(200) }));
  await expectTimeout(() => client.analyze(new Blob(['x']), { onProgress: () => undefined, signal: AbortSignal.timeout(200) }));
  await expectTimeout(() => client.download('/api-rbxl/projects/p_x/scene.glb', { signal: AbortSignal.timeout(200) }));
  // Headers, then a body that stalls.
  for (const status of [200, 500]) {
    answer = (_req, res) => { res.writeHead(status, { 'content-type': 'application/json', 'content-length': '100' }); res.write('{'); };
    await expectTimeout(() => client.create('h', { signal: AbortSignal.timeout(300) }));
    await expectTimeout(() => client.download('/api-rbxl/projects/p_x/scene.glb', { signal: AbortSignal.timeout(300) }));
    await expectTimeout(() => client.projectDocument('p_x', { signal: AbortSignal.timeout(300) }));
  }
});
