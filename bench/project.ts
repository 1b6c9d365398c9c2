/**
 * `npm run bench:project`: the project document against the decode it starts from,
 * side by side in one run, on the real places and a generated 200k-part place:
 *
 * - decode: the lazy decode the service runs (values stay in their columns);
 * - build: from a freshly decoded DOM to the stored document, i.e. `projectJson`
 *   through the Brotli compressor into a sink by json-stream's `pumpChunks`, as the
 *   worker writes its file (the decode itself is done before each timed run); text:
 *   `projectJson` alone, nothing compressed (the joint search included);
 * - memory: peak RSS (VmHWM) of a child process that decodes, against one that decodes
 *   and builds (each a fresh process reading the file);
 * - sizes: JSON bytes, stored (compressed) bytes, and stored ÷ the file's size;
 * - a reference beside the build: V8's own `JSON.stringify` writing the same text from
 *   the document parsed back into objects (its values in hand, nothing compressed), plus
 *   the surface-joint search the document needs (`searchSurfaceJoints` on a fresh decode),
 *   and the compression alone (the document's text through Brotli at the stored
 *   quality, in one call). From these, the floor of a build whose writer is as fast as
 *   V8's own serialiser and whose work splits perfectly over the machine's cores (only
 *   the one Brotli stream stays whole), and on one core (the three one after the
 *   other: what a machine whose other users take a core leaves). It is not a lower
 *   bound for every writer: one made for these values can beat the generic serialiser
 *   (this project's writes arrays of float32 numbers 2.5–3× as fast), but it tells how
 *   much of the build the text itself costs the engine.
 *
 * Each input is measured in BENCH_ROUNDS rounds (default 3) of both tasks in turn; a
 * task's time is its best per-round median, so a burst of load from the machine's
 * other users costs one round, not the result.
 *
 * The build gets the analysis's script findings, as the worker does at create (the
 * analysis scanned every script when the file was uploaded; create does not scan
 * again). BENCH_PARTS=200000,10000 sets the generated places (0 for none);
 * BENCH_PLACES=booga,rocket keeps only the corpus places whose names contain one.
 */
import { Buffer } from 'node:buffer';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants } from 'node:zlib';
import { Bench } from 'tinybench';
import { decode } from '../src/parser/index.js';
import type { Dom } from '../src/parser/dom.js';
import { DOCUMENT_WINDOW_BITS, documentQuality } from '../src/project/compression.js';
import { threadCompressor } from '../src/project/compress-thread.js';
import { projectJson, type BuildProjectOptions } from '../src/project/document.js';
import { pumpChunks } from '../src/project/json-stream.js';
import { searchSurfaceJoints } from '../src/project/joints.js';
import { analyzeDom, type ScriptCodes } from '../src/project/report.js';
import { fmt, generatedInput, machine, placeInputs, table, type Input } from './support.js';

/** A file to build, with the script findings its analysis stored. */
interface BuildInput {
  name: string;
  bytes: Uint8Array;
  scriptCodes: ScriptCodes;
}

function buildInput(input: { name: string; bytes: Uint8Array }): BuildInput {
  const { scriptCodes } = analyzeDom(decode(input.bytes), { fileName: input.name, fileSize: input.bytes.length });
  return { ...input, scriptCodes };
}

function options(input: BuildInput): BuildProjectOptions {
  return {
    title: '', owner: 'bench', createdAt: '2026-01-01T00:00:00.000Z', previewHash: '0'.repeat(64),
    fileName: input.name, fileSize: input.bytes.length, scriptsMode: 'disabled', assets: [], scriptCodes: input.scriptCodes,
  };
}

/** The document's JSON text, whole (for the reference: compressed in one call, and parsed once to be serialised again by V8). */
function documentText(dom: Dom, input: BuildInput): Buffer {
  return Buffer.concat([...projectJson(dom, options(input))]);
}

