/**
 * The S3 store when the store fails: killed (SIGKILL) before and during requests, stalled,
 * throttled, misconfigured. Every failure is a StoreUnavailableError within a bounded time
 * (timeouts 1 s, 2 attempts here), nothing half-written is visible, and the same client
 * works again once the store is back.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import {
  createS3Store,
  storeConfigFromEnv,
  StoreUnavailableError,
  type ObjectStore,
  type ObjectStream,
  type S3StoreConfig,
  type UnavailableReason,
} from '../src/store/backends/index.js';
import { S3_TEST_ENV, startS3Server } from './support/s3-server.js';
import { startS3Proxy } from './support/s3-proxy.js';

const root = await mkdtemp(join(tmpdir(), 'rbxl-backend-faults-'));
const s3 = await startS3Server();
const proxy = await startS3Proxy(s3.port, { conditional: false });
after(async () => {
  await proxy.close();
  await s3.close();
  await rm(root, { recursive: true, force: true });
});

const PART = 5 * 1024 * 1024;
/** Generous: with 1 s timeouts and 2 attempts a failure takes a few seconds at most; a hang takes forever. */
const BOUND_MS = 10_000;

function config(overrides: Record<string, string> = {}, endpoint = s3.endpoint): S3StoreConfig {
  return storeConfigFromEnv({
    ...S3_TEST_ENV,
    STORE_URL: `s3://${s3.bucket}/faults`,
    S3_ENDPOINT: endpoint,
    S3_TIMEOUT_MS: '1000',
    S3_MAX_ATTEMPTS: '2',
    S3_PART_SIZE: String(PART),
    ...overrides,
  }, root) as S3StoreConfig;
}

function opened(t: { after(fn: () => Promise<void>): void }, store: ObjectStore): ObjectStore {
  t.after(() => store.close());
  return store;
}

async function fileOf(bytes: number): Promise<{ path: string; hash: string }> {
  const path = join(root, `f-${randomBytes(6).toString('hex')}`);
  const data = randomBytes(bytes);
  const handle = await open(path, 'w');
  await handle.writeFile(data);
  await handle.close();
  return { path, hash: createHash('sha256').update(data).digest('hex') };
}

/** Asserts `operation` fails with StoreUnavailableError (of `reason`, if given) within the bound. */
async function unavailable(operation: () => Promise<unknown>, reason?: UnavailableReason): Promise<StoreUnavailableError> {
  const started = Date.now();
  let caught: unknown;
  try {
    await operation();
  } catch (error) {
    caught = error;
  }
  const elapsed = Date.now() - started;
  assert.ok(caught instanceof StoreUnavailableError, `expected StoreUnavailableError, got ${String(caught)}`);
  if (reason !== undefined) assert.equal(caught.reason, reason, caught.message);
  assert.ok(caught.retryAfterSeconds >= 1);
  assert.ok(elapsed < BOUND_MS, `failed after ${elapsed} ms`);
  return caught;
}

test('a stopped store: every operation fails fast as unavailable; restarted, the same client works again', { timeout: 60_000 }, async (t) => {
  const store = opened(t, createS3Store(config()));
  await store.put('before', 'x');
  const file = await fileOf(1000);
  await s3.stop();
  try {
    await unavailable(() => store.head('before'), 'unreachable');
    await unavailable(() => store.get('before'), 'unreachable');
    await unavailable(() => store.getStream('before'), 'unreachable');
    await unavailable(() => store.put('k', 'x'), 'unreachable');
    await unavailable(() => store.put('k', 'x', { ifNoneMatch: '*' }), 'unreachable'); // the capability probe cannot run either
    await unavailable(() => store.putFile('k', file.path), 'unreachable');
    await unavailable(() => store.delete('before'), 'unreachable');
    await unavailable(() => store.list(''), 'unreachable');
    await unavailable(() => store.sweepIncomplete(0), 'unreachable');
    const reach = await store.check();
    assert.equal(reach.ok, false);
    assert.ok(!reach.ok && reach.reason === 'unreachable');
  } finally {
    await s3.start();
  }
  assert.deepEqual(await store.check().then((reach) => reach.ok), true);
  assert.equal((await store.get('before'))?.body.toString(), 'x');
  assert.ok((await store.put('k', 'y', { ifNoneMatch: '*' })).written);
  assert.deepEqual(await store.put('k', 'z', { ifNoneMatch: '*' }), { written: false });
  assert.deepEqual(await store.capabilities(), { atomicCreate: false, atomicReplace: false }, 'probed once the store is back: s3rver ignores conditions');
});

