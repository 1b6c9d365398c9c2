import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CONFORMANCE_DIR, PLACES_DIR, REPO_ROOT, TEST_FILES_DIR } from './support/paths.js';
import { conformanceDiff } from './support/conformance.js';
import { createHash } from 'node:crypto';
import { readInstances } from '../src/project/reader.js';

const run = promisify(execFile);
const CLI = join(REPO_ROOT, 'dist/src/cli/main.js');

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { maxBuffer: 256 << 20 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

test('dump --chunks prints the conformance chunk view', async () => {
  const vector = JSON.parse(readFileSync(join(CONFORMANCE_DIR, 'three-unique-parts.json'), 'utf8'));
  const { code, stdout } = await cli('dump', '--chunks', join(CONFORMANCE_DIR, vector.file));
  assert.equal(code, 0);
  const { file: _file, ...expected } = vector;
  const { warnings: _warnings, ...actual } = JSON.parse(stdout);
  assert.equal(conformanceDiff(expected, actual), null);
});

test('dump prints the DOM of binary and XML copies alike, in the document encoding', async () => {
  const binary = JSON.parse((await cli('dump', join(TEST_FILES_DIR, 'three-nested-folders.rbxm'))).stdout);
  const xml = JSON.parse((await cli('dump', join(TEST_FILES_DIR, 'three-nested-folders.rbxmx'))).stdout);
  assert.equal(binary.format, 'binary');
  assert.equal(xml.format, 'xml');
  for (const dump of [binary, xml]) {
    assert.deepEqual(dump.instances.map((i: { class: string }) => i.class), ['Folder', 'Folder', 'Folder']);
    // Parents first, each parent an earlier instance's id; one root.
    const seen = new Set<string>();
    for (const instance of dump.instances as { id: string; parent: string | null }[]) {
      if (instance.parent !== null) assert.ok(seen.has(instance.parent));
      seen.add(instance.id);
    }
    assert.equal(dump.instances.filter((i: { parent: string | null }) => i.parent === null).length, 1);
    assert.equal(dump.classes.Folder.properties.Name, 'String');
    const read = [...readInstances(dump)];
    assert.equal(read[0]!.properties.get('Name')?.value, dump.instances[0].name);
  }
  assert.deepEqual(binary.instances.map((i: { name: string }) => i.name), xml.instances.map((i: { name: string }) => i.name));
});

test('dump of a real place writes valid JSON with non-finite floats as strings', async () => {
  const { code, stdout } = await cli('dump', join(PLACES_DIR, 'rocket-arena-2006.rbxl'));
  assert.equal(code, 0);
  const dump = JSON.parse(stdout);
  assert.equal(dump.instances.length, 1993);
  assert.equal([...readInstances(dump)].length, 1993);
});

test('project writes the version 2 document offline: every asset not downloaded, the script mode applied', async () => {
  const place = join(PLACES_DIR, 'roblox-statemachine-demo.rbxl');
  const { code, stdout, stderr } = await cli('project', place, '--scripts', 'skip');
  assert.equal(code, 0, stderr);
  const doc = JSON.parse(stdout);
  assert.equal(doc.version, 2);
  assert.equal(doc.scripts_mode, 'skip');
  assert.deepEqual(doc.scripts, []);
  assert.equal(doc.source.file_name, 'roblox-statemachine-demo.rbxl');
  assert.equal(doc.source.preview_hash, createHash('sha256').update(readFileSync(place)).digest('hex'));
  assert.ok(doc.assets.length > 0);
  assert.ok(doc.assets.every((a: { ok: boolean; reason: string }) => !a.ok && a.reason === 'not_downloaded'));
  const disabled = JSON.parse((await cli('project', place)).stdout);
  assert.equal(disabled.scripts_mode, 'disabled');
  assert.equal(disabled.scripts.length, 19);
  for (const [args, pattern] of [[['project', place, '--scripts', 'nope'], /scripts_mode must be one of/], [['project'], /exactly one FILE/]] as const) {
    const bad = await cli(...args);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, pattern);
  }
});

test('bad input: exit code 2 and one line naming what and where, no stack trace', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rbxl-cli-'));
  try {
    const truncated = join(dir, 'cut.rbxl');
    writeFileSync(truncated, readFileSync(join(PLACES_DIR, 'slime-defense.rbxl')).subarray(0, 5000));
    const notPlace = join(dir, 'notes.txt');
    writeFileSync(notPlace, 'hello');
    for (const [args, pattern] of [
      [['dump', truncated], /chunk|byte offset/],
      [['dump', '--chunks', notPlace], /not a Roblox place/],
      [['dump', join(dir, 'missing.rbxl')], /cannot read/],
      [['dump'], /exactly one FILE/],
      [['frobnicate'], /unknown command/],
    ] as const) {
      const { code, stderr } = await cli(...args);
      assert.equal(code, 2, `${args.join(' ')}: ${stderr}`);
      assert.match(stderr.split('\n')[0]!, pattern);
      assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
