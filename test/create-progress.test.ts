/**
 * The routes the pages stand on, over real HTTP: a create's progress (named by the
 * client's X-Create-Id, polled at GET /api-rbxl/import/rbxl/create/{id}) moves forward only
 * and is shown to its owner only; the project summary and page; /config; the default and
 * configured redirect.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { as, analyze, postJson, startService, type Service } from './support/service.js';
import { startSlowAssetHost, writeBigPlace, type BigPlace } from './support/big-place.js';
import type { AssetServer } from './support/asset-server.js';
import { PLACES_DIR } from './support/paths.js';

const CREATE = '/api-rbxl/import/rbxl/create';
const PHASES = ['starting', 'assets', 'converting', 'building', 'storing', 'done'];

interface Progress {
  create_id: string;
  phase: string;
  assets_done: number;
  assets_total: number;
  assets_failed: number;
  project_id?: string;
  error?: { code: string; message: string };
}

describe('create progress', () => {
  let service: Service;
  let host: AssetServer;
  let place: BigPlace;
  let bytes: Uint8Array;

  before(async () => {
    place = await writeBigPlace({ parts: 400, scripts: 40, copies: 0, assets: 60 });
    bytes = await readFile(place.path);
    host = await startSlowAssetHost(40);
    service = await startService({ assetUrlTemplate: host.templateUrl, assetRetries: 0, assetConcurrencyPerCreate: 2 });
  });
  after(async () => {
    await service?.close();
    await host?.close();
    await place?.remove();
  });

  const progressOf = (id: string, headers: Record<string, string>) =>
    fetch(`${service.url}${CREATE}/${encodeURIComponent(id)}`, { headers });

  function createNamed(previewHash: string, id: string, user: string): Promise<Response> {
    return fetch(service.url + CREATE, {
      method: 'POST',
      headers: { ...as(user), 'Content-Type': 'application/json', 'X-Create-Id': id },
      body: JSON.stringify({ preview_hash: previewHash }),
    });
  }

  test('moves forward only, through every phase, with the assets counted as they settle', async () => {
    const { preview_hash: hash, report } = await analyze(service, bytes, place.name, as('owner'));
    assert.equal(report.assets_total, 60);
    const id = 'progress-monotonic-1';
    const seen: Progress[] = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const response = await progressOf(id, as('owner'));
        if (response.status === 200) seen.push(await response.json() as Progress);
        else assert.equal(response.status, 404, 'unknown until the create starts');
        await new Promise((resolve) => setTimeout(resolve, 15));
      }
    })();
    const answer = await createNamed(hash, id, 'owner');
    polling = false;
    await poller;
    assert.equal(answer.status, 200);
    const created = await answer.json() as { project_id: string; assets_downloaded: number; assets_failed: number };

    const final = await (await progressOf(id, as('owner'))).json() as Progress;
    assert.equal(final.phase, 'done');
    assert.equal(final.project_id, created.project_id);
    assert.equal(final.assets_done, 60);
    assert.equal(final.assets_total, 60);
    assert.equal(final.assets_failed, created.assets_failed);
    seen.push(final);

    for (let i = 1; i < seen.length; i++) {
      const [a, b] = [seen[i - 1]!, seen[i]!];
      assert.ok(PHASES.indexOf(b.phase) >= PHASES.indexOf(a.phase), `phase ${a.phase} → ${b.phase}`);
      assert.ok(b.assets_done >= a.assets_done, `assets ${a.assets_done} → ${b.assets_done}`);
      assert.ok(b.assets_failed >= a.assets_failed);
      assert.ok(b.assets_done <= b.assets_total || b.phase === 'starting');
    }
    const during = new Set(seen.filter((p) => p.phase === 'assets').map((p) => p.assets_done));
    assert.ok([...during].filter((done) => done > 0 && done < 60).length >= 3, `assets were seen settling one by one: ${[...during].join(', ')}`);
    assert.ok(seen.some((p) => p.phase === 'building' || p.phase === 'storing'), 'building is reported after the assets');
  });

  test('only its owner sees it: anyone else gets the same 404 as for an id never used', async () => {
    const { preview_hash: hash } = await analyze(service, bytes, place.name, as('alice'));
    const id = 'progress-owner-only';
    const running = createNamed(hash, id, 'alice');
    let aliceSaw = false;
    const strangerBodies = new Set<string>();
    for (let i = 0; i < 40 && !aliceSaw; i++) {
      const mine = await progressOf(id, as('alice'));
      if (mine.status === 200) aliceSaw = (await mine.json() as Progress).create_id === id;
      const theirs = await progressOf(id, as('mallory'));
      assert.equal(theirs.status, 404);
      strangerBodies.add(await theirs.text());
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.ok(aliceSaw, 'the owner saw the create while it ran');
    assert.equal((await running).status, 200);
    const after = await progressOf(id, as('mallory'));
    assert.equal(after.status, 404);
    strangerBodies.add(await after.text());
    const never = await progressOf('never-used-id-000', as('mallory'));
    strangerBodies.add(await never.text());
    assert.equal(strangerBodies.size, 1, 'one answer for someone else\'s and for nothing');
    assert.equal((await progressOf(id, {})).status, 401, 'no user: no progress');
  });

  test('a create id is the client\'s choice: malformed is 400, one still running is 409, a finished one may be reused', async () => {
    const { preview_hash: hash } = await analyze(service, bytes, place.name, as('bob'));
    for (const bad of ['short', 'has space in it', 'x'.repeat(65), 'semi;colon-123']) {
      const response = await fetch(service.url + CREATE, {
        method: 'POST',
        headers: { ...as('bob'), 'Content-Type': 'application/json', 'X-Create-Id': bad },
        body: JSON.stringify({ preview_hash: hash }),
      });
      assert.equal(response.status, 400, bad);
      assert.equal((await response.json() as { error: { code: string } }).error.code, 'invalid_create_id');
    }
    const id = 'bob-create-000001';
    const first = createNamed(hash, id, 'bob');
    let conflict: Response | null = null;
    for (let i = 0; i < 50; i++) {
      if ((await progressOf(id, as('bob'))).status === 200) {
        conflict = await createNamed(hash, id, 'bob');
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.ok(conflict, 'the first create was seen running');
    assert.equal(conflict.status, 409);
    assert.equal((await conflict.json() as { error: { code: string } }).error.code, 'create_id_in_use');
    assert.equal((await first).status, 200);
    assert.equal((await createNamed(hash, id, 'bob')).status, 200, 'reused once finished');
    // Another user's id space is their own.
    const { preview_hash: carolHash } = await analyze(service, bytes, place.name, as('carol'));
    assert.equal((await createNamed(carolHash, id, 'carol')).status, 200);
  });

  test('a create that fails ends its progress as failed, with the error it answered', async () => {
    const id = 'failing-create-01';
    const response = await createNamed('0'.repeat(64), id, 'dave');
    assert.equal(response.status, 404);
    const progress = await (await progressOf(id, as('dave'))).json() as Progress;
    assert.equal(progress.phase, 'failed');
    assert.equal(progress.error?.code, 'not_found');
  });

  test('a client that leaves as soon as it has sent its create stops it: no project is stored, and the progress says client_gone', async () => {
    const user = 'erin';
    const { preview_hash: previewHash } = await analyze(service, bytes, 'big.rbxl', as(user));
    const projects = join(service.dataDir, 'objects', 'projects');
    const stored = async () => (await readdir(projects).catch(() => [])).length;
    const before = await stored();
    const body = JSON.stringify({ preview_hash: previewHash });
    for (let attempt = 0; attempt < 6; attempt++) {
      const id = `leaving-create-${attempt}`;
      await new Promise<void>((resolve) => {
        const socket = connect(service.port, '127.0.0.1', () => {
          socket.write(`POST ${CREATE} HTTP/1.1\r\nHost: localhost\r\nX-User-Id: ${user}\r\nContent-Type: application/json\r\nX-Create-Id: ${id}\r\n`
            + `Content-Length: ${body.length}\r\n\r\n${body}`);
          // Gone while the body is read and the progress entry is made, or just after.
          setTimeout(() => { socket.destroy(); resolve(); }, attempt % 3);
        });
        socket.on('error', () => resolve());
      });
      // Until it ends; unknown for 3 s means it never began (the client was gone before its body was read).
      let progress: Progress | null = null;
      for (let wait = 0, unknown = 0; wait < 400 && unknown < 60; wait++) {
        const answer = await progressOf(id, as(user));
        progress = answer.status === 200 ? await answer.json() as Progress : null;
        if (progress === null) unknown++;
        else if (progress.phase === 'done' || progress.phase === 'failed') break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // Never begun (gone before its body was read) or stopped; never done.
      if (progress !== null) assert.deepEqual([progress.phase, progress.error?.code], ['failed', 'client_gone'], `attempt ${attempt}`);
    }
    assert.equal(await stored(), before, 'no project for clients that left');
  });

  test('without X-Create-Id the create answer is the contract\'s, unchanged', async () => {
    const { preview_hash: hash } = await analyze(service, bytes, place.name, as('erin'));
    const response = await postJson(service, CREATE, { preview_hash: hash }, as('erin'));
    assert.equal(response.status, 200);
    const body = await response.json() as Record<string, unknown>;
    // The contract's fields and the service's documented additions (asset_failures, assets_not_converted); nothing about progress.
    assert.deepEqual(Object.keys(body).sort(), ['asset_failures', 'assets_downloaded', 'assets_failed', 'assets_not_converted', 'project_id', 'redirect']);
  });
});

describe('project page routes', () => {
  let service: Service;
  before(async () => {
    service = await startService({ maxUploadBytes: 3 * 1024 * 1024 });
  });
  after(() => service?.close());

  test('redirect points at the project page, which is public; its summary is the owner\'s only', async () => {
    const bytes = await readFile(join(PLACES_DIR, 'rocket-arena-2006.rbxl'));
    const { preview_hash: hash, report } = await analyze(service, bytes, 'arena.rbxl', as('owner'));
    const created = await (await postJson(service, CREATE, { preview_hash: hash, title: 'Arena', scripts_mode: 'enabled' }, as('owner'))).json() as {
      project_id: string; redirect: string; assets_failed: number; asset_failures: { id: string; reason: string }[];
    };
    assert.equal(created.redirect, `/api-rbxl/projects/${created.project_id}/page`);

    const page = await fetch(service.url + created.redirect);
    assert.equal(page.status, 200, 'the page is a shell: it needs no credentials');
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    assert.match(await page.text(), /static\/project\.js/);

    const summaryUrl = `${service.url}/api-rbxl/projects/${created.project_id}/summary`;
    const summary = await (await fetch(summaryUrl, { headers: as('owner') })).json() as {
      title: string; scripts_mode: string; assets_failed: number; assets: { id: string; ok: boolean; reason?: string }[]; report: { scripts_total: number; file_name: string };
    };
    assert.equal(summary.title, 'Arena');
    assert.equal(summary.scripts_mode, 'enabled');
    assert.equal(summary.report.scripts_total, report.scripts_total);
    assert.equal(summary.report.file_name, 'arena.rbxl');
    assert.equal(summary.assets.length, report.assets_total);
    assert.deepEqual(summary.assets.filter((a) => !a.ok).map((a) => ({ id: a.id, reason: a.reason })), created.asset_failures);
    for (const stranger of [as('mallory'), {}]) {
      const response = await fetch(summaryUrl, { headers: stranger });
      assert.equal(response.status, 'X-User-Id' in stranger ? 404 : 401);
    }
    // Deleting the project removes its summary with it.
    const deleted = await fetch(`${service.url}/api-rbxl/projects/${created.project_id}`, { method: 'DELETE', headers: as('owner') });
    assert.equal(deleted.status, 204);
    assert.equal(deleted.headers.get('content-length'), null, 'a 204 carries no Content-Length (RFC 9110)');
    assert.equal((await fetch(summaryUrl, { headers: as('owner') })).status, 404);
  });

  test('/config tells the pages the auth mode, the largest map and whether assets can download', async () => {
    const config = await (await fetch(`${service.url}/api-rbxl/config`)).json() as Record<string, unknown>;
    assert.deepEqual(config, {
      auth_mode: 'development', max_upload_bytes: 3 * 1024 * 1024, scripts_modes: ['disabled', 'enabled', 'skip'], asset_downloads: 'off',
    });
  });

  test('with REDIRECT_TEMPLATE set, redirect points at the operator\'s editor', async () => {
    const gateway = await startService({ redirectTemplate: 'https://editor.example/open/{project_id}' });
    try {
      const bytes = await readFile(join(PLACES_DIR, 'rocket-arena-2006.rbxl'));
      const { preview_hash: hash } = await analyze(gateway, bytes, 'arena.rbxl', as('owner'));
      const created = await (await postJson(gateway, CREATE, { preview_hash: hash }, as('owner'))).json() as { project_id: string; redirect: string };
      assert.equal(created.redirect, `https://editor.example/open/${created.project_id}`);
    } finally {
      await gateway.close();
    }
  });
});
