import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { decode, decodeBinary, decodeChunks, DecodeError, findService, fullName, getValue, roots } from '../src/index.js';
import { BINARY, chunkBoundaries, corpusFiles, prng } from './support/corpus.js';
import { readColumn } from '../src/parser/columns/index.js';
import { DEFAULT_LIMITS, resolveLimits, type DecodeLimits } from '../src/parser/limits.js';
import { DEFAULT_MESH_LIMITS, MIN_DECODER_HEAP_BYTES, resolveMeshLimits } from '../src/mesh/limits.js';
import { DEFAULT_TERRAIN_LIMITS, resolveTerrainLimits } from '../src/terrain/limits.js';
import { cursor } from '../src/parser/reader.js';
import { PLACES_DIR } from './support/paths.js';

const SCRIPT_CLASSES = new Set(['Script', 'LocalScript', 'ModuleScript']);

/** Script counts stated in ../shared/corpus/places/README.md. */
const DECLARED_SCRIPTS: Record<string, number> = {
  'booga.rbxl': 29, 'grow-a-slime.rbxl': 189, 'roblox-statemachine-demo.rbxl': 19,
  'rocket-arena-2006.rbxl': 15, 'slime-defense.rbxl': 81,
};

for (const file of corpusFiles(BINARY)) {
  test(`decodes ${basename(file)}: instance count matches the header, tree is whole`, () => {
    const bytes = readFileSync(file);
    const dom = decode(bytes);
    const view = decodeChunks(bytes);
    assert.equal(dom.format, 'binary');
    assert.equal(dom.count, view.num_instances);
    const rows = Array.from({ length: dom.count }, (_, row) => row);
    assert.equal(new Set(rows.map((row) => dom.className(row))).size, view.num_types);
    let reachable = 0;
    const stack = roots(dom);
    while (stack.length) {
      const at = stack.pop()!;
      reachable++;
      for (let child = dom.firstChild(at); child !== -1; child = dom.nextSibling(child)) stack.push(child);
    }
    assert.equal(reachable, dom.count);
    for (const row of rows) assert.equal(dom.name(row), getValue(dom, row, 'Name') ?? '');
    const declared = DECLARED_SCRIPTS[basename(file)];
    if (declared !== undefined) {
      assert.equal(rows.filter((row) => SCRIPT_CLASSES.has(dom.className(row))).length, declared);
    }
  });
}

test('the ZSTD place decodes to the same kind of tree as LZ4 ones', () => {
  const dom = decode(readFileSync(`${PLACES_DIR}/roblox-statemachine-demo.rbxl`));
  const workspace = findService(dom, 'Workspace');
  assert.ok(workspace !== -1 && dom.firstChild(workspace) !== -1);
  const meshParts = Array.from({ length: dom.count }, (_, row) => row).filter((row) => dom.className(row) === 'MeshPart');
  assert.equal(meshParts.length, 19);
  assert.match(fullName(dom, meshParts[0]!), /^Workspace\./);
});

function expectDecodeErrorOrDom(bytes: Uint8Array, label: string): void {
  try {
    decode(bytes);
  } catch (error) {
    assert.ok(error instanceof DecodeError, `${label}: ${(error as Error)?.name}: ${(error as Error)?.message}`);
    assert.ok(error.message.length > 0);
  }
}

for (const file of corpusFiles(BINARY)) {
  const name = basename(file);
  test(`malformed ${name}: truncated at every chunk boundary and at random points`, { timeout: 120_000 }, () => {
    const bytes = readFileSync(file);
    const boundaries = chunkBoundaries(bytes);
    for (const end of boundaries.slice(0, -1)) {
      assert.throws(() => decode(bytes.subarray(0, end)), DecodeError, `${name} cut at chunk boundary ${end}`);
    }
    const random = prng(0x5eed ^ bytes.length);
    for (let i = 0; i < 40; i++) {
      const end = Math.floor(random() * bytes.length);
      assert.throws(() => decode(bytes.subarray(0, end)), DecodeError, `${name} cut at ${end}`);
    }
  });
  test(`malformed ${name}: seeded random byte flips`, { timeout: 120_000 }, () => {
    const original = readFileSync(file);
    const random = prng(0xf1f1 ^ original.length);
    for (let round = 0; round < 40; round++) {
      const bytes = Uint8Array.from(original);
      const flips = 1 + Math.floor(random() * 8);
      for (let k = 0; k < flips; k++) bytes[Math.floor(random() * bytes.length)]! ^= 1 << Math.floor(random() * 8);
      expectDecodeErrorOrDom(bytes, `${name} round ${round}`);
    }
  });
}

