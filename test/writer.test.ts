/**
 * The binary writer: decodeBinary(encode(dom)) gives back dom (tree, names, every
 * property type and value) for every binary and XML file in the corpus, a hand-built
 * DOM with every property type and its edge values, and generated places; the chunks
 * it writes are the ones Studio wrote, byte for byte, apart from documented cases;
 * and the place generator is deterministic.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { uncompressSync } from 'lz4-napi';
import { decompress as zstdDecompress, init as initZstd } from '@bokuweb/zstd-wasm';

await initZstd();
import { decodeBinary } from '../src/parser/binary.js';
import { decode } from '../src/parser/index.js';
import { children, getValue, propertyNames, roots, type Column, type Dom } from '../src/parser/dom.js';
import { DomBuilder } from '../src/parser/dom-build.js';
import type { Matrix3, PropType, Value, Vec3 } from '../src/parser/values.js';
import { encode, EncodeError } from '../src/parser/writer/index.js';
import { basicRotationId } from '../src/parser/writer/cframe.js';
import { generatePlace } from '../bench/generate.js';
import { CORPUS_DIR, PLACES_DIR, REPO_ROOT, TEST_FILES_DIR } from './support/paths.js';

// ---------------------------------------------------------------------------
// Helpers: building DOMs, reading chunks back without the decoder, comparing DOMs

function column(type: PropType, values: Value[]): Column {
  return { type, length: values.length, get: (row) => values[row]! };
}

interface Spec { className: string; name: string; parent?: number; referent?: number; properties?: Record<string, [PropType, Value]> }

/**
 * A DOM where each instance has its own one-row table (as the XML decoder builds
 * them when no two Items share a property list). Rows and (unless given) referents
 * are the spec indexes; `parent` is the index of an earlier spec.
 */
function buildDom(specs: Spec[], extra: Partial<Pick<Dom, 'metadata' | 'sharedStrings'>> = {}): Dom {
  const builder = new DomBuilder();
  specs.forEach((spec, index) => {
    const columns = new Map<string, Column>();
    for (const [name, [type, value]] of Object.entries(spec.properties ?? {})) columns.set(name, column(type, [value]));
    columns.set('Name', column('String', [spec.name]));
    builder.add(builder.addTable(spec.className, columns), spec.parent ?? -1, spec.referent ?? index);
  });
  return builder.build({ metadata: extra.metadata ?? [], sharedStrings: extra.sharedStrings ?? [] });
}

/** One class whose instances share a columnar table (as the binary decoder and the generator build them). */
function columnarDom(className: string, rows: number, properties: Record<string, [PropType, Value[]]>, sharedStrings: Uint8Array[] = []): Dom {
  const columns = new Map<string, Column>();
  const names = Array.from({ length: rows }, (_, i) => `${className}${i}`);
  columns.set('Name', column('String', names));
  for (const [name, [type, values]] of Object.entries(properties)) {
    assert.equal(values.length, rows, `${name} needs ${rows} values`);
    columns.set(name, column(type, values));
  }
  const builder = new DomBuilder();
  const table = builder.addTable(className, columns);
  for (let row = 0; row < rows; row++) builder.add(table);
  return builder.build({ sharedStrings });
}

interface RawChunk { name: string; compressedLength: number; data: Uint8Array }

/** The file's chunks, decompressed with lz4-napi / libzstd (wasm) directly: checks the writer's framing independently of the decoder. */
function rawChunks(bytes: Uint8Array): RawChunk[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const chunks: RawChunk[] = [];
  for (let at = 32; at < bytes.length;) {
    const name = Buffer.from(bytes.subarray(at, at + 4)).toString('latin1').replace(/\0+$/, '');
    const compressedLength = view.getUint32(at + 4, true);
    const length = view.getUint32(at + 8, true);
    const body = bytes.subarray(at + 16, at + 16 + (compressedLength || length));
    let data: Uint8Array = body;
    if (compressedLength) {
      if (body[0] === 0x28 && body[1] === 0xb5 && body[2] === 0x2f && body[3] === 0xfd) data = zstdDecompress(body);
      else {
        const prefixed = Buffer.alloc(body.length + 4);
        prefixed.writeUInt32LE(length, 0);
        prefixed.set(body, 4);
        data = uncompressSync(prefixed);
      }
    }
    assert.equal(data.length, length, `${name} chunk decompresses to its declared size`);
    chunks.push({ name, compressedLength, data });
    at += 16 + (compressedLength || length);
  }
  return chunks;
}

