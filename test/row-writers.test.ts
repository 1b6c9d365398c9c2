// Values written straight from a binary file's columns (row-writers.ts, Column.numbers,
// the JSON writer's byte paths) give exactly the text of the encoder over `get`, on
// every column of every real place and test file; the float32 text cache never hands
// out another number's text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { decode } from '../src/parser/index.js';
import type { Column } from '../src/parser/dom.js';
import { arrayColumn, ViewColumn } from '../src/parser/columns/column.js';
import { ENCODERS, type EncodeContext } from '../src/project/encoding.js';
import { JsonWriter } from '../src/project/json-writer.js';
import { nameWriter, rowWriter } from '../src/project/row-writers.js';
import { projectJson, type BuildProjectOptions } from '../src/project/document.js';
import { PLACES_DIR, TEST_FILES_DIR } from './support/paths.js';

const FILES = [
  ...readdirSync(PLACES_DIR).filter((name) => /\.rbx[lm]$/.test(name)).map((name) => join(PLACES_DIR, name)),
  ...readdirSync(TEST_FILES_DIR).filter((name) => /\.rbx[lm]$/.test(name)).map((name) => join(TEST_FILES_DIR, name)),
];
const ctx: EncodeContext = { refId: (referent) => `r${referent}` };
/** Rows checked per column: all of them up to this many, then an even spread. */
const MAX_ROWS = 4000;

function text(write: (w: JsonWriter) => void): string {
  const w = new JsonWriter(64);
  write(w);
  return Buffer.concat(w.flush()).toString('utf8');
}

function* sampledRows(column: Column): Generator<number> {
  const step = Math.max(1, Math.floor(column.length / MAX_ROWS));
  for (let row = 0; row < column.length; row += step) yield row;
}

test('every binary column: the row writer writes the encoder\'s text of `get`, and `numbers` gives its numbers', () => {
  const scratch = new Float64Array(12);
  const bitScratch = new Uint32Array(12);
  let checked = 0;
  const direct = new Set<string>();
  const floatBits = new Set<string>();
  for (const file of FILES) {
    const dom = decode(readFileSync(file));
    for (const table of dom.tables) {
      for (const [name, column] of table.columns) {
        const write = rowWriter(column, ctx);
        for (const row of sampledRows(column)) {
          const value = column.get(row);
          const where = `${file} ${table.className}.${name} row ${row}`;
          assert.equal(text((w) => write(w, row)), text((w) => ENCODERS[column.type](w, value, ctx)), where);
          if (column instanceof ViewColumn && column.floatBits) {
            // The bit patterns are the numbers' float32s, NaN's payload and -0 included.
            const count = column.floatBits(row, bitScratch);
            assert.equal(count, column.numbers!(row, scratch), where);
            const floats = new Float32Array(bitScratch.buffer, 0, count);
            for (let i = 0; i < count; i++) assert.ok(Object.is(floats[i], scratch[i]), `${where}: number ${i}`);
            floatBits.add(column.type);
          }
          if (column.numbers) {
            direct.add(column.type);
            const count = column.numbers(row, scratch);
            const expected = value === null ? [] : column.type === 'UniqueId' ? hexWords(value as string)
              : column.type === 'CFrame' || column.type === 'OptionalCFrame' ? cframeNumbers(value as { position: number[]; orientation: number[][] })
                : ([value] as unknown[]).flat() as number[];
            assert.deepEqual([...scratch.subarray(0, count)], expected, where);
          }
          checked++;
        }
      }
    }
  }
  assert.ok(checked > 100_000, `${checked} values checked`);
  // The families the document's hot path reads without `get`.
  for (const type of ['Float32', 'Int32', 'Enum', 'BrickColor', 'Vector3', 'Color3', 'Color3uint8', 'Vector3int16', 'CFrame', 'OptionalCFrame', 'UniqueId']) {
    assert.ok(direct.has(type), `${type} columns have numbers`);
  }
  for (const type of ['Float32', 'Vector3', 'Color3', 'CFrame', 'OptionalCFrame']) assert.ok(floatBits.has(type), `${type} columns have floatBits`);
});

function cframeNumbers(value: { position: number[]; orientation: number[][] }): number[] {
  return [...value.position, ...value.orientation.flat()];
}

function hexWords(hex: string): number[] {
  return [0, 8, 16, 24].map((at) => parseInt(hex.slice(at, at + 8), 16));
}

test('names written from the Name column\'s bytes are dom.name\'s', () => {
  for (const file of FILES) {
    const dom = decode(readFileSync(file));
    const writeName = nameWriter(dom);
    for (let row = 0; row < dom.count; row++) assert.equal(text((w) => writeName(w, row)), JSON.stringify(dom.name(row)), `${file} row ${row}`);
  }
});

test('asciiString writes what string writes for every ASCII byte, and declines anything else', () => {
  const ascii = Uint8Array.from({ length: 128 }, (_, i) => i);
  for (let start = 0; start < 128; start += 7) {
    const bytes = ascii.subarray(start, Math.min(128, start + 40));
    const expected = JSON.stringify(String.fromCharCode(...bytes));
    assert.equal(text((w) => { assert.equal(w.asciiString(bytes, 0, bytes.length), true); }), expected);
    assert.equal(text((w) => w.string(String.fromCharCode(...bytes))), expected);
  }
  const w = new JsonWriter(64);
  w.ascii('[');
  assert.equal(w.asciiString(Buffer.from('caf\u00e9', 'utf8'), 0, 5), false);
  w.ascii(']');
  assert.equal(Buffer.concat(w.flush()).toString('utf8'), '[]', 'nothing written when declined');
});

