/**
 * The service end to end over real HTTP on loopback: analyze then create in every
 * script mode (the packed code checked line by line against the map's own sources),
 * titles, dedupe of a second upload, owner isolation and both authentication modes.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decode } from '../src/parser/index.js';
import { fullName, instances } from '../src/parser/dom.js';
import { FINDING_CODES } from '../src/scan/index.js';
import { PLACES_DIR } from './support/paths.js';
import {
  CREATE, HEALTH, analyze, as, assertErrorBody, create, expectError, getJson, postJson, startService, upload, uploadsIn,
  type Service,
} from './support/service.js';

const PLACE_NAME = 'rocket-arena-2006.rbxl';
const PLACE = readFileSync(join(PLACES_DIR, PLACE_NAME)); // binary, 15 scripts, one of them Disabled, 18 asset ids

/** The same place with different bytes: the decoder ignores anything after the END chunk. */
function variant(tag: string): Buffer {
  return Buffer.concat([PLACE, Buffer.from(`\n${tag}`)]);
}

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

interface MapScript {
  className: string;
  name: string;
  path: string;
  source: Buffer;
  enabled: boolean;
  runContext: string;
}

/** The scripts as the map itself has them, read straight from the decoder. */
function mapScripts(bytes: Uint8Array): MapScript[] {
  const scripts: MapScript[] = [];
  const dom = decode(bytes);
  for (const instance of instances(dom)) {
    if (!['Script', 'LocalScript', 'ModuleScript'].includes(instance.className)) continue;
    const source = instance.get('Source');
    const disabled = instance.get('Disabled');
    const runContext = instance.get('RunContext');
    scripts.push({
      className: instance.className,
      name: instance.name,
      path: fullName(dom, instance.row),
      source:
        typeof source === 'string' ? Buffer.from(source, 'utf8')
        : source && typeof source === 'object' && 'base64' in source ? Buffer.from(String(source.base64), 'base64')
        : Buffer.alloc(0),
      enabled: instance.className === 'ModuleScript' || disabled !== true,
      runContext: typeof runContext === 'number' ? (['Legacy', 'Server', 'Client', 'Plugin'][runContext] ?? 'Legacy') : 'Legacy',
    });
  }
  return scripts;
}

const MAP_SCRIPTS = mapScripts(PLACE);

interface PackedScript {
  name: string;
  class: string;
  path: string;
  code: string;
}

interface Unpacked {
  meta: Record<string, unknown> & { enabled: boolean };
  source: Buffer;
}