/** "PROP <class id> <property>", "INST <class id>" or the chunk name: chunks that must match one to one. */
function chunkKey({ name, data }: RawChunk): string {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (name === 'PROP') return `PROP ${view.getUint32(0, true)} ${Buffer.from(data.subarray(8, 8 + view.getUint32(4, true))).toString()}`;
  if (name === 'INST') return `INST ${view.getUint32(0, true)} ${Buffer.from(data.subarray(8, 8 + view.getUint32(4, true))).toString()}`;
  return name;
}

/** Referent arrays, un-interleaved, un-zigzagged and accumulated. */
function readReferents(data: Uint8Array, at: number, count: number): number[] {
  const out: number[] = [];
  let last = 0;
  for (let i = 0; i < count; i++) {
    const u = ((data[at + i]! << 24) | (data[at + count + i]! << 16) | (data[at + 2 * count + i]! << 8) | data[at + 3 * count + i]!) >>> 0;
    last = (last + ((u >>> 1) ^ -(u & 1))) | 0;
    out.push(last);
  }
  return out;
}

function prntLinks(bytes: Uint8Array): { children: number[]; parents: number[] } {
  const prnt = rawChunks(bytes).find((c) => c.name === 'PRNT')!;
  const count = new DataView(prnt.data.buffer, prnt.data.byteOffset).getUint32(1, true);
  return { children: readReferents(prnt.data, 5, count), parents: readReferents(prnt.data, 5 + 4 * count, count) };
}

/**
 * decoded equals original: same instances (by referent), classes, names, parents,
 * child order, root order, and every property with equal type and value; Ref values
 * must point at the counterpart of the instance the original pointed at.
 */
function assertSameDom(original: Dom, decoded: Dom, where: string): void {
  assert.equal(decoded.count, original.count, `${where}: instance count`);
  assert.deepEqual(decoded.metadata, original.metadata, `${where}: metadata`);
  assert.deepEqual(decoded.sharedStrings.map((s) => Buffer.from(s).toString('hex')), original.sharedStrings.map((s) => Buffer.from(s).toString('hex')), `${where}: shared strings`);
  const counterpart = (row: number): number => {
    const found = decoded.rowOf(original.referent(row));
    assert.ok(found !== -1, `${where}: instance ${original.referent(row)} (${original.className(row)}) is missing`);
    return found;
  };
  const refTarget = (dom: Dom, value: Value) => (value === -1 ? null : dom.rowOf(value as number) === -1 ? `dangling ${value as number}` : dom.rowOf(value as number));
  assert.deepEqual(roots(decoded), roots(original).map(counterpart), `${where}: roots in order`);
  for (let row = 0; row < original.count; row++) {
    const other = counterpart(row);
    const at = `${where}: ${original.className(row)} ${JSON.stringify(original.name(row))} (${original.referent(row)})`;
    assert.equal(decoded.className(other), original.className(row), `${at}: class`);
    assert.equal(decoded.name(other), original.name(row), `${at}: name`);
    assert.equal(decoded.parent(other), original.parent(row) === -1 ? -1 : counterpart(original.parent(row)), `${at}: parent`);
    assert.deepEqual(children(decoded, other), children(original, row).map(counterpart), `${at}: children in order`);
    assert.deepEqual(propertyNames(decoded, other).sort(), propertyNames(original, row).sort(), `${at}: property names`);
    for (const [name, col] of original.table(original.tableOf(row)).columns) {
      const mine = decoded.table(decoded.tableOf(other)).columns.get(name)!;
      assert.equal(mine.type, col.type, `${at}.${name}: type`);
      const expected = col.get(original.rowInTable(row));
      const actual = mine.get(decoded.rowInTable(other));
      if (col.type === 'Ref') {
        const target = refTarget(original, expected);
        assert.equal(refTarget(decoded, actual), typeof target === 'number' ? counterpart(target) : target, `${at}.${name}: Ref target`);
      } else if (col.type === 'Content' && typeof expected === 'object' && expected && 'Object' in expected) {
        assert.ok(typeof actual === 'object' && actual && 'Object' in actual, `${at}.${name}: Content Object`);
        assert.equal(refTarget(decoded, actual.Object), counterpart(original.rowOf(expected.Object)), `${at}.${name}: Content Object target`);
      } else {
        assert.deepStrictEqual(actual, expected, `${at}.${name}`);
      }
    }
  }
}

