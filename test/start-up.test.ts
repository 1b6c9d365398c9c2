/**
 * Starting the service: what cannot work stops the start with one line naming the
 * setting (exit 2), never a stack trace, a hang, or a second instance quietly sharing
 * the port.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { configFromEnv, ConfigError, defaultConfig, defaultWorkers, MAX_UPLOAD_BYTES_LIMIT } from '../src/config.js';
import { memoryBudget } from '../src/service/budget.js';
import { startServer, type RunningServer } from '../src/http/server.js';
import { uwsFallbackReason } from '../src/http/uws-build.js';
import { prepareDataDir } from '../src/store/data-dir.js';
import { REPO_ROOT } from './support/paths.js';
import { HEALTH, startService } from './support/service.js';

const MAIN = join(REPO_ROOT, 'dist', 'src', 'main.js');

/** Runs `npm start`'s entry point with `env`; resolves with its exit code and output once it ends (killed after `ms`). */
function runMain(env: Record<string, string>, ms = 20_000, as?: { uid: number; gid: number }): Promise<{ code: number | null; stdout: string; stderr: string; killed: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN], { env: { PATH: process.env.PATH ?? '', WORKERS: '1', LOG: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'], ...as });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString('utf8'); });
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString('utf8'); });
    let killed = false;
    const timer = setTimeout(() => { killed = true; child.kill('SIGKILL'); }, ms);
    child.on('error', reject);
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr, killed }); });
  });
}

async function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'rbxl-start-'));
}

