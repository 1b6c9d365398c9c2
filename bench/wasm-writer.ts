/**
 * `npm run bench:wasm-writer`: how much a WebAssembly writer would gain on the project
 * document, measured on the part of it where it should gain most. The scene of the
 * generated 200k-part place, side by side in one run:
 *
 * - scene: `sceneJson` as the document writes it (tree walk, column reads, names, ids,
 *   meshes and images, formatting);
 * - read: only the column reads of the number-heavy fields (transform, size, colour,
 *   material, transparency, anchored, can_collide) into flat typed arrays;
 * - format in JS: those fields' text from the flat arrays with the document's own
 *   `JsonWriter`, as `writePart` writes them;
 * - format in WebAssembly: the same text from the same arrays by bench/wasm-writer
 *   (AssemblyScript, the same algorithms), checked byte for byte against the JS text.
 *
 * The two formatters are the fairest comparison a port allows (same input, same
 * output, no boundary crossing per value); `read` and the rest of `scene` show how
 * much of the section formatting is. BENCH_PARTS sets the place (default 200000).
 */
import { Buffer } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { Bench } from 'tinybench';
import { decode } from '../src/parser/index.js';
import type { Dom } from '../src/parser/dom.js';
import { BASE_PART_CLASSES, MATERIALS } from '../src/project/classes.js';
import { cframeNumbersOf, vec3NumbersOf } from '../src/project/geometry.js';
import { JsonWriter } from '../src/project/json-writer.js';
import { sceneJson } from '../src/project/scene.js';
import { partColumns, type PartColumns } from '../src/scene/columns.js';
import { fmt, generatedInput, machine, table } from './support.js';

/** Every drawn part's number-heavy fields, flat. */
interface PartValues {
  count: number;
  /** Per part 15: position, the rotation's rows, size (NaN-free float32 values). */
  numbers: Float32Array;
  transparency: Float32Array;
  material: Uint16Array;
  colors: Uint8Array;
  /** 2·anchored + can_collide. */
  flags: Uint8Array;
}

const ORIGIN = [0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1];

/** Reads the fields from the columns, as `writePart` does (binary files: every part has a Color3uint8). */
function readParts(dom: Dom, rows: Int32Array): PartValues {
  const count = rows.length;
  const values: PartValues = {
    count, numbers: new Float32Array(count * 15), transparency: new Float32Array(count),
    material: new Uint16Array(count), colors: new Uint8Array(count * 3), flags: new Uint8Array(count),
  };
  const scratch = new Float64Array(12);
  const byTable = new Map<number, PartColumns>();
  for (let i = 0; i < count; i++) {
    const row = rows[i]!;
    const tableIndex = dom.tableOf(row);
    let columns = byTable.get(tableIndex);
    if (!columns) byTable.set(tableIndex, (columns = partColumns(dom, tableIndex)));
    const at = dom.rowInTable(row);
    if (!cframeNumbersOf(columns.cframe, at, scratch)) scratch.set(ORIGIN);
    values.numbers.set(scratch, i * 15);
    if (!vec3NumbersOf(columns.size, at, scratch)) throw new Error('a part without a size: the bench needs a generated place');
    for (let k = 0; k < 3; k++) values.numbers[i * 15 + 12 + k] = scratch[k]!;
    if (!columns.color3uint8?.numbers) throw new Error('a part without Color3uint8: the bench needs a generated place');
    columns.color3uint8.numbers(at, scratch);
    for (let k = 0; k < 3; k++) values.colors[i * 3 + k] = scratch[k]!;
    const material = columns.material?.get(at);
    values.material[i] = typeof material === 'number' ? material : 256;
    const transparency = columns.transparency?.get(at);
    values.transparency[i] = typeof transparency === 'number' ? transparency : 0;
    values.flags[i] = (columns.anchored?.get(at) === true ? 2 : 0) + (columns.canCollide?.get(at) === false ? 0 : 1);
  }
  return values;
}

