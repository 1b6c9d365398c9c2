import { test, describe, after } from 'node:test';
import { getEventListeners } from 'node:events';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { createDiskStore } from '../src/store/backends/index.js';
import {
  assetPath,
  CALL_LANES,
  createAssetDownloader,
  readAssetMeta,
  retryAfterMs,
  type AssetDownloaderOptions,
  type AssetOutcome,
} from '../src/assets/index.js';
import { startAssetServer, type AssetServer, type AssetServerOptions } from './support/asset-server.js';

const dirs: string[] = [];
after(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function tempDataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'rbxl-assets-'));
  dirs.push(dir);
  return dir;
}

const sha256 = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest('hex');

/** Every file under <dataDir>/assets, relative. */
async function storedFiles(dataDir: string): Promise<string[]> {
  try {
    const entries = await readdir(join(dataDir, 'assets'), { recursive: true, withFileTypes: true });
    return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath ?? entry.path, entry.name));
  } catch {
    return [];
  }
}

interface Setup {
  server: AssetServer;
  dataDir: string;
  options: AssetDownloaderOptions;
  download: ReturnType<typeof createAssetDownloader>;
}

/** A server, a fresh data dir and a downloader on the template source unless told otherwise. */
async function setup(
  serverOptions: AssetServerOptions,
  overrides: Partial<AssetDownloaderOptions> & { source?: 'template' | 'open-cloud' } = {},
): Promise<Setup & AsyncDisposable> {
  const server = await startAssetServer(serverOptions);
  const dataDir = await tempDataDir();
  const { source = 'template', ...rest } = overrides;
  const options: AssetDownloaderOptions = {
    dataDir,
    deliveryUrl: server.deliveryUrl,
    urlTemplate: source === 'template' ? server.templateUrl : null,
    apiKey: source === 'open-cloud' ? 'test-key' : null,
    concurrency: 4,
    timeoutMs: 2000,
    maxBytes: 1024 * 1024,
    retries: 2,
    backoffBaseMs: 5,
    maxRetryAfterMs: 1000,
    ...rest,
  };
  const download = createAssetDownloader(options);
  return {
    server,
    dataDir,
    options,
    download,
    async [Symbol.asyncDispose]() {
      await download.close();
      await server.close();
    },
  };
}

function expectOk(outcome: AssetOutcome | undefined): Extract<AssetOutcome, { ok: true }> {
  assert.ok(outcome, 'an outcome');
  assert.equal(outcome.ok, true, `expected success, got ${JSON.stringify(outcome)}`);
  return outcome;
}