/** A port free a moment ago (the kernel shares a port given by `port: 0` differently, so the test names one). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

test('a second instance on a port in use stops with one line; the first keeps the port and serves on', async () => {
  const first = await startService({ port: await freePort() });
  const otherData = await tempDir();
  try {
    const second = await startServer({ host: '127.0.0.1', port: first.port, dataDir: otherData, log: false, workers: 1 }).catch((error: unknown) => error);
    if (!(second instanceof Error)) {
      await (second as RunningServer).close(0);
      assert.fail('a second instance started on the port in use');
    }
    assert.ok(second instanceof ConfigError && second.message.startsWith(`cannot listen on 127.0.0.1:${first.port}: the port is in use`), String(second));
    // Every connection still reaches the first instance (a shared port split them between the two).
    for (let i = 0; i < 8; i++) {
      const health = await (await fetch(`${first.url}${HEALTH}`)).json() as { store: { location: string } };
      assert.equal(health.store.location, `disk:${join(first.dataDir, 'objects')}`);
    }
    const run = await runMain({ PORT: String(first.port), DATA_DIR: otherData });
    assert.equal(run.killed, false, 'the refused process ends by itself');
    assert.equal(run.code, 2);
    assert.equal(run.stderr, `rbxl-import: cannot listen on 127.0.0.1:${first.port}: the port is in use, or HOST is not an address of this machine (HOST, PORT)\n`);
    assert.equal(run.stdout, '');
  } finally {
    await first.close();
    await rm(otherData, { recursive: true, force: true });
  }
});

test('DATA_DIR: created level by level; a file in its way, or a path that cannot be made, stops the start with one line', async () => {
  const dir = await tempDir();
  try {
    const nested = join(dir, 'a', 'b', 'c');
    await prepareDataDir(nested);
    assert.ok((await stat(nested)).isDirectory());
    await prepareDataDir(nested); // an existing directory is fine

    const file = join(dir, 'file');
    await writeFile(file, 'x');
    for (const target of [file, join(file, 'below')]) {
      await assert.rejects(prepareDataDir(target), (error: unknown) =>
        error instanceof ConfigError && error.message === `DATA_DIR ${JSON.stringify(target)} cannot be used: ${file} is not a directory`);
    }
    // Node's recursive mkdir never returns for a path under /proc.
    if (existsSync('/proc/self')) {
      await assert.rejects(prepareDataDir('/proc/rbxl-import-test/data'), (error: unknown) =>
        error instanceof ConfigError && /^DATA_DIR "\/proc\/rbxl-import-test\/data" cannot be used: \/proc\/rbxl-import-test cannot be created \(E[A-Z]+\)$/.test(error.message));
    }

    const run = await runMain({ PORT: '0', DATA_DIR: file });
    assert.equal(run.killed, false);
    assert.equal(run.code, 2);
    assert.equal(run.stderr, `rbxl-import: DATA_DIR ${JSON.stringify(file)} cannot be used: ${file} is not a directory\n`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('DATA_DIR: a folder the service keeps there that cannot be made (a file in its place, a file system refusing it) stops the start with one line', async () => {
  const dir = await tempDir();
  try {
    await prepareDataDir(dir, ['uploads', 'objects']);
    assert.ok((await stat(join(dir, 'objects'))).isDirectory());
    for (const folder of ['uploads', 'objects', 'mirror', 'assets']) {
      const data = join(dir, `with-${folder}-file`);
      await mkdir(data);
      await writeFile(join(data, folder), 'x');
      const run = await runMain({ PORT: '0', DATA_DIR: data });
      assert.equal(run.killed, false);
      assert.equal(run.code, 2, run.stderr);
      assert.equal(run.stderr, `rbxl-import: DATA_DIR ${JSON.stringify(data)} cannot be used: ${join(data, folder)} is not a directory\n`);
    }
    // /sys refuses a new folder even to root, whom the writable check lets through.
    if (existsSync('/sys/kernel')) {
      await assert.rejects(prepareDataDir('/sys/kernel', ['uploads']), (error: unknown) =>
        error instanceof ConfigError && /^DATA_DIR "\/sys\/kernel" cannot be used: (it cannot be written|\/sys\/kernel\/uploads cannot be created) \(E[A-Z]+\)$/.test(error.message));
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('DATA_DIR: a folder the service keeps there that it cannot write (a volume first used as root) stops the start with one line', async () => {
  const dir = await tempDir();
  try {
    const data = join(dir, 'data');
    await mkdir(data);
    await mkdir(join(data, 'uploads'), { mode: 0o555 });
    await chmod(join(data, 'uploads'), 0o555);
    // Root writes anywhere: then the service runs as nobody (as the image's user would), over a DATA_DIR
    // it owns whose `uploads` stays root's, as a container run as root leaves its volume.
    const root = process.getuid?.() === 0;
    if (root) {
      await chmod(dir, 0o755);
      await chown(data, 65_534, 65_534);
      await chmod(join(data, 'uploads'), 0o755);
    }
    const run = await runMain({ PORT: '0', DATA_DIR: data }, 20_000, root ? { uid: 65_534, gid: 65_534 } : undefined);
    assert.equal(run.killed, false, 'the refused process ends by itself');
    assert.equal(run.code, 2, run.stderr);
    assert.equal(run.stderr, `rbxl-import: DATA_DIR ${JSON.stringify(data)} cannot be used: ${join(data, 'uploads')} cannot be written (EACCES)\n`);
    assert.equal(run.stdout, '');
  } finally {
    await chmod(join(dir, 'data', 'uploads'), 0o755).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
});

test('a start with ten workers or more (the default on an 11-core host) writes no leak warning', async () => {
  const dataDir = await tempDir();
  try {
    const child = spawn(process.execPath, [MAIN], {
      env: { PATH: process.env.PATH ?? '', PORT: '0', DATA_DIR: dataDir, WORKERS: '10', MAX_MEMORY_MB: '2048', AUTH_MODE: 'gateway' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString('utf8'); });
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no start within 30 s: ${stderr}`)), 30_000);
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
        if (stdout.includes('"msg":"listening"')) { clearTimeout(timer); resolve(); }
      });
    }).catch((error: unknown) => { child.kill('SIGKILL'); throw error; });
    await new Promise((resolve) => setTimeout(resolve, 500)); // a warning is written on the next tick
    child.kill('SIGTERM');
    assert.equal(await closed, 0);
    assert.match(stderr, /^rbxl-import: import page at http:\/\/127\.0\.0\.1:\d+\/api-rbxl\/\n$/);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('an embedded service without an environment (defaultConfig) takes no more workers than its default budget holds', () => {
  // A 1 GiB container on a 16-core host: the default budget is 512 MiB, which holds two workers.
  const config = defaultConfig({ cores: 16, maxMemoryMb: 512 });
  assert.equal(config.workers, 2);
  assert.doesNotThrow(() => memoryBudget(config));
  assert.equal(defaultConfig({ cores: 16, maxMemoryMb: 65_536 }).workers, 15);
  assert.equal(defaultConfig({ cores: 1, maxMemoryMb: 65_536 }).workers, 1);
});

test('WORKERS unset: the cores but one, no more than the memory budget holds, so a container with a few GiB on a host of many cores starts', () => {
  const cache = 64 * 1024 * 1024;
  // A 1 GiB container on a 16-core host (Node counts the host's cores): MAX_MEMORY_MB's default is 512.
  assert.equal(defaultWorkers(15, 512, cache), 2);
  assert.equal(defaultWorkers(31, 2048, cache), 15);
  assert.equal(defaultWorkers(1, 12_000, cache), 1);
  assert.equal(defaultWorkers(15, 256, cache), 1); // not one fits: the budget's own check says so at start
  for (let cores = 1; cores <= 128; cores++) {
    for (let mb = 512; mb <= 16_384; mb += 256) {
      const workers = defaultWorkers(cores, mb, cache);
      assert.ok(workers >= 1 && workers <= cores);
      assert.doesNotThrow(() => memoryBudget({ maxMemoryMb: mb, workers, previewCacheBytes: cache }), `${cores} cores, ${mb} MiB`);
    }
  }
  assert.ok(configFromEnv({ MAX_MEMORY_MB: '512' }).workers <= 2);
  // Set, WORKERS is taken as it is (and a budget that cannot hold it stops the start with one line).
  assert.equal(configFromEnv({ MAX_MEMORY_MB: '512', WORKERS: '8' }).workers, 8);
  assert.throws(() => memoryBudget({ maxMemoryMb: 512, workers: 8, previewCacheBytes: cache }), ConfigError);
});

test('a budget refused with MAX_MEMORY_MB unset says it was not set and what it defaulted to; set, it quotes the value', () => {
  // No host holds 100,000 workers: the refusal comes from configFromEnv, which knows MAX_MEMORY_MB was not given.
  assert.throws(() => configFromEnv({ WORKERS: '100000' }), (error: Error) =>
    error instanceof ConfigError && /^MAX_MEMORY_MB, not set, defaults to \d+ \(half the memory of this host or container\), which leaves 0 MiB to each of 100000 workers/.test(error.message));
  // Set, the value is the operator's own: the start refuses it in their words.
  const config = configFromEnv({ WORKERS: '100000', MAX_MEMORY_MB: '4096' });
  assert.throws(() => memoryBudget(config), (error: Error) => error instanceof ConfigError && /^MAX_MEMORY_MB=4096 leaves/.test(error.message));
});

test('MAX_UPLOAD_BYTES past what a request can carry (a Content-Length under 1e9) stops the start: /config would promise the page more', () => {
  assert.equal(MAX_UPLOAD_BYTES_LIMIT, 999_934_463);
  assert.equal(configFromEnv({ MAX_UPLOAD_BYTES: String(MAX_UPLOAD_BYTES_LIMIT) }).maxUploadBytes, MAX_UPLOAD_BYTES_LIMIT);
  for (const value of [String(MAX_UPLOAD_BYTES_LIMIT + 1), '1000000000', '2000000000']) {
    assert.throws(() => configFromEnv({ MAX_UPLOAD_BYTES: value }), (error: unknown) =>
      error instanceof ConfigError && error.message === `MAX_UPLOAD_BYTES must be an integer from 1 to ${MAX_UPLOAD_BYTES_LIMIT}, got "${value}"`);
  }
});

test('an asset URL that is not http(s) stops the start with one line naming the variable', () => {
  for (const name of ['ASSET_DELIVERY_URL', 'ASSET_URL_TEMPLATE']) {
    for (const value of ['notaurl{id}', 'ftp://assets.example/{id}', 'file:///srv/{id}']) {
      assert.throws(() => configFromEnv({ [name]: value }), (error: unknown) =>
        error instanceof ConfigError && error.message === `${name} must be an http or https URL containing {id}, got ${JSON.stringify(value)}`);
    }
    assert.doesNotThrow(() => configFromEnv({ [name]: 'http://127.0.0.1:8080/asset/{id}' }));
  }
});

test('`rbxl-import serve` exits 2 on a configuration it cannot use, as `npm start` does', async () => {
  const cli = join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');
  for (const entry of [MAIN, cli]) {
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(process.execPath, entry === cli ? [cli, 'serve'] : [entry], { env: { PATH: process.env.PATH ?? '', PORT: 'abc' }, stdio: 'ignore' });
      child.on('error', reject);
      child.on('close', resolve);
    });
    assert.equal(code, 2, entry);
  }
});

test('LOG is 1 or 0; anything else stops the start', () => {
  assert.equal(configFromEnv({}).log, true);
  assert.equal(configFromEnv({ LOG: '1' }).log, true);
  assert.equal(configFromEnv({ LOG: '0' }).log, false);
  for (const value of ['off', 'false', 'no', '00']) {
    assert.throws(() => configFromEnv({ LOG: value }), (error: unknown) =>
      error instanceof ConfigError && error.message === `LOG must be 1 (a JSON line per request) or 0 (none), got ${JSON.stringify(value)}`);
  }
});

test('the start refuses uWebSockets.js\'s JavaScript fallback, whatever made the loader take it', async () => {
  const native = ['/app/node_modules/uWebSockets.js/src/uws.js', '/app/node_modules/uWebSockets.js/binaries/uws_linux_x64_115.node'];
  const fallback = ['/app/node_modules/uWebSockets.js/src/uws.js', '/app/node_modules/uWebSockets.js/dist/index.js'];
  assert.equal(uwsFallbackReason(native, '20.20.0', 'linux-x64'), null);
  assert.match(uwsFallbackReason(fallback, '22.12.0', 'linux-x64') ?? '', /^uWebSockets\.js loaded its JavaScript fallback, not a native build, on Node 22\.12\.0 \(linux-x64\)/);
  // The package's own switch makes its loader take the fallback here: the start stops with one line.
  const dataDir = await tempDir();
  try {
    const run = await runMain({ PORT: '0', DATA_DIR: dataDir, UWS_USE_FALLBACK: '1' });
    assert.equal(run.killed, false);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /^rbxl-import: uWebSockets\.js loaded its JavaScript fallback, not a native build, on Node [\d.]+ \([a-z0-9]+-[a-z0-9]+\); the service cannot serve on it: run it on Node 20 with glibc 2\.27 or newer\n$/);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('a store that is down at start still lets the instance look after its own disk: stale partial downloads go, the disk\'s room is measured', async () => {
  const dataDir = await tempDir();
  try {
    const stale = join(dataDir, 'assets', 'tmp', 'left-by-a-dead-process.part');
    await mkdir(dirname(stale), { recursive: true });
    await writeFile(stale, 'x');
    const old = new Date(Date.now() - 3_600_000);
    await utimes(stale, old, old);
    const server = await startServer({
      host: '127.0.0.1', port: 0, dataDir, log: false, workers: 1, maxDataBytes: 123_456,
      store: {
        kind: 's3', bucket: 'down', prefix: '', endpoint: 'http://127.0.0.1:9', forcePathStyle: true, region: 'us-east-1',
        credentials: { accessKeyId: 'a', secretAccessKey: 'b' }, conditionalWrites: 'on', timeoutMs: 500, maxAttempts: 1, partSize: 8 << 20,
      },
    });
    try {
      const health = await fetch(`${server.url}${HEALTH}`);
      assert.equal(health.status, 503);
      const body = await health.json() as { storage: { max_bytes: number } };
      assert.equal(body.storage.max_bytes, 123_456);
      assert.equal(existsSync(stale), false);
    } finally {
      await server.close(0);
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