// The fixed texts, as scene.ts writes them (every part here is drawn as a Block).
const FIXED = [',"position":', ',"rotation":[', ',"size":', ',"shape":"Block","color":[',
  ',"anchored":false,"can_collide":false', ',"anchored":false,"can_collide":true', ',"anchored":true,"can_collide":false', ',"anchored":true,"can_collide":true',
].map((text) => Buffer.from(text, 'latin1'));
const FIXED_SLOT = 48;
const materialText = (material: number): Buffer => Buffer.from(`],"material":{"value":${material},"name":${JSON.stringify(MATERIALS.get(material) ?? null)}},"transparency":`, 'utf8');

/** The fields' text from the flat arrays with the document's JsonWriter (which reads a Float64Array, as its scratch is); returns the bytes written. */
function formatInJs(v: PartValues, numbers: Float64Array, keep?: Buffer[]): number {
  const w = new JsonWriter(1 << 16);
  const materials = new Map<number, Buffer>();
  let bytes = 0;
  const take = (chunks: Buffer[]): void => { for (const chunk of chunks) { bytes += chunk.length; keep?.push(chunk); } };
  for (let i = 0; i < v.count; i++) {
    const at = i * 15;
    w.bytes(FIXED[0]!); w.float32Array(numbers, at, 3);
    w.bytes(FIXED[1]!);
    w.float32Array(numbers, at + 3, 3); w.byte(0x2c); w.float32Array(numbers, at + 6, 3); w.byte(0x2c); w.float32Array(numbers, at + 9, 3); w.byte(0x5d);
    w.bytes(FIXED[2]!); w.float32Array(numbers, at + 12, 3);
    w.bytes(FIXED[3]!);
    w.int(v.colors[i * 3]!); w.byte(0x2c); w.int(v.colors[i * 3 + 1]!); w.byte(0x2c); w.int(v.colors[i * 3 + 2]!);
    const material = v.material[i]!;
    let text = materials.get(material);
    if (!text) materials.set(material, (text = materialText(material)));
    w.bytes(text);
    w.float32(v.transparency[i]!);
    w.bytes(FIXED[4 + v.flags[i]!]!);
    if (w.ready) take(w.take());
  }
  take(w.flush());
  return bytes;
}

interface WasmWriter {
  memory: WebAssembly.Memory;
  exports: {
    cacheBytes(): number;
    resetCache(at: number): void;
    writeParts(count: number, numbers: number, transparency: number, material: number, colors: number, flags: number, fixed: number, materials: number, out: number): number;
  };
}

/** The module, with the inputs laid out in its memory; returns the formatter and where its text goes. */
function wasmFormatter(v: PartValues): { format(): number; text(length: number): Buffer } {
  const module = new WebAssembly.Module(readFileSync(new URL('./wasm-writer/writer.wasm', import.meta.url)));
  const distinctMaterials = [...new Set(v.material)];
  const textBytes = distinctMaterials.reduce((sum, m) => sum + materialText(m).length, 0);
  // Inputs, fixed texts, the material table (65,536 entries), the cache and the output (at most 400 bytes a part).
  const need = (1 << 20) + v.count * 70 + FIXED.length * FIXED_SLOT + 65536 * 8 + textBytes + (1 << 20) + v.count * 400;
  const memory = new WebAssembly.Memory({ initial: Math.ceil(need / 65536) + 16 });
  const instance = new WebAssembly.Instance(module, { env: { memory, abort() { throw new Error('abort'); } } });
  const writer: WasmWriter = { memory, exports: instance.exports as unknown as WasmWriter['exports'] };
  const bytes = new Uint8Array(memory.buffer);
  const view = new DataView(memory.buffer);
  let at = 1 << 20; // past the module's own static data
  const place = (data: Uint8Array): number => { const start = at; bytes.set(data, start); at += (data.length + 7) & ~7; return start; };
  const numbers = place(new Uint8Array(v.numbers.buffer, v.numbers.byteOffset, v.numbers.byteLength));
  const transparency = place(new Uint8Array(v.transparency.buffer, v.transparency.byteOffset, v.transparency.byteLength));
  const material = place(new Uint8Array(v.material.buffer, v.material.byteOffset, v.material.byteLength));
  const colors = place(v.colors);
  const flags = place(v.flags);
  const fixed = at;
  FIXED.forEach((text, k) => { bytes[fixed + k * FIXED_SLOT] = text.length; bytes.set(text, fixed + k * FIXED_SLOT + 1); });
  at += FIXED.length * FIXED_SLOT;
  const materials = at;
  at += 65536 * 8;
  for (const m of distinctMaterials) {
    const text = materialText(m);
    view.setUint32(materials + m * 8, at, true);
    view.setUint32(materials + m * 8 + 4, text.length, true);
    bytes.set(text, at);
    at += text.length;
  }
  const cache = (at + 7) & ~7;
  const out = cache + writer.exports.cacheBytes();
  // Once, as json-writer.ts's cache lives as long as its module: both stay warm from call to call.
  writer.exports.resetCache(cache);
  return {
    format() {
      const end = writer.exports.writeParts(v.count, numbers, transparency, material, colors, flags, fixed, materials, out);
      if (end === 0) throw new Error('a value needed the slow path');
      return end - out;
    },
    text: (length) => Buffer.from(memory.buffer, out, length),
  };
}