test('killed mid-upload: the multipart upload fails as unavailable, the key holds nothing; restarted, the same client uploads', { timeout: 60_000 }, async (t) => {
  const store = opened(t, createS3Store(config()));
  const file = await fileOf(4 * PART);
  let killed = false;
  s3.onRequest((line) => {
    if (!killed && /^PUT \/rbxl-test\/faults\/mid-upload\?.*partNumber=/.test(line)) {
      killed = true;
      void s3.stop();
    }
  });
  try {
    await unavailable(() => store.putFile('mid-upload', file.path));
    assert.ok(killed);
  } finally {
    s3.onRequest(undefined);
    await s3.start();
  }
  assert.equal(await store.head('mid-upload'), undefined, 'nothing half-written');
  const again = await store.putFile('mid-upload', file.path);
  assert.ok(again.written);
  const got = await store.get('mid-upload');
  assert.equal(createHash('sha256').update(got!.body).digest('hex'), file.hash);
  await rm(file.path);
});

test('killed mid-read: the stream fails as unavailable; restarted, the same client reads', { timeout: 60_000 }, async (t) => {
  const store = opened(t, createS3Store(config()));
  const body = randomBytes(12 * 1024 * 1024);
  await store.put('mid-read', body);
  const stream = await store.getStream('mid-read');
  assert.ok(stream !== undefined);
  let received = 0;
  await unavailable(async () => {
    for await (const chunk of stream.body) {
      if (received === 0) await s3.stop();
      received += (chunk as Buffer).length;
    }
  });
  assert.ok(received < body.length, 'the read was cut short, and said so');
  await s3.start();
  assert.deepEqual((await store.get('mid-read'))?.body, body);
});

test('a store that stops sending mid-body: the idle timeout ends the read as unavailable', { timeout: 60_000 }, async (t) => {
  const store = opened(t, createS3Store(config({}, proxy.endpoint)));
  await store.put('stalled', randomBytes(2 * 1024 * 1024));
  proxy.fault(/^GET \/rbxl-test\/faults\/stalled/, 'stall', 4);
  await unavailable(async () => {
    const stream = await store.getStream('stalled');
    for await (const chunk of stream!.body) void chunk;
  }, 'timeout');
  await unavailable(() => store.get('stalled'), 'timeout');
  proxy.clearFaults();
  assert.equal((await store.get('stalled'))?.size, 2 * 1024 * 1024);
});

test('throttling and 5xx: retried at most S3_MAX_ATTEMPTS times, then unavailable with a Retry-After', { timeout: 60_000 }, async (t) => {
  const store = opened(t, createS3Store(config({ S3_MAX_ATTEMPTS: '2' }, proxy.endpoint)));
  const count = (): number => proxy.requests.filter((line) => line.startsWith('PUT /rbxl-test/faults/throttled')).length;
  proxy.fault(/^PUT \/rbxl-test\/faults\/throttled/, 'slow_down', 100);
  const error = await unavailable(() => store.put('throttled', 'x'), 'throttled');
  assert.equal(error.retryAfterSeconds, 2);
  assert.equal(count(), 2);
  proxy.clearFaults();
  proxy.fault(/^PUT \/rbxl-test\/faults\/throttled/, 'server_error', 1);
  assert.ok((await store.put('throttled', 'x')).written, 'a 500, then the second try succeeds');
  assert.equal(count(), 4);
  proxy.fault(/^GET \/rbxl-test\/faults\/throttled/, 'server_error', 100);
  await unavailable(() => store.get('throttled'), 'server_error');
  proxy.clearFaults();
});

