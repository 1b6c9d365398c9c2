/**
 * Create downloads the map's assets: against a scripted asset server on loopback, in
 * the plain template flow and the Open Cloud flow (location, then gzipped bytes), with
 * failures of every kind; and without credentials, where nothing is requested at all.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { PLACES_DIR } from './support/paths.js';
import { startAssetServer, type AssetScript, type AssetServer } from './support/asset-server.js';
import { analyze, as, create, startService, type Analysis, type Service } from './support/service.js';
import { servedAssetType } from '../src/http/routes/projects.js';

const PLACE_NAME = 'slime-defense.rbxl';
const PLACE = readFileSync(join(PLACES_DIR, PLACE_NAME));
/** The 28 unique asset ids of slime-defense.rbxl (meshes, images, one sound). */
const IDS = [
  '5572530342', '1699715537', '1699715541', '1699715550', '1699715557', '1699715562', '1699715576',
  '1699715593', '1699715602', '1699715610', '1699715616', '1699715627', '1699715632', '1699715641',
  '1699715652', '5840434520', '6259780445', '6259780483', '6197405655', '6197405635', '6197405652',
  '6444320592', '6444884337', '6444884785', '6412503613', '6196665106', '5096162071', '6372755229',
] as const;

const MAX_BYTES = 64 * 1024;
const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
const bytesOf = (id: string): Buffer => Buffer.from(`asset bytes of ${id} `.repeat(40));

/** Ids whose upstream answers with a type a page could run (a script, a page, an SVG). */
const RUNNABLE = new Set<string>();

/** What each id does, and what create must record for it. */
interface Plan {
  script: AssetScript;
  /** The bytes the service must store, or the failure reason. */
  expect: Buffer | string;
}

function plans(): Map<string, Plan> {
  const [plainId, gzipId, silentGzipId, missing, forbidden, unauthorized, flaky, limited, alwaysLimited, slow, stalled,
    hugeDeclared, hugeChunked, broken, reset, duplicate, ...rest] = IDS;
  const plan = new Map<string, Plan>([
    [plainId, { script: { type: 'bytes', body: bytesOf(plainId), contentType: 'image/png' }, expect: bytesOf(plainId) }],
    [gzipId, { script: { type: 'bytes', body: bytesOf(gzipId), gzip: 'header' }, expect: bytesOf(gzipId) }],
    [silentGzipId, { script: { type: 'bytes', body: bytesOf(silentGzipId), gzip: 'silent' }, expect: bytesOf(silentGzipId) }],
    [missing, { script: { type: 'status', status: 404 }, expect: 'not_found' }],
    [forbidden, { script: { type: 'status', status: 403 }, expect: 'forbidden' }],
    [unauthorized, { script: { type: 'status', status: 401 }, expect: 'unauthorized' }],
    [flaky, { script: [{ type: 'status', status: 500 }, { type: 'bytes', body: bytesOf(flaky) }], expect: bytesOf(flaky) }],
    [limited, {
      script: [{ type: 'status', status: 429, headers: { 'Retry-After': '1' } }, { type: 'bytes', body: bytesOf(limited) }],
      expect: bytesOf(limited),
    }],
    [alwaysLimited, { script: { type: 'status', status: 429, headers: { 'Retry-After': '0' } }, expect: 'rate_limited' }],
    [slow, { script: { type: 'bytes', body: bytesOf(slow), delayMs: 200 }, expect: bytesOf(slow) }],
    [stalled, { script: { type: 'bytes', body: bytesOf(stalled), delayMs: 60_000 }, expect: 'timeout' }],
    [hugeDeclared, { script: { type: 'stream', bytes: 4 * MAX_BYTES, declareLength: true }, expect: 'too_large' }],
    [hugeChunked, { script: { type: 'stream', bytes: 4 * MAX_BYTES }, expect: 'too_large' }],
    [broken, { script: { type: 'status', status: 500 }, expect: 'upstream_error' }],
    [reset, { script: { type: 'reset' }, expect: 'network_error' }],
    // The same bytes as another id: stored once.
    [duplicate, { script: { type: 'bytes', body: bytesOf(plainId) }, expect: bytesOf(plainId) }],
  ]);
  // Types a page could run: stored as the upstream said, served as bytes.
  const [script, page, vector, ...others] = rest;
  RUNNABLE.clear();
  for (const id of [script, page, vector]) RUNNABLE.add(id);
  plan.set(script, { script: { type: 'bytes', body: bytesOf(script), contentType: 'text/javascript' }, expect: bytesOf(script) });
  plan.set(page, { script: { type: 'bytes', body: bytesOf(page), contentType: 'text/html; charset=utf-8' }, expect: bytesOf(page) });
  plan.set(vector, { script: { type: 'bytes', body: bytesOf(vector), contentType: 'image/svg+xml' }, expect: bytesOf(vector) });
  for (const id of others) plan.set(id, { script: { type: 'bytes', body: bytesOf(id) }, expect: bytesOf(id) });
  assert.equal(plan.size, IDS.length);
  return plan;
}