function roundTrip(dom: Dom, where: string): void {
  for (const compress of [true, false]) {
    const bytes = encode(dom, { compress });
    assertSameDom(dom, decodeBinary(bytes), `${where} (${compress ? 'LZ4' : 'uncompressed'})`);
  }
}

function binaryCorpusFiles(dir = CORPUS_DIR): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir).sort()) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) files.push(...binaryCorpusFiles(path));
    else if (readFileSync(path).subarray(0, 8).toString('latin1') === '<roblox!' && readFileSync(path)[8] === 0x89) files.push(path);
  }
  return files;
}

const relative = (path: string) => path.slice(CORPUS_DIR.length + 1);
const rowsOf = (dom: Dom): number[] => Array.from({ length: dom.count }, (_, row) => row);

// ---------------------------------------------------------------------------

describe('round trip of the corpus', () => {
  const files = binaryCorpusFiles();
  test('finds the binary corpus', () => assert.ok(files.length >= 40, `only ${files.length} binary files under ${CORPUS_DIR}`));
  for (const file of files) {
    test(relative(file), () => roundTrip(decodeBinary(readFileSync(file)), relative(file)));
  }
});

describe('round trip of XML-decoded corpus files', () => {
  const files = readdirSync(TEST_FILES_DIR).filter((f) => /\.rbx[lm]x$/.test(f)).map((f) => join(TEST_FILES_DIR, f));
  files.push(...readdirSync(PLACES_DIR).filter((f) => /\.rbx[lm]x$/.test(f)).map((f) => join(PLACES_DIR, f)));
  test('finds XML files', () => assert.ok(files.length >= 30));
  for (const file of files) {
    test(relative(file), () => roundTrip(decode(readFileSync(file)), relative(file)));
  }
});

describe('re-encoded chunks match what Studio wrote', () => {
  /**
   * Known differences, each a fact the DOM does not keep: the SSTR hash (Studio
   * writes zeros, the spec and this writer MD5), PhysicalProperties' "has
   * AcousticAbsorption" bit on values equal to the default, and whether Studio gave
   * a plain `Instance` root of a place a service marker (it does in most files).
   */
  const tolerated = (key: string) => key === 'SSTR' || key.endsWith(' CustomPhysicalProperties') || /^INST \d+ Instance$/.test(key);
  for (const file of binaryCorpusFiles()) {
    test(relative(file), () => {
      const bytes = readFileSync(file);
      const studio = new Map(rawChunks(bytes).map((c) => [chunkKey(c), c.data]));
      const ours = new Map(rawChunks(encode(decodeBinary(bytes))).map((c) => [chunkKey(c), c.data]));
      assert.deepEqual([...ours.keys()].sort(), [...studio.keys()].sort(), 'same chunks');
      for (const [key, data] of studio) {
        if (tolerated(key)) continue;
        assert.ok(Buffer.from(ours.get(key)!).equals(data), `${key} differs`);
      }
    });
  }
});

