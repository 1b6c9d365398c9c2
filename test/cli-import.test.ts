/**
 * `rbxl-import import` end to end: the built CLI as a child process, and runImport in-process
 * where a terminal is needed (questions, the progress line), against the real service.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { runImport, parseScriptsModeAnswer, type FileResult } from '../src/cli/import.js';
import { PLACES_DIR, REPO_ROOT, TEST_FILES_DIR } from './support/paths.js';
import { startTestService, tokenFor, type TestService } from './support/server.js';

const CLI = join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');
const WITH_SCRIPTS = join(PLACES_DIR, 'rocket-arena-2006.rbxl');
const OBBY = join(PLACES_DIR, 'roblox-obby-template.rbxl');
const NO_SCRIPTS = join(TEST_FILES_DIR, 'baseplate-413.rbxl');
const NO_SCRIPTS_XML = join(TEST_FILES_DIR, 'baseplate-413.rbxlx');
const NOT_A_PLACE = join(TEST_FILES_DIR, 'README.md');

const pattern = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'import', ...args], {
      cwd: REPO_ROOT,
      // Only what the CLI needs: no inherited RBXL_IMPORT_* that could point elsewhere.
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.stdin.end();
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A writable that keeps what it is given, optionally claiming to be a terminal. */
function capture(isTTY: boolean, onText?: (text: string) => void): Writable & { isTTY: boolean; columns: number; text(): string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      onText?.(String(chunk));
      done();
    },
  });
  return Object.assign(stream, { isTTY, columns: 100, text: () => chunks.join('') });
}