const downloaderLimits = { assetTimeoutMs: 1_000, assetRetries: 1, assetMaxBytes: MAX_BYTES, assetConcurrency: 4 };

/** Creates a project and checks its counts, its assets and every stored asset's bytes against the plan. */
async function createAndCheck(service: Service, analysis: Analysis, plan: Map<string, Plan>, user: string): Promise<void> {
  const created = await create(service, { preview_hash: analysis.preview_hash }, as(user));
  const failures = [...plan.values()].filter((entry) => typeof entry.expect === 'string').length;
  assert.equal(analysis.report.assets_total, IDS.length);
  assert.equal(created.assets_downloaded + created.assets_failed, analysis.report.assets_total);
  assert.equal(created.assets_failed, failures);

  const response = await fetch(`${service.url}/api-rbxl/projects/${created.project_id}`, { headers: as(user) });
  assert.equal(response.status, 200);
  const doc = (await response.json()) as { assets: { id: string; ok: boolean; reason?: string; sha256?: string; size?: number }[] };
  assert.deepEqual(doc.assets.map((asset) => asset.id).sort(), [...IDS].sort());
  for (const asset of doc.assets) {
    const expected = plan.get(asset.id)!.expect;
    if (typeof expected === 'string') {
      assert.equal(asset.ok, false, `asset ${asset.id} should have failed with ${expected}`);
      assert.equal(asset.reason, expected, `reason of asset ${asset.id}`);
      continue;
    }
    assert.equal(asset.ok, true, `asset ${asset.id} failed: ${asset.reason}`);
    assert.equal(asset.sha256, sha256(expected));
    assert.equal(asset.size, expected.length);
    const bytes = await fetch(`${service.url}/api-rbxl/projects/${created.project_id}/assets/${asset.sha256}`, { headers: as(user) });
    assert.equal(bytes.status, 200);
    assert.ok(Buffer.from(await bytes.arrayBuffer()).equals(expected), `bytes of asset ${asset.id}`);
    // What an upstream said was a script, a page or an SVG is served as bytes; nothing is served as text.
    const type = bytes.headers.get('content-type') ?? '';
    if (RUNNABLE.has(asset.id)) assert.equal(type, 'application/octet-stream', `type of asset ${asset.id}`);
    assert.match(type, /^(image\/png|application\/octet-stream)$/, `type of asset ${asset.id}`);
  }
  // The failures listed in the answer are the project's.
  assert.deepEqual(
    (created.asset_failures ?? []).map((failure) => `${failure.id}:${failure.reason}`).sort(),
    doc.assets.filter((asset) => !asset.ok).map((asset) => `${asset.id}:${asset.reason}`).sort(),
  );
  // Another user cannot read a project's asset, even knowing its hash.
  const someHash = doc.assets.find((asset) => asset.ok)!.sha256!;
  const stranger = await fetch(`${service.url}/api-rbxl/projects/${created.project_id}/assets/${someHash}`, { headers: as('stranger') });
  assert.equal(stranger.status, 404);
}

