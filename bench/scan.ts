/**
 * `npm run bench:scan`: the script risk pass against the decode it follows, side by
 * side in one run, on a generated place of 5,000 scripts of ~200 lines (issue 5's
 * target: the risk pass costs less than the decode). Our decoder is lazy (a value is
 * built only when read), so the decode is measured both ways: as the service runs it,
 * and with every property value materialised, which is what an eager decoder pays.
 */
import { Bench } from 'tinybench';
import { decode } from '../src/parser/index.js';
import type { Dom } from '../src/parser/dom.js';
import { encode } from '../src/parser/writer/index.js';
import { readMapScripts } from '../src/project/map-scripts.js';
import { scanMapScript } from '../src/project/report.js';
import { generatePlace } from './generate.js';
import { fmt, machine, table } from './support.js';

/** Reads every value of every column once, as a decoder that builds all values up front would. */
function materialiseAll(dom: Dom): number {
  let values = 0;
  const seen = new Set<unknown>();
  for (const instance of dom.instances) {
    if (seen.has(instance.table)) continue;
    seen.add(instance.table);
    for (const column of instance.table.columns.values()) {
      for (let row = 0; row < column.length; row++) { column.get(row); values++; }
    }
  }
  return values;
}

const scripts = Number(process.env.BENCH_SCRIPTS ?? 5000);
const lines = Number(process.env.BENCH_SCRIPT_LINES ?? 200);
const bytes = encode(generatePlace({ parts: 2000, scripts, uniqueAssets: 200, scriptLines: lines, seed: 7 }));
const dom = decode(bytes);
const mapScripts = readMapScripts(dom);
const sourceBytes = mapScripts.reduce((sum, script) => sum + Buffer.byteLength(script.source), 0);
let findings = 0;

const bench = new Bench({ time: 3000, iterations: 5, warmupIterations: 2 });
bench.add('decode', () => { decode(bytes); });
bench.add('decode, every value materialised', () => { materialiseAll(decode(bytes)); });
bench.add('read script sources', () => { readMapScripts(dom); });
bench.add('risk pass over the sources', () => {
  findings = 0;
  for (const script of mapScripts) findings += scanMapScript(script).length;
});
await bench.run();
const [decodeMs, eagerMs, readMs, scanMs] = bench.tasks.map((task) => (task.result as { latency: { mean: number } }).latency.mean) as [number, number, number, number];

process.stdout.write(`\nScript risk pass on ${machine()}\n`);
process.stdout.write(`place: ${fmt(bytes.length / 1e6, 2)} MB, ${mapScripts.length} scripts, ${fmt(sourceBytes / 1e6, 2)} MB of source, ${findings} findings\n\n`);
process.stdout.write(table(['step', 'mean ms', 'MB of source/s'], [
  ['decode (lazy, as the service runs it)', fmt(decodeMs, 1), ''],
  ['decode, every value materialised', fmt(eagerMs, 1), ''],
  ['read every script\'s source (strings, enabled, run context)', fmt(readMs, 1), fmt(sourceBytes / 1e6 / (readMs / 1000))],
  ['risk pass over those sources', fmt(scanMs, 1), fmt(sourceBytes / 1e6 / (scanMs / 1000))],
  ['risk pass / lazy decode', `${fmt(scanMs / decodeMs, 2)}×`, ''],
  ['risk pass / materialised decode', `${fmt(scanMs / eagerMs, 2)}×`, ''],
]) + '\n');
