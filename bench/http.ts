/**
 * `npm run bench:http`: concurrent analyze uploads of small, medium and large places
 * against the service (uWebSockets.js) and, in the same run, against a node:http +
 * busboy server doing the same work (bench/baseline-server.ts). Each server runs in
 * its own child process; this process only sends. Prints requests/s, MB/s, p50/p99
 * latency and peak RSS for both, and the ratio; then the health route's latency
 * while four large places are analysed at once.
 *
 * `BENCH_STORE=s3 npm run bench:http`: the store mode instead. The service on the disk
 * store and on an S3 store (s3rver on loopback, in its own process), side by side in one
 * run: requests/s and p50/p99 of analyze (every upload new bytes) and of create (from one
 * preview, assets not downloaded), and what S3 adds per create.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { Pool, type Dispatcher } from 'undici';
import { fmt, generatedInput, machine, SHARED, table, type Input } from './support.js';
import { join } from 'node:path';

interface Running { child: ChildProcess; url: string; dataDir: string }

type Impl = 'uws' | 'node' | 'before';
const BEFORE = process.env.BENCH_BEFORE;
const LABELS: Record<Impl, string> = { uws: 'uWebSockets.js service', node: 'node:http + busboy', before: `uWebSockets.js service, before (${BEFORE})` };

async function launch(impl: Impl, env: Record<string, string> = {}): Promise<Running> {
  // BENCH_BEFORE=<dir>: the same service from another checkout's build, in the same run (before/after).
  const script = impl === 'before' ? join(BEFORE!, 'dist/bench/http-server.js') : fileURLToPath(new URL('./http-server.js', import.meta.url));
  const child = spawn(process.execPath, [script, impl === 'before' ? 'uws' : impl], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${impl} server exited with ${code}`)));
  });
  const { url, dataDir } = JSON.parse(line) as { url: string; dataDir: string };
  return { child, url, dataDir };
}

async function stop(server: Running): Promise<void> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGTERM');
  await exited;
  rmSync(server.dataDir, { recursive: true, force: true });
}

/** Peak resident set of a process so far (Linux VmHWM), in MB. */
function peakRssMb(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

function multipart(bytes: Uint8Array, name: string): { body: Buffer; contentType: string } {
  const boundary = `----rbxlbench${randomBytes(8).toString('hex')}`;
  // Bytes after END are ignored by decoders, so a random tail makes every upload a new file (no dedupe).
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return { body: Buffer.concat([head, bytes, randomBytes(16), tail]), contentType: `multipart/form-data; boundary=${boundary}` };
}

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

type Send = (pool: Pool) => Promise<Dispatcher.ResponseData>;

/** Sends `requests` requests made by `send`, `concurrency` at a time; requests/s, latency percentiles and mean, failures. */
async function run(url: string, requests: number, concurrency: number, send: Send) {
  const pool = new Pool(url, { connections: concurrency, pipelining: 1 });
  const latencies: number[] = [];
  let failures = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < requests) {
      next++;
      const t = performance.now();
      const res = await send(pool);
      await res.body.arrayBuffer();
      if (res.statusCode !== 200) failures++;
      latencies.push(performance.now() - t);
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  latencies.sort((a, b) => a - b);
  const mean = latencies.reduce((sum, value) => sum + value, 0) / latencies.length;
  return { rps: requests / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), mean, failures };
}

/** Analyze uploads of `input`, each with new bytes. */
async function load(url: string, input: Input, requests: number, concurrency: number) {
  const result = await run(url, requests, concurrency, (pool) => {
    const { body, contentType } = multipart(input.bytes, `${input.name}.rbxl`);
    return pool.request({ path: '/api-rbxl/import/rbxl/analyze', method: 'POST', body, headers: { 'content-type': contentType, 'x-user-id': 'bench' } });
  });
  return { ...result, mbps: (requests * input.bytes.length) / 1e6 / (requests / result.rps) };
}