describe('Open Cloud source', () => {
  test('JSON location, then bytes: gzipped with and without the header, and plain', async () => {
    const mesh = Buffer.from('version 2.00\nmesh bytes '.repeat(200));
    const image = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3, 4]);
    const audio = Buffer.from('OggS audio bytes');
    await using s = await setup(
      {
        apiKey: 'test-key',
        assets: {
          '101': { type: 'bytes', body: mesh, gzip: 'header' },
          '102': { type: 'bytes', body: image, gzip: 'silent', contentType: 'image/png' },
          '103': { type: 'bytes', body: audio, contentType: 'audio/ogg; codecs=vorbis' },
        },
      },
      { source: 'open-cloud' },
    );
    const outcomes = await s.download.download([
      { id: '101', kind: 'mesh' },
      { id: '102', kind: 'image' },
      { id: '103', kind: 'audio' },
    ]);
    const [first, second, third] = outcomes.map(expectOk);
    assert.ok(first && second && third);
    assert.deepEqual(
      { id: first.id, kind: first.kind, sha256: first.sha256, size: first.size, contentType: first.contentType, cached: first.cached },
      { id: '101', kind: 'mesh', sha256: sha256(mesh), size: mesh.length, contentType: 'application/octet-stream', cached: false },
    );
    assert.equal(second.sha256, sha256(image));
    assert.equal(second.contentType, 'image/png');
    assert.equal(third.sha256, sha256(audio));
    assert.equal(third.contentType, 'audio/ogg');
    assert.deepEqual(await readFile(assetPath(s.dataDir, first.sha256)), mesh);
    assert.deepEqual(await readFile(assetPath(s.dataDir, second.sha256)), image);
    assert.deepEqual(await readAssetMeta(createDiskStore({ root: s.dataDir }), third.sha256), { sha256: sha256(audio), size: audio.length, contentType: 'audio/ogg' });

    assert.equal(s.server.count('delivery'), 3);
    assert.equal(s.server.count('location'), 3);
    for (const request of s.server.requests) {
      if (request.route === 'delivery') assert.equal(request.headers['x-api-key'], 'test-key');
      // The key is for the delivery API only; the CDN location never sees it.
      if (request.route === 'location') {
        assert.equal(request.headers['x-api-key'], undefined);
        assert.match(request.path, /\?sig=test$/);
      }
    }
  });

  test('a wrong API key is unauthorized', async () => {
    await using s = await setup({ apiKey: 'other-key', assets: { '7': { type: 'bytes', body: 'x' } } }, { source: 'open-cloud' });
    const [outcome] = await s.download.download([{ id: '7', kind: 'image' }]);
    assert.deepEqual(outcome, { id: '7', kind: 'image', ok: false, reason: 'unauthorized', status: 401 });
    assert.equal(s.server.count('location'), 0);
  });

  test('without an API key every asset fails with no_credentials and nothing is requested', async () => {
    await using s = await setup({ assets: { '7': { type: 'bytes', body: 'x' } } }, { source: 'open-cloud', apiKey: null });
    const outcomes = await s.download.download([
      { id: '7', kind: 'mesh' },
      { id: '8', kind: 'audio' },
    ]);
    assert.deepEqual(outcomes, [
      { id: '7', kind: 'mesh', ok: false, reason: 'no_credentials' },
      { id: '8', kind: 'audio', ok: false, reason: 'no_credentials' },
    ]);
    assert.equal(s.server.requests.length, 0);
  });

  test('a location that is not http(s) is an upstream error and is not requested', async () => {
    await using s = await setup(
      {
        delivery: {
          '5': { type: 'json', body: { location: 'file:///etc/passwd' } },
          '6': { type: 'json', body: { requestId: 'no location here' } },
          '9': { type: 'json', body: { errors: [{ code: 404, message: 'Requested asset was not found' }] } },
        },
      },
      { source: 'open-cloud' },
    );
    const outcomes = await s.download.download([
      { id: '5', kind: 'other' },
      { id: '6', kind: 'other' },
      { id: '9', kind: 'other' },
    ]);
    assert.deepEqual(outcomes.map((o) => (o.ok ? 'ok' : o.reason)), ['upstream_error', 'upstream_error', 'not_found']);
    assert.equal(s.server.count('location'), 0);
    assert.equal(s.server.count('delivery'), 3, 'no retries for a malformed answer');
  });
});

describe('template source', () => {
  test('a plain GET whose body is the asset, without any API key', async () => {
    const body = Buffer.from('<roblox!animation bytes');
    await using s = await setup({ assets: { '42': { type: 'bytes', body, contentType: 'Application/X-Roblox-Animation' } } }, { apiKey: 'unused' });
    const [outcome] = await s.download.download([{ id: '42', kind: 'animation' }]);
    const ok = expectOk(outcome);
    assert.equal(ok.sha256, sha256(body));
    assert.equal(ok.contentType, 'application/x-roblox-animation');
    assert.deepEqual(await readFile(assetPath(s.dataDir, ok.sha256)), body);
    assert.equal(s.server.count('template', '42'), 1);
    assert.equal(s.server.count('delivery'), 0);
    assert.equal(s.server.requests[0]!.headers['x-api-key'], undefined);
  });

  test('a chunked gzip body is gunzipped while streaming', async () => {
    const body = Buffer.alloc(300_000, 'ab');
    await using s = await setup({ assets: { '43': { type: 'bytes', body, gzip: 'header', chunked: true } } });
    const ok = expectOk((await s.download.download([{ id: '43', kind: 'mesh' }]))[0]);
    assert.equal(ok.size, body.length);
    assert.equal(ok.sha256, sha256(body));
  });

  test('ids that are not decimal digits are refused before any request', async () => {
    await using s = await setup({});
    for (const id of ['', 'abc', '12a', '../1', '1'.repeat(21), ' 1']) {
      await assert.rejects(s.download.download([{ id: '1', kind: 'mesh' }, { id, kind: 'mesh' }]), TypeError);
    }
    assert.equal(s.server.requests.length, 0);
  });
});