describe('assets through ASSET_URL_TEMPLATE', () => {
  let assets: AssetServer;
  let service: Service;
  const plan = plans();

  before(async () => {
    assets = await startAssetServer({ assets: Object.fromEntries([...plan].map(([id, entry]) => [id, entry.script])) });
    service = await startService({ ...downloaderLimits, assetUrlTemplate: assets.templateUrl });
  });
  after(async () => {
    await service.close();
    await assets.close();
  });

  test('downloads, retries and fails per asset; stored bytes are served back by sha256', async () => {
    const analysis = await analyze(service, PLACE, PLACE_NAME, as('alice'));
    await createAndCheck(service, analysis, plan, 'alice');
    assert.ok(assets.requests.every((request) => request.route === 'template'));
    const [, , , missing, , , flaky, limited] = IDS;
    assert.equal(assets.count('template', flaky), 2, 'a 500 is retried');
    assert.equal(assets.count('template', limited), 2, 'a 429 is retried');
    assert.equal(assets.count('template', missing), 1, 'a 404 is not retried');
    assert.ok(assets.peakInFlight <= downloaderLimits.assetConcurrency);

    // A second project of the same map fetches nothing it already has.
    const before = assets.requests.length;
    const okIds = IDS.filter((id) => typeof plan.get(id)!.expect !== 'string');
    await createAndCheck(service, analysis, plan, 'alice');
    const again = assets.requests.slice(before).map((request) => request.id);
    assert.deepEqual(again.filter((id) => okIds.includes(id as (typeof IDS)[number])), []);
  });
});

describe('assets through Open Cloud delivery', () => {
  const apiKey = 'test-api-key';
  let assets: AssetServer;
  let service: Service;
  const plan = plans();
  const [deliveryMissing, deliveryLimited, deliveryForbidden] = IDS.slice(-3);
  assert.ok(deliveryMissing && deliveryLimited && deliveryForbidden);

  before(async () => {
    // The bytes route serves everything gzipped, as the CDN does.
    const scripts: Record<string, AssetScript> = {};
    for (const [id, entry] of plan) {
      const script = entry.script;
      scripts[id] = !Array.isArray(script) && script.type === 'bytes' ? { ...script, gzip: 'header' } : script;
    }
    plan.set(deliveryMissing, { script: plan.get(deliveryMissing)!.script, expect: 'not_found' });
    plan.set(deliveryForbidden, { script: plan.get(deliveryForbidden)!.script, expect: 'forbidden' });
    assets = await startAssetServer({
      apiKey,
      assets: scripts,
      delivery: {
        [deliveryMissing]: { type: 'status', status: 404 },
        [deliveryForbidden]: { type: 'json', body: { errors: [{ code: 403, message: 'no access' }] } },
      },
    });
    // Rate limited once; the answer after that points at this server's own bytes route.
    assets.delivery[deliveryLimited] = [
      { type: 'status', status: 429, headers: { 'x-ratelimit-reset': '1' } },
      { type: 'json', body: { location: `${assets.url}/cdn/${deliveryLimited}?sig=test` } },
    ];
    service = await startService({ ...downloaderLimits, assetDeliveryUrl: assets.deliveryUrl, assetApiKey: apiKey });
  });
  after(async () => {
    await service.close();
    await assets.close();
  });

  test('asks for a location with the key, fetches and gunzips the bytes without it', async () => {
    const analysis = await analyze(service, PLACE, PLACE_NAME, as('olga'));
    await createAndCheck(service, analysis, plan, 'olga');
    const delivery = assets.requests.filter((request) => request.route === 'delivery');
    const location = assets.requests.filter((request) => request.route === 'location');
    assert.ok(delivery.length >= IDS.length);
    assert.ok(delivery.every((request) => request.headers['x-api-key'] === apiKey));
    assert.ok(location.length > 0);
    assert.ok(location.every((request) => request.headers['x-api-key'] === undefined), 'the key went to the location');
    assert.equal(assets.count('delivery', deliveryLimited), 2);
    assert.equal(assets.count('location', deliveryMissing), 0);
    assert.ok(!assets.requests.some((request) => request.route === 'template' || request.route === 'unknown'));
  });
});

