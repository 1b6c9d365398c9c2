/**
 * `npm run bench:multipart`: the service's streaming multipart parser (src/http/multipart.ts)
 * against busboy, parser only, on the same bodies fed in the 64 KiB pieces uWS's onData
 * hands over; both hash the file part's bytes (as the upload sink does). Side by side in
 * one run (tinybench), with the ratio. README's "Multipart" section records the result.
 */
import { createHash, randomBytes } from 'node:crypto';
import busboy from 'busboy';
import { Bench } from 'tinybench';
import { createMultipartParser } from '../src/http/multipart.js';
import { fmt, machine, table } from './support.js';

const BOUNDARY = '----rbxlbench7f3a9c';
const PIECE = 64 * 1024;

function body(fileBytes: number): Buffer {
  const head = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="place.rbxl"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  return Buffer.concat([head, randomBytes(fileBytes), Buffer.from(`\r\n--${BOUNDARY}--\r\n`)]);
}

function ours(data: Buffer): string {
  const hash = createHash('sha256');
  const parser = createMultipartParser(BOUNDARY, { onPartBegin() {}, onPartData: (piece) => { hash.update(piece); }, onPartEnd() {} });
  for (let at = 0; at < data.length; at += PIECE) parser.write(data.subarray(at, at + PIECE));
  parser.end();
  return hash.digest('hex');
}

function theirs(data: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    const parser = busboy({ headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } });
    parser.on('file', (_name, stream) => stream.on('data', (piece: Buffer) => hash.update(piece)));
    parser.on('close', () => resolve(hash.digest('hex')));
    parser.on('error', reject);
    for (let at = 0; at < data.length; at += PIECE) parser.write(data.subarray(at, at + PIECE));
    parser.end();
  });
}

const rows: (string | number)[][] = [];
for (const [label, size] of [['0.2 MB', 220_000], ['1.6 MB', 1_600_000], ['13.7 MB', 13_700_000], ['100 MB', 100_000_000]] as const) {
  const data = body(size);
  if (ours(data) !== (await theirs(data))) throw new Error('the parsers disagree');
  const bench = new Bench({ time: 1500, warmupTime: 300 });
  bench.add('own parser', () => { ours(data); });
  bench.add('busboy', async () => { await theirs(data); });
  await bench.run();
  const [own, bb] = bench.tasks.map((task) => (task.result as { latency: { mean: number } }).latency.mean);
  rows.push([label, fmt(own!, 2), fmt(bb!, 2), fmt(size / 1e6 / (own! / 1000), 0), fmt(size / 1e6 / (bb! / 1000), 0), `${fmt(bb! / own!, 2)}×`]);
}
process.stdout.write(`\nMultipart parsing (parser + SHA-256 of the file part, 64 KiB pieces) on ${machine()}\n\n`);
process.stdout.write(table(['file part', 'own ms', 'busboy ms', 'own MB/s', 'busboy MB/s', 'busboy / own'], rows) + '\n');