describe('cache and deduplication', () => {
  test('a second download of the same id is cached, also for another downloader on the same data dir', async () => {
    const body = 'cached bytes';
    await using s = await setup({ assets: { '11': { type: 'bytes', body } } });
    const first = expectOk((await s.download.download([{ id: '11', kind: 'image' }]))[0]);
    assert.equal(first.cached, false);
    assert.equal(s.server.requests.length, 1);

    const second = expectOk((await s.download.download([{ id: '11', kind: 'image' }]))[0]);
    assert.deepEqual(second, { ...first, cached: true });

    const other = createAssetDownloader(s.options);
    try {
      const third = expectOk((await other.download([{ id: '11', kind: 'mesh' }]))[0]);
      assert.deepEqual(third, { ...first, kind: 'mesh', cached: true });
    } finally {
      await other.close();
    }
    assert.equal(s.server.requests.length, 1, 'no new request');
  });

  test('an index entry whose bytes are gone is fetched again', async () => {
    await using s = await setup({ assets: { '12': { type: 'bytes', body: 'bytes' } } });
    const first = expectOk((await s.download.download([{ id: '12', kind: 'image' }]))[0]);
    await rm(assetPath(s.dataDir, first.sha256));
    const again = expectOk((await s.download.download([{ id: '12', kind: 'image' }]))[0]);
    assert.equal(again.cached, false);
    assert.equal(s.server.requests.length, 2);
    assert.equal(await readFile(assetPath(s.dataDir, first.sha256), 'utf8'), 'bytes');
  });

  test('duplicate ids in one call, and in concurrent calls, are fetched once; outcomes keep request order', async () => {
    await using s = await setup({
      assets: {
        '1': { type: 'bytes', body: 'one', delayMs: 50 },
        '2': { type: 'bytes', body: 'two', delayMs: 50 },
      },
    });
    const [outcomes, concurrent] = await Promise.all([
      s.download.download([
        { id: '2', kind: 'mesh' },
        { id: '1', kind: 'image' },
        { id: '2', kind: 'union' },
        { id: '1', kind: 'image' },
      ]),
      s.download.download([{ id: '1', kind: 'other' }]),
    ]);
    assert.deepEqual(outcomes.map((o) => [o.id, o.kind, o.ok]), [
      ['2', 'mesh', true],
      ['1', 'image', true],
      ['2', 'union', true],
      ['1', 'image', true],
    ]);
    assert.equal(expectOk(outcomes[0]).sha256, sha256('two'));
    assert.equal(expectOk(outcomes[1]).sha256, sha256('one'));
    assert.equal(expectOk(concurrent[0]).sha256, sha256('one'));
    assert.equal(s.server.count('template', '1'), 1);
    assert.equal(s.server.count('template', '2'), 1);
  });

  test('two ids with the same bytes share one stored file', async () => {
    await using s = await setup({ assets: { '21': { type: 'bytes', body: 'same' }, '22': { type: 'bytes', body: 'same' } } });
    const [a, b] = (await s.download.download([{ id: '21', kind: 'image' }, { id: '22', kind: 'image' }])).map(expectOk);
    assert.ok(a && b);
    assert.equal(a.sha256, b.sha256);
    const files = (await storedFiles(s.dataDir)).map((file) => file.slice(join(s.dataDir, 'assets').length + 1)).sort();
    const shard = a.sha256.slice(0, 2);
    assert.deepEqual(files, [join('ids', '21.json'), join('ids', '22.json'), join('sha256', shard, a.sha256), join('sha256', shard, `${a.sha256}.json`)].sort());
  });
});

