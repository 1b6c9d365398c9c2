/**
 * `npm run bench:parser`: decode throughput (MB/s, instances/s) of the real places,
 * rbx-dom's benchmark inputs and generated places, and, in the same run, the time
 * just to decompress the same chunks, as a ratio (full decode / decompress only).
 */
import { Bench } from 'tinybench';
import { decode } from '../src/parser/index.js';
import { readChunks } from '../src/parser/chunk.js';
import { DEFAULT_LIMITS } from '../src/parser/limits.js';
import { sniffFormat } from '../src/parser/header.js';
import { corpusInputs, fmt, generatedInput, machine, table, type Input } from './support.js';

function decompressOnly(bytes: Uint8Array): number {
  let total = 0;
  for (const chunk of readChunks(bytes, DEFAULT_LIMITS)) total += chunk.data.length;
  return total;
}

async function main(): Promise<void> {
  const sizes = (process.env.BENCH_PARTS ?? '10000,200000').split(',').map(Number).filter((n) => n > 0);
  const inputs: Input[] = [...corpusInputs(), ...sizes.map((parts) => generatedInput(parts))];
  const rows: (string | number)[][] = [];
  for (const input of inputs) {
    const binary = sniffFormat(input.bytes) === 'binary';
    const instances = decode(input.bytes).count;
    const big = input.bytes.length > 5e6;
    const bench = new Bench({ time: big ? 3000 : 1000, iterations: big ? 3 : 10, warmupIterations: big ? 1 : 5 });
    bench.add('decode', () => { decode(input.bytes); });
    if (binary) bench.add('decompress', () => { decompressOnly(input.bytes); });
    await bench.run();
    const [decodeTask, decompressTask] = bench.tasks;
    const decodeMs = (decodeTask!.result as { latency: { mean: number } }).latency.mean;
    const decompressMs = decompressTask ? (decompressTask.result as { latency: { mean: number } }).latency.mean : NaN;
    rows.push([
      input.name,
      fmt(input.bytes.length / 1e6, 2),
      instances.toLocaleString('en-US'),
      fmt(decodeMs, 2),
      fmt(input.bytes.length / 1e6 / (decodeMs / 1000)),
      Math.round(instances / (decodeMs / 1000)).toLocaleString('en-US'),
      binary ? fmt(decompressMs, 2) : 'n/a (XML)',
      binary ? `${fmt(decodeMs / decompressMs, 2)}×` : '',
    ]);
    process.stderr.write(`${input.name}: ${fmt(decodeMs, 2)} ms\n`);
  }
  process.stdout.write(`\nParser benchmark on ${machine()}\n\n`);
  process.stdout.write(table(['input', 'MB', 'instances', 'decode ms', 'MB/s', 'instances/s', 'decompress-only ms', 'decode / decompress'], rows) + '\n');
}

await main();
