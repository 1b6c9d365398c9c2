/**
 * `npm run bench:parser`: the decoder against decompression alone, on the real places,
 * rbx-dom's benchmark inputs and generated places, side by side in one run with the
 * previous decoder (one object per instance, see previous.ts):
 *
 * - decompress-only: framing and decompressing the same chunks, nothing else;
 * - decode (lazy): what the service runs; values stay in their columns;
 * - materialised: decode, then read every property value of every instance;
 * - memory: what a decoded DOM keeps, per instance (V8 heap, and heap plus array
 *   buffers beyond the decompressed chunk data).
 *
 * Each input is measured in BENCH_ROUNDS rounds (default 3) of every task in turn;
 * a task's time is its best per-round median, so a burst of load from the machine's
 * other users costs one round, not the result.
 */
import { Bench } from 'tinybench';
import { decode } from '../src/parser/index.js';
import { readChunks } from '../src/parser/chunk.js';
import type { Dom } from '../src/parser/dom.js';
import { DEFAULT_LIMITS } from '../src/parser/limits.js';
import { sniffFormat } from '../src/parser/header.js';
import { loadPreviousDecoder, type PreviousDom } from './previous.js';
import { corpusInputs, fmt, generatedInput, machine, table, type Input } from './support.js';

function decompressOnly(bytes: Uint8Array): number {
  let total = 0;
  for (const chunk of readChunks(bytes, DEFAULT_LIMITS)) total += chunk.data.length;
  return total;
}

/** Reads every property value of every instance: every column of every table, every row. */
function materialise(dom: Dom): number {
  let values = 0;
  for (const { columns } of dom.tables) {
    for (const column of columns.values()) {
      for (let row = 0; row < column.length; row++) { column.get(row); values++; }
    }
  }
  return values;
}

/** The same for the previous DOM, whose instances point at their (shared, in binary files) tables. */
function materialisePrevious(dom: PreviousDom): number {
  let values = 0;
  const seen = new Set<unknown>();
  for (const { table } of dom.instances) {
    if (seen.has(table)) continue;
    seen.add(table);
    for (const column of table.columns.values()) {
      for (let row = 0; row < column.length; row++) { column.get(row); values++; }
    }
  }
  return values;
}

const gc = (globalThis as { gc?: () => void }).gc;

/**
 * Bytes a decoded DOM keeps: V8 heap, and heap plus array buffers (typed arrays,
 * chunk data), per copy. `copies` DOMs are kept at once, so that what one small
 * place keeps stands out from the heap's own noise.
 */
function retained(make: () => unknown, copies: number): { heap: number; total: number } | null {
  if (!gc) return null;
  gc(); gc();
  const before = process.memoryUsage();
  const kept: unknown[] = [];
  for (let i = 0; i < copies; i++) kept.push(make());
  gc(); gc();
  const after = process.memoryUsage();
  if (kept.length !== copies) throw new Error('unreachable'); // keeps the copies alive until measured
  return {
    heap: (after.heapUsed - before.heapUsed) / copies,
    total: (after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers) / copies,
  };
}

const median = (task: { result: unknown }): number => (task.result as { latency: { p50: number } }).latency.p50;