describe('failures', () => {
  test('401, 403, 404 and 410 are not retried', async () => {
    await using s = await setup({
      assets: {
        '1': { type: 'status', status: 401 },
        '2': { type: 'status', status: 403 },
        '3': { type: 'status', status: 404 },
        '4': { type: 'status', status: 410 },
      },
    });
    const outcomes = await s.download.download(['1', '2', '3', '4', '5'].map((id) => ({ id, kind: 'other' as const })));
    assert.deepEqual(outcomes.map((o) => (o.ok ? 'ok' : [o.reason, o.status])), [
      ['unauthorized', 401],
      ['forbidden', 403],
      ['not_found', 404],
      ['not_found', 410],
      ['not_found', 404],
    ]);
    assert.equal(s.server.requests.length, 5);
  });

  test('429 with Retry-After is retried at the server\'s hint (seconds, HTTP date, x-ratelimit-reset), not the back-off', { timeout: 3000 }, async () => {
    // The back-off (at least 5 s here) would outlast the test's timeout: only the hints can make it pass.
    await using s = await setup(
      {
        assets: {
          '1': [{ type: 'status', status: 429, headers: { 'retry-after': '0' } }, { type: 'bytes', body: 'one' }],
          '2': [{ type: 'status', status: 429, headers: { 'retry-after': new Date(Date.now() - 5000).toUTCString() } }, { type: 'bytes', body: 'two' }],
          '3': [{ type: 'status', status: 429, headers: { 'x-ratelimit-reset': '0' } }, { type: 'bytes', body: 'three' }],
          // An hour's hint is capped by maxRetryAfterMs.
          '4': [{ type: 'status', status: 429, headers: { 'retry-after': '3600' } }, { type: 'bytes', body: 'four' }],
        },
      },
      { backoffBaseMs: 600_000, maxRetryAfterMs: 20 },
    );
    const outcomes = await s.download.download(['1', '2', '3', '4'].map((id) => ({ id, kind: 'image' as const })));
    assert.deepEqual(outcomes.map((o) => expectOk(o).sha256), ['one', 'two', 'three', 'four'].map((body) => sha256(body)));
    for (const id of ['1', '2', '3', '4']) assert.equal(s.server.count('template', id), 2);
  });

  test('429 until the retries run out is rate_limited', async () => {
    await using s = await setup({ assets: { '1': { type: 'status', status: 429, headers: { 'retry-after': '0' } } } }, { retries: 3 });
    const [outcome] = await s.download.download([{ id: '1', kind: 'mesh' }]);
    assert.deepEqual(outcome, { id: '1', kind: 'mesh', ok: false, reason: 'rate_limited', status: 429 });
    assert.equal(s.server.count('template', '1'), 4);
  });

  test('500 twice then success', async () => {
    await using s = await setup({
      assets: { '1': [{ type: 'status', status: 500 }, { type: 'status', status: 502 }, { type: 'bytes', body: 'finally' }] },
    });
    const ok = expectOk((await s.download.download([{ id: '1', kind: 'mesh' }]))[0]);
    assert.equal(ok.sha256, sha256('finally'));
    assert.equal(s.server.count('template', '1'), 3);
  });

  test('always 500 is upstream_error after retries + 1 attempts', async () => {
    await using s = await setup({ assets: { '1': { type: 'status', status: 500 } } }, { retries: 2 });
    const [outcome] = await s.download.download([{ id: '1', kind: 'mesh' }]);
    assert.deepEqual(outcome, { id: '1', kind: 'mesh', ok: false, reason: 'upstream_error', status: 500 });
    assert.equal(s.server.count('template', '1'), 3);
  });

  test('5xx on the Open Cloud delivery request is retried too', async () => {
    await using s = await setup(
      { delivery: { '1': [{ type: 'status', status: 503 }] }, assets: { '1': { type: 'bytes', body: 'x' } } },
      { source: 'open-cloud', retries: 1 },
    );
    const [outcome] = await s.download.download([{ id: '1', kind: 'mesh' }]);
    assert.deepEqual(outcome, { id: '1', kind: 'mesh', ok: false, reason: 'upstream_error', status: 503 });
    assert.equal(s.server.count('delivery', '1'), 2);
  });

  test('slow headers and a slow body both time out', async () => {
    await using s = await setup(
      {
        assets: {
          '1': { type: 'bytes', body: 'late', delayMs: 5000 },
          '2': { type: 'bytes', body: 'late body', bodyDelayMs: 5000 },
          '3': [{ type: 'bytes', body: 'late', delayMs: 5000 }, { type: 'bytes', body: 'in time' }],
        },
      },
      { timeoutMs: 150, retries: 1 },
    );
    const outcomes = await s.download.download(['1', '2', '3'].map((id) => ({ id, kind: 'audio' as const })));
    assert.deepEqual(outcomes.slice(0, 2), [
      { id: '1', kind: 'audio', ok: false, reason: 'timeout' },
      { id: '2', kind: 'audio', ok: false, reason: 'timeout' },
    ]);
    assert.equal(expectOk(outcomes[2]).sha256, sha256('in time'));
    assert.equal(s.server.count('template', '1'), 2);
    assert.equal(s.server.count('template', '2'), 2);
    assert.deepEqual(await storedFiles(s.dataDir).then((files) => files.filter((file) => file.includes(`${join('assets', 'tmp')}`))), []);
  });

  test('too large by Content-Length, by counting a chunked body, and after gunzip: no file left behind', async () => {
    const maxBytes = 64 * 1024;
    await using s = await setup(
      {
        assets: {
          '1': { type: 'stream', bytes: 10 * 1024 * 1024, declareLength: true },
          '2': { type: 'stream', bytes: 10 * 1024 * 1024 },
          '3': { type: 'bytes', body: Buffer.alloc(4 * 1024 * 1024), gzip: 'header' },
          '4': { type: 'bytes', body: Buffer.alloc(4 * 1024 * 1024), gzip: 'silent' },
          '5': { type: 'bytes', body: Buffer.alloc(maxBytes, 1) },
        },
      },
      { maxBytes },
    );
    const outcomes = await s.download.download(['1', '2', '3', '4', '5'].map((id) => ({ id, kind: 'mesh' as const })));
    assert.deepEqual(outcomes.slice(0, 4).map((o) => (o.ok ? 'ok' : o.reason)), ['too_large', 'too_large', 'too_large', 'too_large']);
    assert.equal(expectOk(outcomes[4]).size, maxBytes, 'exactly maxBytes is allowed');
    for (const id of ['1', '2', '3', '4']) assert.equal(s.server.count('template', id), 1, 'too large is not retried');
    const files = await storedFiles(s.dataDir);
    assert.equal(files.length, 3, `only the allowed asset's bytes, meta and index: ${files.join(', ')}`);
    assert.deepEqual(await readdir(join(s.dataDir, 'assets', 'tmp')), []);
  });

  test('a complete body the downloader refuses (unknown Content-Encoding, over maxBytes by its length) is a reason, never a crash', async () => {
    // Issue 10, defect 1: destroying such a body raised an unhandled RequestAbortedError that ended the process.
    await using s = await setup(
      {
        assets: {
          '1': { type: 'bytes', body: 'abc', headers: { 'content-encoding': 'br' } },
          '2': { type: 'bytes', body: 'abcdef', headers: { 'content-encoding': 'x-unknown' } },
          '3': { type: 'bytes', body: Buffer.alloc(2048, 7) },
        },
      },
      { maxBytes: 1024, retries: 0 },
    );
    const outcomes = await s.download.download(['1', '2', '3'].map((id) => ({ id, kind: 'mesh' as const })));
    assert.deepEqual(outcomes.map((o) => (o.ok ? 'ok' : o.reason)), ['upstream_error', 'upstream_error', 'too_large']);
    // Give a stray stream error the turns it would need to surface.
    await new Promise((resolve) => setTimeout(resolve, 100));
  });

  test('a connection reset, before or during the body, is network_error after retries', async () => {
    await using s = await setup(
      {
        assets: {
          '1': { type: 'reset' },
          '2': { type: 'reset', afterBytes: 4096 },
          '3': [{ type: 'reset' }, { type: 'bytes', body: 'recovered' }],
        },
      },
      { retries: 1 },
    );
    const outcomes = await s.download.download(['1', '2', '3'].map((id) => ({ id, kind: 'image' as const })));
    assert.deepEqual(outcomes.slice(0, 2), [
      { id: '1', kind: 'image', ok: false, reason: 'network_error' },
      { id: '2', kind: 'image', ok: false, reason: 'network_error' },
    ]);
    assert.equal(expectOk(outcomes[2]).sha256, sha256('recovered'));
    assert.equal(s.server.count('template', '1'), 2);
    assert.equal(s.server.count('template', '2'), 2);
    assert.deepEqual(await readdir(join(s.dataDir, 'assets', 'tmp')), []);
  });

  test('a connection reset during a gzipped body is network_error, no file left', async () => {
    // The first part of a gzip stream, so the body is being gunzipped when the connection drops.
    const partialBody = gzipSync(randomBytes(100_000)).subarray(0, 20_000);
    await using s = await setup(
      { apiKey: 'test-key', assets: { '1': { type: 'reset', partialBody } } },
      { source: 'open-cloud', retries: 0 },
    );
    const [outcome] = await s.download.download([{ id: '1', kind: 'mesh' }]);
    assert.deepEqual(outcome, { id: '1', kind: 'mesh', ok: false, reason: 'network_error' });
    assert.deepEqual(await storedFiles(s.dataDir), []);
  });

  test('a web page answered with 200 is upstream_error, not an asset; models in XML and binary assets are kept', async () => {
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(200)]);
    const pages = {
      '1': { type: 'bytes', body: '<!DOCTYPE html><html><body>Sign in to the Wi-Fi</body></html>', contentType: 'image/png' },
      '2': { type: 'bytes', body: '\ufeff\r\n  <HTML lang="en">maintenance', contentType: 'text/html' },
      '3': { type: 'bytes', body: '<html>', gzip: 'silent' },
      '4': { type: 'bytes', body: `<head><title>502</title></head>${'x'.repeat(70_000)}`, chunked: true },
    } as const;
    const assets = {
      '5': { type: 'bytes', body: '<roblox xmlns:xmime="http://www.w3.org/2005/05/xmlmime" version="4"></roblox>' },
      '6': { type: 'bytes', body: '<?xml version="1.0"?><roblox version="4"></roblox>' },
      '7': { type: 'bytes', body: png },
      '8': { type: 'bytes', body: 'version 1.00\n<html> inside a mesh is just bytes' },
      '9': { type: 'bytes', body: '<htmlish>' },
    } as const;
    await using s = await setup({ assets: { ...pages, ...assets } }, { retries: 0 });
    const ids = [...Object.keys(pages), ...Object.keys(assets)];
    const outcomes = await s.download.download(ids.map((id) => ({ id, kind: 'image' as const })));
    assert.deepEqual(outcomes.map((o) => (o.ok ? 'ok' : o.reason)), [...Object.keys(pages).map(() => 'upstream_error'), ...Object.keys(assets).map(() => 'ok')]);
    assert.equal(expectOk(outcomes[6]).sha256, sha256(png));
    assert.deepEqual(await readdir(join(s.dataDir, 'assets', 'tmp')), []);
    // Nothing of the pages was stored: every stored body is one of the assets.
    const stored = (await storedFiles(s.dataDir)).filter((file) => /[0-9a-f]{64}$/.test(file));
    assert.equal(stored.length, Object.keys(assets).length);
  });

  test('corrupt gzip is upstream_error', async () => {
    const broken = Buffer.concat([gzipSync(Buffer.alloc(1000, 7)).subarray(0, 12), Buffer.alloc(64, 0xff)]);
    await using s = await setup({ assets: { '1': { type: 'bytes', body: broken } } }, { retries: 0 });
    const [outcome] = await s.download.download([{ id: '1', kind: 'mesh' }]);
    assert.deepEqual(outcome, { id: '1', kind: 'mesh', ok: false, reason: 'upstream_error' });
    assert.deepEqual(await readdir(join(s.dataDir, 'assets', 'tmp')), []);
  });
});