function header(classes: number, instances: number): Uint8Array {
  const bytes = new Uint8Array(32);
  bytes.set(new TextEncoder().encode('<roblox!'), 0);
  bytes.set([0x89, 0xff, 0x0d, 0x0a, 0x1a, 0x0a], 8);
  new DataView(bytes.buffer).setInt32(16, classes, true);
  new DataView(bytes.buffer).setInt32(20, instances, true);
  return bytes;
}

function chunk(name: string, data: Uint8Array, compressedLength = 0, uncompressedLength = data.length): Uint8Array {
  const out = new Uint8Array(16 + data.length);
  out.set(new TextEncoder().encode(name.padEnd(4, '\0')), 0);
  new DataView(out.buffer).setUint32(4, compressedLength, true);
  new DataView(out.buffer).setUint32(8, uncompressedLength, true);
  out.set(data, 16);
  return out;
}

const concat = (...parts: Uint8Array[]): Uint8Array => Uint8Array.from(parts.flatMap((p) => [...p]));
const END = chunk('END', new TextEncoder().encode('</roblox>'));

test('a refusal past one of the limits names it (DecodeError.limit); a malformed file names none', () => {
  const bytes = readFileSync(`${PLACES_DIR}/booga.rbxl`);
  const refusal = (file: Uint8Array, limits: Parameters<typeof decode>[1]): DecodeError => {
    try {
      decode(file, limits);
    } catch (error) {
      assert.ok(error instanceof DecodeError, String(error));
      return error;
    }
    assert.fail('decoded');
  };
  const cases: [Partial<DecodeLimits>, string][] = [
    [{ maxInstances: 10 }, 'maxInstances'], [{ maxClasses: 3 }, 'maxClasses'], [{ maxChunkBytes: 1000 }, 'maxChunkBytes'],
    [{ maxTotalBytes: 100_000 }, 'maxTotalBytes'], [{ maxExpansion: 1 }, 'maxExpansion'], [{ maxStringBytes: 3 }, 'maxStringBytes'],
  ];
  for (const [limits, limit] of cases) assert.equal(refusal(bytes, limits).limit, limit, JSON.stringify(limits));
  // Negative header counts are malformed, not large.
  for (const offset of [16, 20]) {
    const negative = Uint8Array.from(bytes);
    new DataView(negative.buffer).setInt32(offset, -1, true);
    const error = refusal(negative, {});
    assert.match(error.message, /is outside 0\.\./);
    assert.equal(error.limit, undefined, `count at ${offset}`);
  }
  assert.equal(refusal(bytes.subarray(0, bytes.length >> 1), {}).limit, undefined, 'a truncated file');
  // A Content column naming more URIs than it has rows is malformed (its cap is the row count, not a limit).
  const content = new Uint8Array(12);
  new DataView(content.buffer).setUint32(4, 2, true);
  assert.throws(() => readColumn('Content', cursor(content), { count: 1, maxStringBytes: 100, maxSequenceLength: 10 }), (error: unknown) => {
    assert.ok(error instanceof DecodeError && /Content uri count 2 exceeds/.test(error.message), String(error));
    assert.equal(error.limit, undefined);
    return true;
  });
});