describe('assets without credentials', () => {
  test('no API key and no template: every asset fails with no_credentials, nothing is requested', async () => {
    const assets = await startAssetServer({ assets: Object.fromEntries(IDS.map((id) => [id, { type: 'bytes', body: bytesOf(id) }])) });
    const service = await startService({ assetDeliveryUrl: assets.deliveryUrl, assetApiKey: null, assetUrlTemplate: null });
    try {
      const analysis = await analyze(service, PLACE, PLACE_NAME, as('nora'));
      const created = await create(service, { preview_hash: analysis.preview_hash }, as('nora'));
      assert.equal(created.assets_downloaded, 0);
      assert.equal(created.assets_failed, analysis.report.assets_total);
      const response = await fetch(`${service.url}/api-rbxl/projects/${created.project_id}`, { headers: as('nora') });
      const doc = (await response.json()) as { assets: { ok: boolean; reason: string }[] };
      assert.equal(doc.assets.length, IDS.length);
      assert.ok(doc.assets.every((asset) => !asset.ok && asset.reason === 'no_credentials'));
      assert.equal(assets.requests.length, 0);
    } finally {
      await service.close();
      await assets.close();
    }
  });
});

describe('serving a large asset', () => {
  test('streams whole to a reader that keeps pausing (back-pressure)', async () => {
    const big = Buffer.alloc(16 * 1024 * 1024);
    for (let at = 0; at < big.length; at += 997) big[at] = at % 251;
    const assets = await startAssetServer({ assets: { [IDS[0]]: { type: 'bytes', body: big } } });
    const service = await startService({ assetUrlTemplate: assets.templateUrl, assetRetries: 0 });
    try {
      const analysis = await analyze(service, PLACE, PLACE_NAME, as('pia'));
      const created = await create(service, { preview_hash: analysis.preview_hash }, as('pia'));
      assert.equal(created.assets_downloaded, 1);
      const received = await new Promise<Buffer>((resolve, reject) => {
        const request = httpRequest({
          host: '127.0.0.1', port: service.port, agent: false, headers: as('pia'),
          path: `/api-rbxl/projects/${created.project_id}/assets/${sha256(big)}`,
        }, (response) => {
          assert.equal(response.statusCode, 200);
          assert.equal(response.headers['content-length'], String(big.length));
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => {
            chunks.push(chunk);
            if (chunks.length % 40 === 0) {
              response.pause();
              setTimeout(() => response.resume(), 10);
            }
          });
          response.on('end', () => resolve(Buffer.concat(chunks)));
          response.on('error', reject);
        });
        request.on('error', reject);
        request.end();
      });
      assert.equal(received.length, big.length);
      assert.ok(received.equals(big));
    } finally {
      await service.close();
      await assets.close();
    }
  });
});

test('an asset keeps an inert type when served; anything a browser could run is bytes', () => {
  for (const type of ['image/png', 'image/jpeg', 'audio/ogg', 'model/gltf-binary', 'font/woff2', 'application/octet-stream']) assert.equal(servedAssetType(type), type);
  for (const type of ['text/html', 'text/javascript', 'application/javascript', 'image/svg+xml', 'model/x3d+xml', 'image/x.foo+xml', 'font/x+xml', 'application/xhtml+xml', 'text/plain', 'application/json']) {
    assert.equal(servedAssetType(type), 'application/octet-stream', type);
  }
});
