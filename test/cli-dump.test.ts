import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { chmodSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CONFORMANCE_DIR, CORPUS_DIR, PLACES_DIR, REPO_ROOT, TEST_FILES_DIR } from './support/paths.js';
import { conformanceDiff } from './support/conformance.js';
import { createHash } from 'node:crypto';
import { readInstances } from '../src/project/reader.js';
import { selectRows } from '../src/cli/dump.js';
import { DomBuilder } from '../src/parser/dom-build.js';
import { arrayColumn } from '../src/parser/columns/column.js';
import { concat, fileHeader, frameChunk } from '../src/parser/writer/chunks.js';
import { encode } from '../src/parser/writer/index.js';

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

test('dump --chunks of a value whose JSON passes the longest string V8 makes is written in pieces (it failed with "Invalid string length")', async () => {
  // 90 M control characters (six JSON characters each) in a file of about 0.4 MB: found by fuzzing.
  const builder = new DomBuilder('binary');
  const table = builder.addTable('StringValue', new Map([['Name', arrayColumn('String', ['v'])], ['Value', arrayColumn('String', ['\x01'.repeat(90_000_000)])]]));
  builder.add(table, -1);
  const dir = mkdtempSync(join(tmpdir(), 'rbxl-dump-huge-'));
  try {
    const file = join(dir, 'huge.rbxm');
    writeFileSync(file, encode(builder.build()));
    assert.ok(readFileSync(file).length < 2_000_000);
    const child = spawn(process.execPath, [CLI, 'dump', '--chunks', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    let bytes = 0;
    let tail = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => { bytes += chunk.length; tail = (tail + chunk.toString('latin1')).slice(-64); });
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    const [code] = await once(child, 'close') as [number];
    assert.equal(code, 0, stderr);
    assert.ok(bytes > 6 * 90_000_000, `${bytes} bytes`);
    assert.match(tail, /\]\}\n$/, 'the whole view, closed');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

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

test('gltf and mesh --gltf: a failed write leaves the file that was there as it was, a folder as output is exit 2, a symlink is written through', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rbxl-cli-out-'));
  try {
    const place = join(PLACES_DIR, 'rocket-arena-2006.rbxl');
    const mesh = join(CORPUS_DIR, 'meshes', 'sphere.mesh');
    const kept = join(dir, 'kept.glb');
    for (const args of [['gltf', place, kept], ['mesh', mesh, '--gltf', kept]]) {
      writeFileSync(kept, 'precious');
      chmodSync(kept, 0o444);
      // Root writes a read-only file anyway; the write is refused for everyone else, as a redirect would be.
      const refused = process.getuid?.() !== 0;
      const written = await cli(...args);
      assert.equal(written.code, refused ? 2 : 0, written.stderr);
      if (refused) {
        assert.match(written.stderr, /cannot write .*kept\.glb: EACCES/);
        assert.equal(readFileSync(kept, 'utf8'), 'precious');
      }
      rmSync(kept, { force: true });
      const folder = await cli(...args.slice(0, -1), dir);
      assert.equal(folder.code, 2, folder.stderr);
      assert.equal(folder.stderr, `rbxl-import: cannot write ${dir}: EISDIR (see rbxl-import help)\n`);
      // A failed write leaves nothing beside its target either.
      assert.deepEqual(readdirSync(dir), []);
    }
    // A symlink is written through, as a redirect writes it: the link stays, its target gets the bytes.
    const target = join(dir, 'target.glb');
    writeFileSync(target, 'old');
    symlinkSync(target, kept);
    assert.equal((await cli('gltf', place, kept)).code, 0);
    assert.ok(lstatSync(kept).isSymbolicLink());
    assert.equal(readFileSync(target).subarray(0, 4).toString('latin1'), 'glTF');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// ---------- filters, --pretty, streaming, help ----------

test('a reader that stops early (| head) ends the command quietly: exit 0, nothing on stderr', async () => {
  const place = join(PLACES_DIR, 'booga.rbxl');
  for (const args of [['dump', place], ['dump', '--chunks', place], ['project', place]]) {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    // The first piece read, the reader goes away, as `head -c` does.
    await once(child.stdout, 'data');
    child.stdout.destroy();
    const [code] = await once(child, 'exit') as [number | null];
    assert.deepEqual([code, stderr], [0, ''], args.join(' '));
  }
});

test('serve outlives its log reader: a closed stdout costs the log (said once on stderr), not the service', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rbxl-serve-pipe-'));
  const child = spawn(process.execPath, [CLI, 'serve'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, WORKERS: '1' } });
  try {
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    while (!/import page at (\S+)\/api-rbxl\//.test(stderr)) await once(child.stderr, 'data');
    const base = /import page at (\S+)\/api-rbxl\//.exec(stderr)![1]!;
    child.stdout.destroy(); // the log reader goes away
    for (let i = 0; i < 3; i++) assert.equal((await fetch(`${base}/api-rbxl/health`)).status, 200, `request ${i} after the log reader left`);
    assert.equal(child.exitCode, null, 'still serving');
    assert.equal(stderr.match(/the request log can no longer be written/g)?.length, 1, stderr);
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit') as [number | null];
    assert.equal(code, 0, 'a clean shutdown');
  } finally {
    child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('serve stops within SHUTDOWN_GRACE_MS: a request still open then is answered 503, and the process exits 0', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rbxl-serve-grace-'));
  const child = spawn(process.execPath, [CLI, 'serve'], {
    stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, WORKERS: '1', SHUTDOWN_GRACE_MS: '500' },
  });
  try {
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    while (!/import page at (\S+)\/api-rbxl\//.test(stderr)) await once(child.stderr, 'data');
    const url = new URL(/import page at (\S+)\/api-rbxl\//.exec(stderr)![1]!);
    // An upload whose body never comes: open until the grace ends.
    const socket = connect(Number(url.port), url.hostname);
    await once(socket, 'connect');
    let answer = '';
    socket.on('data', (chunk: Buffer) => { answer += chunk.toString('latin1'); });
    socket.write('POST /api-rbxl/import/rbxl/analyze HTTP/1.1\r\nHost: localhost\r\nX-User-Id: ann\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n--b\r\n');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const exited = once(child, 'exit') as Promise<[number | null]>;
    child.kill('SIGTERM');
    const [code] = await Promise.race([exited, new Promise<[string]>((resolve) => setTimeout(() => resolve(['still running after 10 s']), 10_000))]);
    assert.equal(code, 0);
    assert.match(answer, /^HTTP\/1\.1 503 /, answer);
    assert.match(answer, /"code":"shutting_down"/);
    socket.destroy();
  } finally {
    child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('dump --pretty is the same JSON indented by two spaces', async () => {
  const file = join(PLACES_DIR, 'rocket-arena-2006.rbxl');
  const plain = await cli('dump', file);
  const pretty = await cli('dump', '--pretty', file);
  assert.equal(pretty.code, 0, pretty.stderr);
  assert.equal(pretty.stdout, JSON.stringify(JSON.parse(plain.stdout), null, 2) + '\n');
});

type DumpInstance = { id: string; class: string; name: string; parent: string | null };
type Dump = { format: string; classes: Record<string, unknown>; shared_strings: string[]; instances: DumpInstance[] };

test('dump --class and --path keep the instances that pass every filter, parents first, each as in the whole dump', async () => {
  const file = join(PLACES_DIR, 'rocket-arena-2006.rbxl');
  const all = JSON.parse((await cli('dump', file)).stdout) as Dump;
  const byId = new Map(all.instances.map((instance) => [instance.id, instance]));
  const fullName = (instance: DumpInstance): string =>
    instance.parent === null ? instance.name : `${fullName(byId.get(instance.parent)!)}.${instance.name}`;
  /** The dump a filter should give: the same header, only the kept instances and their classes' tables. */
  const subset = (kept: DumpInstance[]): Dump => ({
    format: all.format,
    classes: Object.fromEntries(Object.entries(all.classes).filter(([name]) => kept.some((instance) => instance.class === name))),
    shared_strings: all.shared_strings,
    instances: kept,
  });

  const scripts = JSON.parse((await cli('dump', '--class', 'Script', file)).stdout) as Dump;
  assert.deepEqual(scripts, subset(all.instances.filter((instance) => instance.class === 'Script')));
  assert.equal(scripts.instances.length, 15);
  assert.deepEqual(Object.keys(scripts.classes), ['Script']);
  // The filtered dump reads back through the one reader like the whole one.
  assert.equal([...readInstances(scripts as unknown as Parameters<typeof readInstances>[0])].length, 15);

  const prefix = 'StarterPack.Multirocket';
  const subtree = JSON.parse((await cli('dump', '--path', prefix, file)).stdout) as Dump;
  const expected = all.instances.filter((instance) => fullName(instance) === prefix || fullName(instance).startsWith(`${prefix}.`));
  assert.ok(expected.length > 2);
  assert.deepEqual(subtree, subset(expected), 'the instance and its descendants');
  // A prefix is a whole name: Workspace.Regen is not Workspace.Regenerate Castle.
  const regen = JSON.parse((await cli('dump', '--path', 'Workspace.Regen', file)).stdout) as Dump;
  assert.ok(all.instances.some((instance) => fullName(instance) === 'Workspace.Regenerate Castle'));
  assert.deepEqual(regen.instances.map(fullName), all.instances.map(fullName).filter((name) => name === 'Workspace.Regen' || name.startsWith('Workspace.Regen.')));

  const both = await cli('dump', '--pretty', '--path', 'StarterPack', '--class', 'Script', '--class', 'LocalScript', file);
  const expectedBoth = all.instances.filter((instance) => ['Script', 'LocalScript'].includes(instance.class) && fullName(instance).startsWith('StarterPack.'));
  assert.ok(expectedBoth.length > 0);
  assert.equal(both.stdout, JSON.stringify(subset(expectedBoth), null, 2) + '\n');

  for (const flags of [[], ['--pretty']]) {
    const none = await cli('dump', ...flags, '--class', 'NoSuchClass', file);
    assert.equal(none.code, 0);
    assert.equal(none.stdout, JSON.stringify(subset([]), null, flags.length ? 2 : undefined) + '\n');
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
    const text = Buffer.concat(pieces).toString('utf8');
    const whole = JSON.parse(text);
    assert.equal(text, JSON.stringify(whole, null, pretty ? 2 : undefined) + '\n');
    assert.ok(whole.instances.length > 100 && whole.instances.every((instance: { class: string }) => instance.class === 'Part'));
  }
});

test('indentJson lays out JSON split anywhere, even inside a UTF-8 character, as JSON.stringify(…, null, 2)', async () => {
  const { indentJson } = await import('../src/cli/dump.js');
  const value = { a: [], b: {}, c: [1, -0.5, 'x, y: {z}', { d: 'é"\\"ü' }, [[]]], 'k:"': null, e: true };
  const text = Buffer.from(JSON.stringify(value));
  for (const size of [1, 2, 3, 7, text.length]) {
    const pieces: Buffer[] = [];
    for (let at = 0; at < text.length; at += size) pieces.push(text.subarray(at, at + size));
    assert.equal(Buffer.concat([...indentJson(pieces, 16)]).toString('utf8'), JSON.stringify(value, null, 2) + '\n', `pieces of ${size}`);
  }
});

test('help: the overview lists every command with its options; every command takes --help', async () => {
  const overview = await cli('help');
  assert.equal(overview.code, 0);
  for (const text of ['rbxl-import import FILE...', '--scripts MODE', '--json', '--dev-user ID', 'rbxl-import dump FILE', '--pretty', '--class NAME', '--path PREFIX', '--chunks', 'rbxl-import project FILE [--scripts MODE]', 'rbxl-import mesh FILE', '--gltf OUT.glb', 'rbxl-import gltf FILE OUT.glb', 'rbxl-import serve', 'rbxl-import help']) {
    assert.ok(overview.stdout.includes(text), `the overview names ${text}`);
  }
  assert.equal((await cli('--help')).stdout, overview.stdout);
  const bare = await cli();
  assert.equal(bare.code, 2, 'no command is a usage error');
  assert.equal(bare.stderr, overview.stdout);
  for (const command of ['import', 'dump', 'project', 'gltf', 'mesh', 'serve']) {
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

test('--path selects by full name in one walk: a 20,000-deep tree reads each name once, and a dotted name still matches as text', () => {
  const depth = 20_000;
  const builder = new DomBuilder('binary');
  const folders = builder.addTable('Folder', new Map([['Name', arrayColumn('String', Array.from({ length: depth }, (_, i) => (i === 1 ? 'B.C' : `F${i}`)))]]));
  let parent = -1;
  for (let i = 0; i < depth; i++) parent = builder.add(folders, parent);
  const dom = builder.build();
  const name = dom.name.bind(dom);
  let reads = 0;
  dom.name = (row: number) => { reads++; return name(row); };
  const count = (selected: Uint8Array | undefined) => selected!.reduce((sum, bit) => sum + bit, 0);
  // "F0.B.C.F2": a prefix as text, across the name with a dot in it.
  assert.equal(count(selectRows(dom, { classes: [], paths: ['F0.B.C.F2'] })), depth - 2);
  assert.equal(count(selectRows(dom, { classes: [], paths: ['F0.B'] })), depth - 1, 'F0.B.C starts with F0.B and a dot');
  assert.equal(count(selectRows(dom, { classes: [], paths: ['F0.B.C.F2.F3.F4', 'F0.B.C.F2.F3.F4.F5.F6'] })), depth - 4);
  assert.equal(count(selectRows(dom, { classes: [], paths: ['F0.X'] })), 0);
  assert.ok(reads <= 4 * 10, `${reads} names read`); // names are read only down to the longest prefix
});

test('an error naming what a file holds is one harmless terminal line: escape sequences, line breaks and bidi controls come out as \\u escapes', async () => {
  // Names from the file end up in decode errors: a property named with an escape sequence
  // that retitles the window and clears the screen, and a line break that would forge a second line.
  const hostile = '\x1b]0;PWNED\x07\x1b[2J\nrbxl-import: all good\u202e';
  const u32 = (n: number) => { const b = Buffer.alloc(4); b.writeUInt32LE(n); return b; };
  const str = (s: string) => { const b = Buffer.from(s, 'utf8'); return Buffer.concat([u32(b.length), b]); };
  const inst = Buffer.concat([u32(0), str('Part'), Buffer.from([0]), u32(1), Buffer.alloc(4)]);
  const prop = Buffer.concat([u32(0), str(hostile), Buffer.from([0x0e])]); // a Vector3 with no values: the decode fails naming it
  const binary = concat([fileHeader(1, 1), ...frameChunk('INST', inst, false), ...frameChunk('PROP', prop, false), ...frameChunk('END', Buffer.from('</roblox>'), false)]);
  const xml = '<roblox version="4"><Item class="Part"><Properties><Vector3 name="&#x1b;]0;PWNED&#x7;&#x1b;[2J&#xa;rbxl-import: all good&#x202e;"><X>1</X></Vector3></Properties></Item></roblox>';
  const dir = mkdtempSync(join(tmpdir(), 'rbxl-cli-escape-'));
  try {
    writeFileSync(join(dir, 'hostile.rbxl'), binary);
    writeFileSync(join(dir, 'hostile.rbxlx'), xml);
    for (const file of ['hostile.rbxl', 'hostile.rbxlx']) {
      for (const command of [['dump'], ['project'], ['gltf', join(dir, 'out.glb')]] as const) {
        const { code, stderr } = await cli(command[0], join(dir, file), ...command.slice(1));
        assert.equal(code, 2, `${command[0]} ${file}: ${stderr}`);
        assert.match(stderr, /^rbxl-import: [^\n]*\n$/, `${command[0]} ${file}: one line`);
        assert.ok(stderr.includes('\\u001b]0;PWNED\\u0007\\u001b[2J\\u000arbxl-import: all good\\u202e'), `${command[0]} ${file}: ${stderr}`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