test('lying lengths are refused before allocation', () => {
  // A 1 KB-class file claiming a 1 GiB LZ4 chunk.
  const bomb = concat(header(0, 0), chunk('INST', new Uint8Array(8), 8, 1 << 30), END);
  assert.throws(() => decode(bomb), (e: unknown) => e instanceof DecodeError && /more than lz4 can expand|exceeds/.test(e.message) && e.chunk === 'INST');
  // An INST chunk claiming 2^31 instances in 12 bytes.
  const inst = new Uint8Array(4 + 4 + 1 + 1 + 4);
  const view = new DataView(inst.buffer);
  view.setUint32(4, 1, true); inst[8] = 0x41; inst[9] = 0; view.setUint32(10, 0x7fffffff, true);
  assert.throws(() => decode(concat(header(1, 1), chunk('INST', inst), END)), (e: unknown) => e instanceof DecodeError && e.chunk === 'INST' && e.offset === 32);
  // A huge string length inside a PROP chunk.
  assert.throws(() => decode(concat(header(0, 0), chunk('META', Uint8Array.of(1, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f)), END)), DecodeError);
  // Header counts beyond the configured caps.
  assert.throws(() => decodeBinary(concat(header(0, 50), END), { maxInstances: 10 }), /instance count 50/);
});

test('unknown chunks and unknown property types are skipped with warnings', () => {
  const inst = concat(Uint8Array.of(0, 0, 0, 0, 6, 0, 0, 0), new TextEncoder().encode('Folder'), Uint8Array.of(0, 1, 0, 0, 0), Uint8Array.of(0, 0, 0, 0));
  const prop = concat(Uint8Array.of(0, 0, 0, 0, 4, 0, 0, 0), new TextEncoder().encode('Fizz'), Uint8Array.of(0x7e, 1, 2, 3));
  const prnt = concat(Uint8Array.of(0, 1, 0, 0, 0), Uint8Array.of(0, 0, 0, 0), Uint8Array.of(0, 0, 0, 1));
  const dom = decode(concat(header(1, 1), chunk('INST', inst), chunk('ABCD', Uint8Array.of(1, 2, 3)), chunk('PROP', prop), chunk('PRNT', prnt), END));
  assert.equal(dom.count, 1);
  assert.equal(dom.className(0), 'Folder');
  assert.equal(roots(dom).length, 1);
  assert.ok(dom.warnings.some((w) => /unknown chunk: "ABCD"/.test(w)), dom.warnings.join('; '));
  assert.ok(dom.warnings.some((w) => /unknown type: Fizz of class id 0: type id 0x7e/.test(w)), dom.warnings.join('; '));
});

test('a parent cycle is an error, not a hang', () => {
  const inst = concat(Uint8Array.of(0, 0, 0, 0, 6, 0, 0, 0), new TextEncoder().encode('Folder'), Uint8Array.of(0, 2, 0, 0, 0), Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 2));
  // children 0,1 (deltas 0,1 zigzag 0,2), parents 1,0 (deltas 1,-1 zigzag 2,1)
  const prnt = concat(Uint8Array.of(0, 2, 0, 0, 0), Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 2), Uint8Array.of(0, 0, 0, 0, 0, 0, 2, 1));
  assert.throws(() => decode(concat(header(1, 2), chunk('INST', inst), chunk('PRNT', prnt), END)), (e: unknown) => e instanceof DecodeError && /cycle/.test(e.message));
});

test('neither binary nor XML is a clear error', () => {
  assert.throws(() => decode(new TextEncoder().encode('PK\u0003\u0004 zip file')), (e: unknown) => e instanceof DecodeError && /not a Roblox place/.test(e.message));
  assert.throws(() => decode(new Uint8Array(0)), /empty/);
});