async function main(): Promise<void> {
  const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
  const sizes = (process.env.BENCH_PARTS ?? '10000,200000').split(',').map(Number).filter((n) => n > 0);
  const previous = await loadPreviousDecoder();
  const inputs: Input[] = [...corpusInputs(), ...sizes.map((parts) => generatedInput(parts))];
  const timeRows: (string | number)[][] = [];
  const memoryRows: (string | number)[][] = [];
  const ratio = (a: number, b: number) => (Number.isFinite(a / b) ? `${fmt(a / b, 2)}×` : '');
  const pair = (before: number | undefined, after: number, digits: number, unit = '') =>
    before === undefined || !Number.isFinite(before) ? `${fmt(after, digits)}${unit}` : `${fmt(before, digits)}${unit} → ${fmt(after, digits)}${unit}`;

  for (const input of inputs) {
    const binary = sniffFormat(input.bytes) === 'binary';
    const instances = decode(input.bytes).count;
    const big = input.bytes.length > 5e6;
    const best = new Map<string, number>();
    for (let round = 0; round < rounds; round++) {
      gc?.(); // start each round from a collected heap (the generator leaves a large one behind)
      const bench = new Bench({ time: big ? 2000 : 600, iterations: big ? 3 : 10, warmupIterations: big ? 1 : 5 });
      if (binary) bench.add('decompress', () => { decompressOnly(input.bytes); });
      bench.add('lazy', () => { decode(input.bytes); });
      bench.add('materialised', () => { materialise(decode(input.bytes)); });
      if (previous) {
        bench.add('previous lazy', () => { previous.decode(input.bytes); });
        bench.add('previous materialised', () => { materialisePrevious(previous.decode(input.bytes)); });
      }
      await bench.run();
      for (const task of bench.tasks) best.set(task.name, Math.min(best.get(task.name) ?? Infinity, median(task)));
    }
    const ms = (name: string) => best.get(name) ?? NaN;
    const decompressMs = ms('decompress');
    const chunkBytes = binary ? decompressOnly(input.bytes) : 0;
    // Enough copies for about 300k instances, within about 256 MB of decoded data.
    const copies = Math.max(1, Math.min(Math.ceil(300_000 / instances), Math.floor(256e6 / (4 * Math.max(chunkBytes, input.bytes.length))), 100));
    const now = retained(() => decode(input.bytes), copies);
    const before = previous ? retained(() => previous.decode(input.bytes), copies) : null;
    const perInstance = (bytes: number | undefined) => (bytes === undefined ? NaN : bytes / instances);

    timeRows.push([
      input.name,
      fmt(input.bytes.length / 1e6, 2),
      instances.toLocaleString('en-US'),
      binary ? fmt(decompressMs, 2) : 'n/a (XML)',
      pair(previous ? ms('previous lazy') : undefined, ms('lazy'), 2),
      binary ? pair(previous ? ms('previous lazy') / decompressMs : undefined, ms('lazy') / decompressMs, 2, '×') : '',
      pair(previous ? ms('previous materialised') : undefined, ms('materialised'), 2),
      binary ? pair(previous ? ms('previous materialised') / decompressMs : undefined, ms('materialised') / decompressMs, 2, '×') : '',
      previous ? ratio(ms('previous lazy'), ms('lazy')) : '',
    ]);
    memoryRows.push([
      input.name,
      instances.toLocaleString('en-US'),
      binary ? fmt(chunkBytes / instances, 0) : 'n/a (XML)',
      pair(before ? perInstance(before.heap) : undefined, perInstance(now?.heap), 0),
      pair(before ? perInstance(before.total - chunkBytes) : undefined, perInstance(now ? now.total - chunkBytes : undefined), 0),
    ]);
    process.stderr.write(`${input.name}: decompress ${fmt(decompressMs, 2)} ms, lazy ${fmt(ms('lazy'), 2)} ms, materialised ${fmt(ms('materialised'), 2)} ms` +
      (previous ? `; previous ${fmt(ms('previous lazy'), 2)} / ${fmt(ms('previous materialised'), 2)} ms` : '') + '\n');
  }

  const versus = previous ? ` (previous → now: commit ${previous.commit} → this build)` : '';
  process.stdout.write(`\nParser benchmark on ${machine()}, best of ${rounds} rounds' medians${versus}\n\n`);
  process.stdout.write(table(['input', 'MB', 'instances', 'decompress-only ms', 'decode ms', 'decode ÷ decompress', 'materialised ms', 'materialised ÷ decompress', 'decode speed-up'], timeRows) + '\n');
  process.stdout.write(`\nBytes per instance kept by the decoded DOM${gc ? '' : ' (run with --expose-gc to measure)'}\n\n`);
  process.stdout.write(table(['input', 'instances', 'decompressed chunk bytes / instance', 'V8 heap / instance', 'heap + array buffers beyond chunk data / instance'], memoryRows) + '\n');
}

await main();
