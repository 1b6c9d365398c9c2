/**
 * A store whose listing never ends: every ListObjectsV2 answered with the same truncated
 * page and the same continuation token (a broken gateway, a token the store does not
 * honour). Listings run under an analyze (the sweep mark check), a delete and the sweeps;
 * each once looped for ever, asking the store again and again and keeping what it listed.
 * Now the listing stops at the first page that does not move forward, and the request
 * answers a JSON error within a bounded time, leaving no upload behind. A truncated page
 * without a token is refused too: taken as the end, the keys after it looked absent. So is
 * a listing of incomplete multipart uploads (the sweep's) whose markers do not lead on.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createS3Store, listAll, storeConfigFromEnv, StoreError, StoreUnavailableError, type ObjectStore, type S3StoreConfig } from '../src/store/backends/index.js';
import { PLACES_DIR } from './support/paths.js';
import { S3_TEST_ENV, startS3Server } from './support/s3-server.js';
import { startS3Proxy } from './support/s3-proxy.js';
import { as, expectError, startService, upload, uploadsIn } from './support/service.js';

const PLACE = readFileSync(join(PLACES_DIR, 'rocket-arena-2006.rbxl'));
const LIST = /^GET \/rbxl-test\/?\?.*list-type=2/;
/** Generous: a failing listing takes a few round trips; a looping one never ends. */
const BOUND_MS = 15_000;

const s3 = await startS3Server();
const proxy = await startS3Proxy(s3.port, { conditional: true, s3rver: { directory: s3.directory, bucket: s3.bucket } });
after(async () => {
  await proxy.close();
  await s3.close();
});

function config(prefix: string, endpoint = proxy.endpoint): S3StoreConfig {
  return storeConfigFromEnv({ ...S3_TEST_ENV, STORE_URL: `s3://${s3.bucket}/${prefix}`, S3_ENDPOINT: endpoint, S3_TIMEOUT_MS: '2000', S3_MAX_ATTEMPTS: '2' }, '/unused') as S3StoreConfig;
}

async function listed(store: ReturnType<typeof createS3Store>, prefix: string): Promise<{ error: unknown; requests: number }> {
  const before = proxy.requests.length;
  try {
    let count = 0;
    for await (const info of listAll(store, prefix)) {
      void info;
      if (++count > 10_000) break; // the test's own bound: a looping listing is cut here, and fails below
    }
    return { error: undefined, requests: proxy.requests.length - before };
  } catch (error) {
    return { error, requests: proxy.requests.length - before };
  }
}

test('a listing whose pages never end fails as an unexpected answer after the second page, not after thousands', async (t) => {
  const store = createS3Store(config('endless'));
  t.after(() => store.close());
  proxy.fault(LIST, 'endless_list', 1_000_000);
  t.after(() => proxy.clearFaults());
  const { error, requests } = await listed(store, 'previews/');
  assert.ok(error instanceof StoreError && !(error instanceof StoreUnavailableError), `expected a StoreError, got ${String(error)}`);
  assert.match((error as Error).message, /answered unexpectedly \(list previews\/\)/);
  assert.equal(requests, 2, 'the second page, which repeats the first, ends the listing');
});

test('pages in whatever order the store lists them are listed whole; a page given again under a fresh cursor ends the listing', async () => {
  // An in-memory store whose pages come in no key order (as some S3-compatible stores list), and one
  // that hands back its first page for ever, each time with a new cursor.
  const pagesOf = (pages: string[][], again = false): Pick<ObjectStore, 'list'> => ({
    list: (_prefix, options) => {
      const at = options?.cursor === undefined ? 0 : Number(options.cursor.split(':')[0]);
      const page = pages[again ? 0 : at]!;
      const next = again || at + 1 < pages.length ? `${at + 1}:${Math.random()}` : undefined;
      return Promise.resolve({ objects: page.map((key) => ({ key, size: 1, etag: 'e', lastModified: 0 })), ...(next === undefined ? {} : { cursor: next }) });
    },
  });
  const keys: string[] = [];
  for await (const info of listAll(pagesOf([['p/m', 'p/n'], ['p/a', 'p/b'], ['p/z']]) as ObjectStore, 'p/')) keys.push(info.key);
  assert.deepEqual(keys, ['p/m', 'p/n', 'p/a', 'p/b', 'p/z']);
  let listed = 0;
  await assert.rejects(async () => {
    for await (const info of listAll(pagesOf([['p/m', 'p/n']], true) as ObjectStore, 'p/')) {
      void info;
      if (++listed > 10_000) break;
    }
  }, (error: unknown) => error instanceof StoreError && /started at p\/m again/.test((error as Error).message));
  assert.equal(listed, 2, 'the first page is listed once');
});

