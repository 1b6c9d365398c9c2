/**
 * Promises of interface.md that no other suite pins end to end, each against the real
 * service on loopback: health without credentials in gateway mode (the Docker image's
 * mode, whose HEALTHCHECK sends none), the gateway's request shape through analyze
 * and create with the four create fields' types and the asset download done before the
 * project is stored, development mode trusting X-Auth-Override without reading the
 * token, and the script metadata on line 2 of packed code, through the worker, for
 * names that force a higher long-comment level.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decode } from '../src/parser/index.js';
import { encode } from '../src/parser/writer/index.js';
import { collectAssetRefs } from '../src/assets/refs.js';
import { PLACES_DIR } from './support/paths.js';
import { handDom } from './support/hand-dom.js';
import { startAssetServer, type AssetServer } from './support/asset-server.js';
import { tokenFor } from './support/server.js';
import {
  CREATE, HEALTH, analyze, create, expectError, getJson, postJson, startService, upload, type Service,
} from './support/service.js';

const PLACE_NAME = 'rocket-arena-2006.rbxl';
const PLACE = readFileSync(join(PLACES_DIR, PLACE_NAME)); // 15 scripts, 18 asset ids

describe('gateway mode, as the Docker image runs', () => {
  let service: Service;
  let assets: AssetServer;
  const ids = collectAssetRefs(decode(PLACE)).ids.map((ref) => ref.id);
  // Every other id is served; the rest are 404 upstream.
  const served = ids.filter((_, index) => index % 2 === 0);

  before(async () => {
    assets = await startAssetServer({
      assets: Object.fromEntries(served.map((id) => [id, { type: 'bytes', body: `bytes of ${id}` }])),
    });
    service = await startService({ authMode: 'gateway', assetUrlTemplate: assets.templateUrl, assetRetries: 0 });
  });
  after(async () => {
    await service?.close();
    await assets?.close();
  });

  test('health needs no credentials: 200 with a JSON object', async () => {
    const response = await fetch(service.url + HEALTH);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    const body = (await response.json()) as { status?: unknown };
    assert.equal(body.status, 'ok');
    // The same with whatever a client's credentials look like: they are not asked for.
    assert.equal((await fetch(service.url + HEALTH, { headers: { Authorization: '' } })).status, 200);
  });

  test('the client\'s own headers are no user here: 401 for both POSTs without the gateway\'s X-User-Id', async () => {
    const clientHeaders = { Authorization: tokenFor({ id: 77 }), 'X-Auth-Override': '77' };
    await expectError(await upload(service, PLACE, PLACE_NAME, clientHeaders), 401, 'unauthorized');
    await expectError(await postJson(service, CREATE, { preview_hash: '0'.repeat(64), title: '', scripts_mode: 'disabled' }, clientHeaders), 401, 'unauthorized');
  });

  test('with X-User-Id: analyze, then create with the contract\'s four fields, the assets downloaded before the project', async () => {
    assert.equal(ids.length, 18);
    const headers = { Authorization: tokenFor({ id: 77 }), 'X-User-Id': '77' };
    const analysis = await analyze(service, PLACE, PLACE_NAME, headers);
    assert.equal(typeof analysis.preview_hash, 'string');
    assert.ok(Number.isInteger(analysis.report.scripts_total) && analysis.report.scripts_total === 15);

    // The exact body the contract's client sends, with a Content-Type parameter some clients add.
    const response = await fetch(service.url + CREATE, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ preview_hash: analysis.preview_hash, title: '', scripts_mode: 'disabled' }),
    });
    const text = await response.text();
    assert.equal(response.status, 200, text);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    const created = JSON.parse(text) as Record<string, unknown>;
    assert.equal(typeof created.project_id, 'string');
    assert.equal(typeof created.redirect, 'string');
    assert.ok((created.redirect as string).includes(created.project_id as string));
    assert.ok(Number.isInteger(created.assets_downloaded), `assets_downloaded: ${JSON.stringify(created.assets_downloaded)}`);
    assert.ok(Number.isInteger(created.assets_failed), `assets_failed: ${JSON.stringify(created.assets_failed)}`);
    assert.equal(created.assets_downloaded, served.length);
    assert.equal(created.assets_failed, ids.length - served.length);

    // Every id was asked for once, and the stored project already holds each outcome.
    assert.deepEqual(assets.requests.map((request) => request.id).sort(), [...ids].sort());
    const doc = await getJson(service, `/api-rbxl/projects/${created.project_id as string}`, { 'X-User-Id': '77' });
    assert.equal(doc.status, 200, doc.text);
    const outcomes = doc.body.assets as { id: string; ok: boolean; reason?: string }[];
    assert.deepEqual(outcomes.filter((asset) => asset.ok).map((asset) => asset.id).sort(), [...served].sort());
    assert.ok(outcomes.filter((asset) => !asset.ok).every((asset) => asset.reason === 'not_found'));
  });
});

describe('development mode', () => {
  let service: Service;
  before(async () => {
    service = await startService({ authMode: 'development' });
  });
  after(() => service?.close());

  test('X-Auth-Override is trusted without validating the token: a garbage token or one naming someone else', async () => {
    const bytes = Buffer.concat([PLACE, Buffer.from('\ncontract-dev')]);
    for (const authorization of ['not a token at all', tokenFor({ id: 'mallory' }), '']) {
      const headers = { Authorization: authorization, 'X-Auth-Override': 'ada' };
      const analysis = await analyze(service, bytes, 'dev.rbxl', headers);
      // The preview is ada's: the token's own id gets the 404 of someone else's preview.
      await expectError(await postJson(service, CREATE, { preview_hash: analysis.preview_hash }, { 'X-Auth-Override': 'mallory' }), 404, 'not_found');
      const created = await create(service, { preview_hash: analysis.preview_hash, title: '', scripts_mode: 'skip' }, headers);
      const doc = await getJson(service, `/api-rbxl/projects/${created.project_id}`, { 'X-Auth-Override': 'ada' });
      assert.equal(doc.body.owner, 'ada', `with Authorization ${JSON.stringify(authorization)}`);
    }
  });

  test('a token alone, as the client sends it when it cannot read an id, is no user: 401', async () => {
    await expectError(await upload(service, PLACE, PLACE_NAME, { Authorization: tokenFor({ id: 'ada' }) }), 401, 'unauthorized');
  });
});

describe('script metadata on line 2, through the worker', () => {
  let service: Service;
  // Names whose closing brackets would end a level-0 or level-1 long comment early.
  const NAMES = ['a]]b', 'c]=]d]]', 'plain'];
  const place = encode(handDom([{
    class: 'Workspace',
    children: [
      { class: 'Part', name: 'Floor' },
      ...NAMES.map((name, index) => ({
        class: index === 2 ? 'LocalScript' : 'Script',
        name,
        props: {
          Source: ['String', `print(${index}) -- ]] ]=] ]==]`] as ['String', string],
          Disabled: ['Bool', index === 1] as ['Bool', boolean], // the map itself disables one
        },
      })),
    ],
  }]));

  before(async () => {
    service = await startService();
  });
  after(() => service?.close());

  /** The metadata on line 2, after checking that line 1 opens a long comment line 3 closes and line 2 cannot close. */
  function lineTwo(code: string): { name: string; enabled: unknown } {
    const lines = code.split('\n');
    const open = /^--\[(=*)\[$/.exec(lines[0]!);
    assert.ok(open, `line 1: ${JSON.stringify(lines[0])}`);
    const close = `]${open[1]}]`;
    assert.equal(lines[2], close);
    assert.ok(!lines[1]!.includes(close), `line 2 closes the comment: ${lines[1]}`);
    return JSON.parse(lines[1]!) as { name: string; enabled: unknown };
  }

  test('disabled sets `enabled` false in every script\'s line 2; enabled keeps the map\'s; skip empties scripts[]', async () => {
    const user = { 'X-User-Id': 'meta' };
    const analysis = await analyze(service, place, 'brackets.rbxl', user);
    assert.equal(analysis.report.scripts_total, NAMES.length);
    const enabledOf = async (mode: string): Promise<Record<string, unknown>> => {
      const created = await create(service, { preview_hash: analysis.preview_hash, title: '', scripts_mode: mode }, user);
      const doc = await getJson(service, `/api-rbxl/projects/${created.project_id}`, user);
      assert.equal(doc.status, 200, doc.text);
      const scripts = doc.body.scripts as { code: string }[];
      if (mode === 'skip') {
        assert.deepEqual(scripts, []);
        return {};
      }
      return Object.fromEntries(scripts.map((script) => {
        const meta = lineTwo(script.code);
        return [meta.name, meta.enabled];
      }));
    };
    assert.deepEqual(await enabledOf('disabled'), { 'a]]b': false, 'c]=]d]]': false, plain: false });
    assert.deepEqual(await enabledOf('enabled'), { 'a]]b': true, 'c]=]d]]': false, plain: true });
    assert.deepEqual(await enabledOf('skip'), {});
  });
});
