/**
 * `BENCH_BEFORE=<dir> node dist/bench/http-ab.js [place]`: this build's service and
 * another checkout's, both running, loaded in alternating rounds (60 analyze uploads
 * of `place` at concurrency 8 each), so that the noise of a shared machine falls on
 * both alike. Prints each round's requests/s and the ratio of the sums.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { SHARED } from './support.js';

async function launch(script: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [script, 'uws'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
  return { child, url: (JSON.parse(line) as { url: string }).url };
}

const before = process.env.BENCH_BEFORE;
if (!before) throw new Error('set BENCH_BEFORE to the other checkout (with its dist/ built)');
const name = process.argv[2] ?? 'slime-defense.rbxl';
const file = readFileSync(join(SHARED, 'corpus/places', name));
const servers = {
  after: await launch(fileURLToPath(new URL('./http-server.js', import.meta.url))),
  before: await launch(join(before, 'dist/bench/http-server.js')),
};

async function round(url: string, requests: number, concurrency: number): Promise<number> {
  const pool = new Pool(url, { connections: concurrency });
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next++ < requests) {
      const boundary = `ab${randomBytes(6).toString('hex')}`;
      // A random tail after END makes every upload a new file (no dedupe).
      const body = Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\n\r\n`), file, randomBytes(16), Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      const answer = await pool.request({ path: '/api-rbxl/import/rbxl/analyze', method: 'POST', body, headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'x-user-id': 'bench' } });
      await answer.body.arrayBuffer();
      if (answer.statusCode !== 200) throw new Error(`analyze answered ${answer.statusCode}`);
    }
  }));
  await pool.close();
  return requests / ((performance.now() - started) / 1000);
}

const rates = { after: [] as number[], before: [] as number[] };
for (let i = 0; i < 6; i++) {
  rates.after.push(await round(servers.after.url, 60, 8));
  rates.before.push(await round(servers.before.url, 60, 8));
}
const sum = (values: number[]): number => values.reduce((total, value) => total + value, 0);
process.stdout.write(`${name}: after ${rates.after.map((rate) => rate.toFixed(1)).join(', ')} req/s; before ${rates.before.map((rate) => rate.toFixed(1)).join(', ')} req/s; after / before ${(sum(rates.after) / sum(rates.before)).toFixed(2)}\n`);
for (const server of Object.values(servers)) server.child.kill('SIGTERM');