/** Reads packed code line by line, asserting its three-line header. */
function unpack(code: string): Unpacked {
  const lines = code.split('\n');
  assert.ok(lines.length >= 4, 'packed code has fewer than three header lines');
  const open = /^--\[(=*)\[$/.exec(lines[0]!);
  assert.ok(open, `line 1 does not open a long comment: ${JSON.stringify(lines[0])}`);
  const meta = JSON.parse(lines[1]!) as Unpacked['meta'];
  assert.equal(typeof meta, 'object');
  // Nothing in the metadata may close the comment before line 3 does.
  assert.ok(!lines[1]!.includes(`]${open[1]}]`), 'the metadata line contains the closing bracket');
  assert.equal(lines[2], `]${open[1]}]`, 'line 3 does not close the comment of line 1');
  const headerLength = lines[0]!.length + lines[1]!.length + lines[2].length + 3;
  return { meta, source: Buffer.from(code.slice(headerLength), 'utf8') };
}

/**
 * Checks every packed script against the map: header shape, metadata members, and the
 * source after line 3 byte for byte the map's. Scripts are matched by path and source,
 * so duplicate paths are fine; every map script must be used exactly once.
 */
function checkScripts(scripts: PackedScript[], expectEnabled: (script: MapScript) => boolean): Unpacked[] {
  assert.equal(scripts.length, MAP_SCRIPTS.length);
  const unused = [...MAP_SCRIPTS];
  const unpacked: Unpacked[] = [];
  for (const script of scripts) {
    const packed = unpack(script.code);
    const index = unused.findIndex((candidate) => candidate.path === script.path && candidate.source.equals(packed.source));
    assert.notEqual(index, -1, `no map script at ${script.path} has this source`);
    const original = unused.splice(index, 1)[0]!;
    assert.equal(script.name, original.name);
    assert.equal(script.class, original.className);
    assert.equal(packed.meta.name, original.name);
    assert.equal(packed.meta.class, original.className);
    assert.equal(packed.meta.path, original.path);
    assert.equal(packed.meta.run_context, original.runContext);
    assert.equal(packed.meta.enabled, expectEnabled(original), `enabled of ${original.path}`);
    unpacked.push(packed);
  }
  assert.equal(unused.length, 0);
  return unpacked;
}

describe('analyze then create', () => {
  let service: Service;
  let hash: string;
  const alice = as('alice');

  before(async () => {
    service = await startService();
    const analysis = await analyze(service, PLACE, PLACE_NAME, alice);
    hash = analysis.preview_hash;
  });
  after(() => service.close());

  test('the corpus place has a script the map disables, and others it does not', () => {
    assert.ok(MAP_SCRIPTS.some((script) => !script.enabled));
    assert.ok(MAP_SCRIPTS.some((script) => script.enabled));
  });

  test('analyze answers the SHA-256 of the bytes and a report', async () => {
    const analysis = await analyze(service, PLACE, PLACE_NAME, alice);
    assert.deepEqual(Object.keys(analysis).sort(), ['preview_hash', 'report']);
    assert.equal(analysis.preview_hash, sha256(PLACE));
    const report = analysis.report;
    assert.equal(report.scripts_total, MAP_SCRIPTS.length);
    assert.equal(report.format, 'binary');
    assert.equal(report.file_name, PLACE_NAME);
    assert.equal(report.file_size, PLACE.length);
    assert.equal(report.scripts_disabled, MAP_SCRIPTS.filter((script) => !script.enabled).length);
    assert.equal(report.assets_total, 18);
    assert.deepEqual(await uploadsIn(service), [], 'a temp upload was left behind');
  });

  async function project(id: string, headers = alice): Promise<any> {
    const { status, body, text } = await getJson(service, `/api-rbxl/projects/${id}`, headers);
    assert.equal(status, 200, text);
    return body;
  }

  test('scripts_mode disabled: every script disabled, sources untouched', async () => {
    const created = await create(service, { preview_hash: hash, title: '', scripts_mode: 'disabled' }, alice);
    assert.match(created.project_id, /^p_[a-z2-7]{20}$/);
    assert.equal(created.redirect, `/api-rbxl/projects/${created.project_id}/page`, "without REDIRECT_TEMPLATE: the service's own project page");
    assert.equal(created.assets_downloaded + created.assets_failed, 18);
    const doc = await project(created.project_id);
    assert.equal(doc.format, 'rbxl-import/project');
    assert.equal(doc.version, 2);
    assert.equal(doc.owner, 'alice');
    assert.equal(doc.scripts_mode, 'disabled');
    assert.deepEqual(doc.source, { preview_hash: hash, file_name: PLACE_NAME, format: 'binary', size: PLACE.length });
    assert.ok(!Number.isNaN(Date.parse(doc.created_at)));
    checkScripts(doc.scripts, () => false);
  });

  test('scripts_mode omitted means disabled', async () => {
    const created = await create(service, { preview_hash: hash }, alice);
    const doc = await project(created.project_id);
    assert.equal(doc.scripts_mode, 'disabled');
    checkScripts(doc.scripts, () => false);
  });

  test('scripts_mode enabled: each script as the map has it; only line 2 differs from disabled', async () => {
    const enabled = await project((await create(service, { preview_hash: hash, scripts_mode: 'enabled' }, alice)).project_id);
    const disabled = await project((await create(service, { preview_hash: hash, scripts_mode: 'disabled' }, alice)).project_id);
    const on = checkScripts(enabled.scripts, (script) => script.enabled);
    const off = checkScripts(disabled.scripts, () => false);
    assert.ok(on.some((script) => !script.meta.enabled), 'the map\'s disabled script was enabled');
    // Same order, same metadata but `enabled`, same source.
    for (const [index, script] of on.entries()) {
      assert.deepEqual({ ...off[index]!.meta, enabled: script.meta.enabled }, script.meta);
      assert.ok(off[index]!.source.equals(script.source));
    }
  });

  test('scripts_mode skip: no scripts, the scene is still there', async () => {
    const doc = await project((await create(service, { preview_hash: hash, scripts_mode: 'skip' }, alice)).project_id);
    assert.equal(doc.scripts_mode, 'skip');
    assert.deepEqual(doc.scripts, []);
    assert.ok(JSON.stringify(doc.scene).includes('"Part"'), 'the scene has no parts');
  });

  test('title: blank or omitted means the file name without extension; a given one is kept', async () => {
    for (const body of [{ preview_hash: hash, title: '' }, { preview_hash: hash }, { preview_hash: hash, title: '   ' }]) {
      const doc = await project((await create(service, body, alice)).project_id);
      assert.equal(doc.title, 'rocket-arena-2006');
    }
    const doc = await project((await create(service, { preview_hash: hash, title: 'Rocket Night' }, alice)).project_id);
    assert.equal(doc.title, 'Rocket Night');
  });

  test('a project is its owner\'s: anyone else gets the same 404 as for an unknown id', async () => {
    const created = await create(service, { preview_hash: hash }, alice);
    const path = `/api-rbxl/projects/${created.project_id}`;
    const other = await getJson(service, path, as('mallory'));
    const unknown = await getJson(service, '/api-rbxl/projects/p_aaaaaaaaaaaaaaaaaaaa', as('mallory'));
    assertErrorBody(other.status, other.text, 404, 'not_found');
    assert.equal(other.text, unknown.text);
    const anonymous = await getJson(service, path, {});
    assertErrorBody(anonymous.status, anonymous.text, 401, 'unauthorized');
  });
});

describe('dedupe of a second upload', () => {
  let service: Service;

  before(async () => {
    // No memory cache, so what the disk store holds is what a second upload gets.
    service = await startService({ previewCacheBytes: 0 });
  });
  after(() => service.close());

  test('a second upload reuses the stored analysis and adds its user', async () => {
    const bytes = variant('dedupe');
    const first = await analyze(service, bytes, 'first.rbxl', as('ann'));
    const previewJson = join(service.dataDir, 'previews', `${first.preview_hash}.json`);
    const placeFile = join(service.dataDir, 'previews', `${first.preview_hash}.place`);
    const placeBefore = await stat(placeFile);
    // Mark the stored report: a decode would produce a report without the mark.
    const stored = JSON.parse(await readFile(previewJson, 'utf8'));
    stored.report.stored_mark = 'kept';
    await writeFile(previewJson, JSON.stringify(stored));

    const second = await analyze(service, bytes, 'second.rbxl', as('ben'));
    assert.equal(second.preview_hash, first.preview_hash);
    assert.equal(second.report.stored_mark, 'kept', 'the file was analysed again');
    // Each uploader sees the name they gave the file, never an earlier uploader's.
    assert.equal(first.report.file_name, 'first.rbxl');
    assert.equal(second.report.file_name, 'second.rbxl');
    const after = JSON.parse(await readFile(previewJson, 'utf8'));
    assert.deepEqual(after.uploaders, ['ann', 'ben']);
    const placeAfter = await stat(placeFile);
    assert.equal(placeAfter.ino, placeBefore.ino);
    assert.equal(placeAfter.mtimeMs, placeBefore.mtimeMs);
    assert.deepEqual(await uploadsIn(service), []);

    // Both may create from it now.
    for (const user of ['ann', 'ben']) {
      const created = await create(service, { preview_hash: first.preview_hash }, as(user));
      const doc = await getJson(service, `/api-rbxl/projects/${created.project_id}`, as(user));
      assert.equal(doc.body.owner, user);
      const own = user === 'ann' ? 'first' : 'second';
      assert.equal(doc.body.title, own, 'the default title comes from this user\'s file name');
      assert.equal(doc.body.source.file_name, `${own}.rbxl`);
    }
  });

  test('create takes each script\'s finding codes from the stored analysis; a preview without them is scanned again', async () => {
    const first = await analyze(service, variant('codes'), 'codes.rbxl', as('cy'));
    const previewJson = join(service.dataDir, 'previews', `${first.preview_hash}.json`);
    const stored = JSON.parse(await readFile(previewJson, 'utf8'));
    assert.equal(stored.scriptCodes.bits.length, MAP_SCRIPTS.length);
    const findingsByPath = async (): Promise<string[][]> => {
      const created = await create(service, { preview_hash: first.preview_hash }, as('cy'));
      const doc = await getJson(service, `/api-rbxl/projects/${created.project_id}`, as('cy'));
      return (doc.body.scripts as PackedScript[])
        .map((script) => [script.path, ...(unpack(script.code).meta.findings as string[])])
        .sort((a, b) => a.join().localeCompare(b.join()));
    };
    const fromAnalysis = await findingsByPath();
    assert.ok(fromAnalysis.some((entry) => entry.length > 1), 'the place has scripts with findings');

    const rewrite = async (scriptCodes: unknown): Promise<void> => {
      await writeFile(previewJson, JSON.stringify({ ...stored, scriptCodes }));
    };
    // Stored before codes were kept: every script is scanned, with the same result.
    await rewrite(undefined);
    assert.deepEqual(await findingsByPath(), fromAnalysis);
    // Codes another scanner found, or that do not fit the map (another length, bits no code has), are not trusted either.
    const { scanner, bits } = stored.scriptCodes as { scanner: string; bits: number[] };
    for (const wrong of [{ scanner: 'older', bits }, { scanner, bits: [] }, { scanner, bits: [...bits, 0] }, { scanner, bits: bits.map(() => 1 << 20) }, bits, 'x']) {
      await rewrite(wrong);
      assert.deepEqual(await findingsByPath(), fromAnalysis, JSON.stringify(wrong).slice(0, 40));
    }
    // Codes that fit are what the packed scripts carry (a marker no scan gives: dynamic_code everywhere).
    await rewrite({ scanner, bits: bits.map(() => 1 << FINDING_CODES.indexOf('dynamic_code')) });
    assert.ok((await findingsByPath()).every(([, ...codes]) => codes.length === 1 && codes[0] === 'dynamic_code'));
  });

  test('the same file uploaded by two users at once: one preview, both may create', async () => {
    const bytes = variant('at-once');
    const [a, b] = await Promise.all([analyze(service, bytes, 'x.rbxl', as('cat')), analyze(service, bytes, 'x.rbxl', as('dan'))]);
    assert.equal(a.preview_hash, b.preview_hash);
    assert.equal(a.preview_hash, sha256(bytes));
    for (const user of ['cat', 'dan']) await create(service, { preview_hash: a.preview_hash }, as(user));
  });
});

describe('owner isolation', () => {
  let service: Service;

  before(async () => {
    service = await startService();
  });
  after(() => service.close());

  test('only an uploader may create; for anyone else the 404 is the one an unknown hash gets', async () => {
    const { preview_hash: hash } = await analyze(service, variant('isolation'), 'mine.rbxl', as('amy'));
    const theirs = await postJson(service, CREATE, { preview_hash: hash }, as('bob'));
    const unknown = await postJson(service, CREATE, { preview_hash: 'ab'.repeat(32) }, as('bob'));
    const malformed = await postJson(service, CREATE, { preview_hash: 'not-a-hash' }, as('bob'));
    const theirsError = await expectError(theirs, 404, 'not_found');
    const unknownError = await expectError(unknown, 404, 'not_found');
    const malformedError = await expectError(malformed, 404, 'not_found');
    assert.equal(theirsError.text, unknownError.text);
    assert.equal(malformedError.text, unknownError.text);
    // amy still can.
    await create(service, { preview_hash: hash }, as('amy'));
  });
});

describe('authentication', () => {
  test('development: X-Auth-Override wins over X-User-Id; X-User-Id alone works', async () => {
    const service = await startService({ authMode: 'development' });
    try {
      const headers = { 'X-Auth-Override': 'ann', 'X-User-Id': 'bob' };
      const { preview_hash: hash } = await analyze(service, variant('dev'), 'dev.rbxl', headers);
      await expectError(await postJson(service, CREATE, { preview_hash: hash }, as('bob')), 404);
      const created = await create(service, { preview_hash: hash }, { 'X-Auth-Override': 'ann' });
      const doc = await getJson(service, `/api-rbxl/projects/${created.project_id}`, as('ann'));
      assert.equal(doc.body.owner, 'ann');
      const byUserId = await analyze(service, variant('dev-2'), 'dev.rbxl', as('carl'));
      await create(service, { preview_hash: byUserId.preview_hash }, as('carl'));
    } finally {
      await service.close();
    }
  });

  test('gateway: only X-User-Id counts; X-Auth-Override alone is 401', async () => {
    const service = await startService({ authMode: 'gateway' });
    try {
      const overrideOnly = { 'X-Auth-Override': 'eve' };
      await expectError(await upload(service, variant('gw'), 'gw.rbxl', overrideOnly), 401, 'unauthorized');
      await expectError(await postJson(service, CREATE, { preview_hash: 'ab'.repeat(32) }, overrideOnly), 401, 'unauthorized');
      const { preview_hash: hash } = await analyze(service, variant('gw'), 'gw.rbxl', { 'X-User-Id': 'gina', 'X-Auth-Override': 'hal' });
      await expectError(await postJson(service, CREATE, { preview_hash: hash }, { 'X-User-Id': 'hal', 'X-Auth-Override': 'gina' }), 404);
      const created = await create(service, { preview_hash: hash }, { 'X-User-Id': 'gina', 'X-Auth-Override': 'hal' });
      const doc = await getJson(service, `/api-rbxl/projects/${created.project_id}`, as('gina'));
      assert.equal(doc.body.owner, 'gina');
      assert.deepEqual(await uploadsIn(service), []);
    } finally {
      await service.close();
    }
  });

  test('no user is 401 on every route but health, which needs none', async () => {
    const service = await startService();
    try {
      // A token alone is not a user: the service does not read tokens.
      const tokenOnly = { Authorization: 'Bearer a.eyJpZCI6IjEyMyJ9.c' };
      await expectError(await upload(service, PLACE, PLACE_NAME, tokenOnly), 401, 'unauthorized');
      // Present but blank: not an id (uWS trims the blanks, so it arrives empty).
      await expectError(await upload(service, PLACE, PLACE_NAME, { 'X-User-Id': '   ' }), 400, 'invalid_user');
      await expectError(await postJson(service, CREATE, { preview_hash: 'ab'.repeat(32) }, {}), 401, 'unauthorized');
      const project = await getJson(service, '/api-rbxl/projects/p_aaaaaaaaaaaaaaaaaaaa', {});
      assertErrorBody(project.status, project.text, 401, 'unauthorized');
      const health = await getJson(service, HEALTH, {});
      assert.equal(health.status, 200);
      assert.equal(health.body.status, 'ok');
      assert.deepEqual(await uploadsIn(service), []);
    } finally {
      await service.close();
    }
  });
});