test('a misconfigured store (no such bucket, wrong keys) is unavailable as misconfigured, and /health can say why', { timeout: 60_000 }, async (t) => {
  const noBucket = opened(t, createS3Store({ ...config(), bucket: 'no-such-bucket' }));
  const reach = await noBucket.check();
  assert.ok(!reach.ok && reach.reason === 'misconfigured', JSON.stringify(reach));
  assert.match(reach.ok ? '' : reach.message, /NoSuchBucket/);
  await unavailable(() => noBucket.list(''), 'misconfigured');
  await unavailable(() => noBucket.put('k', 'x'), 'misconfigured');

  const wrongKeys = opened(t, createS3Store(config({ AWS_ACCESS_KEY_ID: 'NOT-A-KEY', AWS_SECRET_ACCESS_KEY: 'not-the-secret' })));
  const denied = await wrongKeys.check();
  assert.ok(!denied.ok && denied.reason === 'misconfigured', JSON.stringify(denied));
  await unavailable(() => wrongKeys.get('before'), 'misconfigured');
});

test('a store answering without a length is read only up to the caller\'s bound, not to its end', { timeout: 30_000 }, async (t) => {
  // An endless body, chunked without a Content-Length: what a broken store or proxy may send.
  let sent = 0;
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'Content-Type': 'application/octet-stream', ETag: '"e"', 'Last-Modified': new Date().toUTCString() });
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const pump = (): void => {
      while (!response.destroyed && sent < 256 * 1024 * 1024) {
        sent += chunk.length;
        if (!response.write(chunk)) { response.once('drain', pump); return; }
      }
      response.end();
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  const store = opened(t, createS3Store(config({ S3_TIMEOUT_MS: '20000' }, `http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
  const started = Date.now();
  await assert.rejects(store.get('endless', { maxBytes: 100_000 }), (error: Error) => error.name === 'ObjectTooLargeError');
  assert.ok(Date.now() - started < BOUND_MS, `read for ${Date.now() - started} ms`);
  assert.ok(sent < 64 * 1024 * 1024, `the store sent ${sent} bytes before the read stopped`);
});

test('uploads a slow store holds keep a bounded share of memory, however many run at once', { timeout: 60_000 }, async (t) => {
  // Multipart calls answered as S3 does, each part 600 ms after its body came: a slow
  // store. The parts whose bodies arrived and whose answers are still due are what the
  // client holds in memory (it keeps a part until it is answered, to send it again).
  let inFlight = 0;
  let peak = 0;
  let parts = 0;
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://store');
    const xml = (body: string): void => { response.writeHead(200, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) }).end(body); };
    let received = 0;
    request.on('data', (chunk: Buffer) => { received += chunk.length; });
    request.on('end', () => {
      if (request.method === 'POST' && url.searchParams.has('uploads')) {
        xml(`<?xml version="1.0" encoding="UTF-8"?>\n<InitiateMultipartUploadResult><Bucket>rbxl-test</Bucket><Key>k</Key><UploadId>${randomBytes(8).toString('hex')}</UploadId></InitiateMultipartUploadResult>`);
      } else if (request.method === 'PUT' && url.searchParams.has('partNumber')) {
        parts++;
        inFlight += received;
        peak = Math.max(peak, inFlight);
        setTimeout(() => {
          inFlight -= received;
          response.writeHead(200, { ETag: `"${randomBytes(16).toString('hex')}"`, 'content-length': 0 }).end();
        }, 600);
      } else if (request.method === 'POST' && url.searchParams.has('uploadId')) {
        xml('<?xml version="1.0" encoding="UTF-8"?>\n<CompleteMultipartUploadResult><Bucket>rbxl-test</Bucket><Key>k</Key><ETag>"e-3"</ETag></CompleteMultipartUploadResult>');
      } else {
        response.writeHead(204).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  // Every request well within S3_TIMEOUT_MS, but the twenty uploads together take longer than
  // S3_TIMEOUT_MS × S3_MAX_ATTEMPTS: waiting for memory has no limit of its own (with one,
  // the later uploads on this healthy store failed as 503 busy).
  const store = opened(t, createS3Store(config({ S3_TIMEOUT_MS: '1000', S3_MAX_ATTEMPTS: '1', S3_CONDITIONAL_WRITES: 'off' }, `http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
  const file = await fileOf(12 * 1024 * 1024 + 1); // three parts
  const uploads = 20;
  const started = Date.now();
  const results = await Promise.all(Array.from({ length: uploads }, (_, i) => store.putFile(`slow-${i}`, file.path)));
  assert.ok(results.every((result) => result.written));
  assert.ok(Date.now() - started > 2000, 'the uploads took longer than an operation\'s deadline');
  assert.equal(parts, uploads * 3);
  // Two uploads of the largest kind (four parts in flight and one being read): 50 MiB at
  // 5 MiB parts. Without a bound the ten sent theirs side by side (68 MiB when measured; more, the more uploads).
  const bound = 2 * 5 * PART;
  assert.ok(peak <= bound, `${(peak / 2 ** 20).toFixed(1)} MiB of parts in flight at once, more than ${bound / 2 ** 20} MiB`);
  assert.ok(peak > 12 * 1024 * 1024, 'uploads still run side by side');
  await rm(file.path);
});

test('an incomplete upload gone between the sweep\'s listing and its abort (completed, or a lifecycle rule) is done with: the sweep goes on', { timeout: 30_000 }, async (t) => {
  const aborts: string[] = [];
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://store');
    request.resume();
    request.on('end', () => {
      if (request.method === 'GET' && url.searchParams.has('uploads')) {
        const uploads = ['u1', 'u2', 'u3'].map((id) => `<Upload><Key>p/${id}</Key><UploadId>${id}</UploadId><Initiated>2020-01-01T00:00:00.000Z</Initiated></Upload>`).join('');
        const body = `<?xml version="1.0" encoding="UTF-8"?>\n<ListMultipartUploadsResult><Bucket>rbxl-test</Bucket><IsTruncated>false</IsTruncated>${uploads}</ListMultipartUploadsResult>`;
        response.writeHead(200, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) }).end(body);
      } else if (request.method === 'DELETE' && url.searchParams.has('uploadId')) {
        const id = url.searchParams.get('uploadId')!;
        aborts.push(id);
        if (id === 'u1') {
          const body = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>';
          response.writeHead(404, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) }).end(body);
        } else {
          response.writeHead(204).end();
        }
      } else {
        response.writeHead(204).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  const store = opened(t, createS3Store(config({ S3_CONDITIONAL_WRITES: 'off' }, `http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
  assert.equal(await store.sweepIncomplete(60_000), 2, 'the two still there are aborted');
  assert.deepEqual(aborts, ['u1', 'u2', 'u3']);
});

test('a multipart completion whose answer is lost, sent again and finding its upload gone, is unavailable: not an unexpected answer (500), nor a condition that failed', { timeout: 60_000 }, async (t) => {
  // The store completes the upload but the connection drops before its answer; the SDK
  // sends the completion again and the store answers NoSuchUpload, as S3 does.
  let completions = 0;
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://store');
    const xml = (body: string, status = 200): void => { response.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) }).end(body); };
    const noSuchUpload = (): void => xml('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>', 404);
    request.resume();
    request.on('end', () => {
      if (request.method === 'POST' && url.searchParams.has('uploads')) {
        xml('<?xml version="1.0" encoding="UTF-8"?>\n<InitiateMultipartUploadResult><Bucket>rbxl-test</Bucket><Key>k</Key><UploadId>u1</UploadId></InitiateMultipartUploadResult>');
      } else if (request.method === 'PUT' && url.searchParams.has('partNumber')) {
        response.writeHead(200, { ETag: `"${randomBytes(16).toString('hex')}"`, 'content-length': 0 }).end();
      } else if (request.method === 'POST' && url.searchParams.has('uploadId')) {
        if (completions++ % 2 === 0) request.socket.destroy();
        else noSuchUpload();
      } else if (request.method === 'DELETE' && url.searchParams.has('uploadId')) {
        noSuchUpload();
      } else {
        response.writeHead(404, { 'content-length': 0 }).end(); // HEAD: nothing stored under the key
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const file = await fileOf(2 * PART + 1);
  const plain = opened(t, createS3Store(config({ S3_CONDITIONAL_WRITES: 'off' }, endpoint)));
  await unavailable(() => plain.putFile('lost-answer', file.path), 'server_error');
  // Where the store decides conditions, the second completion's 404 is no answer to If-None-Match.
  const native = opened(t, createS3Store(config({ S3_CONDITIONAL_WRITES: 'on' }, endpoint)));
  await unavailable(() => native.putFile('lost-answer', file.path, { ifNoneMatch: '*' }), 'server_error');
  assert.equal(completions, 4);
  await rm(file.path);
});

test('an endless answer to a listing, or an endless error page, is read only up to a bound, not into memory to its end', { timeout: 60_000 }, async (t) => {
  // What the SDK reads whole (a listing page, an error) had no bound: a store, or a proxy
  // in front of it, that sent without end filled the process (1.3 GB in five seconds).
  let sent = 0;
  let status = 200;
  const server = createServer((request, response) => {
    request.resume();
    response.writeHead(status, { 'Content-Type': 'application/xml' });
    response.write('<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult><Name>rbxl-test</Name><Contents><Key>');
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const pump = (): void => {
      while (!response.destroyed && sent < 1024 * 1024 * 1024) {
        sent += chunk.length;
        if (!response.write(chunk)) { response.once('drain', pump); return; }
      }
      response.end();
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  const store = opened(t, createS3Store(config({ S3_TIMEOUT_MS: '20000' }, `http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
  for (const answer of [200, 500]) {
    status = answer;
    sent = 0;
    const started = Date.now();
    await assert.rejects(store.list(''), (error: Error) => /an answer longer than/.test(error.message), `HTTP ${answer}`);
    assert.ok(Date.now() - started < BOUND_MS, `read for ${Date.now() - started} ms`);
    assert.ok(sent < 64 * 1024 * 1024, `the store sent ${(sent / 2 ** 20).toFixed(0)} MiB before the read stopped (HTTP ${answer})`);
  }
  // An object's own body is the caller's to bound, as before.
  status = 200;
  await assert.rejects(store.get('endless', { maxBytes: 100_000 }), (error: Error) => error.name === 'ObjectTooLargeError');
});

test('object bodies read slowly do not hold the connections every other operation needs', { timeout: 60_000 }, async (t) => {
  // 64 readers (clients of project documents, say) that stop reading: each body keeps its
  // connection until read or until the idle timeout. They shared one pool of 64 with
  // everything else, and a HEAD waited for one of them to time out.
  const store = opened(t, createS3Store(config({ S3_TIMEOUT_MS: '8000' })));
  await store.put('slow-readers', randomBytes(1024 * 1024));
  const streams: ObjectStream[] = [];
  for (let i = 0; i < 64; i++) {
    const stream = await store.getStream('slow-readers');
    assert.ok(stream !== undefined);
    stream.body.on('error', () => {});
    streams.push(stream);
  }
  t.after(() => { for (const stream of streams) stream.body.destroy(); });
  const started = Date.now();
  assert.equal((await store.head('slow-readers'))?.size, 1024 * 1024);
  assert.equal((await store.get('slow-readers'))?.size, 1024 * 1024);
  const elapsed = Date.now() - started;
  assert.ok(elapsed < 2000, `a HEAD and a GET took ${elapsed} ms beside 64 slow readers`);
});