test('hostile inputs found in review fail fast with a DecodeError', async () => {
  // A 94-byte file whose ZSTD block declares ~98k sequences of ~65k-byte matches (made one JS decoder spin for minutes).
  const zstdSpin = Buffer.from('3c726f626c6f782189ff0d0a1a0a000000000000000000000000000000000000585858581500000060ea00000000000028b52ffd003865000000ffffff5400003400000001454e44000000000009000000000000003c2f726f626c6f783e', 'hex');
  assert.throws(() => decode(zstdSpin), (e: unknown) => e instanceof DecodeError && /ZSTD/.test(e.message));
  // A ZSTD chunk of 10 MB of zeros in a few hundred bytes: over the whole-file expansion cap.
  const { compress, init } = await import('@bokuweb/zstd-wasm');
  await init(); // the decoder runs its own instance of the module; the package's glue is loaded here for compress only
  const zeros = compress(new Uint8Array(10 << 20), 19);
  const bomb = concat(header(0, 0), chunk('META', zeros, zeros.length, 10 << 20), END);
  assert.throws(() => decode(bomb), (e: unknown) => e instanceof DecodeError && /expand/.test(e.message));
  // Comment runs before the root once made the format sniff backtrack exponentially.
  assert.throws(() => decode(new TextEncoder().encode('<!---->'.repeat(40) + 'x')), /not a Roblox place/);
  assert.equal(decode(new TextEncoder().encode('<?xml version="1.0"?>\n<!-- a -->\n<roblox version="4"></roblox>')).format, 'xml');
  // A 100,000-instance parent cycle: found with one walk, not one walk per instance.
  const count = 100_000;
  const zigzag = (n: number) => (n >= 0 ? 2 * n : -2 * n - 1);
  const interleave = (values: number[]) => {
    const out = new Uint8Array(values.length * 4);
    values.forEach((v, i) => { for (let b = 0; b < 4; b++) out[b * values.length + i] = (v >>> (24 - 8 * b)) & 0xff; });
    return out;
  };
  const deltas = (refs: number[]) => refs.map((r, i) => zigzag(r - (i ? refs[i - 1]! : 0)));
  const refs = Array.from({ length: count }, (_, i) => i);
  const parents = refs.map((r) => (r + 1) % count);
  const inst = concat(Uint8Array.of(0, 0, 0, 0, 6, 0, 0, 0), new TextEncoder().encode('Folder'), Uint8Array.of(0), new Uint8Array(new Uint32Array([count]).buffer), interleave(deltas(refs)));
  const prnt = concat(Uint8Array.of(0), new Uint8Array(new Uint32Array([count]).buffer), interleave(deltas(refs)), interleave(deltas(parents)));
  assert.throws(() => decode(concat(header(1, count), chunk('INST', inst), chunk('PRNT', prnt), END)), /cycle/);
});

test('a limit given as undefined keeps its default (place, mesh and terrain caps), and one given is applied', () => {
  const place = resolveLimits({ maxInstances: undefined, maxClasses: 3 });
  assert.equal(place.maxInstances, DEFAULT_LIMITS.maxInstances);
  assert.equal(place.maxClasses, 3);
  const mesh = resolveMeshLimits({ maxVertices: undefined, maxDecoderHeapBytes: undefined, maxLods: 4 });
  assert.equal(mesh.maxVertices, DEFAULT_MESH_LIMITS.maxVertices);
  assert.equal(mesh.maxDecoderHeapBytes, DEFAULT_MESH_LIMITS.maxDecoderHeapBytes);
  assert.equal(mesh.maxLods, 4);
  // A Draco heap cap under a fresh module's heap would reload the module after every decode.
  for (const low of [0, 1, MIN_DECODER_HEAP_BYTES - 1, Number.NaN]) assert.equal(resolveMeshLimits({ maxDecoderHeapBytes: low }).maxDecoderHeapBytes, MIN_DECODER_HEAP_BYTES);
  assert.equal(resolveMeshLimits({ maxDecoderHeapBytes: 32 << 20 }).maxDecoderHeapBytes, 32 << 20);
  assert.equal(resolveTerrainLimits({ maxChunks: undefined }).maxChunks, DEFAULT_TERRAIN_LIMITS.maxChunks);
  // Through the decoder: the cap given is enforced, the one left undefined does not turn checks off.
  const bytes = readFileSync(`${PLACES_DIR}/slime-defense.rbxl`);
  assert.throws(() => decode(bytes, { maxInstances: undefined, maxClasses: 3 }), (error: unknown) => error instanceof DecodeError && error.limit === 'maxClasses');
  assert.equal(decode(bytes, { maxInstances: undefined }).count, decode(bytes).count);
});