describe('every property type', () => {
  const nonUtf8 = { base64: Buffer.from([0xff, 0x00, 0xfe, 0x80]).toString('base64') };
  const f = Math.fround;
  const cf = (position: Vec3, orientation: Matrix3) => ({ position, orientation });
  const skewed: Matrix3 = [[f(0.06294725), f(0.403198), f(0.9129453)], [f(0.75241846), f(-0.6201453), f(0.22200526)], [f(0.65567076), f(0.6729422), f(-0.34241003)]];
  const properties: Record<string, [PropType, Value[]]> = {
    Text: ['String', ['', 'héllo ✓ 😀', nonUtf8, 'x'.repeat(70_000)]],
    Flag: ['Bool', [true, false, true, false]],
    Count: ['Int32', [-2147483648, 2147483647, 0, -1]],
    Single: ['Float32', [NaN, Infinity, -Infinity, -0]],
    Tiny: ['Float32', [f(1e-45), f(3.4e38), f(-0.15625), f(0.1)]],
    Double: ['Float64', [NaN, -0, Number.MAX_VALUE, 5e-324]],
    Padding: ['UDim', [[0.5, -2147483648], [-0, 2147483647], [NaN, 0], [1, -1]]],
    Position: ['UDim2', [[[f(0.75), -30], [f(-1.5), 60]], [[0, 0], [0, 0]], [[Infinity, 1], [-Infinity, -1]], [[1, 2], [3, 4]]]],
    Beam: ['Ray', [{ origin: [1, 2, 3], direction: [4, 5, 6] }, { origin: [-0, NaN, 0], direction: [0, 0, -1] }, { origin: [0, 0, 0], direction: [0, 0, 0] }, { origin: [f(0.1), 0, 0], direction: [0, f(0.2), 0] }]],
    Faces: ['Faces', [[], ['Right', 'Top', 'Back', 'Left', 'Bottom', 'Front'], ['Front'], ['Right', 'Bottom']]],
    Axes: ['Axes', [[], ['X', 'Y', 'Z'], ['Y'], ['X', 'Z']]],
    Brick: ['BrickColor', [194, 1004, 0, 4294967295]],
    Tint: ['Color3', [[1, 0, 0], [NaN, -0, Infinity], [f(0.5), f(0.25), f(0.125)], [0, 0, 0]]],
    Offset: ['Vector2', [[f(-100.8), f(200.55)], [0, -0], [NaN, 1], [3, 4]]],
    Size: ['Vector3', [[1, 2, 3], [-1, -2, -3], [Infinity, NaN, -0], [f(1e-40), 0, 0]]],
    Pivot: ['CFrame', [
      cf([1, 2, 3], [[1, 0, 0], [0, 1, 0], [0, 0, 1]]),
      cf([4, 5, 6], skewed),
      cf([-0.5, Infinity, NaN], [[0, -1, 0], [1, 0, 0], [0, 0, 1]]),
      cf([0, 0, 0], [[-0, 0, 1], [0, 1, 0], [-1, 0, 0]]), // a basic rotation but with -0: must keep the -0
    ]],
    Mode: ['Enum', [0, 1, 4294967295, 256]],
    Target: ['Ref', [-1, 2, 0, 3]],
    Cell: ['Vector3int16', [[1, 2, 3], [-32768, 32767, 0], [-1, -2, -3], [0, 0, 0]]],
    Curve: ['NumberSequence', [
      { keypoints: [{ time: 0, value: 0, envelope: 0 }, { time: 1, value: 1, envelope: f(0.5) }] },
      { keypoints: [] },
      { keypoints: [{ time: 0, value: NaN, envelope: -0 }, { time: f(0.5), value: 1, envelope: 0 }, { time: 1, value: Infinity, envelope: 0 }] },
      { keypoints: [{ time: 0, value: 1, envelope: 0 }, { time: 1, value: 1, envelope: 0 }] },
    ]],
    Gradient: ['ColorSequence', [
      { keypoints: [{ time: 0, color: [1, 1, 1] }, { time: 1, color: [0, 0, 0] }] },
      { keypoints: [] },
      { keypoints: [{ time: 0, color: [1, 0, 0] }, { time: f(0.5), color: [0, 1, 0] }, { time: 1, color: [0, 0, NaN] }] },
      { keypoints: [{ time: 0, color: [f(0.2), f(0.4), f(0.6)] }, { time: 1, color: [1, 1, 1] }] },
    ]],
    Range: ['NumberRange', [[0, f(0.5)], [-Infinity, Infinity], [NaN, -0], [1, 1]]],
    Slice: ['Rect', [[[-1, -10], [8, 9]], [[0, 1], [5, 6]], [[NaN, -0], [Infinity, 0]], [[0, 0], [0, 0]]]],
    Physics: ['PhysicalProperties', [
      'Default',
      { density: f(0.7), friction: f(0.3), elasticity: f(0.5), frictionWeight: 1, elasticityWeight: 1, acousticAbsorption: 1 },
      { density: f(0.25), friction: f(0.5), elasticity: f(0.125), frictionWeight: 1, elasticityWeight: f(0.25), acousticAbsorption: f(0.5) },
      { density: NaN, friction: -0, elasticity: 0, frictionWeight: 0, elasticityWeight: 0, acousticAbsorption: 0 },
    ]],
    Color3uint8: ['Color3uint8', [[0, 255, 255], [63, 0, 127], [255, 255, 255], [0, 0, 0]]],
    AssetId: ['Int64', ['-9223372036854775808', '9223372036854775807', -1, 9007199254740991]],
    Bigger: ['Int64', ['9007199254740992', -9007199254740991, 0, '-9007199254740993']],
    Mesh: ['SharedString', [0, 1, 1, 2]],
    Code: ['Bytecode', ['', nonUtf8, 'print(1)', { base64: Buffer.from([0x1b, 0x4c, 0x75, 0x61, 0xc0]).toString('base64') }]],
    WorldPivot: ['OptionalCFrame', [null, cf([1, -1, 0.5], skewed), cf([0, 0, 0], [[1, 0, 0], [0, 1, 0], [0, 0, 1]]), null]],
    UniqueId: ['UniqueId', ['00000000000000000000000000000000', '44b188dace632b4702e9c68d0048309a', 'ffffffffffffffffffffffffffffffff', '8000000000000001deadbeef00000001']],
    FontFace: ['Font', [
      { family: 'rbxasset://fonts/families/RobotoMono.json', weight: 'Bold', style: 'Italic', cachedFaceId: null },
      { family: 'rbxasset://fonts/families/SourceSansPro.json', weight: 'Regular', style: 'Normal', cachedFaceId: 'rbxasset://fonts/SourceSansPro-Regular.ttf' },
      { family: '', weight: 'Thin', style: 'Normal', cachedFaceId: null },
      { family: 'rbxassetid://12187365364', weight: 'Heavy', style: 'Italic', cachedFaceId: null },
    ]],
    Capabilities: ['SecurityCapabilities', [0, '18446744073709551615', 4294967296, 9007199254740991]],
    ImageContent: ['Content', ['None', { Uri: 'rbxassetid://123' }, { Object: 1 }, { Uri: '' }]],
  };

  test('covers every PropType', () => {
    const expected: PropType[] = ['String', 'Bool', 'Int32', 'Float32', 'Float64', 'UDim', 'UDim2', 'Ray', 'Faces', 'Axes',
      'BrickColor', 'Color3', 'Vector2', 'Vector3', 'CFrame', 'Enum', 'Ref', 'Vector3int16', 'NumberSequence', 'ColorSequence',
      'NumberRange', 'Rect', 'PhysicalProperties', 'Color3uint8', 'Int64', 'SharedString', 'Bytecode', 'OptionalCFrame',
      'UniqueId', 'Font', 'SecurityCapabilities', 'Content'];
    assert.deepEqual([...new Set(Object.values(properties).map(([type]) => type))].sort(), expected.sort());
  });

  test('round-trips edge values of every type', () => {
    const shared = [new Uint8Array(0), Buffer.from('mesh data'), new Uint8Array([0xff, 0x00, 0x10])];
    const dom = columnarDom('ValueHolder', 4, properties, shared);
    dom.metadata.push(['ExplicitAutoJoints', 'true'], ['Üñíçødé', '']);
    roundTrip(dom, 'edge values');
  });

  const normals: Vec3[] = [[1, 0, 0], [0, 1, 0], [0, 0, 1], [-1, 0, 0], [0, -1, 0], [0, 0, -1]];
  const basics: [number, Matrix3][] = [];
  for (let a = 0; a < 6; a++) for (let b = 0; b < 6; b++) {
    if (a % 3 === b % 3) continue;
    const x = normals[a]!, y = normals[b]!;
    const z = [x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0]].map((v) => v + 0);
    // Columns x, y, z; rows of the value.
    basics.push([6 * a + b + 1, [[x[0], y[0], z[0]!], [x[1], y[1], z[1]!], [x[2], y[2], z[2]!]]]);
  }

  test('the 24 basic rotations get their one-byte ids, anything else id 0', () => {
    assert.equal(basics.length, 24);
    for (const [id, matrix] of basics) assert.equal(basicRotationId(matrix), id);
    // Ids of the spec's table: 0x02 identity, 0x03 = (90, 0, 0), 0x14 = (0, 180, 0).
    assert.equal(basics.find(([id]) => id === 0x02)![1].flat().join(), '1,0,0,0,1,0,0,0,1');
    assert.equal(basics.find(([id]) => id === 0x03)![1].flat().join(), '1,0,0,0,0,-1,0,1,0');
    assert.equal(basics.find(([id]) => id === 0x14)![1].flat().join(), '-1,0,0,0,1,0,0,0,-1');
    assert.equal(basicRotationId([[1, 0, 0], [0, 1, 0], [0, 0, -1]]), 0, 'a reflection is not a rotation');
    assert.equal(basicRotationId([[1, 0, 0], [0, 1, 0], [0, 0, f(0.99999994)]]), 0);
    assert.equal(basicRotationId([[1, -0, 0], [0, 1, 0], [0, 0, 1]]), 0, '-0 entries are kept as floats');

    const dom = columnarDom('CFrameValue', 24, { Value: ['CFrame', basics.map(([, m], i) => ({ position: [i, -i, 0.5], orientation: m }))] });
    roundTrip(dom, 'basic rotations');
    const prop = rawChunks(encode(dom)).find((c) => c.name === 'PROP' && chunkKey(c).endsWith(' Value'))!;
    const header = 4 + 4 + 'Value'.length + 1;
    assert.equal(prop.data.length, header + 24 + 24 * 12, 'one id byte per value, then the positions');
    assert.deepEqual([...prop.data.subarray(header, header + 24)], basics.map(([id]) => id));
  });
});