async function main(): Promise<void> {
  const parts = Number(process.env.BENCH_PARTS ?? 200000);
  const input = generatedInput(parts);
  const dom = decode(input.bytes);
  const rows: number[] = [];
  for (let row = 0; row < dom.count; row++) if (BASE_PART_CLASSES.has(dom.className(row))) rows.push(row);
  const partRows = Int32Array.from(rows);
  const values = readParts(dom, partRows);
  const wasm = wasmFormatter(values);

  // The same text, byte for byte, before anything is timed.
  const numbers = Float64Array.from(values.numbers); // outside the timed task, as the WebAssembly side's inputs are laid out once
  const jsChunks: Buffer[] = [];
  formatInJs(values, numbers, jsChunks);
  const jsText = Buffer.concat(jsChunks);
  const wasmBytes = wasm.format();
  if (!jsText.equals(wasm.text(wasmBytes))) throw new Error('the WebAssembly text differs from the JavaScript text');

  let sceneBytes = 0;
  const bench = new Bench({ time: 3000, iterations: 5, warmupIterations: 2 });
  bench.add('scene (sceneJson, the whole section)', () => {
    const w = new JsonWriter(1 << 18);
    let n = 0;
    for (const chunk of sceneJson(w, dom)) n += chunk.length;
    for (const chunk of w.flush()) n += chunk.length;
    sceneBytes = n;
  });
  bench.add('read: the fields from the columns', () => { readParts(dom, partRows); });
  bench.add('format in JS (JsonWriter)', () => { formatInJs(values, numbers); });
  bench.add('format in WebAssembly', () => { wasm.format(); });
  await bench.run();

  const median = (name: string): number => (bench.tasks.find((task) => task.name === name)!.result as { latency: { p50: number } }).latency.p50;
  const js = median('format in JS (JsonWriter)');
  const webAssembly = median('format in WebAssembly');
  const scene = median('scene (sceneJson, the whole section)');
  const rowsOut = bench.tasks.map((task) => {
    const ms = median(task.name);
    const mb = task.name.startsWith('format') ? jsText.length : task.name.startsWith('scene') ? sceneBytes : 0;
    return [task.name, fmt(ms, 1), mb ? fmt(mb / 1e6, 1) : '', mb ? fmt(mb / 1e3 / ms, 0) : '', `${fmt((100 * ms) / scene, 0)}%`];
  });
  process.stdout.write(`\nWebAssembly writer benchmark on ${machine()}: the scene of ${input.name} (${values.count.toLocaleString('en-US')} parts), medians\n\n`);
  process.stdout.write(table(['task', 'ms', 'MB', 'MB/s', 'of the scene'], rowsOut) + '\n');
  process.stdout.write(`\nformat in JS ÷ format in WebAssembly: ${fmt(js / webAssembly, 2)}× (the same ${fmt(jsText.length / 1e6, 1)} MB, byte for byte)\n`);
}

await main();
