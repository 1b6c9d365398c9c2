/**
 * The streaming JSON writer (src/project/json-stream.ts): its pieces concatenate to
 * exactly JSON.stringify's text, for every kind of value, without building it whole;
 * the file writer holds a size cap and fsyncs; a compressing transform plugs in.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGzip, gunzipSync } from 'node:zlib';
import { Transform } from 'node:stream';
import { jsonChunks, JsonTooLargeError, pumpChunks, writeJsonFile } from '../src/project/json-stream.js';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { decodeChunks } from '../src/parser/index.js';
import { jsonReplacer } from '../src/parser/values.js';
import { stringifyDump } from '../src/parser/dump.js';
import { PLACES_DIR, TEST_FILES_DIR } from './support/paths.js';

const text = (value: unknown, size?: number): string => [...jsonChunks(value, size)].join('');

test('a string longer than a piece is written a piece at a time, never split inside a surrogate pair: JSON.stringify\'s text with a replacer too', () => {
  for (const size of [1, 2, 3, 7, 64]) {
    for (const inner of ['\u{1F600}', '\uD800', '\uDC00', '\uDBFF\uDBFF\uDFFF', '"\\\n\x7f\x01', '\u{1F600}\u{1F600}']) {
      for (const lead of [0, 1, 2, size - 1, size, size + 1]) {
        const value = { s: 'a'.repeat(Math.max(0, lead)) + inner + '\x01'.repeat(size * 2), list: [inner.repeat(size), 1n, NaN] };
        assert.equal([...jsonChunks(value, size, jsonReplacer)].join(''), JSON.stringify(value, jsonReplacer), `${size} ${lead} ${JSON.stringify(inner)}`);
        for (const piece of jsonChunks(value.s, size)) assert.ok(piece.length <= 6 * (size + 1) + 2, 'a piece holds about one slice');
      }
    }
  }
});

test('the chunk view of every corpus file, in pieces, is exactly stringifyDump\'s text (what dump --chunks prints)', () => {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.rbx[lm]x?$/.test(name)) files.push(path);
    }
  };
  walk(PLACES_DIR);
  walk(TEST_FILES_DIR);
  let compared = 0;
  for (const file of files) {
    let view;
    try { view = decodeChunks(readFileSync(file)); } catch { continue; }
    assert.equal([...jsonChunks(view, 4096, jsonReplacer)].join(''), stringifyDump(view), file);
    compared++;
  }
  assert.ok(compared > 40, `${compared} files`);
});

test('the pieces are exactly JSON.stringify\'s text', () => {
  const date = new Date(0);
  const values: unknown[] = [
    0, -0, 1.5e300, NaN, Infinity, true, false, null, '', 'a"b\\c\n\u0000\u2028😀', '\ud800 lone',
    [], {}, [undefined, () => 1, Symbol('s'), null], { a: undefined, b: () => 1, c: Symbol('c'), d: 1 },
    { toJSON: (key: string) => `key:${key}` }, { date, nested: { date } }, [[[[]]]], new Uint8Array([1, 2]),
    { 'quote"key': 1, '': 2 }, new Map([[1, 2]]), Object.assign(Object.create({ inherited: 1 }), { own: 2 }),
  ];
  for (const value of values) assert.equal(text(value), JSON.stringify(value), String(JSON.stringify(value)));
  // A random document, cut into tiny pieces.
  let seed = 7;
  const next = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const make = (depth: number): unknown => {
    const kind = Math.floor(next() * (depth > 4 ? 4 : 6));
    if (kind === 0) return next() * 1e6 - 5e5;
    if (kind === 1) return String.fromCharCode(...Array.from({ length: Math.floor(next() * 8) }, () => Math.floor(next() * 0x3000)));
    if (kind === 2) return next() < 0.5;
    if (kind === 3) return null;
    if (kind === 4) return Array.from({ length: Math.floor(next() * 5) }, () => make(depth + 1));
    return Object.fromEntries(Array.from({ length: Math.floor(next() * 5) }, (_, i) => [`k${i}`, make(depth + 1)]));
  };
  for (let i = 0; i < 200; i++) {
    const value = make(0);
    assert.equal(text(value, 7), JSON.stringify(value));
  }
});

test('what JSON.stringify refuses is refused: cycles, BigInt, no JSON text at all', () => {
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  assert.throws(() => text(cycle), TypeError);
  assert.throws(() => text({ n: 1n }), TypeError);
  assert.throws(() => text(undefined), TypeError);
  // The same object twice (not a cycle) is fine.
  const shared = { x: 1 };
  assert.equal(text([shared, shared]), '[{"x":1},{"x":1}]');
});

test('a deep document needs no stack: 100,000 levels', () => {
  let value: unknown = 0;
  for (let i = 0; i < 100_000; i++) value = [value];
  const out = text(value);
  assert.equal(out.length, 200_001);
});

test('writeJsonFile writes the text, holds maxBytes, and takes a compressing transform', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'rbxl-json-'));
  try {
    const value = { parts: Array.from({ length: 20_000 }, (_, i) => ({ id: i, name: `Part ${i}` })) };
    const plain = join(dir, 'plain.json');
    const written = await writeJsonFile(plain, value);
    assert.equal(await readFile(plain, 'utf8'), JSON.stringify(value));
    assert.equal(written.bytes, Buffer.byteLength(JSON.stringify(value)));
    await assert.rejects(writeJsonFile(join(dir, 'capped.json'), value, { maxBytes: 1000 }), JsonTooLargeError);
    await assert.rejects(writeJsonFile(plain, value), { code: 'EEXIST' }, 'never overwrites');
    const gz = join(dir, 'doc.json.gz');
    const compressed = await writeJsonFile(gz, value, { encode: () => createGzip() });
    assert.equal(gunzipSync(await readFile(gz)).toString('utf8'), JSON.stringify(value));
    assert.ok(compressed.bytes < compressed.jsonBytes / 3);
    // Past maxBytes after the transform it is still JsonTooLargeError (the caller's 507), not the AbortError pipeline reports.
    await assert.rejects(writeJsonFile(join(dir, 'capped.json.gz'), value, { maxBytes: 1000, encode: () => createGzip() }), JsonTooLargeError);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

/** A transform that passes chunks on a turn of the event loop later, as a compressor answers from its thread. */
function slowPassThrough(): { transform: Transform; done: () => number } {
  let done = 0;
  const transform = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      setImmediate(() => { done++; callback(null, chunk); });
    },
  });
  return { transform, done: () => done };
}