describe('DOMs whose instances of a class carry different properties', () => {
  test('missing values are written as the type default, SharedStrings pointing at an added empty string', () => {
    const dom = buildDom([
      { className: 'Part', name: 'A', properties: { Anchored: ['Bool', true], Mesh: ['SharedString', 0], Size: ['Vector3', [1, 2, 3]] } },
      { className: 'Part', name: 'B', properties: { Transparency: ['Float32', 0.5], Size: ['Int32', 7] } },
    ], { sharedStrings: [Buffer.from('data')] });
    const back = decodeBinary(encode(dom));
    const [a, b] = [back.rowOf(0), back.rowOf(1)];
    const value = (row: number, name: string) => getValue(back, row, name);
    assert.deepEqual([value(a, 'Anchored'), value(a, 'Transparency'), value(a, 'Size')], [true, 0, [1, 2, 3]]);
    // B: Anchored and Mesh absent, Size of a different type: defaults.
    assert.deepEqual([value(b, 'Anchored'), value(b, 'Transparency'), value(b, 'Size')], [false, 0.5, [0, 0, 0]]);
    assert.equal(back.sharedStrings.length, 2);
    assert.equal(back.sharedStrings[value(b, 'Mesh') as number]!.length, 0);
    assert.equal(Buffer.from(back.sharedStrings[value(a, 'Mesh') as number]!).toString(), 'data');
  });
});

