/**
 * `npm run bench:hostile`: the hostile mix of issue 10 against the service started
 * as `npm start` would (its own process, WORKERS=3, MAX_MEMORY_MB=1536): the three
 * hostile files (bench/hostile.ts) uploaded at once, three rounds, while the health
 * route is sampled every 20 ms. Prints each upload's status (and, for a 200, the
 * create's), the health latency, and the process's peak RSS (VmHWM, all threads).
 *
 * `BENCH_BEFORE=<dir>` runs the same mix, in the same run, against another checkout's
 * build (`<dir>/dist/src/main.js`), e.g. the commit before issue 10, for a side-by-side.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { fmt, machine, table } from './support.js';
import { hostileFiles } from './hostile.js';

interface Running { child: ChildProcess; url: string; dataDir: string; exited: Promise<number | null> }

async function launch(main: string): Promise<Running> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rbxl-hostile-'));
  const child = spawn(process.execPath, [main], {
    stdio: ['ignore', 'pipe', 'ignore'],
    env: { ...process.env, PORT: '0', DATA_DIR: dataDir, WORKERS: '3', MAX_MEMORY_MB: '1536', LOG: '0' },
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (text) => { if (text.includes('"listening"')) resolve(text); });
    void exited.then((code) => reject(new Error(`server exited with ${code}`)));
  });
  return { child, url: (JSON.parse(line) as { url: string }).url, dataDir, exited };
}

const peakRssMb = (pid: number): number => {
  try {
    return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
  } catch {
    return NaN;
  }
};
const rssMb = (pid: number): number => {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
  } catch {
    return NaN;
  }
};

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

async function uploadOnce(url: string, name: string, bytes: Uint8Array, user: string): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([bytes as Uint8Array<ArrayBuffer>]), name);
  try {
    const response = await fetch(`${url}/api-rbxl/import/rbxl/analyze`, { method: 'POST', body: form, headers: { 'X-User-Id': user } });
    const text = await response.text();
    if (response.status !== 200) return String(response.status);
    const { preview_hash } = JSON.parse(text) as { preview_hash: string };
    const created = await fetch(`${url}/api-rbxl/import/rbxl/create`, {
      method: 'POST', body: JSON.stringify({ preview_hash }), headers: { 'Content-Type': 'application/json', 'X-User-Id': user },
    });
    await created.text();
    return `200, create ${created.status}`;
  } catch (error) {
    return `no answer (${(error as Error).message})`;
  }
}

async function run(label: string, main: string) {
  const server = await launch(main);
  const files = hostileFiles();
  let busy = true;
  let died = false;
  void server.exited.then(() => { died = true; busy = false; });
  const latencies: number[] = [];
  const sampler = (async () => {
    while (busy) {
      const started = performance.now();
      try {
        await (await fetch(`${server.url}/api-rbxl/health`)).arrayBuffer();
        latencies.push(performance.now() - started);
      } catch {
        latencies.push(Infinity);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  const outcomes: string[][] = [];
  // At least three rounds, and at least ten seconds of them, so that health has samples to speak of.
  const started = performance.now();
  for (let round = 0; (round < 3 || performance.now() - started < 10_000) && round < 30 && !died; round++) {
    outcomes.push(await Promise.all(files.map((file, i) => uploadOnce(server.url, file.name, Buffer.concat([file.bytes, Buffer.from(`round${round}`)]), `user${i}`))));
  }
  const rssAfter = rssMb(server.child.pid!);
  const peak = peakRssMb(server.child.pid!);
  const diedDuringRun = died;
  busy = false;
  await sampler;
  server.child.kill('SIGTERM');
  await server.exited;
  rmSync(server.dataDir, { recursive: true, force: true });
  latencies.sort((a, b) => a - b);
  return {
    label,
    outcomes: files.map((file, i) => `${file.name}: ${[...new Set(outcomes.map((round) => round[i]))].join(' / ')}`).join('; '),
    rounds: outcomes.length, peak, rssAfter, died: diedDuringRun,
    health: { samples: latencies.length, p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.at(-1) ?? NaN },
  };
}

const results = [];
if (process.env.BENCH_BEFORE) results.push(await run(`before (${process.env.BENCH_BEFORE})`, join(process.env.BENCH_BEFORE, 'dist/src/main.js')));
results.push(await run('this build', fileURLToPath(new URL('../src/main.js', import.meta.url))));

process.stdout.write(`\nHostile mix (3 files at once, repeated; WORKERS=3, MAX_MEMORY_MB=1536) on ${machine()}\n\n`);
process.stdout.write(table(['server', 'rounds', 'peak RSS MB', 'RSS after MB', 'health samples', 'health p50 ms', 'health p99 ms', 'health max ms', 'process'],
  results.map((r) => [r.label, r.rounds, fmt(r.peak, 0), fmt(r.rssAfter, 0), r.health.samples, fmt(r.health.p50, 2), fmt(r.health.p99, 2), fmt(r.health.max, 2), r.died ? 'died' : 'up'])) + '\n\n');
for (const r of results) process.stdout.write(`${r.label}: ${r.outcomes}\n`);
