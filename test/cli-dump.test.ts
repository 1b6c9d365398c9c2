import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CONFORMANCE_DIR, PLACES_DIR, REPO_ROOT, TEST_FILES_DIR } from './support/paths.js';
import { conformanceDiff } from './support/conformance.js';

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

test('dump prints the DOM of binary and XML copies alike', async () => {
  const binary = JSON.parse((await cli('dump', join(TEST_FILES_DIR, 'three-nested-folders.rbxm'))).stdout);
  const xml = JSON.parse((await cli('dump', join(TEST_FILES_DIR, 'three-nested-folders.rbxmx'))).stdout);
  assert.equal(binary.format, 'binary');
  assert.equal(xml.format, 'xml');
  for (const dump of [binary, xml]) {
    assert.deepEqual(dump.instances.map((i: { class: string }) => i.class), ['Folder', 'Folder', 'Folder']);
    const byRef = new Map(dump.instances.map((i: { referent: number }) => [i.referent, i]));
    const names = dump.instances.map((i: { name: string; parent: number | null }) => {
      const parent = i.parent === null ? null : (byRef.get(i.parent) as { name: string }).name;
      return `${parent}>${i.name}`;
    });
    assert.equal(names.length, 3);
    assert.equal(dump.instances.filter((i: { parent: number | null }) => i.parent === null).length, 1);
    assert.deepEqual(dump.instances[0].properties.Name, { type: 'String', value: dump.instances[0].name });
  }
});

test('dump of a real place writes valid JSON with non-finite floats as strings', async () => {
  const { code, stdout } = await cli('dump', join(PLACES_DIR, 'rocket-arena-2006.rbxl'));
  assert.equal(code, 0);
  const dump = JSON.parse(stdout);
  assert.equal(dump.instances.length, 1993);
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