describe('file layout', () => {
  const folder = (name: string, parent?: number): Spec => ({ className: 'Folder', name, parent });

  test('header, chunk order, compression flags and the END chunk', () => {
    const dom = buildDom([folder('A'), { className: 'IntValue', name: 'B', properties: { Value: ['Int32', 5] } }], { metadata: [['ExplicitAutoJoints', 'true']], sharedStrings: [Buffer.from('x')] });
    for (const compress of [true, false]) {
      const bytes = encode(dom, { compress });
      assert.equal(Buffer.from(bytes.subarray(0, 14)).toString('hex'), Buffer.from('<roblox!').toString('hex') + '89ff0d0a1a0a');
      const header = new DataView(bytes.buffer, bytes.byteOffset);
      assert.deepEqual([header.getUint16(14, true), header.getInt32(16, true), header.getInt32(20, true)], [0, 2, 2]);
      assert.deepEqual([...bytes.subarray(24, 32)], [0, 0, 0, 0, 0, 0, 0, 0]);
      const chunks = rawChunks(bytes);
      assert.deepEqual(chunks.map((c) => c.name), ['META', 'SSTR', 'INST', 'INST', 'PROP', 'PROP', 'PROP', 'PRNT', 'END']);
      for (const chunk of chunks.slice(0, -1)) assert.equal(chunk.compressedLength > 0, compress, `${chunk.name} compressed: ${compress}`);
      const end = chunks.at(-1)!;
      assert.equal(end.compressedLength, 0);
      assert.equal(Buffer.from(end.data).toString(), '</roblox>');
      assert.equal(Buffer.from(bytes.subarray(-25, -21)).toString('latin1'), 'END\0');
      // INST class ids in class-name order.
      assert.deepEqual(chunks.filter((c) => c.name === 'INST').map(chunkKey), ['INST 0 Folder', 'INST 1 IntValue']);
    }
  });

  test('SSTR carries the MD5 of each string', () => {
    const bytes = encode(buildDom([folder('A')], { sharedStrings: [Buffer.from('hello')] }));
    const sstr = rawChunks(bytes).find((c) => c.name === 'SSTR')!.data;
    assert.equal(Buffer.from(sstr.subarray(8, 24)).toString('hex'), '5d41402abc4b2a76b9719d911017c592');
  });

  test('PRNT lists instances depth-first, children before parents, siblings in order', () => {
    // binary.md's example tree 1 (2, 3 (5, 6), 4 (7)), referents shifted down by one.
    const dom = buildDom([folder('1'), folder('2', 0), folder('3', 0), folder('4', 0), folder('5', 2), folder('6', 2), folder('7', 3)]);
    const shift = (list: number[]) => list.map((r) => (r === -1 ? -1 : r + 1));
    const { children, parents } = prntLinks(encode(dom));
    assert.deepEqual({ children: shift(children), parents: shift(parents) }, { children: [2, 5, 6, 3, 7, 4, 1], parents: [1, 3, 3, 1, 4, 1, -1] });
    roundTrip(dom, 'spec tree');
  });

  test('a deep chain does not exhaust the stack', () => {
    const dom = buildDom(Array.from({ length: 20_000 }, (_, i) => folder(`f${i}`, i === 0 ? undefined : i - 1)));
    const back = decodeBinary(encode(dom));
    assert.equal(back.count, 20_000);
    assert.equal(back.referent(back.parent(back.rowOf(19_999))), 19_998);
  });

  test('services get object_format 1 and markers in a place; a service class keeps format 1 in a model', () => {
    const inst = (bytes: Uint8Array, className: string) => {
      const chunk = rawChunks(bytes).find((c) => c.name === 'INST' && chunkKey(c).endsWith(` ${className}`))!;
      const at = 8 + className.length;
      return { format: chunk.data[at], markers: [...chunk.data.subarray(at + 5 + 4 * new DataView(chunk.data.buffer, chunk.data.byteOffset).getUint32(at + 1, true))] };
    };
    const place = buildDom([{ className: 'Workspace', name: 'Workspace' }, { className: 'Lighting', name: 'Lighting' }, folder('x', 0), folder('y', 1)]);
    const bytes = encode(place);
    assert.deepEqual(inst(bytes, 'Workspace'), { format: 1, markers: [1] });
    assert.deepEqual(inst(bytes, 'Lighting'), { format: 1, markers: [1] });
    assert.deepEqual(inst(bytes, 'Folder'), { format: 0, markers: [] });
    const model = encode(buildDom([{ className: 'Lighting', name: 'Lighting' }, folder('f')]));
    assert.deepEqual(inst(model, 'Lighting'), { format: 1, markers: [0] });
    assert.deepEqual(inst(model, 'Folder'), { format: 0, markers: [] });
  });
});