test('pumpChunks: the transform works on each chunk while the next is produced, and everything arrives in order', async () => {
  const { transform, done } = slowPassThrough();
  const seenWhenProducing: number[] = [];
  const chunks = (function* () {
    for (let i = 0; i < 20; i++) {
      seenWhenProducing.push(done());
      yield Buffer.from(`${i};`);
    }
  })();
  const received: Buffer[] = [];
  await pumpChunks(chunks, transform, async (source) => { for await (const chunk of source) received.push(Buffer.from(chunk)); });
  assert.equal(Buffer.concat(received).toString(), Array.from({ length: 20 }, (_, i) => `${i};`).join(''));
  // Chunk k is produced after chunk k - 2 went through: the producer never runs ahead
  // of the transform by a whole batch, nor waits for it before starting the next.
  seenWhenProducing.forEach((seen, k) => assert.ok(seen >= k - 1, `chunk ${k} produced when ${seen} were through`));
});

test('pumpChunks: a failing source or sink rejects with its error and tears the transform down', async () => {
  const failing = (function* () {
    yield Buffer.from('a');
    throw new Error('source failed');
  })();
  const first = slowPassThrough();
  await assert.rejects(pumpChunks(failing, first.transform, async (source) => { for await (const _ of source); }), /source failed/);
  assert.ok(first.transform.destroyed);

  let produced = 0;
  const many = (function* () { for (; produced < 1000; produced++) yield Buffer.alloc(1024); })();
  const second = slowPassThrough();
  await assert.rejects(pumpChunks(many, second.transform, async (source) => {
    for await (const _ of source) throw new Error('sink failed');
  }), /sink failed/);
  assert.ok(produced < 1000, `the source stopped (${produced} chunks produced)`);

  // After the sink fails, no further chunk is made: a source that would fail on it
  // cannot replace the sink's error (a disk-full code must reach the caller).
  let made = 0;
  const third = slowPassThrough();
  const diskFull = Object.assign(new Error('no space left'), { code: 'ENOSPC' });
  const source = (function* () {
    for (;;) {
      if (made > 0 && third.transform.destroyed) throw new Error('a chunk was made after the sink failed');
      made++;
      yield Buffer.alloc(1024);
    }
  })();
  await assert.rejects(pumpChunks(source, third.transform, async (chunks) => {
    for await (const _ of chunks) throw diskFull;
  }), { code: 'ENOSPC' });
});
