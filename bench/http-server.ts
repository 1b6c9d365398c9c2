/**
 * Child process of `npm run bench:http`: starts one implementation (uws = the real
 * service, node = the node:http + busboy baseline) on a free port and prints its URL.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultConfig } from '../src/config.js';
import { startServer } from '../src/http/server.js';
import { startBaselineServer } from './baseline-server.js';

const impl = process.argv[2];
const workers = Number(process.env.BENCH_WORKERS ?? 0) || defaultConfig().workers;
// One user sends every upload: the per-user shares (USER_MAX_*) would refuse them past the first hundred.
const config = {
  ...defaultConfig(), port: 0, dataDir: mkdtempSync(join(tmpdir(), `rbxl-bench-${impl}-`)), log: false, workers, maxQueue: 10_000,
  userMaxPreviews: Number.MAX_SAFE_INTEGER, userMaxBytes: Number.MAX_SAFE_INTEGER,
};
const server = impl === 'uws' ? await startServer(config) : await startBaselineServer(config);
process.stdout.write(JSON.stringify({ url: server.url, dataDir: config.dataDir }) + '\n');
process.on('SIGTERM', () => { void server.close().then(() => process.exit(0)); });