describe('encode errors', () => {
  test('a value of the wrong shape names class, property and instance', () => {
    const dom = buildDom([{ className: 'Part', name: 'P', properties: { Size: ['Vector3', [1, 2] as unknown as Value] } }]);
    assert.throws(() => encode(dom), (error: unknown) => {
      assert.ok(error instanceof EncodeError);
      assert.match(error.message, /Part\.Size/);
      assert.match(error.message, /instance 0/);
      assert.equal(error.property, 'Size');
      return true;
    });
  });

  test('out-of-range integers, bad UniqueIds and unknown face names are rejected', () => {
    const bad: [PropType, Value][] = [['Int32', 2 ** 31], ['Enum', -1], ['Int64', 1.5], ['UniqueId', 'xyz'], ['Faces', ['Up']],
      ['SharedString', 3], ['Color3uint8', [256, 0, 0]], ['Font', { family: 'f', weight: 'Chunky', style: 'Normal', cachedFaceId: null }]];
    for (const [type, value] of bad) {
      assert.throws(() => encode(buildDom([{ className: 'X', name: 'x', properties: { P: [type, value] } }])), EncodeError, `${type} ${JSON.stringify(value)}`);
    }
  });

  test('duplicate referents and the null referent are rejected', () => {
    const twice = buildDom([{ className: 'Folder', name: 'a' }, { className: 'Folder', name: 'b', referent: 0 }]);
    assert.throws(() => encode(twice), /referent 0 is used by two instances/);
    const none = buildDom([{ className: 'Folder', name: 'a' }, { className: 'Folder', name: 'b', referent: -1 }]);
    assert.throws(() => encode(none), EncodeError);
  });
});

