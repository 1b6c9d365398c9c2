/**
 * `npm run bench:scan`: the script risk pass against the decode it follows, side by
 * side in one run, on a generated place of 5,000 scripts of ~200 lines (issue 5's
 * target: the risk pass costs less than the decode). Our decoder is lazy (a value is
 * built only when read), so the decode is measured both ways: as the service runs it,
 * and with every property value materialised, which is what an eager decoder pays.
 * The analysis scans each source as the bytes the file holds, each distinct script once;
 * `scanScript` on strings (the public API) is measured beside it, and the whole analysis
 * of the decoded place. On the real places, the pass is also measured scanning every copy.
 */
import { Bench } from 'tinybench';
import { decode } from '../src/parser/index.js';
import type { Dom } from '../src/parser/dom.js';
import { encode } from '../src/parser/writer/index.js';
import { readMapScripts } from '../src/project/map-scripts.js';
import { analyzeDom, scanMapScript, scanMapScripts } from '../src/project/report.js';
import { buildProject } from '../src/project/document.js';
import { scanScript } from '../src/scan/index.js';
import { generatePlace } from './generate.js';
import { corpusInputs, fmt, machine, table } from './support.js';

/** Reads every value of every column once, as a decoder that builds all values up front would. */
function materialiseAll(dom: Dom): number {
  let values = 0;
  for (const table of dom.tables) {
    for (const column of table.columns.values()) {
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
const texts = mapScripts.map((script) => ({ source: script.source, options: { className: script.className, runContext: script.runContext } }));
const sourceBytes = mapScripts.reduce((sum, script) => sum + (script.bytes?.length ?? 0), 0);
let findings = 0;

const bench = new Bench({ time: 3000, iterations: 5, warmupIterations: 2 });
bench.add('decode', () => { decode(bytes); });
bench.add('decode, every value materialised', () => { materialiseAll(decode(bytes)); });
bench.add('read every script (bytes, enabled, run context)', () => { readMapScripts(dom); });
bench.add('risk pass over the bytes', () => {
  findings = 0;
  for (const found of scanMapScripts(mapScripts)) findings += found.length;
});
bench.add('risk pass over strings', () => {
  for (const { source, options } of texts) scanScript(source, options);
});
bench.add('decode + whole analysis', () => { analyzeDom(decode(bytes), { fileName: 'bench.rbxl', fileSize: bytes.length }); });
// create's worker task: decode again, build the project document, serialise it.
const { scriptCodes, assets } = analyzeDom(dom, { fileName: 'bench.rbxl', fileSize: bytes.length });
const buildOptions = {
  title: '', owner: 'bench', createdAt: new Date(0), previewHash: '0'.repeat(64), fileName: 'bench.rbxl', fileSize: bytes.length,
  scriptsMode: 'enabled' as const, assets: assets.map(({ id, kind }) => ({ id, kind, ok: false as const, reason: 'no_credentials' as const })),
};
bench.add('create build, scripts scanned again', () => { JSON.stringify(buildProject(decode(bytes), buildOptions)); });
bench.add('create build, codes from the analysis', () => { JSON.stringify(buildProject(decode(bytes), { ...buildOptions, scriptCodes })); });
await bench.run();
const [decodeMs, eagerMs, readMs, scanMs, textMs, analyzeMs, rescanBuildMs, storedBuildMs] = bench.tasks.map((task) => (task.result as { latency: { mean: number } }).latency.mean) as [number, number, number, number, number, number, number, number];
const rate = (ms: number) => fmt(sourceBytes / 1e6 / (ms / 1000));

process.stdout.write(`\nScript risk pass on ${machine()}\n`);
process.stdout.write(`place: ${fmt(bytes.length / 1e6, 2)} MB, ${mapScripts.length} scripts, ${fmt(sourceBytes / 1e6, 2)} MB of source, ${findings} findings\n\n`);
process.stdout.write(table(['step', 'mean ms', 'MB of source/s'], [
  ['decode (lazy, as the service runs it)', fmt(decodeMs, 1), ''],
  ['decode, every value materialised', fmt(eagerMs, 1), ''],
  ['read every script (bytes, enabled, run context)', fmt(readMs, 1), ''],
  ['risk pass over the sources\' bytes (as the analysis runs it)', fmt(scanMs, 1), rate(scanMs)],
  ['risk pass over the sources as strings (`scanScript`)', fmt(textMs, 1), rate(textMs)],
  ['decode + whole analysis (report, assets, risk pass)', fmt(analyzeMs, 1), ''],
  ['risk pass / lazy decode', `${fmt(scanMs / decodeMs, 2)}×`, ''],
  ['risk pass / materialised decode', `${fmt(scanMs / eagerMs, 2)}×`, ''],
  ['risk pass / whole analysis', `${fmt((100 * scanMs) / analyzeMs, 0)}%`, ''],
  ['create\'s build (decode, document, JSON), every script scanned again', fmt(rescanBuildMs, 1), ''],
  ['create\'s build with the finding codes the analysis kept', fmt(storedBuildMs, 1), ''],
]) + '\n');

// Real places: what share of the analysis the risk pass is where the code is real.
const places = corpusInputs().filter((input) => input.name.endsWith('.rbxl') || input.name.endsWith('.rbxlx'));
const placeBench = new Bench({ time: 500, iterations: 5, warmupIterations: 2 });
const placeRows: { name: string; scripts: number; distinct: number; sourceMb: number }[] = [];
for (const { name, bytes: file } of places) {
  const placeDom = decode(file);
  const placeScripts = readMapScripts(placeDom);
  if (placeScripts.length === 0) continue;
  const distinct = new Set(scanMapScripts(placeScripts)).size;
  placeRows.push({ name, scripts: placeScripts.length, distinct, sourceMb: placeScripts.reduce((sum, s) => sum + Buffer.byteLength(s.source), 0) / 1e6 });
  placeBench.add(`${name} decode`, () => { decode(file); });
  placeBench.add(`${name} risk pass`, () => { scanMapScripts(placeScripts); });
  placeBench.add(`${name} every copy scanned`, () => { for (const script of placeScripts) scanMapScript(script); });
  placeBench.add(`${name} analysis`, () => { analyzeDom(decode(file), { fileName: name, fileSize: file.length }); });
}
await placeBench.run();
const meanOf = (name: string) => (placeBench.tasks.find((task) => task.name === name)!.result as { latency: { mean: number } }).latency.mean;
process.stdout.write(`\nReal places (corpus): the risk pass within the analysis\n\n`);
process.stdout.write(table(['place', 'scripts (distinct)', 'MB of source', 'decode ms', 'risk pass ms', 'every copy scanned ms', 'decode + analysis ms', 'risk pass share'], placeRows.map(({ name, scripts: count, distinct, sourceMb }) => {
  const [d, r, every, a] = [meanOf(`${name} decode`), meanOf(`${name} risk pass`), meanOf(`${name} every copy scanned`), meanOf(`${name} analysis`)];
  return [name, `${count} (${distinct})`, fmt(sourceMb, 2), fmt(d, 2), fmt(r, 2), fmt(every, 2), fmt(a, 2), `${fmt((100 * r) / a, 0)}%`];
})) + '\n');