test('the float32 text cache: values that share a slot each keep their own text', () => {
  const view = new Float32Array(1);
  const bits = new Uint32Array(view.buffer);
  const slotOf = (x: number): number => { view[0] = x; return Math.imul(bits[0]!, 0x9e3779b1) >>> 18; };
  // Fractions spread over magnitudes, and for each a different one in the same slot.
  const bySlot = new Map<number, number>();
  const pairs: [number, number][] = [];
  let seed = 11;
  while (pairs.length < 200) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    const x = Math.fround((seed / 2 ** 32 - 0.5) * 10 ** ((seed % 9) - 3));
    if (Number.isInteger(x)) continue;
    const slot = slotOf(x);
    const other = bySlot.get(slot);
    if (other !== undefined && other !== x) pairs.push([other, x]);
    else bySlot.set(slot, x);
  }
  const w = new JsonWriter(1 << 16);
  for (const [a, b] of pairs) {
    for (const x of [a, b, a, b]) {
      w.float32(x);
      w.byte(0x2c);
    }
  }
  const texts = Buffer.concat(w.flush()).toString('latin1').split(',').slice(0, -1);
  pairs.flatMap(([a, b]) => [a, b, a, b]).forEach((x, i) => {
    assert.ok(Object.is(Math.fround(Number(texts[i])), x), `${x} written as ${texts[i]}`);
  });
});

test('a float32 given as its bit pattern is written as float32 writes the float, alone or in arrays, cached or not', () => {
  const patterns = [
    0, 0x80000000, 0x3f800000, 0xbf800000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f800001, 1, 0x807fffff, 0x00800000,
    0x3f000000, 0x3e800000, 0x40000000, 0xc0000000, 0x4b000000, 0x4b7fffff, 0x4b800001, 0x5f000000, 0x2f000000, 0x3dcccccd, 0x3e4ccccd, 0x42f6e979, 0xc2f6e979,
  ];
  let seed = 5;
  for (let i = 0; i < 20000; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    // Spread over all exponents, and clustered near whole numbers and small magnitudes.
    patterns.push(i % 3 === 0 ? seed : i % 3 === 1 ? 0x3f000000 + (seed & 0x00ffffff) : 0x44000000 + (seed & 0xfff));
  }
  const bits = Uint32Array.from(patterns);
  const floats = new Float32Array(bits.buffer);
  for (let pass = 0; pass < 2; pass++) { // the second pass reads the cache the first filled
    assert.equal(text((w) => { for (const b of bits) { w.float32Bits(b); w.byte(0x2c); } }), text((w) => { for (const x of floats) { w.float32(x); w.byte(0x2c); } }));
    for (let from = 0; from + 12 <= bits.length; from += 12) {
      assert.equal(text((w) => w.float32BitsArray(bits, from, 12)), text((w) => w.float32Array(floats, from, 12)), `patterns from ${from}`);
    }
  }
});

test('a number that is not a float32 is never given a float32\'s cached text', () => {
  const float = Math.fround(1.1);
  const between = float + 2 ** -52; // a double next to it, no float32
  const values = [float, between, float, between, 16777216, 16777217, 2 ** 31, 2 ** 31 + 1, NaN, -Infinity, -0, 0];
  const expected = ['1.1', String(between), '1.1', String(between), '16777216', '16777217', '2147483600', String(2 ** 31 + 1), '"NaN"', '"-Infinity"', '-0', '0'];
  assert.deepEqual(text((w) => { for (const x of values) { w.float32(x); w.byte(0x2c); } }).split(',').slice(0, -1), expected);
  assert.equal(text((w) => w.float32Array(values, 0, values.length)), `[${expected.join(',')}]`);
});

test('intArray and quotedInt write what int writes', () => {
  const values = [0, -0, 1, -1, 9, 10, 99, 255, 65535, -32768, 2 ** 31, 2 ** 32 + 5, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 0.5, 2 ** 60, NaN, Infinity];
  for (let from = 0; from < values.length; from++) {
    for (const count of [0, 1, 3]) {
      if (from + count > values.length) continue;
      const expected = text((w) => { w.byte(0x5b); for (let i = 0; i < count; i++) { if (i) w.byte(0x2c); w.int(values[from + i]!); } w.byte(0x5d); });
      assert.equal(text((w) => w.intArray(values, from, count)), expected, `${count} from ${from}`);
    }
  }
  for (const row of [0, 1, 9, 10, 12345, 2 ** 32, Number.MAX_SAFE_INTEGER]) assert.equal(text((w) => w.quotedInt(row)), `"${row}"`);
});

test('a document written from the columns is the document written from materialised values', () => {
  // The same file decoded twice; in the second copy every column is replaced by an
  // array of its values, which has no numbers, no bytes: everything goes through `get`.
  for (const file of FILES) {
    const bytes = readFileSync(file);
    const materialised = decode(bytes);
    for (const table of materialised.tables) {
      for (const [name, column] of table.columns) {
        table.columns.set(name, arrayColumn(column.type, Array.from({ length: column.length }, (_, row) => column.get(row))));
      }
    }
    for (const scriptsMode of ['enabled', 'skip'] as const) {
      const options: BuildProjectOptions = {
        title: '', owner: 'tester', createdAt: '2026-01-01T00:00:00.000Z', previewHash: '0'.repeat(64),
        fileName: 'map', fileSize: bytes.length, scriptsMode, assets: [],
      };
      const direct = Buffer.concat([...projectJson(decode(bytes), options)]);
      const viaValues = Buffer.concat([...projectJson(materialised, options)]);
      assert.ok(direct.equals(viaValues), `${file} (${scriptsMode}): the documents differ`);
    }
  }
});
