/**
 * Issue 10, defects 1 and 6, over HTTP: no asset answer (status, headers, encoding,
 * length, timing, connection behaviour) ends the process or fails a create; download
 * slots are shared fairly between creates; one create's downloads are bounded in time.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { generatePlace } from '../bench/generate.js';
import { encode } from '../src/parser/writer/index.js';
import { startAssetServer } from './support/asset-server.js';
import { analyze, as, create, getJson, HEALTH, startService, waitUntil, type Service } from './support/service.js';

const REASONS = new Set(['no_credentials', 'unauthorized', 'forbidden', 'not_found', 'rate_limited', 'timeout', 'too_large', 'upstream_error', 'network_error']);

/** A small PRNG (mulberry32), so a failing run can be repeated from its seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * An asset host on loopback that answers every request at random, at the byte level:
 * any status, encodings known and not, lengths true, short, long, malformed or doubled,
 * chunked or not, bodies valid, corrupt or over the size cap, sent at once, slowly, cut
 * off, or never.
 */
async function startFuzzHost(seed: number): Promise<{ url: string; requests: () => number; close(): Promise<void> }> {
  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const sockets = new Set<Socket>();
  let requests = 0;
  const answer = (socket: Socket): void => {
    requests++;
    const status = pick([200, 200, 200, 200, 201, 204, 206, 301, 304, 400, 401, 403, 404, 408, 410, 429, 500, 502, 503, 599, 999]);
    const encoding = pick([null, null, null, 'gzip', 'x-gzip', 'br', 'deflate', 'zstd', 'x-unknown', 'gzip, br', 'identity', '']);
    const raw = Buffer.from(Array.from({ length: pick([0, 1, 3, 100, 3000, 9000]) }, () => Math.floor(next() * 256)));
    const body = pick(['raw', 'raw', 'gzip', 'corrupt-gzip'] as const) === 'gzip' ? gzipSync(raw) : next() < 0.2 ? Buffer.concat([Buffer.from([0x1f, 0x8b]), raw]) : raw;
    const framing = pick(['length', 'length', 'short', 'long', 'nonsense', 'negative', 'double', 'chunked', 'bad-chunked', 'close']);
    const timing = pick(['now', 'now', 'now', 'slow-headers', 'trickle', 'cut-after-headers', 'cut-mid-body', 'never', 'garbage']);
    const headers = [`HTTP/1.1 ${status} Whatever`, 'Content-Type: application/octet-stream'];
    if (encoding !== null) headers.push(`Content-Encoding: ${encoding}`);
    if (status === 429 || status === 503) headers.push(`Retry-After: ${pick(['0', '1', 'soon', '-1', 'Wed, 21 Oct 2015 07:28:00 GMT'])}`);
    let payload = body;
    switch (framing) {
      case 'length': headers.push(`Content-Length: ${body.length}`); break;
      case 'short': headers.push(`Content-Length: ${Math.max(0, body.length - 2)}`); break;
      case 'long': headers.push(`Content-Length: ${body.length + 500}`); break;
      case 'nonsense': headers.push('Content-Length: lots'); break;
      case 'negative': headers.push('Content-Length: -3'); break;
      case 'double': headers.push(`Content-Length: ${body.length}`, `Content-Length: ${body.length + 1}`); break;
      case 'chunked': headers.push('Transfer-Encoding: chunked'); payload = Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]); break;
      case 'bad-chunked': headers.push('Transfer-Encoding: chunked'); payload = Buffer.concat([Buffer.from('zz\r\n'), body]); break;
      case 'close': headers.push('Connection: close'); break;
    }
    const head = Buffer.from(headers.join('\r\n') + '\r\n\r\n');
    const end = (): void => { if (framing === 'close' || framing === 'long') socket.end(); };
    switch (timing) {
      case 'now': socket.write(Buffer.concat([head, payload]), end); break;
      case 'slow-headers': setTimeout(() => { if (!socket.destroyed) socket.write(Buffer.concat([head, payload]), end); }, 400); break;
      case 'trickle': {
        socket.write(head);
        let at = 0;
        const drip = setInterval(() => {
          if (socket.destroyed || at >= payload.length) { clearInterval(drip); if (!socket.destroyed) end(); return; }
          socket.write(payload.subarray(at, at += 64));
        }, 20);
        break;
      }
      case 'cut-after-headers': socket.write(head, () => socket.destroy()); break;
      case 'cut-mid-body': socket.write(Buffer.concat([head, payload.subarray(0, payload.length >> 1)]), () => socket.destroy()); break;
      case 'never': break;
      case 'garbage': socket.write(pick(['HTTP/1.1 abc\r\n\r\n', 'garbage\r\n\r\n', '\u0000\u0001\u0002', 'HTTP/9.9 200 OK\r\n\r\n']), () => socket.end()); break;
    }
  };
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buffered = '';
    socket.on('data', (chunk) => {
      buffered += chunk.toString('latin1');
      while (buffered.includes('\r\n\r\n')) {
        buffered = buffered.slice(buffered.indexOf('\r\n\r\n') + 4);
        answer(socket);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

test('fuzz: whatever the asset host answers, the service stays up and every create answers with a reason per failed asset', { timeout: 120_000 }, async () => {
  for (const seed of [1, 2, 3]) {
    const host = await startFuzzHost(seed);
    const service = await startService({
      assetUrlTemplate: `${host.url}/asset/{id}`, assetTimeoutMs: 300, assetRetries: 1, assetMaxBytes: 4096,
      assetTotalTimeoutMs: 5_000, assetConcurrency: 8,
    });
    try {
      const places = [0, 1, 2, 3].map((i) => encode(generatePlace({ parts: 120, scripts: 2, uniqueAssets: 40, seed: seed * 10 + i })));
      const analyses = await Promise.all(places.map((bytes, i) => analyze(service, bytes, `fuzz-${i}.rbxl`, as(`user${i}`))));
      const created = await Promise.all(analyses.map(({ preview_hash }, i) => create(service, { preview_hash }, as(`user${i}`))));
      for (const [i, answer] of created.entries()) {
        assert.equal(answer.assets_downloaded + answer.assets_failed, analyses[i]!.report.assets_total);
        for (const failure of answer.asset_failures ?? []) assert.ok(REASONS.has(failure.reason), failure.reason);
      }
      assert.ok(host.requests() > 40, `the host was asked ${host.requests()} times`);
      const health = await getJson(service, HEALTH, {});
      assert.equal(health.body.status, 'ok');
    } finally {
      await service.close();
      await host.close();
    }
  }
});

/** The asset ids of a stored preview, as the service recorded them. */
async function assetIds(service: Service, hash: string): Promise<string[]> {
  const preview = JSON.parse(await readFile(join(service.dataDir, 'objects', 'previews', hash, 'analysis.json'), 'utf8')) as { assets: { id: string }[] };
  return preview.assets.map((asset) => asset.id);
}

test('one create whose assets all hang does not stall another user\'s create: slots are shared fairly', { timeout: 60_000 }, async () => {
  const assets = await startAssetServer();
  const service = await startService({
    assetUrlTemplate: assets.templateUrl, assetConcurrency: 8, assetConcurrencyPerCreate: 4,
    assetTimeoutMs: 30_000, assetRetries: 0, assetTotalTimeoutMs: 60_000,
  });
  try {
    const slow = await analyze(service, encode(generatePlace({ parts: 100, scripts: 1, uniqueAssets: 16, seed: 41 })), 'slow.rbxl', as('ann'));
    const fast = await analyze(service, encode(generatePlace({ parts: 20, scripts: 1, uniqueAssets: 1, seed: 42 })), 'fast.rbxl', as('bob'));
    const slowIds = await assetIds(service, slow.preview_hash);
    const fastIds = (await assetIds(service, fast.preview_hash)).filter((id) => !slowIds.includes(id));
    assert.ok(slowIds.length >= 16 && fastIds.length >= 1);
    for (const id of slowIds) assets.assets[id] = { type: 'bytes', body: `slow ${id}`, delayMs: 60_000 };
    for (const id of fastIds) assets.assets[id] = { type: 'bytes', body: `fast ${id}` };
    let slowDone = false;
    const slowCreate = create(service, { preview_hash: slow.preview_hash }, as('ann')).finally(() => { slowDone = true; });
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => { if (assets.inFlight >= 4) { clearInterval(poll); resolve(); } }, 10);
    });
    const fastCreate = await create(service, { preview_hash: fast.preview_hash }, as('bob'));
    assert.equal(fastCreate.assets_failed, 0);
    // Answered while every one of the slow create's downloads was still hanging (none has ended).
    assert.equal(slowDone, false);
    assert.equal(assets.completed - fastIds.length, 0, 'a slow download had to end first');
    assert.ok(assets.peakInFlight <= 4 + fastIds.length, `the slow create held ${assets.peakInFlight} slots`);
    void slowCreate.catch(() => {});
  } finally {
    await service.server.close(100); // the slow create is answered 503 instead of waiting out the grace
    await service.close();
    await assets.close();
  }
});