describe('rbxl-import import', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService();
  });
  after(() => service?.close());

  const token = (id: number) => tokenFor({ id });

  async function scriptsOf(projectId: string, userId: number): Promise<{ code: string }[]> {
    const response = await fetch(`${service.url}/api-rbxl/projects/${encodeURIComponent(projectId)}`, {
      headers: { 'X-User-Id': String(userId) },
    });
    assert.equal(response.status, 200);
    return ((await response.json()) as { scripts: { code: string }[] }).scripts;
  }

  test('imports one file and prints the summary, the project id and where it opens', async () => {
    const run = await cli([WITH_SCRIPTS, '--base-url', service.url, '--token', token(601), '--scripts', 'skip', '--title', 'Arena']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, new RegExp(`^${pattern(WITH_SCRIPTS)}, [\\d.]+ KB, binary$`, 'm'), 'files are named as given');
    assert.match(run.stdout, /scripts 15\b/);
    assert.match(run.stdout, /instances [\d,]+/);
    const created = /created project (\S+) \(scripts skip\)/.exec(run.stdout);
    assert.ok(created, run.stdout);
    const projectId = created[1]!;
    assert.match(run.stdout, new RegExp(`open: ${service.url}/\\S*${projectId}`));
    assert.deepEqual(await scriptsOf(projectId, 601), []);
    assert.equal(run.stderr, '', 'stderr is not a terminal: no progress line, no question');
  });

  test('takes the service address and token from the environment; without --scripts and a terminal, scripts stay disabled', async () => {
    const run = await cli([WITH_SCRIPTS, '--json'], { RBXL_IMPORT_URL: service.url, RBXL_IMPORT_TOKEN: token(602) });
    assert.equal(run.code, 0, run.stderr);
    const { results } = JSON.parse(run.stdout) as { results: FileResult[] };
    const [result] = results;
    assert.ok(result?.ok);
    assert.equal(result.scripts_mode, 'disabled');
    const scripts = await scriptsOf(result.project_id, 602);
    assert.equal(scripts.length, 15);
    for (const script of scripts) {
      const metadata = JSON.parse(script.code.split('\n')[1]!) as { enabled: boolean };
      assert.equal(metadata.enabled, false);
    }
  });

  test('a file that is not a place fails with a sentence, what to do, the client message as details, and a non-zero exit', async () => {
    const run = await cli([NOT_A_PLACE, '--base-url', service.url, '--token', token(603)]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, new RegExp(`^${pattern(NOT_A_PLACE)}: This file is not a Roblox map the importer can read\\.$`, 'm'));
    assert.match(run.stderr, /^ {2}Choose a \.rbxl, \.rbxlx, \.rbxm or \.rbxmx file/m);
    assert.match(run.stderr, /^ {2}details: analyze failed \(422\): \{.*"error".*\}$/m);
    assert.doesNotMatch(run.stdout, /created project/);
  });

  test('without credentials the refusal says to sign in, with the client message as details', async () => {
    const run = await cli([NO_SCRIPTS, '--base-url', service.url]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /baseplate-413\.rbxl: The service does not know who you are\.\n {2}Sign in/);
    assert.match(run.stderr, /details: analyze failed \(401\): /);
  });

  test('--dev-user signs in on a development service, with any id the service takes (spaces inside too)', async () => {
    for (const user of ['cli-dev', 'cli dev']) {
      const run = await cli([NO_SCRIPTS, '--base-url', service.url, '--dev-user', user, '--json']);
      assert.equal(run.code, 0, run.stderr);
      const [result] = (JSON.parse(run.stdout) as { results: FileResult[] }).results;
      assert.ok(result?.ok);
      const response = await fetch(`${service.url}/api-rbxl/projects/${result.project_id}`, { headers: { 'X-User-Id': user } });
      assert.equal(response.status, 200, 'the project belongs to the development user');
    }
  });

  test('bulk import with --json: every file in order, failures beside successes', async () => {
    const files = [WITH_SCRIPTS, NO_SCRIPTS, NOT_A_PLACE, OBBY, NO_SCRIPTS_XML, join(TEST_FILES_DIR, 'missing.rbxl')];
    const run = await cli([...files, '--base-url', service.url, '--token', token(604), '--json', '--concurrency', '3']);
    assert.equal(run.code, 1, 'one file failed');
    const document = JSON.parse(run.stdout) as { base_url: string; results: FileResult[] };
    assert.equal(document.base_url, service.url);
    assert.deepEqual(document.results.map((result) => result.file), files);
    assert.deepEqual(document.results.map((result) => result.ok), [true, true, false, true, true, false]);

    const failed = document.results[2]!;
    assert.ok(!failed.ok);
    assert.equal(failed.stage, 'analyze');
    assert.equal(failed.status, 422);
    assert.match(failed.error, /^analyze failed \(422\): /);
    const missing = document.results[5]!;
    assert.ok(!missing.ok);
    assert.equal(missing.stage, 'read');

    const projectIds = new Set<string>();
    for (const result of document.results) {
      if (!result.ok) continue;
      assert.match(result.preview_hash, /^[0-9a-f]{64}$/);
      assert.equal(typeof result.report.scripts_total, 'number');
      assert.ok(result.redirect.includes(result.project_id));
      assert.equal(result.assets_downloaded + result.assets_failed, result.report.assets_total ?? result.assets_downloaded + result.assets_failed);
      projectIds.add(result.project_id);
    }
    assert.equal(projectIds.size, 4);
    // The binary and XML copies of the same baseplate are different uploads with the same content.
    assert.equal(document.results[1]?.ok && document.results[1].report.scripts_total, 0);
    assert.equal(document.results[4]?.ok && document.results[4].report.scripts_total, 0);
    assert.match(run.stderr, /README\.md: This file is not a Roblox map/);
    assert.match(run.stderr, /details: analyze failed \(422\)/);
    // Everything the service answered is in --json: the whole create answer, asset failures included.
    for (const result of document.results) {
      if (!result.ok) continue;
      assert.ok(Array.isArray(result.asset_failures), 'asset_failures is carried');
      assert.equal(result.asset_failures.length, result.assets_failed);
    }
  });

  test('usage errors exit 2 with one line', async () => {
    const cases: string[][] = [
      [],
      [WITH_SCRIPTS, '--scripts', 'sometimes'],
      [WITH_SCRIPTS, '--concurrency', '0'],
      [WITH_SCRIPTS, '--concurrency', 'many'],
      [WITH_SCRIPTS, '--base-url', 'ftp://127.0.0.1/'],
      // Each of these failed every file as "The service could not be reached" (exit 1).
      [WITH_SCRIPTS, '--base-url', 'http://user:secret@127.0.0.1:1/'],
      [WITH_SCRIPTS, '--base-url', 'http://127.0.0.1:1/?x=1'],
      [WITH_SCRIPTS, '--base-url', 'http://127.0.0.1:6000/'],
      [WITH_SCRIPTS, '--token', 'abc\ndef'],
      [WITH_SCRIPTS, '--token', '令牌'],
      [WITH_SCRIPTS, '--frobnicate'],
    ];
    for (const args of cases) {
      const run = await cli(args);
      assert.equal(run.code, 2, args.join(' '));
      assert.equal(run.stdout, '');
      assert.equal(run.stderr.trimEnd().split('\n').length, 1, run.stderr);
      assert.match(run.stderr, /^rbxl-import import: /);
    }
    const help = await cli(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Usage: rbxl-import import FILE\.\.\./);
  });

  test('at a terminal it asks for the script mode, only for files with scripts, and shows upload progress', async () => {
    const stdin = Object.assign(new PassThrough(), { isTTY: true });
    const stdout = capture(false);
    // Answer each question once it has been asked: first something invalid, then "e".
    let asked = 0;
    const stderr = capture(true, (text) => {
      if (!text.startsWith('Script mode for')) return;
      asked++;
      stdin.write(asked === 1 ? 'maybe\n' : 'e\n');
    });
    const code = await runImport([NO_SCRIPTS, WITH_SCRIPTS, '--base-url', service.url, '--token', token(605), '--json'], {
      stdin,
      stdout,
      stderr,
      env: {},
    });
    assert.equal(code, 0, stderr.text());
    const questions = stderr.text().match(/Script mode for (\S+)/g) ?? [];
    assert.deepEqual(questions, [`Script mode for ${WITH_SCRIPTS}`, `Script mode for ${WITH_SCRIPTS}`], 'asked only for the file with scripts, again after a bad answer');
    assert.match(stderr.text(), /Please answer enabled, disabled or skip/);
    assert.match(stderr.text(), /\[[#-]{24}\] \d+%/, 'a progress line was drawn');
    const { results } = JSON.parse(stdout.text()) as { results: FileResult[] };
    assert.deepEqual(results.map((result) => result.ok && result.scripts_mode), ['disabled', 'enabled']);
    const scripts = await scriptsOf((results[1] as Extract<FileResult, { ok: true }>).project_id, 605);
    assert.equal(scripts.length, 15);
  });

  test('at a terminal, --scripts settles the mode without asking, and end of input takes the recommended mode', async () => {
    const quiet = { stdin: Object.assign(new PassThrough(), { isTTY: true }), stdout: capture(false), stderr: capture(false), env: {} };
    assert.equal(await runImport([WITH_SCRIPTS, '--base-url', service.url, '--token', token(606), '--scripts', 'enabled'], quiet), 0);
    assert.doesNotMatch(quiet.stderr.text(), /Script mode/);
    assert.match(quiet.stdout.text(), /\(scripts enabled\)/);

    const ended = { stdin: Object.assign(new PassThrough(), { isTTY: true }), stdout: capture(false), stderr: capture(false), env: {} };
    ended.stdin.end();
    assert.equal(await runImport([WITH_SCRIPTS, '--base-url', service.url, '--token', token(606)], ended), 0);
    assert.ok(ended.stderr.text().includes(`Script mode for ${WITH_SCRIPTS}`));
    // The 2006 arena's loops all yield: the recommendation (and so the default answer) is enabled.
    assert.match(ended.stdout.text(), /recommended: enabled — No script has a loop that can freeze the game/);
    assert.match(ended.stdout.text(), /\(scripts enabled\)/);
  });
});

test('script mode answers: empty is the default, prefixes count, anything else asks again', () => {
  assert.equal(parseScriptsModeAnswer(''), 'disabled');
  assert.equal(parseScriptsModeAnswer('  \t'), 'disabled');
  assert.equal(parseScriptsModeAnswer('E'), 'enabled');
  assert.equal(parseScriptsModeAnswer('skip'), 'skip');
  assert.equal(parseScriptsModeAnswer('dis'), 'disabled');
  assert.equal(parseScriptsModeAnswer('never'), null);
  assert.equal(parseScriptsModeAnswer('skipped'), null);
  assert.equal(parseScriptsModeAnswer('', 'enabled'), 'enabled', 'Enter takes the recommended mode');
});