describe('generated places', () => {
  const options = { parts: 500, scripts: 20, uniqueAssets: 40, seed: 42 };

  test('round-trip through the writer', () => {
    roundTrip(generatePlace(options), 'generated place');
  });

  test('have the requested parts, scripts and distinct asset ids', () => {
    const dom = decodeBinary(encode(generatePlace(options)));
    const count = (...classes: string[]) => rowsOf(dom).filter((row) => classes.includes(dom.className(row))).length;
    assert.equal(count('Part', 'MeshPart'), 500);
    assert.ok(count('MeshPart') > 50, 'a good share of MeshParts');
    assert.equal(count('Script', 'LocalScript', 'ModuleScript'), 20);
    for (const className of ['Workspace', 'Lighting', 'ReplicatedStorage', 'ServerScriptService', 'StarterPlayer', 'StarterGui', 'Camera', 'Terrain', 'Sky', 'ScreenGui', 'ImageLabel', 'Model', 'Folder']) {
      assert.ok(count(className) > 0, `has a ${className}`);
    }
    const ids = new Set<string>();
    let sources = '';
    for (const table of dom.tables) {
      for (const [name, column] of table.columns) for (let row = 0; row < column.length; row++) {
        const value = column.get(row);
        if (typeof value !== 'string') continue;
        if (name === 'Source') sources += value;
        for (const match of value.matchAll(/rbxassetid:\/\/(\d+)|[?&]id=(\d+)|require\((\d+)\)/g)) ids.add(match[1] ?? match[2] ?? match[3]!);
      }
    }
    assert.equal(ids.size, 40);
    for (const pattern of ['wait(1)', 'spawn(function()', 'game.Players.LocalPlayer', ':connect(', 'task.wait(', ':Connect(']) {
      assert.ok(sources.includes(pattern), `some script uses ${pattern}`);
    }
    assert.match(sources, /require\(\d+\)/);
  });

  test('are deterministic for a seed', () => {
    const a = encode(generatePlace(options));
    assert.ok(Buffer.from(a).equals(encode(generatePlace(options))), 'same seed, same bytes');
    assert.ok(!Buffer.from(a).equals(encode(generatePlace({ ...options, seed: 43 }))), 'another seed, another place');
  });

  test('scale with the options, including none of anything', () => {
    const empty = generatePlace({ parts: 0, scripts: 0, uniqueAssets: 0 });
    assert.equal(rowsOf(empty).filter((row) => /Part$|Script$/.test(empty.className(row))).length, 0);
    roundTrip(empty, 'empty generated place');
    const lines = generatePlace({ parts: 10, scripts: 3, uniqueAssets: 5, scriptLines: 40 });
    const script = rowsOf(lines).find((row) => lines.className(row) === 'Script')!;
    const source = getValue(lines, script, 'Source') as string;
    assert.ok(source.split('\n').length >= 38 && source.split('\n').length < 80, `about 40 lines, got ${source.split('\n').length}`);
  });

  test('the CLI writes a place that decodes, and rejects bad arguments', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rbxl-generate-'));
    try {
      const out = join(dir, 'place.rbxl');
      const cli = join(REPO_ROOT, 'dist', 'bench', 'generate.js');
      execFileSync(process.execPath, [cli, '--parts', '60', '--scripts', '4', '--assets', '12', '--seed', '3', '--out', out]);
      const dom = decodeBinary(readFileSync(out));
      assert.equal(rowsOf(dom).filter((row) => dom.className(row) === 'Part' || dom.className(row) === 'MeshPart').length, 60);
      assert.ok(readFileSync(out).equals(encode(generatePlace({ parts: 60, scripts: 4, uniqueAssets: 12, seed: 3 }))));
      const bad = spawnSync(process.execPath, [cli, '--parts', 'many', '--out', out], { encoding: 'utf8' });
      assert.equal(bad.status, 2);
      assert.match(bad.stderr, /--parts must be a non-negative integer/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
