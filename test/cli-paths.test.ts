/**
 * File names that are not UTF-8: Node reads arguments as UTF-8 (U+FFFD for the rest), so
 * the CLI opens such a path by its bytes from /proc/self/cmdline. Arguments are passed
 * through `sh -c` and printf, since Node cannot pass non-UTF-8 bytes to a child itself.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI } from './support/cli.js';
import { startTestService, type TestService } from './support/server.js';

const MODEL = '<roblox version="4"><Item class="Part" referent="RBX1"><Properties><string name="Name">P</string>'
  + '<Vector3 name="size"><X>4</X><Y>1</Y><Z>2</Z></Vector3></Properties></Item></roblox>';

const HAS_PROC = (() => {
  try {
    readFileSync('/proc/self/cmdline');
    return true;
  } catch {
    return false;
  }
})();

/** Runs the CLI in `dir` with arguments given as printf formats (`\\377` is the byte 0xFF); `${N}`, since sh reads `$10` as `$1` and a 0. */
function cli(dir: string, ...formats: string[]): { status: number | null; stdout: string; stderr: string } {
  const args = formats.map((_, i) => `"$(printf '%b' "$\{${i + 2}}")"`).join(' ');
  return spawnSync('sh', ['-c', `cd "$1" && exec "$0" "${CLI}" ${args}`, process.execPath, dir, ...formats], { encoding: 'utf8' });
}

/** The same, without blocking: for a run against a service in this process. */
function cliAsync(dir: string, ...formats: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const args = formats.map((_, i) => `"$(printf '%b' "$\{${i + 2}}")"`).join(' ');
  const child = spawn('sh', ['-c', `cd "$1" && exec "$0" "${CLI}" ${args}`, process.execPath, dir, ...formats]);
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') })));
}

const names = (dir: string): Buffer[] => readdirSync(dir, { encoding: 'buffer' });
const named = (dir: string, ...bytes: number[]): boolean => names(dir).some((name) => name.equals(Buffer.from(bytes)));

describe('CLI paths that are not UTF-8', { skip: HAS_PROC ? false : 'no /proc/self/cmdline' }, () => {
  let dir = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rbxl-paths-'));
    writeFileSync(Buffer.concat([Buffer.from(`${dir}/in`), Buffer.from([0xff]), Buffer.from('.rbxmx')]), MODEL);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a file by its bytes', () => {
    const project = cli(dir, 'project', 'in\\0377.rbxmx');
    assert.equal(project.status, 0, project.stderr);
    assert.match(project.stdout, /"format":"xml"/);
    assert.equal(cli(dir, 'dump', 'in\\0377.rbxmx').status, 0);
    // Another byte that reads as the same U+FFFD names another file, which is not there.
    assert.match(cli(dir, 'dump', 'in\\0376.rbxmx').stderr, /ENOENT/);
  });

  it('writes the file it is given, not one named with U+FFFD', () => {
    const gltf = cli(dir, 'gltf', 'in\\0377.rbxmx', 'out\\0377.glb');
    assert.equal(gltf.status, 0, gltf.stderr);
    assert.ok(named(dir, 0x6f, 0x75, 0x74, 0xff, 0x2e, 0x67, 0x6c, 0x62), names(dir).map((name) => name.toString('hex')).join(' '));
    assert.ok(!names(dir).some((name) => name.toString('utf8').includes('\uFFFD') && !name.includes(0xff)), 'no file named with U+FFFD');
  });

  it('import uploads a file by its bytes, named by its UTF-8 reading, and refuses two names that read alike', async () => {
    let service: TestService | undefined;
    try {
      service = await startTestService();
      const run = await cliAsync(dir, 'import', 'in\\0377.rbxmx', '--base-url', service.url, '--dev-user', 'paths', '--scripts', 'skip', '--json');
      assert.equal(run.status, 0, run.stderr + run.stdout);
      const [result] = (JSON.parse(run.stdout) as { results: { ok: boolean; report: { file_name: string } }[] }).results;
      assert.equal(result!.ok, true);
      assert.equal(result!.report.file_name, 'in\uFFFD.rbxmx');
      const alike = await cliAsync(dir, 'import', 'in\\0377.rbxmx', 'in\\0376.rbxmx', '--base-url', service.url, '--dev-user', 'paths');
      assert.equal(alike.status, 2);
      assert.match(alike.stderr, /^rbxl-import import: two arguments read as /);
    } finally {
      await service?.close();
    }
  });

  it('refuses two arguments that read alike rather than write over the input', () => {
    const before = names(dir).length;
    for (const out of ['in\\0376.rbxmx', 'in\\0357\\0277\\0275.rbxmx']) {
      // The second: a U+FFFD typed as such (valid UTF-8) reads as the input's name too.
      const same = cli(dir, 'gltf', 'in\\0377.rbxmx', out);
      assert.equal(same.status, 2, out);
      assert.match(same.stderr, /two arguments read as/);
    }
    assert.equal(names(dir).length, before);
    assert.ok(readFileSync(Buffer.concat([Buffer.from(`${dir}/in`), Buffer.from([0xff]), Buffer.from('.rbxmx')]), 'utf8').startsWith('<roblox'));
  });
});