/** Builds the stored document of `dom` into a counting sink, as the worker writes it to its file; returns [JSON bytes, stored bytes]. */
export async function buildStored(dom: Dom, input: BuildInput): Promise<[number, number]> {
  let jsonBytes = 0;
  let storedBytes = 0;
  const text = (function* () {
    for (const chunk of projectJson(dom, options(input))) {
      jsonBytes += chunk.length;
      yield chunk;
    }
  })();
  await pumpChunks(text, threadCompressor(input.bytes.length), async (source) => {
    for await (const chunk of source) storedBytes += chunk.length;
  });
  return [jsonBytes, storedBytes];
}

/** The document's text through Brotli at its stored quality and window, in one call (the reference's compression). */
function compressText(text: Buffer, fileBytes: number): Buffer {
  return brotliCompressSync(text, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: documentQuality(fileBytes), [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_LGWIN]: DOCUMENT_WINDOW_BITS,
    },
  });
}

/**
 * The floor of a build whose writer is as fast as V8's serialiser, with the joints,
 * the text and the compression shared perfectly by `cores` (the Brotli stream itself
 * cannot be split).
 */
export function floorMs(stringifyMs: number, jointsMs: number, compressMs: number, cores: number): number {
  return Math.max(compressMs, (stringifyMs + jointsMs + compressMs) / cores);
}

const median = (task: { result: unknown }): number => (task.result as { latency: { p50: number } }).latency.p50;

/** Peak RSS (MB) of a fresh process running `mode` on the file. */
function peakRss(mode: 'decode' | 'build', file: string, name: string): number {
  const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child', mode, file, name], { encoding: 'utf8', maxBuffer: 1 << 20 });
  return Number(out.trim()) / 1024;
}

async function child(mode: string, file: string, name: string): Promise<void> {
  const bytes = readFileSync(file);
  // The analysis's findings come from the parent (analysing here would count its memory too).
  const scriptCodes = mode === 'build' ? JSON.parse(readFileSync(`${file}.codes.json`, 'utf8')) as ScriptCodes : undefined;
  const dom = decode(bytes);
  if (scriptCodes) await buildStored(dom, { name, bytes, scriptCodes });
  // VmHWM, not resourceUsage().maxRSS: Linux keeps ru_maxrss across fork and exec, so
  // a child would report the (larger) RSS of the parent that spawned it.
  const hwm = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
  process.stdout.write(`${hwm ? Number(hwm[1]) : process.resourceUsage().maxRSS}\n`);
}

