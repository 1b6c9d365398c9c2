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
const config = { ...defaultConfig(), port: 0, dataDir: mkdtempSync(join(tmpdir(), `rbxl-bench-${impl}-`)), log: false, workers, maxQueue: 10_000 };
const server = impl === 'uws' ? await startServer(config) : await startBaselineServer(config);
process.stdout.write(JSON.stringify({ url: server.url, dataDir: config.dataDir }) + '\n');
process.on('SIGTERM', () => { void server.close().then(() => process.exit(0)); });
