/**
 * `rbxl-import import` against a service that answers badly: every answer ends in a
 * clean line per file (the rest of the files go on), nothing the service says reaches
 * the terminal as a control sequence, and no answer can exhaust the client's memory.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { runImport, terminalSafe } from '../src/cli/import.js';
import { ClientError, createClient } from '../src/client/index.js';
import { describeFailure } from '../src/client/explain.js';
import { MAX_ANSWER_BYTES } from '../src/client/transport.js';
import { CLI } from './support/cli.js';
import { PLACES_DIR } from './support/paths.js';

const PLACE = join(PLACES_DIR, 'rocket-arena-2006.rbxl');
const ESCAPES = '\u001b]0;pwned\u0007\u001b[2J\u009b31m';
const HASH = 'a'.repeat(64);

type Answer = (req: IncomingMessage, res: ServerResponse) => void;

/** What the fake service answers to analyze and to create; each test sets them. */
let onAnalyze: Answer;
let onCreate: Answer;
/** What a create's progress poll gets: no progress to show, unless a test says otherwise. */
let onProgress: Answer = (_req, res) => { res.writeHead(404).end(); };
let server: Server;
let baseUrl: string;

before(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url?.endsWith('/analyze')) onAnalyze(req, res);
      else if (req.url?.endsWith('/create')) onCreate(req, res);
      else if (req.url?.includes('/import/rbxl/create/')) onProgress(req, res);
      else { res.writeHead(404).end(); }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  baseUrl = `http://127.0.0.1:${address.port}`;
});
after(() => {
  server.closeAllConnections();
  return new Promise<void>((resolve) => server.close(() => resolve()));
});

const json = (status: number, body: unknown): Answer => (_req, res) => {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};

function report(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { scripts_total: 0, format: 'binary', file_name: 'x.rbxl', file_size: 1, instances_total: 1, imported: {}, not_imported: [], warnings: [], scripts_at_risk: [], ...overrides };
}

/** runImport in-process with captured streams and no terminal. */
async function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const sink = (into: string[]) => Object.assign(new Writable({ write(chunk, _e, done) { into.push(String(chunk)); done(); } }), { isTTY: false, columns: 80 });
  const stdin = Object.assign(new Writable(), { isTTY: false });
  const code = await runImport([...args, '--base-url', baseUrl, '--scripts', 'disabled'], { stdout: sink(out), stderr: sink(err), stdin: stdin as never, env: {} });
  return { code, stdout: out.join(''), stderr: err.join('') };
}

test('control sequences in what the service says are written escaped, in the report, the created project and errors', async () => {
  onAnalyze = json(200, {
    preview_hash: HASH,
    report: report({ format: ESCAPES, not_imported: [{ class: ESCAPES, count: 1, reason: ESCAPES }], warnings: [ESCAPES] }),
  });
  onCreate = json(200, { project_id: `p_${ESCAPES}`, redirect: `/x${ESCAPES}`, assets_downloaded: 0, assets_failed: 1, asset_failures: [{ id: '1', reason: ESCAPES }] });
  const ok = await run([PLACE]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.ok(ok.stdout.includes('pwned'), 'the text is shown');
  // eslint-disable-next-line no-control-regex -- what must not reach the terminal
  assert.doesNotMatch(ok.stdout + ok.stderr, /[\u001b\u0007\u009b]/);
  assert.ok(ok.stdout.includes('\\u001b]0;pwned\\u0007'), ok.stdout);

  onAnalyze = json(400, { error: { code: ESCAPES, message: ESCAPES } });
  const refused = await run([PLACE]);
  assert.equal(refused.code, 1);
  // eslint-disable-next-line no-control-regex -- what must not reach the terminal
  assert.doesNotMatch(refused.stderr, /[\u001b\u0007\u009b]/);
  // JSON output stays JSON, with the same text.
  onAnalyze = json(200, { preview_hash: HASH, report: report({ warnings: [ESCAPES] }) });
  onCreate = json(200, { project_id: 'p_x', redirect: '/x', assets_downloaded: 0, assets_failed: 0 });
  const asJson = await run([PLACE, '--json']);
  // eslint-disable-next-line no-control-regex -- what must not reach the terminal
  assert.doesNotMatch(asJson.stdout, /[\u001b\u0007\u009b]/);
  assert.deepEqual((JSON.parse(asJson.stdout) as { results: { report: { warnings: string[] } }[] }).results[0]!.report.warnings, [ESCAPES]);
  assert.equal(terminalSafe('a\nb\tc\u0000\u007f\u0085'), 'a\nb\tc\\u0000\\u007f\\u0085');
});

test('an answer of a shape the client cannot read fails its file with one sentence; the next file goes on', async () => {
  let calls = 0;
  onAnalyze = (req, res) => { calls++; json(200, calls === 1 ? { preview_hash: HASH, report: null } : { preview_hash: HASH, report: report() })(req, res); };
  onCreate = json(200, { project_id: 'p_x', redirect: '/x', assets_downloaded: 0, assets_failed: 0 });
  const result = await run([PLACE, PLACE, '--concurrency', '1']);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /rocket-arena-2006\.rbxl: The service answered, but not as this client expects\.\n.*\n {2}details: analyze failed \(200\): the answer is not an object with a preview_hash and a report: /);
  // Past that first check, a shape it still cannot read fails its file the same way.
  calls = 0;
  onAnalyze = json(200, { preview_hash: HASH, report: report({ scripts_at_risk: [null], scripts_total: 1 }) });
  const deeper = await run([PLACE]);
  assert.equal(deeper.code, 1);
  assert.match(deeper.stderr, /the service's answer has a shape this client cannot read \(/);
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'a stack trace');
  assert.match(result.stdout, /1 of 2 files imported, 1 failed/);
});