test('ASSET_TOTAL_TIMEOUT_MS bounds one create\'s downloads: unfinished assets are reported as timeout', { timeout: 20_000 }, async () => {
  const assets = await startAssetServer();
  const service = await startService({
    assetUrlTemplate: assets.templateUrl, assetTimeoutMs: 30_000, assetRetries: 0, assetTotalTimeoutMs: 1_000,
  });
  try {
    const analysis = await analyze(service, encode(generatePlace({ parts: 40, scripts: 1, uniqueAssets: 3, seed: 43 })), 'hang.rbxl', as('cy'));
    const ids = await assetIds(service, analysis.preview_hash);
    for (const id of ids) assets.assets[id] = { type: 'bytes', body: 'x', delayMs: 60_000 };
    const created = await create(service, { preview_hash: analysis.preview_hash }, as('cy'));
    assert.equal(created.assets_failed, ids.length);
    assert.deepEqual(new Set(created.asset_failures?.map((failure) => failure.reason)), new Set(['timeout']));
    // The hanging downloads were stopped, not left running.
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => { if (assets.inFlight === 0) { clearInterval(poll); resolve(); } }, 10);
    });
  } finally {
    await service.close();
    await assets.close();
  }
});

test('asset ids past the download cap count as failed: the create\'s two counts still add up to the report\'s assets_total', { timeout: 60_000 }, async () => {
  const assets = await startAssetServer();
  // No preview cache: the create reads the analysis the test shortens below from the store.
  const service = await startService({ assetUrlTemplate: assets.templateUrl, previewCacheBytes: 0 });
  try {
    const analysis = await analyze(service, encode(generatePlace({ parts: 60, scripts: 1, uniqueAssets: 12, seed: 77 })), 'capped.rbxl', as('cap'));
    const path = join(service.dataDir, 'objects', 'previews', analysis.preview_hash, 'analysis.json');
    const stored = JSON.parse(await readFile(path, 'utf8')) as { assets: { id: string }[] };
    const total = analysis.report.assets_total;
    assert.equal(stored.assets.length, total);
    // What the analysis keeps of a map past MAX_DOWNLOADED_ASSET_IDS: the first ids only, the total unchanged.
    const kept = stored.assets.slice(0, total - 5);
    for (const { id } of kept) assets.assets[id] = { type: 'bytes', body: `asset ${id}` };
    await writeFile(path, JSON.stringify({ ...stored, assets: kept }));
    const answer = await create(service, { preview_hash: analysis.preview_hash }, as('cap'));
    assert.equal(answer.assets_downloaded, kept.length);
    assert.equal(answer.assets_failed, 5);
    assert.equal(answer.assets_downloaded + answer.assets_failed, total);
    assert.deepEqual(answer.asset_failures, [], 'ids never attempted have no entry of their own');
  } finally {
    await service.close();
    await assets.close();
  }
});

