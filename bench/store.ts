/**
 * `npm run bench:store`: latency of the object store's operations on the local disk and
 * on an S3-compatible server (s3rver on loopback, in its own process), side by side in
 * one run: put, get, head and list of small JSON objects, and putFile / getStream of
 * 10 MB files (multipart upload on S3). A first look at what S3 mode adds per operation;
 * the service-level S3 mode of `bench:http` comes with phase B of issue 15.
 * s3rver is a test server (Koa, files, no atomic writes): a real store differs, so read
 * the S3 column as "an HTTP round trip and the SDK", not as AWS's numbers.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Bench } from 'tinybench';
import { createDiskStore, createS3Store, storeConfigFromEnv, type ObjectStore, type S3StoreConfig } from '../src/store/backends/index.js';
import { S3_TEST_ENV, startS3Server } from '../test/support/s3-server.js';
import { fmt, machine, table } from './support.js';

const root = await mkdtemp(join(tmpdir(), 'rbxl-bench-store-'));
const s3 = await startS3Server({ reportRequests: false });
const stores: Record<string, ObjectStore> = {
  disk: createDiskStore({ root: join(root, 'disk') }),
  s3rver: createS3Store(storeConfigFromEnv({ ...S3_TEST_ENV, STORE_URL: `s3://${s3.bucket}/bench`, S3_ENDPOINT: s3.endpoint }, root) as S3StoreConfig),
};

const small = Buffer.from(JSON.stringify({ report: { scripts_total: 12, classes: { Part: 4000 } }, pad: 'x'.repeat(900) }));
const BIG = 10 * 1024 * 1024;
const bigPath = join(root, 'big.bin');
await writeFile(bigPath, randomBytes(BIG));
const LISTED = 100;

const bench = new Bench({ time: Number(process.env.BENCH_TIME_MS ?? 2000), iterations: 10, warmupIterations: 3 });
for (const [name, store] of Object.entries(stores)) {
  for (let i = 0; i < LISTED; i++) await store.put(`list/${String(i).padStart(3, '0')}`, small);
  await store.put('small/read', small);
  await store.putFile('big/read', bigPath);
  let n = 0;
  bench.add(`${name}: put 1 KB`, async () => {
    await store.put(`small/w${n++ % 50}`, small);
  });
  bench.add(`${name}: get 1 KB`, async () => {
    await store.get('small/read');
  });
  bench.add(`${name}: head`, async () => {
    await store.head('small/read');
  });
  bench.add(`${name}: conditional create (exists)`, async () => {
    await store.put('small/read', small, { ifNoneMatch: '*' });
  });
  bench.add(`${name}: list ${LISTED}`, async () => {
    await store.list('list/');
  });
  bench.add(`${name}: putFile 10 MB`, async () => {
    await store.putFile(`big/w${n++ % 3}`, bigPath);
  });
  bench.add(`${name}: getStream 10 MB`, async () => {
    const object = await store.getStream('big/read');
    const hash = createHash('sha256');
    for await (const chunk of object!.body) hash.update(chunk as Buffer);
  });
}
await bench.run();

const stat = (task: string): { mean: number; p99: number } => {
  const result = bench.tasks.find((candidate) => candidate.name === task)!.result as { latency: { mean: number; p99: number } };
  return result.latency;
};
const operations = ['put 1 KB', 'get 1 KB', 'head', 'conditional create (exists)', `list ${LISTED}`, 'putFile 10 MB', 'getStream 10 MB'];
process.stdout.write(`\n${machine()}\n\n`);
process.stdout.write(table(['operation', 'disk mean ms', 'disk p99 ms', 's3rver mean ms', 's3rver p99 ms', 's3rver / disk'], operations.map((operation) => {
  const disk = stat(`disk: ${operation}`);
  const remote = stat(`s3rver: ${operation}`);
  return [operation, fmt(disk.mean, 2), fmt(disk.p99, 2), fmt(remote.mean, 2), fmt(remote.p99, 2), `${fmt(remote.mean / disk.mean, 1)}×`];
})) + '\n');

for (const store of Object.values(stores)) await store.close();
await s3.close();
await rm(root, { recursive: true, force: true });