/** Health latency sampled every 20 ms while `parallel` large analyses run. */
async function healthUnderLoad(url: string, input: Input, parallel: number) {
  const pool = new Pool(url, { connections: parallel + 1 });
  let busy = true;
  const uploads = Promise.all(Array.from({ length: parallel }, async () => {
    const { body, contentType } = multipart(input.bytes, 'large.rbxl');
    const res = await pool.request({ path: '/api-rbxl/import/rbxl/analyze', method: 'POST', body, headers: { 'content-type': contentType, 'x-user-id': 'bench' } });
    await res.body.arrayBuffer();
  })).finally(() => { busy = false; });
  const latencies: number[] = [];
  while (busy) {
    const t = performance.now();
    const res = await pool.request({ path: '/api-rbxl/health', method: 'GET' });
    await res.body.arrayBuffer();
    latencies.push(performance.now() - t);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await uploads;
  await pool.close();
  latencies.sort((a, b) => a - b);
  return { samples: latencies.length, p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.at(-1) ?? NaN };
}

/** Creates from one preview, `concurrency` at a time (the place's assets are not downloaded: no credentials). */
function createLoad(url: string, previewHash: string, requests: number, concurrency: number) {
  return run(url, requests, concurrency, (pool) => pool.request({
    path: '/api-rbxl/import/rbxl/create', method: 'POST', body: JSON.stringify({ preview_hash: previewHash, scripts_mode: 'disabled' }),
    headers: { 'content-type': 'application/json', 'x-user-id': 'bench' },
  }));
}

async function analyzeOnce(url: string, input: Input): Promise<string> {
  const { body, contentType } = multipart(input.bytes, 'bench.rbxl');
  const res = await fetch(`${url}/api-rbxl/import/rbxl/analyze`, { method: 'POST', body: new Uint8Array(body), headers: { 'content-type': contentType, 'x-user-id': 'bench' } });
  const answer = (await res.json()) as { preview_hash: string };
  return answer.preview_hash;
}

async function storeMode(): Promise<void> {
  const { startS3Server, S3_TEST_ENV } = await import('../test/support/s3-server.js');
  const s3 = await startS3Server({ reportRequests: false });
  const stores: [string, Record<string, string>][] = [
    ['disk', {}],
    ['S3 (s3rver on loopback)', { ...S3_TEST_ENV, STORE_URL: `s3://${s3.bucket}/bench`, S3_ENDPOINT: s3.endpoint }],
  ];
  const small: Input = { name: 'slime-defense.rbxl', bytes: readFileSync(join(SHARED, 'corpus/places/slime-defense.rbxl')) };
  const medium: Input = { name: 'booga.rbxl', bytes: readFileSync(join(SHARED, 'corpus/places/booga.rbxl')) };
  const requests = Number(process.env.BENCH_REQUESTS ?? 120);
  const rows: (string | number)[][] = [];
  const creates = new Map<string, { mean: number; p50: number; p99: number }[]>();
  // Both orders, so neither store always runs on a warmer (or busier) machine.
  for (const [name, env] of [...stores, ...[...stores].reverse()]) {
    const server = await launch('uws', env);
    for (const input of [small, medium]) {
      await load(server.url, input, 10, 8); // warm-up
      const analyzed = await load(server.url, input, requests, 8);
      rows.push([name, 'analyze', input.name, 8, fmt(analyzed.rps), fmt(analyzed.p50), fmt(analyzed.p99), analyzed.failures]);
      const hash = await analyzeOnce(server.url, input);
      await createLoad(server.url, hash, 8, 4); // warm-up
      const created = await createLoad(server.url, hash, Math.round(requests / 2), 4);
      rows.push([name, 'create', input.name, 4, fmt(created.rps), fmt(created.p50), fmt(created.p99), created.failures]);
      creates.set(`${name} ${input.name}`, [...(creates.get(`${name} ${input.name}`) ?? []), created]);
      process.stderr.write(`${name} ${input.name}: analyze ${fmt(analyzed.rps)} req/s, create ${fmt(created.rps)} req/s\n`);
    }
    await stop(server);
  }
  await s3.close();
  process.stdout.write(`\nHTTP benchmark, disk store against S3 store, on ${machine()} (each store run twice, in both orders)\n\n`);
  process.stdout.write(table(['store', 'request', 'input', 'concurrency', 'req/s', 'p50 ms', 'p99 ms', 'failed'], rows) + '\n\n');
  const average = (list: { mean: number; p50: number }[], key: 'mean' | 'p50'): number => list.reduce((sum, item) => sum + item[key], 0) / list.length;
  process.stdout.write(table(['input', 'create mean ms (disk)', 'create mean ms (S3)', 'added per create, mean ms', 'added per create, p50 ms'], [small, medium].map((input) => {
    const disk = creates.get(`disk ${input.name}`)!;
    const s3runs = creates.get(`${stores[1]![0]} ${input.name}`)!;
    return [input.name, fmt(average(disk, 'mean')), fmt(average(s3runs, 'mean')), fmt(average(s3runs, 'mean') - average(disk, 'mean')), fmt(average(s3runs, 'p50') - average(disk, 'p50'))];
  })) + '\n');
}

if (process.env.BENCH_STORE === 's3') {
  await storeMode();
  process.exit(0);
}

const large = generatedInput(Number(process.env.BENCH_LARGE_PARTS ?? 200_000));
const inputs: [Input, number, number][] = [
  [{ name: 'small (slime-defense.rbxl)', bytes: readFileSync(join(SHARED, 'corpus/places/slime-defense.rbxl')) }, 200, 16],
  [{ name: 'medium (booga.rbxl)', bytes: readFileSync(join(SHARED, 'corpus/places/booga.rbxl')) }, 60, 8],
  [{ ...large, name: `large (${large.name})` }, 8, 4],
];

const rows: (string | number)[][] = [];
const health: (string | number)[][] = [];
// BENCH_BEFORE_FIRST=1 runs the other checkout first (the machines are shared: run both orders).
const impls: Impl[] = !BEFORE ? ['uws', 'node'] : process.env.BENCH_BEFORE_FIRST ? ['before', 'uws', 'node'] : ['uws', 'node', 'before'];
for (const impl of impls) {
  const server = await launch(impl);
  for (const [input, requests, concurrency] of inputs) {
    await load(server.url, input, Math.min(10, requests), concurrency); // warm-up
    const result = await load(server.url, input, requests, concurrency);
    rows.push([LABELS[impl], input.name, `${fmt(input.bytes.length / 1e6, 2)} MB`, concurrency, fmt(result.rps), fmt(result.mbps), fmt(result.p50), fmt(result.p99), result.failures]);
    process.stderr.write(`${impl} ${input.name}: ${fmt(result.rps)} req/s\n`);
  }
  const h = await healthUnderLoad(server.url, large, 4);
  health.push([LABELS[impl], h.samples, fmt(h.p50, 2), fmt(h.p99, 2), fmt(h.max, 2)]);
  health.at(-1)!.push(fmt(peakRssMb(server.child.pid!), 0));
  await stop(server);
}

process.stdout.write(`\nHTTP analyze benchmark on ${machine()}\n\n`);
process.stdout.write(table(['server', 'input', 'size', 'concurrency', 'req/s', 'MB/s', 'p50 ms', 'p99 ms', 'failed'], rows) + '\n\n');
const rowsOf = (impl: Impl) => rows.filter((row) => row[0] === LABELS[impl]);
process.stdout.write(table(['input', 'req/s ratio (uWS / node:http)', 'p99 ratio (uWS / node:http)'], inputs.map(([input], i) => {
  const a = rowsOf('uws')[i]!, b = rowsOf('node')[i]!;
  const n = (cell: string | number | undefined): number => Number(String(cell).replace(/,/g, ''));
  return [input.name, `${fmt(n(a[4]) / n(b[4]), 2)}×`, `${fmt(n(a[7]) / n(b[7]), 2)}×`];
})) + '\n\n');
if (BEFORE) {
  process.stdout.write(table(['input', 'req/s ratio (after / before)', 'p99 ratio (after / before)'], inputs.map(([input], i) => {
    const a = rowsOf('uws')[i]!, b = rowsOf('before')[i]!;
    const n = (cell: string | number | undefined): number => Number(String(cell).replace(/,/g, ''));
    return [input.name, `${fmt(n(a[4]) / n(b[4]), 2)}×`, `${fmt(n(a[7]) / n(b[7]), 2)}×`];
  })) + '\n\n');
}
process.stdout.write('Health route while 4 large places are analysed at once, and the server\'s peak RSS over the whole run\n\n');
process.stdout.write(table(['server', 'health samples', 'health p50 ms', 'health p99 ms', 'health max ms', 'peak RSS MB'], health) + '\n');