async function main(): Promise<void> {
  const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
  const sizes = (process.env.BENCH_PARTS ?? '200000').split(',').map(Number).filter((n) => n > 0);
  const dir = mkdtempSync(join(tmpdir(), 'bench-project-'));
  const rows: (string | number)[][] = [];
  try {
    const only = process.env.BENCH_PLACES?.split(',').filter(Boolean);
    const places = placeInputs().filter((input) => !only || only.some((name) => input.name.includes(name)));
    const inputs: Input[] = [...places, ...sizes.map((parts) => generatedInput(parts))];
    for (const file of inputs) {
      const input = buildInput(file);
      const path = join(dir, input.name);
      writeFileSync(path, input.bytes);
      writeFileSync(`${path}.codes.json`, JSON.stringify(input.scriptCodes));
      const big = input.bytes.length > 5e6;
      const best = new Map<string, number>();
      let dom: Dom | undefined;
      for (let round = 0; round < rounds; round++) {
        const bench = new Bench({ time: big ? 3000 : 800, iterations: big ? 3 : 10, warmupIterations: big ? 1 : 3 });
        bench.add('decode', () => { decode(input.bytes); });
        bench.add('build', async () => { await buildStored(dom!, input); }, { beforeEach() { dom = decode(input.bytes); } });
        bench.add('text', () => { for (const chunk of projectJson(dom!, options(input))) void chunk; }, { beforeEach() { dom = decode(input.bytes); } });
        // A fixed count: the search takes microseconds on most places, and the decode
        // before each call would otherwise run for as many calls as fill the time.
        const joints = new Bench({ time: 0, iterations: big ? 3 : 10, warmupTime: 0, warmupIterations: 1 });
        joints.add('joints', () => { searchSurfaceJoints(dom!); }, { beforeEach() { dom = decode(input.bytes); } });
        // The parsed document is held only while it is serialised: a heap of its size
        // slows the decode's collections (the 200k place's decode took 2.7× as long beside it).
        const reference = new Bench({ time: big ? 3000 : 800, iterations: big ? 3 : 10, warmupIterations: big ? 1 : 3 });
        let parsed: unknown;
        let text: Buffer | undefined;
        reference.add('stringify', () => { JSON.stringify(parsed); });
        reference.add('compress', () => { compressText(text!, input.bytes.length); });
        await bench.run();
        await joints.run();
        dom = undefined;
        text = documentText(decode(input.bytes), input);
        parsed = JSON.parse(text.toString('utf8'));
        await reference.run();
        parsed = undefined;
        text = undefined;
        globalThis.gc?.();
        for (const task of [...bench.tasks, ...joints.tasks, ...reference.tasks]) best.set(task.name, Math.min(best.get(task.name) ?? Infinity, median(task)));
      }
      const [jsonBytes, storedBytes] = await buildStored(decode(input.bytes), input);
      const decodeMs = best.get('decode')!;
      const buildMs = best.get('build')!;
      const referenceMs = best.get('stringify')! + best.get('joints')!;
      const floor = floorMs(best.get('stringify')!, best.get('joints')!, best.get('compress')!, availableParallelism());
      const serialFloor = floorMs(best.get('stringify')!, best.get('joints')!, best.get('compress')!, 1);
      const decodePeak = peakRss('decode', path, input.name);
      const buildPeak = peakRss('build', path, input.name);
      rows.push([
        input.name, fmt(input.bytes.length / 1e6, 2), decode(input.bytes).count.toLocaleString('en-US'),
        fmt(decodeMs, 1), fmt(buildMs, 1), `${fmt(buildMs / decodeMs, 2)}×`, fmt(best.get('text')!, 1),
        fmt(best.get('stringify')!, 1), fmt(best.get('joints')!, 1), `${fmt(referenceMs / decodeMs, 2)}×`,
        fmt(best.get('compress')!, 1), `${fmt(floor / decodeMs, 2)}×`, `${fmt(serialFloor / decodeMs, 2)}×`,
        fmt(jsonBytes / 1e6, 2), fmt(storedBytes / 1e6, 2), `${fmt(storedBytes / input.bytes.length, 2)}×`,
        fmt(decodePeak, 0), fmt(buildPeak, 0), `${fmt(buildPeak / decodePeak, 2)}×`,
      ]);
      process.stderr.write(`${input.name}: decode ${fmt(decodeMs, 1)} ms, build ${fmt(buildMs, 1)} ms, text ${fmt(best.get('text')!, 1)} ms, V8 + joints ${fmt(referenceMs, 1)} ms, compress ${fmt(best.get('compress')!, 1)} ms, floor ${fmt(floor / decodeMs, 2)}×, stored ${fmt(storedBytes / 1e6, 2)} MB, peak ${fmt(decodePeak, 0)} → ${fmt(buildPeak, 0)} MB\n`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write(`\nProject document benchmark on ${machine()}, best of ${rounds} rounds' medians\n\n`);
  process.stdout.write(table([
    'input', 'MB', 'instances', 'decode ms', 'build ms', 'build ÷ decode', 'text ms', 'V8 JSON.stringify ms', 'joints ms', 'V8 + joints ÷ decode', 'compress ms',
    `V8 floor on ${availableParallelism()} cores ÷ decode`, 'V8 floor on 1 core ÷ decode', 'JSON MB', 'stored MB', 'stored ÷ file',
    'decode peak RSS MB', 'build peak RSS MB', 'build ÷ decode peak',
  ], rows) + '\n');
}

if (process.argv[2] === '--child') await child(process.argv[3]!, process.argv[4]!, process.argv[5]!);
else await main();