test('a host that closes the connection after each large asset neither crashes the service nor loses an asset', { timeout: 120_000 }, async () => {
  // 4 MiB bodies answered with Connection: close: the download's disk writes push back while the
  // host's FIN arrives (undici 7 ended the process here with an uncatchable assertion).
  const host = createHttpServer((request, response) => {
    const id = /\/asset\/(\d+)$/.exec(request.url ?? '')?.[1] ?? '0';
    const body = Buffer.alloc(4 << 20, Number(id.slice(-2)) & 0xff);
    response.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': body.length, Connection: 'close' });
    response.end(body);
  });
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
  const service = await startService({ assetUrlTemplate: `http://127.0.0.1:${(host.address() as AddressInfo).port}/asset/{id}`, assetRetries: 0 });
  try {
    for (const seed of [51, 52, 53]) {
      const analysis = await analyze(service, encode(generatePlace({ parts: 40, scripts: 1, uniqueAssets: 6, seed })), `close-${seed}.rbxl`, as('closer'));
      const answer = await create(service, { preview_hash: analysis.preview_hash }, as('closer'));
      assert.equal(answer.assets_failed, 0, JSON.stringify(answer.asset_failures));
      assert.equal(answer.assets_downloaded, analysis.report.assets_total);
    }
    assert.equal((await getJson(service, HEALTH, {})).body.status, 'ok');
  } finally {
    await service.close();
    host.closeAllConnections();
    await new Promise<void>((resolve) => host.close(() => resolve()));
  }
});