describe('limits and lifecycle', () => {
  test('at most `concurrency` downloads are in flight, across calls', async () => {
    const ids = Array.from({ length: 12 }, (_, index) => String(1000 + index));
    await using s = await setup(
      { assets: Object.fromEntries(ids.map((id) => [id, { type: 'bytes', body: `asset ${id}`, delayMs: 40 }])) },
      { concurrency: 3 },
    );
    const calls = await Promise.all([
      s.download.download(ids.slice(0, 6).map((id) => ({ id, kind: 'image' as const }))),
      s.download.download(ids.slice(6).map((id) => ({ id, kind: 'image' as const }))),
    ]);
    assert.equal(calls.flat().filter((o) => o.ok).length, 12);
    assert.equal(s.server.requests.length, 12);
    assert.ok(s.server.peakInFlight <= 3, `peak ${s.server.peakInFlight} in flight`);
    assert.ok(s.server.peakInFlight >= 2, `downloads should overlap, peak ${s.server.peakInFlight}`);
  });

  test('aborting a call rejects it with the reason and leaves no partial file', async () => {
    await using s = await setup({ assets: { '1': { type: 'bytes', body: 'never', bodyDelayMs: 5000 } } });
    const controller = new AbortController();
    const pending = s.download.download([{ id: '1', kind: 'mesh' }], controller.signal);
    while (s.server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const reason = new Error('client went away');
    controller.abort(reason);
    await assert.rejects(pending, (error) => error === reason);
    assert.equal(s.server.requests.length, 1, 'not retried');
    assert.deepEqual(await storedFiles(s.dataDir), []);
  });

  test('thousands of ids wait on a call\'s signal through one listener, and aborting it still rejects every one', async () => {
    // One listener per id made each addEventListener look through all the others: 100,000
    // ids blocked the event loop for most of a minute.
    const ids = Array.from({ length: 5000 }, (_, i) => String(i + 1));
    await using s = await setup({ assets: Object.fromEntries(ids.map((id) => [id, { type: 'bytes', body: 'slow', delayMs: 5000 }])) }, { concurrency: 2 });
    const controller = new AbortController();
    const pending = s.download.download(ids.map((id) => ({ id, kind: 'image' as const })), controller.signal);
    while (s.server.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(getEventListeners(controller.signal, 'abort').length, 1);
    // And they are worked through in lanes: at most CALL_LANES jobs exist at once (two downloading, the rest waiting for a slot).
    const { active, waiting } = s.download.stats();
    assert.ok(waiting > 0 && active + waiting <= CALL_LANES, `${active} active, ${waiting} waiting`);
    const reason = new Error('client went away');
    controller.abort(reason);
    await assert.rejects(pending, (error) => error === reason);
    assert.equal(s.server.requests.length, 2, 'the waiting ids were never requested');
    // It returned once its jobs had cleaned up: nothing downloading, nothing waiting, no partial file.
    assert.deepEqual(s.download.stats(), { active: 0, waiting: 0 });
    assert.deepEqual(await readdir(join(s.dataDir, 'assets', 'tmp')).catch(() => []), []);
    // A finished call leaves nothing listening on a signal that may live on (a request's).
    const later = new AbortController();
    const outcomes = await s.download.download([{ id: '999999', kind: 'image' }], later.signal);
    assert.equal(outcomes[0]!.ok, false);
    assert.equal(getEventListeners(later.signal, 'abort').length, 0);
  });

  test('past the call\'s deadline, every id not downloaded is a timeout outcome however many there are; stored ones are answered at once', { timeout: 20_000 }, async () => {
    const hanging = Array.from({ length: CALL_LANES + 44 }, (_, i) => String(i + 1));
    const stored = ['9001', '9002', '9003'];
    await using s = await setup({
      assets: {
        ...Object.fromEntries(hanging.map((id) => [id, { type: 'bytes', body: 'late', delayMs: 3000 }])),
        ...Object.fromEntries(stored.map((id) => [id, { type: 'bytes', body: `stored ${id}` }])),
      },
    }, { concurrency: 2, totalTimeoutMs: 400 });
    for (const outcome of await s.download.download(stored.map((id) => ({ id, kind: 'image' as const })))) assert.equal(outcome.ok, true);
    // The stored ones come last: behind hundreds of ids that never arrive.
    const outcomes = await s.download.download([...hanging, ...stored].map((id) => ({ id, kind: 'image' as const })));
    assert.deepEqual(outcomes.slice(0, hanging.length).map((o) => (o.ok ? 'ok' : o.reason)), hanging.map(() => 'timeout'));
    assert.deepEqual(outcomes.slice(hanging.length).map((o) => (o.ok ? o.cached : o.reason)), [true, true, true]);
  });

  test('a call joins a download another call has in flight, however far back the id sits in its lanes: one request, and one call giving up does not stop it for the other', { timeout: 20_000 }, async () => {
    const others = Array.from({ length: CALL_LANES }, (_, i) => String(1000 + i));
    await using s = await setup({
      assets: { '1': { type: 'bytes', body: 'one', delayMs: 600 }, ...Object.fromEntries(others.map((id) => [id, { type: 'bytes', body: `x${id}`, delayMs: 800 }])) },
    }, { concurrency: 600, perCallConcurrency: 600 });
    const a = new AbortController();
    const first = s.download.download([{ id: '1', kind: 'image' }], a.signal).catch((error: unknown) => error);
    // The second call's lanes are all busy with slow ids when it reaches id 1.
    const second = s.download.download([...others, '1'].map((id) => ({ id, kind: 'image' as const })));
    setTimeout(() => a.abort(new Error('A gave up')), 150);
    assert.match(String(await first), /A gave up/);
    const outcomes = await second;
    assert.equal(outcomes.at(-1)!.ok, true);
    assert.equal(s.server.count('template', '1'), 1);
    // And one that finished is found in the store by a job started after it: no second request.
    const third = await s.download.download([{ id: '1', kind: 'image' }]);
    assert.equal(expectOk(third[0]).cached, true);
    assert.equal(s.server.count('template', '1'), 1);
  });

  test('an id another call stored after this call looked is found in the store when its job starts: no second request', { timeout: 20_000 }, async () => {
    const others = Array.from({ length: CALL_LANES }, (_, i) => String(1000 + i));
    await using s = await setup({
      assets: { '1': { type: 'bytes', body: 'one' }, ...Object.fromEntries(others.map((id) => [id, { type: 'bytes', body: `x${id}`, delayMs: 600 }])) },
    }, { concurrency: 600, perCallConcurrency: 600 });
    // This call looks id 1 up (not stored) at once, then its lanes are busy with slow ids.
    const later = s.download.download([...others, '1'].map((id) => ({ id, kind: 'image' as const })));
    while (s.server.count('template', others[0]) === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    // Meanwhile another call downloads and stores it.
    assert.equal((await s.download.download([{ id: '1', kind: 'image' }]))[0]!.ok, true);
    const outcomes = await later;
    assert.equal(expectOk(outcomes.at(-1)).cached, true);
    assert.equal(s.server.count('template', '1'), 1);
  });

  test('close() stops a call of many ids at once: no more requests', { timeout: 20_000 }, async () => {
    const ids = Array.from({ length: 2 * CALL_LANES }, (_, i) => String(i + 1));
    await using s = await setup({ assets: Object.fromEntries(ids.map((id) => [id, { type: 'bytes', body: 'slow', delayMs: 2000 }])) }, { concurrency: 2 });
    const pending = s.download.download(ids.map((id) => ({ id, kind: 'mesh' as const })));
    while (s.server.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    const started = Date.now();
    await s.download.close();
    await assert.rejects(pending, /the asset downloader was closed/);
    assert.ok(Date.now() - started < 1500, `${Date.now() - started} ms`);
    assert.equal(s.server.requests.length, 2);
  });

  test('a stale partial download is swept; close() makes later calls fail', async () => {
    await using s = await setup({ assets: { '1': { type: 'bytes', body: 'x' } } });
    const tempDir = join(s.dataDir, 'assets', 'tmp');
    await mkdir(tempDir, { recursive: true });
    const stale = join(tempDir, 'dead.part');
    await writeFile(stale, 'left by a crash');
    await utimes(stale, new Date(Date.now() - 2 * 3600_000), new Date(Date.now() - 2 * 3600_000));
    expectOk((await s.download.download([{ id: '1', kind: 'mesh' }]))[0]);
    await assert.rejects(stat(stale), { code: 'ENOENT' });
    await s.download.close();
    await assert.rejects(s.download.download([{ id: '1', kind: 'mesh' }]), /closed/);
  });

  test('invalid options are refused', () => {
    const base: AssetDownloaderOptions = {
      dataDir: '/tmp/x', deliveryUrl: 'https://example.invalid/{id}', urlTemplate: null, apiKey: null,
      concurrency: 1, timeoutMs: 1, maxBytes: 1, retries: 0,
    };
    assert.throws(() => createAssetDownloader({ ...base, concurrency: 0 }), TypeError);
    assert.throws(() => createAssetDownloader({ ...base, deliveryUrl: 'https://example.invalid/' }), TypeError);
    assert.throws(() => createAssetDownloader({ ...base, urlTemplate: 'ftp://example.invalid/{id}' }), TypeError);
  });
});

test('retryAfterMs reads seconds, HTTP dates and x-ratelimit-reset', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  assert.equal(retryAfterMs({ 'retry-after': '2' }, now), 2000);
  assert.equal(retryAfterMs({ 'retry-after': 'Wed, 01 Jan 2025 00:00:05 GMT' }, now), 5000);
  assert.equal(retryAfterMs({ 'retry-after': 'Tue, 31 Dec 2024 00:00:00 GMT' }, now), 0);
  assert.equal(retryAfterMs({ 'x-ratelimit-reset': '3' }, now), 3000);
  assert.equal(retryAfterMs({ 'x-ratelimit-reset': String(now / 1000 + 7) }, now), 7000);
  assert.equal(retryAfterMs({ 'retry-after': 'soon' }, now), undefined);
  assert.equal(retryAfterMs({}, now), undefined);
});

test('a download shared by two calls waits as long as the later call may: the first call\'s deadline does not cut it short', { timeout: 20_000 }, async () => {
  await using s = await setup(
    { assets: { '31': [{ type: 'status', status: 429, headers: { 'Retry-After': '1' } }, { type: 'status', status: 429, headers: { 'Retry-After': '1' } }, { type: 'bytes', body: 'late' }] } },
    { totalTimeoutMs: 1500, retries: 3, maxRetryAfterMs: 5000 },
  );
  const first = s.download.download([{ id: '31', kind: 'image' }]);
  await new Promise((resolve) => setTimeout(resolve, 900));
  const second = s.download.download([{ id: '31', kind: 'image' }]);
  // The first call's budget ends before the asset arrives (after two 1 s waits); the second's does not.
  const [outcome] = await second;
  expectOk(outcome);
  assert.equal((await first)[0]?.ok, false);
});
