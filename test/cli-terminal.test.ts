/**
 * `rbxl-import import` at a real terminal: the built CLI run under a pseudo-terminal
 * (util-linux `script`), against the real service and a slow asset host on loopback.
 * Without `script` the tests report themselves skipped.
 */
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSlowAssetHost, writeBigPlace, type BigPlace } from './support/big-place.js';
import type { AssetServer } from './support/asset-server.js';
import { PLACES_DIR, REPO_ROOT } from './support/paths.js';
import { startService, type Service } from './support/service.js';

const CLI = join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');
const ARENA = join(PLACES_DIR, 'rocket-arena-2006.rbxl');
const HAVE_SCRIPT = spawnSync('script', ['--version']).status === 0;

/** Runs `command` (a shell line) in a pseudo-terminal, writing `input` to it; the terminal's output with line ends as \n. */
function inTerminal(command: string, input: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', TERM: 'xterm' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (output += text));
    child.stdin.end(input);
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output: output.replace(/\r\n/g, '\n') }));
  });
}

const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

describe('rbxl-import import at a terminal', () => {
  let service: Service;
  let host: AssetServer;
  let place: BigPlace;
  let scratch: string;

  before(async () => {
    if (!HAVE_SCRIPT) return;
    scratch = await mkdtemp(join(tmpdir(), 'rbxl-cli-tty-'));
    place = await writeBigPlace({ parts: 3000, scripts: 600, copies: 50, assets: 80 });
    host = await startSlowAssetHost(30);
    service = await startService({ assetUrlTemplate: host.templateUrl, assetRetries: 0, assetConcurrencyPerCreate: 2 });
  });
  after(async () => {
    await service?.close();
    await host?.close();
    await place?.remove();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  const skip = (t: TestContext) => {
    if (HAVE_SCRIPT) return false;
    t.skip('util-linux script is not installed');
    return true;
  };

  test('progress lines for uploads and creates; files asked about and reported one at a time, in order', async (t) => {
    if (skip(t)) return;
    // The big place is analysed more slowly than the arena, yet comes first everywhere.
    const command = `${quote(process.execPath)} ${quote(CLI)} import ${quote(place.path)} ${quote(ARENA)} --base-url ${service.url} --dev-user tty-user --concurrency 2`;
    const { code, output } = await inTerminal(command, 'disabled\nskip\n');
    assert.equal(code, 0, output);
    // eslint-disable-next-line no-control-regex -- strips the terminal's erase-line escape
    const lines = output.split(/[\r\n]/).map((line) => line.replace(/\x1b\[2K/g, ''));

    assert.ok(lines.some((line) => /^(uploading|analysing) (2 files|\S+) \[[#-]{24}\] \d+% /.test(line)), 'an upload progress line');
    const assets = lines.filter((line) => new RegExp(`^creating ${place.name} \\[[#-]{24}\\] \\d+% assets \\d+/80`).test(line));
    assert.ok(assets.length >= 2, `create progress lines while assets download:\n${lines.filter((l) => l.startsWith('creating')).join('\n')}`);
    const counts = assets.map((line) => Number(/assets (\d+)\//.exec(line)![1]));
    assert.deepEqual(counts, [...counts].sort((a, b) => a - b), 'the asset count only grows');

    const at = (pattern: RegExp): number => {
      const index = lines.findIndex((line) => pattern.test(line));
      assert.ok(index >= 0, `${pattern} in:\n${output}`);
      return index;
    };
    const order = [
      at(new RegExp(`^${place.path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}, [\\d.]+ (KB|MB), binary$`)),
      at(/recommended: disabled — /),
      at(new RegExp(`Script mode for ${place.path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`)),
      at(new RegExp(`: created project p_\\w+ \\(scripts disabled\\)$`)),
      at(/^\s+\d+ assets not_found: Missing: Roblox no longer has these assets/),
      at(new RegExp(`^${ARENA.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}, [\\d.]+ KB, binary$`)),
      at(new RegExp(`Script mode for ${ARENA.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`)),
      at(/: created project p_\w+ \(scripts skip\)$/),
      at(/^2 of 2 files imported$/),
    ];
    assert.deepEqual(order, [...order].sort((a, b) => a - b), `one file at a time, in order:\n${output}`);
    assert.equal(lines.filter((line) => /created project/.test(line)).length, 2);
  });

  test('--json carries everything the service answered, asset_failures included, while the terminal shows progress', async (t) => {
    if (skip(t)) return;
    const out = join(scratch, 'result.json');
    const command = `${quote(process.execPath)} ${quote(CLI)} import ${quote(place.path)} --base-url ${service.url} --dev-user tty-json --scripts enabled --json > ${quote(out)}`;
    const { code, output } = await inTerminal(command, '');
    assert.equal(code, 0, output);
    assert.match(output, /creating \S+ \[[#-]{24}\] \d+% assets \d+\/80/, 'progress on the terminal');
    const { results } = JSON.parse(await readFile(out, 'utf8')) as { results: Record<string, unknown>[] };
    const [result] = results;
    assert.ok(result && result.ok === true);
    const failures = result.asset_failures as { id: string; reason: string }[];
    assert.ok(Array.isArray(failures) && failures.length > 0);
    assert.equal(failures.length, result.assets_failed);
    assert.ok(failures.every((failure) => failure.reason === 'not_found' && /[13579]$/.test(failure.id)), 'the odd ids the slow host refuses');
    assert.equal((result.assets_downloaded as number) + failures.length, 80);
    // The whole analysis and create answer, not a digest.
    const report = result.report as Record<string, unknown>;
    assert.equal(typeof report.scripts_by_finding, 'object');
    assert.equal(report.scripts_total, place.scripts);
    assert.match(result.preview_hash as string, /^[0-9a-f]{64}$/);
    assert.match(result.redirect as string, /^\/api-rbxl\/projects\/p_\w+\/page$/);
  });
});