test('a download waiting out a Retry-After holds no slot: another user\'s create goes on meanwhile', { timeout: 60_000 }, async () => {
  const assets = await startAssetServer();
  const service = await startService({
    assetUrlTemplate: assets.templateUrl, assetConcurrency: 1, assetConcurrencyPerCreate: 1, assetRetries: 1, assetTotalTimeoutMs: 30_000,
  });
  try {
    const limited = await analyze(service, encode(generatePlace({ parts: 20, scripts: 1, uniqueAssets: 1, seed: 61 })), 'limited.rbxl', as('rae'));
    const healthy = await analyze(service, encode(generatePlace({ parts: 20, scripts: 1, uniqueAssets: 1, seed: 62 })), 'healthy.rbxl', as('sol'));
    const limitedIds = await assetIds(service, limited.preview_hash);
    const healthyIds = (await assetIds(service, healthy.preview_hash)).filter((id) => !limitedIds.includes(id));
    for (const id of limitedIds) assets.assets[id] = [{ type: 'status', status: 429, headers: { 'Retry-After': '3' } }, { type: 'bytes', body: `late ${id}` }];
    for (const id of healthyIds) assets.assets[id] = { type: 'bytes', body: `now ${id}` };
    const slow = create(service, { preview_hash: limited.preview_hash }, as('rae'));
    await waitUntil(() => limitedIds.every((id) => assets.count('template', id) >= 1), 'the rate-limited answers');
    const started = Date.now();
    const fast = await create(service, { preview_hash: healthy.preview_hash }, as('sol'));
    assert.equal(fast.assets_failed, 0);
    assert.ok(Date.now() - started < 2500, `the healthy create waited ${Date.now() - started} ms behind a Retry-After`);
    assert.equal((await slow).assets_failed, 0, 'the rate-limited assets arrive on their retry');
  } finally {
    await service.close();
    await assets.close();
  }
});

test('a Retry-After past the create\'s time budget is not waited out: the asset fails at once as rate_limited', { timeout: 30_000 }, async () => {
  const assets = await startAssetServer();
  const service = await startService({ assetUrlTemplate: assets.templateUrl, assetRetries: 3, assetTotalTimeoutMs: 5_000 });
  try {
    const analysis = await analyze(service, encode(generatePlace({ parts: 20, scripts: 1, uniqueAssets: 2, seed: 63 })), 'budget.rbxl', as('tom'));
    for (const id of await assetIds(service, analysis.preview_hash)) assets.assets[id] = { type: 'status', status: 429, headers: { 'Retry-After': '3600' } };
    const started = Date.now();
    const answer = await create(service, { preview_hash: analysis.preview_hash }, as('tom'));
    assert.ok(Date.now() - started < 4000, `the create took ${Date.now() - started} ms`);
    assert.deepEqual(new Set(answer.asset_failures?.map((failure) => failure.reason)), new Set(['rate_limited']));
  } finally {
    await service.close();
    await assets.close();
  }
});