test('a flood of an answer stops at MAX_ANSWER_BYTES with a clean error; a long error body is shown cut to one line', async () => {
  onAnalyze = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const piece = Buffer.alloc(1 << 20, 0x20);
    let sent = 0;
    const more = (): void => {
      while (sent <= MAX_ANSWER_BYTES + (4 << 20)) {
        sent += piece.length;
        if (!res.write(piece)) { res.once('drain', more); return; }
      }
      res.end();
    };
    res.on('close', () => { sent = Infinity; });
    more();
  };
  const flooded = await run([PLACE]);
  assert.equal(flooded.code, 1);
  assert.match(flooded.stderr, /analyze failed \(200\): the answer is larger than the client reads \(64 MiB\)/);

  onAnalyze = (_req, res) => { res.writeHead(500, { 'content-type': 'text/html' }).end('<p>oops</p>\n'.repeat(10_000)); };
  const long = await run([PLACE]);
  assert.equal(long.code, 1);
  assert.ok(long.stderr.split('\n').length <= 5, long.stderr.slice(0, 300));
  assert.match(long.stderr, /more characters\)/);
});

test('a long not_imported list is shown cut in the terminal (--json has it whole)', async () => {
  const entries = Array.from({ length: 1000 }, (_, i) => ({ class: `K${i}`, count: 1, reason: 'unknown type' }));
  onAnalyze = json(200, { preview_hash: HASH, report: report({ not_imported: entries }) });
  onCreate = json(200, { project_id: 'p_x', redirect: '/x', assets_downloaded: 0, assets_failed: 0 });
  const result = await run([PLACE]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /K19 ×1 \(unknown type\); … and 980 mores? \(--json has them all\)/);
  assert.doesNotMatch(result.stdout, /K20 /);
});

test('a service error code or asset reason named like an Object member is not taken as advice', () => {
  for (const code of ['constructor', '__proto__', 'toString']) {
    const failure = describeFailure(Object.assign(new Error('x'), { status: 400, body: JSON.stringify({ error: { code, message: 'm' } }) }), 'analyze');
    assert.equal(failure.message, `The service refused the request (${code}): m.`);
  }
});

test('a progress poll the service never answers does not keep the command running once the import is done', async () => {
  onAnalyze = json(200, { preview_hash: HASH, report: report() });
  // The create answers after some polls have been sent; the poll in flight then never gets an answer.
  onCreate = (req, res) => { setTimeout(() => json(200, { project_id: 'p_x', redirect: '/x', assets_downloaded: 0, assets_failed: 0 })(req, res), 400); };
  let polls = 0;
  onProgress = () => { polls++; };
  try {
    const started = Date.now();
    const exit = await new Promise<{ code: number | null; signal: string | null; stdout: string }>((resolve) => {
      const child = execFile(process.execPath, [CLI, 'import', PLACE, '--base-url', baseUrl, '--scripts', 'disabled'], { timeout: 20_000 }, (_error, stdout) => resolve({ code: child.exitCode, signal: child.signalCode, stdout }));
    });
    assert.ok(polls >= 1, 'a poll was sent');
    assert.match(exit.stdout, /created project p_x/);
    assert.equal(exit.signal, null, 'the command had to be killed');
    assert.equal(exit.code, 0);
    assert.ok(Date.now() - started < 10_000, `the command took ${Date.now() - started} ms`);
  } finally {
    onProgress = (_req, res) => { res.writeHead(404).end(); };
  }
});

test('a create progress of another shape is not shown: at a terminal it crashed the command while another file was analysed', async () => {
  let analyses = 0;
  onAnalyze = (req, res) => { setTimeout(() => json(200, { preview_hash: HASH, report: report() })(req, res), ++analyses === 1 ? 0 : 700); };
  onCreate = (req, res) => { setTimeout(() => json(200, { project_id: 'p_x', redirect: '/x', assets_downloaded: 0, assets_failed: 0 })(req, res), 1500); };
  const client = createClient({ baseUrl, token: 't' });
  try {
    for (const body of [{ phase: 'assets' }, { phase: 'assets', assets_done: '1', assets_total: 2, assets_failed: 0 }, null, []]) {
      onProgress = json(200, body);
      await assert.rejects(client.createProgress('c'.repeat(16)), (error: unknown) => error instanceof ClientError && /not a create's progress/.test(error.message));
    }
    onProgress = json(200, { phase: 'assets' });
    const err: string[] = [];
    const stderr = Object.assign(new Writable({ write(chunk, _e, done) { err.push(String(chunk)); done(); } }), { isTTY: true, columns: 100 });
    const stdout = Object.assign(new Writable({ write(_chunk, _e, done) { done(); } }), { isTTY: false });
    const stdin = Object.assign(new Writable(), { isTTY: false });
    const code = await runImport([PLACE, PLACE, '--base-url', baseUrl, '--scripts', 'disabled', '--concurrency', '1'], { stdout, stderr, stdin: stdin as never, env: {} });
    assert.equal(code, 0, err.join(''));
    assert.equal(analyses, 2);
  } finally {
    onProgress = (_req, res) => { res.writeHead(404).end(); };
  }
});

test('a created project whose counts or asset failures have other types is still reported created, never as a failed file', async () => {
  onAnalyze = json(200, { preview_hash: HASH, report: report() });
  for (const extra of [
    { assets_downloaded: null, assets_failed: null },
    {},
    { assets_downloaded: 1, assets_failed: 2, asset_failures: [null, 7, { id: '9', reason: 'not_found' }] },
  ]) {
    onCreate = json(200, { project_id: 'p_made', redirect: '/x', ...extra });
    const result = await run([PLACE]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /created project p_made \(scripts disabled\)/);
    assert.doesNotMatch(result.stderr, /cannot read/);
  }
});