test('a truncated listing without a continuation token is refused, not taken as the end', async (t) => {
  const server = createServer((request, response) => {
    request.resume();
    const body = '<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult><Name>rbxl-test</Name><Prefix>tokenless/</Prefix><KeyCount>1</KeyCount><MaxKeys>1000</MaxKeys>'
      + '<IsTruncated>true</IsTruncated><Contents><Key>tokenless/a</Key><LastModified>2020-01-01T00:00:00.000Z</LastModified><ETag>"0"</ETag><Size>1</Size></Contents></ListBucketResult>';
    response.writeHead(200, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  const store = createS3Store(config('tokenless', `http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  t.after(() => store.close());
  await assert.rejects(store.list(''), (error: Error) => error instanceof StoreError && /truncated listing without a continuation token/.test(error.message));
});

test('an analyze over a store whose listing never ends answers a JSON error in bounded time and keeps no upload', { timeout: 60_000 }, async (t) => {
  const service = await startService({ store: config('service'), workers: 1 });
  t.after(() => service.close());
  proxy.fault(LIST, 'endless_list', 1_000_000);
  t.after(() => proxy.clearFaults());
  const before = proxy.requests.length;
  const started = Date.now();
  const response = await upload(service, PLACE, 'arena.rbxl', as('lena'));
  const elapsed = Date.now() - started;
  const { text } = await expectError(response, 500, 'internal');
  assert.ok(elapsed < BOUND_MS, `answered after ${elapsed} ms`);
  assert.ok(proxy.requests.slice(before).filter((line) => LIST.test(line)).length < 20, 'the store was not asked for the same page again and again');
  assert.doesNotMatch(text, /S3RVER/, 'no credentials in the answer');
  assert.deepEqual(await uploadsIn(service), []);
});

test('a listing of incomplete uploads that never ends fails as an unexpected answer, not a sweep (and a start) that never ends', { timeout: 30_000 }, async (t) => {
  let asked = 0;
  let markers = true;
  const server = createServer((request, response) => {
    request.resume();
    asked++;
    // The same markers given back each time, or (markers false) none at all: either way the listing would start again.
    const next = markers ? '<NextKeyMarker>service/k</NextKeyMarker><NextUploadIdMarker>u1</NextUploadIdMarker>' : '';
    const body = '<?xml version="1.0" encoding="UTF-8"?>\n<ListMultipartUploadsResult><Bucket>rbxl-test</Bucket><IsTruncated>true</IsTruncated>'
      + `${next}<Upload><Key>service/k</Key><UploadId>u1</UploadId><Initiated>${new Date().toISOString()}</Initiated></Upload></ListMultipartUploadsResult>`;
    response.writeHead(200, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  const store = createS3Store(config('service', `http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  t.after(() => store.close());
  for (const given of [true, false]) {
    markers = given;
    asked = 0;
    const bounded = new Promise<never>((_resolve, reject) => setTimeout(() => reject(new Error(`still listing after ${asked} requests`)), 10_000).unref());
    await assert.rejects(Promise.race([store.sweepIncomplete(60_000), bounded]), (error: Error) => error instanceof StoreError && /does not lead on/.test(error.message));
    assert.ok(asked <= 2, `asked ${asked} times (markers ${given ? 'repeated' : 'missing'})`);
  }
});
