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

// ---------- filters, --pretty, streaming, help ----------

test('dump --pretty is the same JSON indented by two spaces', async () => {
  const file = join(PLACES_DIR, 'rocket-arena-2006.rbxl');
  const plain = await cli('dump', file);
  const pretty = await cli('dump', '--pretty', file);
  assert.equal(pretty.code, 0, pretty.stderr);
  assert.equal(pretty.stdout, JSON.stringify(JSON.parse(plain.stdout), null, 2) + '\n');
});

test('dump --class and --path keep the instances that pass every filter, in file order', async () => {
  const file = join(PLACES_DIR, 'rocket-arena-2006.rbxl');
  const all = JSON.parse((await cli('dump', file)).stdout) as { format: string; instances: { referent: number; class: string; name: string; parent: number | null }[] };
  const byRef = new Map(all.instances.map((instance) => [instance.referent, instance]));
  const fullName = (instance: { name: string; parent: number | null }): string =>
    instance.parent === null ? instance.name : `${fullName(byRef.get(instance.parent)!)}.${instance.name}`;

  const scripts = JSON.parse((await cli('dump', '--class', 'Script', file)).stdout) as typeof all;
  assert.equal(scripts.format, all.format);
  assert.deepEqual(scripts.instances, all.instances.filter((instance) => instance.class === 'Script'));
  assert.equal(scripts.instances.length, 15);

  const prefix = 'StarterPack.Multirocket';
  const subtree = JSON.parse((await cli('dump', '--path', prefix, file)).stdout) as typeof all;
  const expected = all.instances.filter((instance) => fullName(instance) === prefix || fullName(instance).startsWith(`${prefix}.`));
  assert.ok(expected.length > 2);
  assert.deepEqual(subtree.instances, expected, 'the instance and its descendants');
  // A prefix is a whole name: Workspace.Regen is not Workspace.Regenerate Castle.
  const regen = JSON.parse((await cli('dump', '--path', 'Workspace.Regen', file)).stdout) as typeof all;
  assert.ok(all.instances.some((instance) => fullName(instance) === 'Workspace.Regenerate Castle'));
  assert.deepEqual(regen.instances.map(fullName), all.instances.map(fullName).filter((name) => name === 'Workspace.Regen' || name.startsWith('Workspace.Regen.')));

  const both = await cli('dump', '--pretty', '--path', 'StarterPack', '--class', 'Script', '--class', 'LocalScript', file);
  const expectedBoth = all.instances.filter((instance) => ['Script', 'LocalScript'].includes(instance.class) && fullName(instance).startsWith('StarterPack.'));
  assert.equal(both.stdout, JSON.stringify({ format: all.format, instances: expectedBoth }, null, 2) + '\n');

  for (const flags of [[], ['--pretty']]) {
    const none = await cli('dump', ...flags, '--class', 'NoSuchClass', file);
    assert.equal(none.code, 0);
    assert.equal(none.stdout, JSON.stringify({ format: all.format, instances: [] }, null, flags.length ? 2 : undefined) + '\n');
  }
  const usage = await cli('dump', '--chunks', '--class', 'Part', file);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /^rbxl-import dump: --chunks prints the chunk view/);
});

test('dump output is streamed in pieces that join to the whole document', async () => {
  const { decode } = await import('../src/parser/index.js');
  const { dumpPieces } = await import('../src/cli/dump.js');
  const dom = decode(readFileSync(join(PLACES_DIR, 'rocket-arena-2006.rbxl')));
  for (const pretty of [false, true]) {
    const pieces = [...dumpPieces(dom, { pretty, classes: ['Part'], paths: [] }, 4096)];
    assert.ok(pieces.length > 10, `${pieces.length} pieces: never one string`);
    assert.ok(pieces.slice(0, -1).every((piece) => piece.length < 4096 + 8192), 'each piece about the asked size');
    const whole = JSON.parse(pieces.join(''));
    assert.equal(pieces.join(''), JSON.stringify(whole, null, pretty ? 2 : undefined) + '\n');
    assert.ok(whole.instances.length > 100 && whole.instances.every((instance: { class: string }) => instance.class === 'Part'));
  }
});

test('help: the overview lists every command with its options; every command takes --help', async () => {
  const overview = await cli('help');
  assert.equal(overview.code, 0);
  for (const text of ['rbxl-import import FILE...', '--scripts MODE', '--json', '--dev-user ID', 'rbxl-import dump FILE', '--pretty', '--class NAME', '--path PREFIX', '--chunks', 'rbxl-import mesh FILE', '--gltf OUT.glb', 'rbxl-import gltf FILE OUT.glb', 'rbxl-import serve', 'rbxl-import help']) {
    assert.ok(overview.stdout.includes(text), `the overview names ${text}`);
  }
  assert.equal((await cli('--help')).stdout, overview.stdout);
  const bare = await cli();
  assert.equal(bare.code, 2, 'no command is a usage error');
  assert.equal(bare.stderr, overview.stdout);
  for (const command of ['import', 'dump', 'gltf', 'mesh', 'serve']) {
    const own = await cli(command, '--help');
    assert.equal(own.code, 0, `${command} --help: ${own.stderr}`);
    assert.match(own.stdout, new RegExp(`^Usage: rbxl-import ${command}\\b`));
    assert.equal((await cli('help', command)).stdout, own.stdout);
  }
  assert.match((await cli('dump', '-h')).stdout, /--path PREFIX/);
  assert.match((await cli('mesh', '--help')).stdout, /--gltf OUT\.glb/);
  const unknown = await cli('help', 'frobnicate');
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown command "frobnicate"/);
});
