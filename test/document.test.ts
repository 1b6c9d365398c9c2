// The project document, version 2: the whole map as an instance tree in the typed
// encoding, read back through the one reader and compared with the decoder's DOM;
// scripts linked to their instances; skip leaves no source; surface joints on the 2006
// place; the stored (compressed) form; sizes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { brotliDecompressSync } from 'node:zlib';
import { decode } from '../src/parser/index.js';
import { encode } from '../src/parser/writer/index.js';
import { getValue, type Dom } from '../src/parser/dom.js';
import { valuesEqual, type CFrameValue, type PropType, type Value } from '../src/parser/values.js';
import {
  analyzeDom, buildProject, buildScene, decodeValue, encodeValue, float32Text, projectJson, readInstances, readScriptMeta,
  packedSource, documentCompressor, acceptsDocumentEncoding, ENCODERS,
  type BuildProjectOptions, type ProjectDocument, type ReadInstance, type SceneNode,
} from '../src/project/index.js';
import { MAX_SCRIPT_PATH_CHARS, readMapScripts } from '../src/project/map-scripts.js';
import { DomBuilder } from '../src/parser/dom-build.js';
import { arrayColumn } from '../src/parser/columns/column.js';
import { isScriptClass, BASE_PART_CLASSES } from '../src/project/classes.js';
import { JsonWriter } from '../src/project/json-writer.js';
import { InstanceTree, MAX_DEFAULT_TEXT_BYTES } from '../src/project/instances.js';
import { EncodingError } from '../src/project/reader.js';
import { dumpJson } from '../src/project/dump.js';
import { sceneJson } from '../src/project/scene.js';
import { handDom, part } from './support/hand-dom.js';
import { PLACES_DIR, TEST_FILES_DIR } from './support/paths.js';

const PLACES = readdirSync(PLACES_DIR).filter((name) => /\.rbx[lm]x?$/.test(name)).sort();

function options(fileName: string, fileSize: number, scriptsMode: 'disabled' | 'enabled' | 'skip' = 'enabled'): BuildProjectOptions {
  return { title: '', owner: 'tester', createdAt: '2026-01-01T00:00:00.000Z', previewHash: '0'.repeat(64), fileName, fileSize, scriptsMode, assets: [] };
}

const cache = new Map<string, { bytes: Buffer; dom: Dom }>();
function place(name: string): { bytes: Buffer; dom: Dom } {
  let entry = cache.get(name);
  if (!entry) {
    const bytes = readFileSync(join(PLACES_DIR, name));
    entry = { bytes, dom: decode(bytes) };
    cache.set(name, entry);
  }
  return entry;
}

/** What the document may leave out of an instance's properties: script sources (in scripts[]) and PhysicsGrid. */
const carriedElsewhere = (className: string, property: string) =>
  (property === 'Source' && isScriptClass(className)) || (className === 'Terrain' && property === 'PhysicsGrid');

/** A DOM value in the reader's shape: references as the id of their instance (null for none or unknown). */
function expected(dom: Dom, type: PropType, value: Value): unknown {
  const id = (referent: number) => {
    const row = referent === -1 ? -1 : dom.rowOf(referent);
    return row === -1 ? null : String(row);
  };
  if (type === 'Ref') return id(value as number);
  if (type === 'Content' && typeof value === 'object' && value !== null && 'Object' in value) return { Object: id(value.Object) };
  return value;
}

/** Compares every map instance of a document with the DOM through the reader; returns the property types met. */
function compareWithDom(dom: Dom, doc: ProjectDocument, label: string): Set<PropType> {
  const types = new Set<PropType>();
  const read = [...readInstances(doc)];
  const mapInstances = read.filter((instance) => !instance.generated);
  assert.equal(mapInstances.length, dom.count, `${label}: every instance`);
  const seen = new Set<string>();
  for (const instance of read) {
    // Parents first: an instance's parent is an earlier one.
    if (instance.parent !== null) assert.ok(seen.has(instance.parent), `${label}: parent of ${instance.id} comes before it`);
    assert.ok(!seen.has(instance.id), `${label}: id ${instance.id} once`);
    seen.add(instance.id);
    if (instance.generated) continue;
    const row = Number(instance.id);
    assert.equal(instance.class, dom.className(row), `${label} ${instance.id}: class`);
    assert.equal(instance.name, dom.name(row), `${label} ${instance.id}: name`);
    assert.equal(instance.parent, dom.parent(row) === -1 ? null : String(dom.parent(row)), `${label} ${instance.id}: parent`);
    const { columns } = dom.table(dom.tableOf(row));
    const kept = [...columns.keys()].filter((name) => !carriedElsewhere(instance.class, name));
    assert.deepEqual([...instance.properties.keys()].sort(), kept.sort(), `${label} ${instance.id} (${instance.class}): property names`);
    for (const name of kept) {
      const column = columns.get(name)!;
      const got = instance.properties.get(name)!;
      assert.equal(got.type, column.type, `${label} ${instance.class}.${name}: type`);
      const want = expected(dom, column.type, column.get(dom.rowInTable(row)));
      assert.ok(valuesEqual(got.value as Value, want as Value), `${label} ${instance.class}.${name} of ${instance.id}: ${JSON.stringify(got.value)?.slice(0, 120)} ≠ ${JSON.stringify(want)?.slice(0, 120)}`);
      types.add(column.type);
    }
  }
  return types;
}

test('every real place: the document\'s instances are the DOM (ids, classes, names, parents, every property value) through the one reader', () => {
  const types = new Set<PropType>();
  for (const name of PLACES) {
    const { bytes, dom } = place(name);
    const doc = buildProject(dom, options(name, bytes.length));
    assert.equal(doc.version, 2);
    for (const type of compareWithDom(dom, doc, name)) types.add(type);
    // SharedString values index the document's table, kept once.
    assert.equal(doc.shared_strings.length, dom.sharedStrings.length, name);
    dom.sharedStrings.forEach((bytes, i) => assert.ok(Buffer.from(doc.shared_strings[i]!, 'base64').equals(Buffer.from(bytes)), `${name}: shared string ${i}`));
  }
  // The real places between them hold these types; the hand-made DOM below covers the rest.
  for (const type of ['String', 'Bool', 'Int32', 'Float32', 'Float64', 'Enum', 'Ref', 'CFrame', 'Vector3', 'Color3', 'Color3uint8', 'BrickColor', 'UDim2', 'NumberSequence', 'ColorSequence', 'NumberRange', 'PhysicalProperties', 'Int64', 'SharedString', 'UniqueId', 'Font', 'OptionalCFrame', 'SecurityCapabilities', 'Content', 'Vector2', 'UDim'] as PropType[]) {
    assert.ok(types.has(type), `the corpus exercises ${type}`);
  }
});

test('the binary/XML test files: documents of both copies read back as their DOMs', () => {
  for (const name of readdirSync(TEST_FILES_DIR).filter((file) => /\.rbx[lm]x?$/.test(file))) {
    const bytes = readFileSync(join(TEST_FILES_DIR, name));
    const dom = decode(bytes);
    compareWithDom(dom, buildProject(dom, options(name, bytes.length)), name);
  }
});

/** One value of every type the decoder knows, with the awkward ones (non-finite, -0, 2^53+, non-UTF-8, dangling refs). */
const EVERY_TYPE: Record<string, [PropType, Value]> = {
  String: ['String', 'text with "quotes", \\ and \n and é'],
  Binary: ['String', { base64: Buffer.from([0xff, 0x00, 0xfe]).toString('base64') }],
  Bytecode: ['Bytecode', { base64: Buffer.from([0x1b, 0x4c, 0x75, 0x61, 0xff]).toString('base64') }],
  Bool: ['Bool', true],
  Int32: ['Int32', -2147483648],
  Float32: ['Float32', Math.fround(0.1)],
  NegativeZero: ['Float32', -0],
  NaN: ['Float32', NaN],
  Float64: ['Float64', 0.1 + 0.2],
  Infinite: ['Float64', -Infinity],
  UDim: ['UDim', [Math.fround(0.5), -12]],
  UDim2: ['UDim2', [[Math.fround(0.25), 4], [1, -8]]],
  Ray: ['Ray', { origin: [1, 2, 3], direction: [Math.fround(0.6), 0, Math.fround(-0.8)] }],
  Faces: ['Faces', ['Right', 'Top', 'Front']],
  Axes: ['Axes', ['X', 'Z']],
  BrickColor: ['BrickColor', 194],
  Color3: ['Color3', [Math.fround(0.2), Math.fround(0.4), 1]],
  Vector2: ['Vector2', [Math.fround(1.5), -2]],
  Vector3: ['Vector3', [Math.fround(37.8), Math.fround(1e-7), Math.fround(-3.4e38)]],
  CFrame: ['CFrame', { position: [10, Math.fround(4.2), -3], orientation: [[0, 0, 1], [0, 1, 0], [-1, 0, 0]] }],
  Enum: ['Enum', 4294967295],
  Ref: ['Ref', 0],
  Dangling: ['Ref', 123456],
  NoRef: ['Ref', -1],
  Vector3int16: ['Vector3int16', [-32768, 0, 32767]],
  NumberSequence: ['NumberSequence', { keypoints: [{ time: 0, value: 1, envelope: 0 }, { time: 1, value: Math.fround(0.3), envelope: Math.fround(0.1) }] }],
  ColorSequence: ['ColorSequence', { keypoints: [{ time: 0, color: [1, 0, 0] }, { time: 1, color: [0, 0, 1] }] }],
  NumberRange: ['NumberRange', [Math.fround(-20.2), Math.fround(10.1)]],
  Rect: ['Rect', [[0, 0], [Math.fround(1.5), 2]]],
  Physical: ['PhysicalProperties', { density: Math.fround(0.7), friction: Math.fround(0.3), elasticity: Math.fround(0.5), frictionWeight: 1, elasticityWeight: 1, acousticAbsorption: 1 }],
  DefaultPhysical: ['PhysicalProperties', 'Default'],
  Color3uint8: ['Color3uint8', [255, 128, 0]],
  Int64: ['Int64', '-9223372036854775808'],
  SmallInt64: ['Int64', -1],
  SharedString: ['SharedString', 0],
  Bytecode2: ['Bytecode', 'print(1)'],
  OptionalCFrame: ['OptionalCFrame', { position: [1, 2, 3], orientation: [[1, 0, 0], [0, 1, 0], [0, 0, 1]] }],
  NoCFrame: ['OptionalCFrame', null],
  UniqueId: ['UniqueId', '44b188dace632b4702e9c68d0048309a'],
  Font: ['Font', { family: 'rbxasset://fonts/families/SourceSansPro.json', weight: 'Bold', style: 'Italic', cachedFaceId: null }],
  SecurityCapabilities: ['SecurityCapabilities', '18446744073709551615'],
  ContentUri: ['Content', { Uri: 'rbxassetid://1' }],
  ContentObject: ['Content', { Object: 0 }],
  ContentNone: ['Content', 'None'],
};

test('every one of the decoder\'s 32 types round-trips through the encoding and the reader', () => {
  const dom = handDom([{ class: 'Folder', name: 'Everything', props: EVERY_TYPE }]);
  const doc = buildProject(dom, options('hand.rbxl', 1));
  const types = compareWithDom(dom, doc, 'hand');
  assert.equal(types.size, 32, [...types].join(','));
  // The dangling reference is null, and named.
  const [instance] = readInstances(doc);
  assert.equal(instance!.properties.get('Dangling')!.value, null);
  assert.ok(doc.import.not_imported.some((entry) => entry.class === 'Folder' && entry.property === 'Dangling' && /not in the file/.test(entry.reason)));
  // Values in natural shapes: a CFrame is GetComponents() order, a Vector3 an array, a Ref an id.
  const raw = doc.instances[0]!.properties;
  assert.deepEqual(raw.CFrame, [10, 4.2, -3, 0, 0, 1, 0, 1, 0, -1, 0, 0]);
  assert.deepEqual(raw.Vector3, [37.8, 1e-7, -3.4e38]);
  assert.equal(raw.Ref, '0');
  assert.equal(raw.NaN, 'NaN');
  assert.ok(Object.is(raw.NegativeZero, -0));
  assert.deepEqual(raw.Binary, { base64: '/wD+' });
  assert.equal(raw.ContentUri, 'rbxassetid://1');
  assert.deepEqual(raw.ContentObject, { object: '0' });
});

test('float32 values are written in their shortest form and read back exactly', () => {
  const view = new Float32Array(1);
  const bits = new Uint32Array(view.buffer);
  let seed = 7;
  for (let i = 0; i < 200_000; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    bits[0] = seed;
    const x = view[0]!;
    if (!Number.isFinite(x)) continue;
    const text = float32Text(x);
    assert.ok(Object.is(Math.fround(JSON.parse(text)), x), `${x} → ${text}`);
    // As short as JavaScript's own text of the shortest decimal that reads back (a notation may differ).
    let digits = 1;
    while (Math.fround(Number(x.toPrecision(digits))) !== x) digits++;
    const shortest = String(Number(x.toPrecision(digits)));
    assert.ok(text.length <= shortest.length, `${x} → ${text}, ${shortest} is shorter`);
  }
  for (const [x, text] of [[Math.fround(37.8), '37.8'], [Math.fround(0.1), '0.1'], [-0, '-0'], [Math.fround(9.094947e-13), '9.094947e-13'], [1e-45, '1e-45'], [NaN, '"NaN"']] as const) {
    assert.equal(float32Text(x), text);
  }
  // Powers of ten and their neighbours, which random bits almost never hit: the float32
  // 0.01 lies just under 0.01, and its digits once rounded up to 10 and kept the zero
  // (0.010, 1.0e-6, 1.0e-13).
  const shortestText = (x: number): string => {
    let digits = 1;
    while (Math.fround(Number(x.toPrecision(digits))) !== x) digits++;
    return String(Number(x.toPrecision(digits)));
  };
  for (let e = -45; e <= 38; e++) {
    view[0] = Number(`1e${e}`);
    const at = bits[0]!;
    for (const pattern of [at - 1, at, at + 1]) {
      bits[0] = pattern;
      for (const x of [view[0], -view[0]]) {
        if (!Number.isFinite(x) || x === 0) continue;
        const text = float32Text(x);
        assert.ok(Object.is(Math.fround(JSON.parse(text)), x), `${x} → ${text}`);
        assert.ok(text.length <= shortestText(x).length, `${x} → ${text}, ${shortestText(x)} is shorter`);
      }
    }
  }
  for (const [x, text] of [[0.01, '0.01'], [0.0001, '0.0001'], [1e-5, '0.00001'], [1e-6, '1e-6'], [-1e-13, '-1e-13'], [2.5e-7, '2.5e-7']] as const) {
    assert.equal(float32Text(Math.fround(x)), text);
  }
  // Tiny magnitudes need decimals past 10^22, which no double holds exactly: each reads back
  // as itself (bits 0x15ae43fd were once written as the next float32 up, 7.038531e-26).
  bits[0] = 0x15ae43fd;
  assert.equal(float32Text(view[0]!), '7.0385307e-26');
  assert.equal(float32Text(-view[0]!), '-7.0385307e-26');
  for (let i = 0; i < 100_000; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    bits[0] = seed & 0xabffffff; // exponent field below 88: magnitudes under about 1e-12
    const x = view[0]!;
    assert.ok(Object.is(Math.fround(JSON.parse(float32Text(x))), x), `${x} → ${float32Text(x)}`);
  }
});

test('an array of float32 values is written as each value alone would be, slow forms included', () => {
  const values = [0, -0, 1, -3, 37.8, 0.1, 1e-45, 3.4028234663852886e38, 123456789, 0.1 + 0.2, NaN, Infinity, -Infinity, 9.094947e-13]
    .map((x, i) => (i === 9 ? x : Math.fround(x)));
  // A writer with tiny chunks, so the array's room is reserved across a chunk boundary.
  const one = new JsonWriter(8);
  one.byte(0x5b);
  values.forEach((x, i) => { if (i) one.byte(0x2c); one.float32(x); });
  one.byte(0x5d);
  for (const [from, count] of [[0, values.length], [3, 4], [5, 0]] as const) {
    const w = new JsonWriter(8);
    w.ascii('x');
    w.float32Array(values, from, count);
    const expected = count === values.length ? Buffer.concat(one.flush()).toString('latin1') : `[${values.slice(from, from + count).map(float32Text).join(',')}]`;
    assert.equal(Buffer.concat(w.flush()).toString('latin1'), `x${expected}`);
    assert.equal(w.written, 1 + expected.length);
  }
});

test('the JSON writer escapes strings as JSON.stringify does', () => {
  const samples = ['', 'plain', 'quote " and \\ slash', 'ctrl \u0000\u0001\u001f\b\f\n\r\t', 'é ü 漢字', '😀', 'lone \ud800 surrogate', 'x'.repeat(300) + '\u2028'];
  for (const sample of samples) {
    const w = new JsonWriter(8);
    w.string(sample);
    assert.equal(Buffer.concat(w.flush()).toString('utf8'), JSON.stringify(sample));
  }
});

/** Sources with every kind of escape: quote, backslash, each control character, DEL, U+2028/U+2029, multi-byte characters, a BOM. */
const ESCAPE_SOURCES = [
  '',
  'print("a \\ b")\n',
  String.fromCharCode(...Array.from({ length: 128 }, (_, c) => c)),
  'x\u2028y\u2029z \u00e9 \u6f22\u5b57 \u{1F600} \ufeff\x7f',
  '\ufeffbom first',
  ('-- "q" \\ \t\r\n\u2028 \u00e9\u{1F600}\x01'.repeat(9000)),
];

test('utf8String writes what string writes for a head and valid UTF-8 bytes, every escape alike, in any chunk size', () => {
  const head = '--[=[\n{"name":"\u00e9 \\" \u2028","path":"a\ud800b"}\n]=]\n';
  for (const source of ESCAPE_SOURCES) {
    for (const chunkBytes of [8, 300, 1 << 16]) {
      const expected = new JsonWriter(chunkBytes);
      expected.string(head + source);
      const fast = new JsonWriter(chunkBytes);
      fast.utf8String(head, Buffer.from(source, 'utf8'));
      assert.equal(fast.written, expected.written, `${chunkBytes}: ${JSON.stringify(source.slice(0, 40))}`);
      assert.ok(Buffer.concat(fast.flush()).equals(Buffer.concat(expected.flush())), `${chunkBytes}: ${JSON.stringify(source.slice(0, 40))}`);
    }
  }
});

test('scripts[] of a binary file: each code is JsonWriter.string of the packed code, sources from bytes (every escape) and non-UTF-8 ones alike', () => {
  const nonUtf8 = { base64: Buffer.from([0x70, 0xff, 0x22, 0x0a, 0xc3, 0x28, 0xed, 0xa0, 0x80, 0x5c]).toString('base64') };
  const sources: Value[] = [...ESCAPE_SOURCES, nonUtf8];
  const builder = new DomBuilder('binary');
  const workspace = builder.add(builder.addTable('Workspace', new Map([['Name', arrayColumn('String', ['Workspace'])]])));
  const scripts = builder.addTable('Script', new Map([
    ['Name', arrayColumn('String', sources.map((_, i) => `s${i} "\u2028\u00e9`))],
    ['Source', arrayColumn('String', sources)],
  ]));
  for (let i = 0; i < sources.length; i++) builder.add(scripts, workspace);
  const dom = decode(encode(builder.build()));
  const read = readMapScripts(dom);
  assert.deepEqual(read.map((s) => [s.bytes !== undefined, s.nonUtf8]), sources.map((_, i) => [true, i === sources.length - 1]), 'bytes from the file; the last not UTF-8');
  for (const mode of ['disabled', 'enabled'] as const) {
    const text = Buffer.concat([...projectJson(dom, options('escapes.rbxl', 1, mode))]);
    const doc = JSON.parse(text.toString('utf8')) as ProjectDocument;
    assert.equal(doc.scripts.length, sources.length);
    doc.scripts.forEach((script, i) => {
      assert.equal(packedSource(script.code), read[i]!.source, `${mode} ${i}: the source`);
      const w = new JsonWriter();
      w.ascii(',"code":');
      w.string(script.code);
      w.byte(0x7d);
      assert.ok(text.includes(Buffer.concat(w.flush())), `${mode} ${i}: the entry's code as JsonWriter.string writes it`);
    });
  }
});

test('class tables: a default is a value at least two instances share; a lone instance keeps its own values; XML items with their own property lists are partial', () => {
  const dom = handDom([
    { class: 'Folder', name: 'Lonely', props: { Extra: ['Int32', 5] } },
    { class: 'IntValue', name: 'A', props: { Value: ['Int32', 1] } },
    { class: 'IntValue', name: 'B', props: { Value: ['Int32', 1] } },
    { class: 'IntValue', name: 'C', props: { Value: ['Int32', 7] } },
    { class: 'StringValue', name: 'S', props: { Value: ['String', 'x'] } },
    { class: 'StringValue', name: 'T', props: { Value: ['String', 'y'], Other: ['Bool', true] } },
  ], 'xml');
  const doc = buildProject(dom, options('classes.rbxlx', 1));
  assert.deepEqual(doc.classes.IntValue!.defaults, { Value: 1 });
  assert.equal(doc.classes.Folder!.defaults, undefined);
  assert.deepEqual(doc.classes.StringValue!.partial, ['Other']);
  const byName = new Map(doc.instances.map((i) => [i.name, i]));
  assert.deepEqual(byName.get('A')!.properties, {});
  assert.deepEqual(byName.get('C')!.properties, { Value: 7 });
  assert.deepEqual(byName.get('Lonely')!.properties, { Extra: 5 });
  compareWithDom(dom, doc, 'classes');
});

test('class tables of a binary file: the default is the value most instances hold, whether or not the first instance holds it', () => {
  const values = (className: string, type: PropType, list: Value[]) =>
    list.map((value, i) => ({ class: className, name: `${className}${i}`, props: { Value: [type, value] as [PropType, Value] } }));
  const dom = decode(encode(handDom([
    // The first instance holds a value no other does.
    ...values('IntValue', 'Int32', [5, 1, 1, 1, 1, 1, 1, 1, 1]),
    // The first instance holds the value most do.
    ...values('StringValue', 'String', ['a', 'a', 'b', 'a', 'c', 'a', 'd']),
    // No value held by two: no default.
    ...values('NumberValue', 'Float64', [1, 2, 3]),
    // 40 of 64 hold 1 (the first row, every eighth and every odd row), but a sample of
    // every other row sees 2 three times as often: the default is the true majority.
    ...values('IntConstrainedValue', 'Int32', Array.from({ length: 64 }, (_, i) => (i % 8 === 0 || i % 2 === 1 ? 1 : 2))),
  ])));
  assert.equal(dom.tables.filter((t) => t.className === 'IntValue').length, 1, 'one table per class, as binary files have');
  const doc = buildProject(dom, options('defaults.rbxl', 1));
  assert.deepEqual(doc.classes.IntValue!.defaults, { Value: 1 });
  assert.deepEqual(doc.classes.StringValue!.defaults, { Value: 'a' });
  assert.equal(doc.classes.NumberValue!.defaults, undefined);
  const byName = new Map(doc.instances.map((i) => [i.name, i]));
  assert.deepEqual(byName.get('IntValue0')!.properties, { Value: 5 });
  for (let i = 1; i < 9; i++) assert.deepEqual(byName.get(`IntValue${i}`)!.properties, {});
  assert.deepEqual([0, 1, 2, 3, 4, 5, 6].map((i) => byName.get(`StringValue${i}`)!.properties), [{}, {}, { Value: 'b' }, {}, { Value: 'c' }, {}, { Value: 'd' }]);
  assert.deepEqual(doc.classes.IntConstrainedValue!.defaults, { Value: 1 });
  compareWithDom(dom, doc, 'defaults');
  // No script leaves anything out here, so every scripts mode chooses the same defaults.
  for (const mode of ['disabled', 'skip'] as const) {
    assert.deepEqual(buildProject(dom, options('defaults.rbxl', 1, mode)).classes, doc.classes, mode);
  }
});

test('scripts: each entry is a script instance of the tree (id in the entry and in metadata line 2), each script instance has its entry', () => {
  for (const name of PLACES) {
    const { bytes, dom } = place(name);
    const mapScripts = readMapScripts(dom);
    for (const mode of ['enabled', 'disabled'] as const) {
      const doc = buildProject(dom, options(name, bytes.length, mode));
      const byId = new Map(doc.instances.map((i) => [i.id, i]));
      const scriptInstances = doc.instances.filter((i) => isScriptClass(i.class));
      assert.equal(doc.scripts.length, scriptInstances.length, `${name} ${mode}`);
      assert.deepEqual(new Set(doc.scripts.map((s) => s.id)), new Set(scriptInstances.map((i) => i.id)), `${name} ${mode}`);
      for (const script of doc.scripts) {
        const instance = byId.get(script.id)!;
        assert.equal(instance.class, script.class);
        assert.equal(instance.name, script.name);
        assert.ok(!('Source' in instance.properties), `${name}: the tree has no Source`);
        const meta = readScriptMeta(script.code);
        assert.equal(meta.id, script.id);
        const original = mapScripts.find((s) => String(s.row) === script.id)!;
        assert.equal(packedSource(script.code), original.source);
        assert.equal(meta.enabled, mode === 'enabled' ? original.enabled : false, `${name} ${mode} ${script.path}`);
      }
    }
  }
});

test('skip: scripts[] is empty and no script source remains anywhere; script instances and what is inside them are left out and named', () => {
  for (const name of PLACES) {
    const { bytes, dom } = place(name);
    const sources = readMapScripts(dom).map((s) => s.source.trim()).filter((source) => source.length >= 24);
    const doc = buildProject(dom, options(name, bytes.length, 'skip'));
    assert.deepEqual(doc.scripts, [], name);
    const text = JSON.stringify(doc);
    for (const source of sources) {
      // A line of each script that is long enough to be its own (not a common snippet).
      const line = source.split('\n').map((l) => l.trim()).filter((l) => l.length >= 24).sort((a, b) => b.length - a.length)[0];
      if (line) assert.ok(!text.includes(JSON.stringify(line).slice(1, -1)), `${name}: a line of a script remains: ${line.slice(0, 60)}`);
    }
    assert.ok(doc.instances.every((i) => !isScriptClass(i.class) && !('Source' in i.properties)), name);
    const ids = new Set(doc.instances.map((i) => i.id));
    for (const instance of doc.instances) if (instance.parent !== null) assert.ok(ids.has(instance.parent), `${name}: ${instance.id}'s parent is kept`);
    const scripts = readMapScripts(dom).length;
    const named = doc.import.not_imported.filter((e) => isScriptClass(e.class)).reduce((sum, e) => sum + e.count, 0);
    assert.equal(named, scripts, `${name}: every left-out script is named`);
    assert.equal(doc.import.imported.scripts, 0);
    // The scene keeps only what the tree keeps.
    const stack: SceneNode[] = [...doc.scene.children];
    while (stack.length) {
      const node = stack.pop()!;
      assert.ok(ids.has(node.id), `${name}: scene node ${node.id} is an instance`);
      stack.push(...(node.children ?? []));
    }
  }
});

test('skip: a value held only by instances inside left-out scripts never becomes a class default', () => {
  // XML groups items with the same property list into one table: the three StringValues
  // inside the Script share a table, and the kept ones with Extra another of the same size.
  const value = (name: string, text: string, extra = false) =>
    `<Item class="StringValue" referent="${name}"><Properties><string name="Name">${name}</string><string name="Value">${text}</string>${extra ? '<bool name="Extra">true</bool>' : ''}</Properties></Item>`;
  const xml = '<roblox version="4"><Item class="Script" referent="S"><Properties><string name="Name">Secret</string><ProtectedString name="Source">return 1</ProtectedString></Properties>'
    + value('k1', 'SECRET-KEY') + value('k2', 'SECRET-KEY') + value('k3', 'SECRET-KEY') + '</Item>'
    + '<Item class="Folder" referent="F"><Properties><string name="Name">Public</string></Properties>'
    + value('v', 'public') + value('w1', 'x', true) + value('w2', 'y', true) + value('w3', 'z', true) + '</Item></roblox>';
  const bytes = Buffer.from(xml);
  const dom = decode(bytes);
  const text = Buffer.concat([...projectJson(dom, options('leak.rbxlx', bytes.length, 'skip'))]).toString('utf8');
  assert.ok(!text.includes('SECRET-KEY'), 'a value from inside a left-out script is in the document');
  const doc = JSON.parse(text) as ProjectDocument;
  assert.deepEqual(doc.instances.map((i) => i.name), ['Public', 'v', 'w1', 'w2', 'w3']);
  assert.deepEqual([...readInstances(doc)].filter((i) => i.class === 'StringValue').map((i) => i.properties.get('Value')!.value), ['public', 'x', 'y', 'z']);
});

test('a class whose first table types Name otherwise (not String): every instance reads back, whatever its Name', () => {
  for (const format of ['xml', 'binary'] as const) {
    const dom = handDom([
      { class: 'Folder', props: { Name: ['Int32', 5] } },
      { class: 'Folder', name: 'b' },
      { class: 'Folder', name: 'c' },
    ], format);
    const doc = buildProject(dom, options(`name.${format}`, 1));
    assert.equal(doc.classes.Folder!.properties.Name, 'Int32');
    compareWithDom(dom, doc, `Name typed Int32 first (${format})`);
  }
});

test('property and class names of Object.prototype\'s members are carried like any other', () => {
  const odd = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'];
  const props = (i: number) => Object.fromEntries(odd.map((name, k) => [name, ['Int32', i * 10 + k] as [PropType, Value]]));
  const dom = handDom([
    { class: 'Folder', name: 'a', props: props(1) },
    { class: 'Folder', name: 'b', props: props(2) },
    { class: 'constructor', name: 'c', props: props(3) },
    { class: 'toString', name: 'd' },
  ]);
  const doc = buildProject(dom, options('proto.rbxl', 1));
  assert.deepEqual(Object.keys(doc.classes.Folder!.properties).sort(), ['Name', ...odd].sort());
  compareWithDom(dom, doc, 'prototype names');
});

test('the reader reads a class\'s property list once, not once per instance (thousands of partial properties)', () => {
  const count = 2000;
  const dom = handDom(Array.from({ length: count }, (_, i) => ({ class: 'Folder', name: `f${i}`, props: { [`P${i}`]: ['Int32', i] as [PropType, Value] } })), 'xml');
  const doc = buildProject(dom, options('partial.rbxlx', 1));
  assert.equal(doc.classes.Folder!.partial!.length, count);
  let listed = 0;
  const schema = doc.classes.Folder!;
  schema.properties = new Proxy(schema.properties, { ownKeys(target) { listed++; return Reflect.ownKeys(target); } });
  const read = [...readInstances(doc)];
  assert.equal(listed, 1, 'the class\'s properties were listed for every instance');
  // Each instance has its own property and its Name, in the class's order.
  assert.deepEqual([...read[7]!.properties.keys()], ['Name', 'P7']);
  compareWithDom(dom, doc, 'partial');
  // A document edited between two readings is read as it is now.
  doc.classes.Folder!.properties = { ...doc.classes.Folder!.properties, Extra: 'Int32' };
  doc.classes.Folder!.defaults = { Extra: 9 };
  assert.deepEqual([...readInstances(doc)][7]!.properties.get('Extra'), { type: 'Int32', value: 9 });
});

/** Joints of a document (Part0/Part1 ids), its anchored Workspace parts, and its unanchored ones. */
function jointGraph(doc: ProjectDocument) {
  const read = new Map<string, ReadInstance>();
  for (const instance of readInstances(doc)) read.set(instance.id, instance);
  const workspace = [...read.values()].find((i) => i.class === 'Workspace' && i.parent === null)!;
  const inWorkspace = (id: string): boolean => {
    for (let at: string | null = id; at !== null; at = read.get(at)!.parent) if (at === workspace.id) return true;
    return false;
  };
  const links: [string, string][] = [];
  for (const instance of read.values()) {
    const p0 = instance.properties.get('Part0')?.value, p1 = instance.properties.get('Part1')?.value;
    if (typeof p0 === 'string' && typeof p1 === 'string') links.push([p0, p1]);
  }
  const parts = [...read.values()].filter((i) => BASE_PART_CLASSES.has(i.class) && inWorkspace(i.id));
  return { read, links, parts };
}

test('rocket-arena-2006: the joints Roblox made at load are generated, and every unanchored part is joined to an anchored one', () => {
  const name = 'rocket-arena-2006.rbxl';
  const { bytes, dom } = place(name);
  const doc = buildProject(dom, options(name, bytes.length));
  const generated = doc.instances.filter((i) => i.generated);
  assert.ok(generated.length > 1000, `${generated.length} generated joints`);
  assert.equal(doc.import.imported.joints_generated, generated.length);
  const { read, links, parts } = jointGraph(doc);
  for (const joint of generated) {
    assert.match(joint.id, /^g\d+$/);
    assert.ok(['Snap', 'Weld', 'Glue', 'Rotate', 'RotateV', 'RotateP'].includes(joint.class), joint.class);
    const instance = read.get(joint.id)!;
    const part0 = read.get(instance.properties.get('Part0')!.value as string)!;
    const part1 = read.get(instance.properties.get('Part1')!.value as string)!;
    assert.equal(joint.parent, part0.id, 'parented to Part0');
    // Part0.CFrame * C0 = Part1.CFrame * C1: the two frames meet in the world.
    const world0 = compose(part0.properties.get('CFrame')!.value as CFrameValue, instance.properties.get('C0')!.value as CFrameValue);
    const world1 = compose(part1.properties.get('CFrame')!.value as CFrameValue, instance.properties.get('C1')!.value as CFrameValue);
    for (let i = 0; i < 3; i++) {
      assert.ok(Math.abs(world0.position[i]! - world1.position[i]!) < 1e-3, `${joint.id}: positions meet`);
      for (let j = 0; j < 3; j++) assert.ok(Math.abs(world0.orientation[i]![j]! - world1.orientation[i]![j]!) < 1e-5, `${joint.id}: rotations meet`);
    }
  }
  const held = heldParts(links, parts);
  const unanchored = parts.filter((p) => p.properties.get('Anchored')?.value !== true);
  assert.ok(unanchored.length > 1000);
  const loose = unanchored.filter((p) => !held.has(p.id));
  assert.deepEqual(loose.map((p) => p.id), [], 'every unanchored part reaches an anchored part');
  assert.equal(doc.import.imported.unanchored_parts, unanchored.length);
  assert.equal(doc.import.imported.unanchored_parts_joined_to_anchored, unanchored.length);
});

test('generated joints take their types from their class\'s `generated` list, once; a document from before, with types of their own, reads the same', () => {
  const name = 'rocket-arena-2006.rbxl';
  const { bytes, dom } = place(name);
  const doc = buildProject(dom, options(name, bytes.length));
  const generated = doc.instances.filter((i) => i.generated);
  const classes = new Set(generated.map((i) => i.class));
  assert.ok(classes.size >= 2, [...classes].join(','));
  for (const className of classes) {
    assert.deepEqual(doc.classes[className]!.generated, { Name: 'String', Part0: 'Ref', Part1: 'Ref', C0: 'CFrame', C1: 'CFrame' }, className);
    // No instance of the map has these classes: their map list is empty.
    assert.deepEqual(doc.classes[className]!.properties, {}, className);
  }
  for (const joint of generated) {
    assert.equal(joint.types, undefined, joint.id);
    assert.deepEqual(Object.keys(joint.properties), ['Part0', 'Part1', 'C0', 'C1'], joint.id);
  }
  const now = [...readInstances(doc)].filter((i) => i.generated);
  assert.equal(now.length, generated.length);
  for (const joint of now) assert.deepEqual([...joint.properties.keys()], ['Name', 'Part0', 'Part1', 'C0', 'C1'], joint.id);
  assert.equal(now[0]!.properties.get('Name')!.value, now[0]!.class);
  // The same document as session 30 wrote it: each generated instance complete, with its own types, and no lists.
  const before = structuredClone(doc);
  for (const className of classes) delete before.classes[className];
  for (const joint of before.instances) {
    if (!joint.generated) continue;
    joint.properties = { Name: joint.name, ...joint.properties };
    joint.types = { Name: 'String', Part0: 'Ref', Part1: 'Ref', C0: 'CFrame', C1: 'CFrame' };
  }
  assert.deepEqual([...readInstances(before)].filter((i) => i.generated), now);
  // A generated instance the lists do not describe is refused, not read as something else.
  const stray = structuredClone(doc);
  delete stray.classes[now[0]!.class]!.generated;
  assert.throws(() => [...readInstances(stray)], /has no generated list/);
  const extra = structuredClone(doc);
  extra.instances.find((i) => i.generated)!.properties.Extra = 1;
  assert.throws(() => [...readInstances(extra)], /Extra is not in/);
  // `only` keeps classes whether the map or the import has them.
  const tree = new InstanceTree(dom, { refId: (referent) => String(referent) });
  const lists = new Map([['Snap', [['Part0', 'Ref']] as const]]);
  assert.deepEqual(Object.keys(JSON.parse(tree.classesJson(new Set(['Workspace']), lists)) as object), ['Workspace']);
  assert.deepEqual(JSON.parse(tree.classesJson(new Set(['Workspace', 'Snap']), lists)).Snap, { properties: {}, generated: { Part0: 'Ref' } });
  // Hostile lists and values end in an EncodingError that names them, never in a value of another shape.
  const hostile = (edit: (copy: typeof doc) => void): void => {
    const copy = structuredClone(doc);
    edit(copy);
    for (const instance of readInstances(copy)) void instance;
  };
  const className = now[0]!.class;
  for (const list of [5, true, [], 'abc']) {
    assert.throws(() => hostile((copy) => { (copy.classes[className] as { generated: unknown }).generated = list; }), (error: Error) => error instanceof EncodingError && /generated list is not an object/.test(error.message), JSON.stringify(list));
  }
  assert.throws(() => hostile((copy) => { copy.instances.find((i) => i.generated)!.types = { Part0: 'Ref', Part1: 'Ref' }; }), (error: Error) => error instanceof EncodingError && /types of its own beside/.test(error.message));
  for (const type of ['constructor', 'toString', 'NoSuchType']) {
    assert.throws(() => hostile((copy) => { copy.classes[className]!.generated!.Part0 = type as PropType; }), (error: Error) => error instanceof EncodingError && /Part0: unknown property type/.test(error.message), type);
  }
  assert.throws(() => hostile((copy) => { copy.instances.find((i) => i.generated)!.properties.C0 = 'not a frame'; }), (error: Error) => error instanceof EncodingError && /: C0: /.test(error.message));
  assert.throws(() => hostile((copy) => { (copy as { classes: unknown }).classes = null; }), (error: Error) => error instanceof EncodingError && /classes is not an object/.test(error.message));
  assert.throws(() => hostile((copy) => { (copy as { instances: unknown }).instances = {}; }), (error: Error) => error instanceof EncodingError && /instances is not an array/.test(error.message));
  assert.throws(() => hostile((copy) => { (copy.instances[0] as { name: unknown }).name = 42; }), (error: Error) => error instanceof EncodingError && /name is not a string/.test(error.message));
});

test('modern places: no joints are generated, and loose parts are reported as such', () => {
  for (const name of ['booga.rbxl', 'roblox-statemachine-demo.rbxl']) {
    const { bytes, dom } = place(name);
    const doc = buildProject(dom, options(name, bytes.length));
    assert.equal(doc.instances.filter((i) => i.generated).length, 0, name);
    const { links, parts } = jointGraph(doc);
    const held = heldParts(links, parts);
    const unanchored = parts.filter((p) => p.properties.get('Anchored')?.value !== true);
    assert.equal(doc.import.imported.unanchored_parts, unanchored.length, name);
    assert.equal(doc.import.imported.unanchored_parts_joined_to_anchored, unanchored.filter((p) => held.has(p.id)).length, name);
  }
});

/** Parts joined (through any chain of links) to an anchored one. */
function heldParts(links: [string, string][], parts: ReadInstance[]): Set<string> {
  const neighbours = new Map<string, string[]>();
  for (const [a, b] of links) {
    (neighbours.get(a) ?? neighbours.set(a, []).get(a)!).push(b);
    (neighbours.get(b) ?? neighbours.set(b, []).get(b)!).push(a);
  }
  const held = new Set<string>();
  const queue = parts.filter((p) => p.properties.get('Anchored')?.value === true).map((p) => p.id);
  for (const id of queue) held.add(id);
  while (queue.length) {
    for (const next of neighbours.get(queue.pop()!) ?? []) if (!held.has(next)) { held.add(next); queue.push(next); }
  }
  return held;
}

function compose(a: CFrameValue, b: CFrameValue): CFrameValue {
  const r = a.orientation, s = b.orientation;
  const orientation = [0, 1, 2].map((i) => [0, 1, 2].map((j) => r[i]![0] * s[0][j]! + r[i]![1] * s[1][j]! + r[i]![2] * s[2][j]!)) as CFrameValue['orientation'];
  const position = [0, 1, 2].map((i) => r[i]![0] * b.position[0] + r[i]![1] * b.position[1] + r[i]![2] * b.position[2] + a.position[i]!) as CFrameValue['position'];
  return { position, orientation };
}

test('the scene: each node is the instance of its id (class, name), and the streamed scene is buildScene\'s', () => {
  for (const name of PLACES) {
    const { bytes, dom } = place(name);
    const doc = buildProject(dom, options(name, bytes.length));
    const byId = new Map(doc.instances.map((i) => [i.id, i]));
    const stack: SceneNode[] = [...doc.scene.children];
    let nodes = 0;
    while (stack.length) {
      const node = stack.pop()!;
      nodes++;
      const instance = byId.get(node.id);
      assert.ok(instance, `${name}: node ${node.id}`);
      assert.equal(instance.class, node.class);
      assert.equal(instance.name, node.name);
      stack.push(...(node.children ?? []));
    }
    assert.equal(nodes, doc.scene.parts + doc.scene.groups, name);
    assert.deepEqual(doc.scene, buildScene(dom), name);
  }
  // Small chunks: the scene is the same JSON however it is cut.
  const { dom } = place('rocket-arena-2006.rbxl');
  const w = new JsonWriter(512);
  const chunks = [...sceneJson(w, dom), ...w.flush()];
  assert.ok(chunks.length > 100);
  assert.deepEqual(JSON.parse(Buffer.concat(chunks).toString('utf8')), buildScene(dom));
});

test('the report says what arrives: parts in the Workspace and in storage, categories, and what is left out', () => {
  const { bytes, dom } = place('booga.rbxl');
  const { report } = analyzeDom(dom, { fileName: 'booga.rbxl', fileSize: bytes.length });
  assert.equal(report.scripts_total, 29);
  assert.equal(report.imported.parts_in_workspace + report.imported.parts_in_storage, report.parts_total);
  assert.equal(report.imported.instances, dom.count);
  assert.equal(report.imported.scripts, report.scripts_total);
  assert.equal(report.imported.joints, 1302 + 481 + 41, 'ManualWelds, Motor6Ds and Welds');
  assert.equal(report.imported.body_movers, 190 + 179 + 18);
  assert.equal(report.imported.terrain, true);
  assert.equal(report.imported.unions, report.unions_total);
  assert.deepEqual(report.not_imported.map((e) => `${e.class}.${e.property}`), ['Terrain.PhysicsGrid']);
  // The decoder's skipped properties (an XML type it does not know) are named.
  const xml = decode(readFileSync(join(TEST_FILES_DIR, 'xml-unknown-type.rbxmx')));
  const unknown = analyzeDom(xml, { fileName: 'x.rbxmx', fileSize: 1 }).report.not_imported;
  assert.deepEqual(unknown, [{ class: 'NumberValue', property: 'hello', count: 1, reason: 'a property type the decoder does not know (XML <Baloney>)' }]);
});

test('a binary property of a type the decoder does not know is named with its class, name and count', () => {
  const dom = decode(readFileSync(join(PLACES_DIR, 'rocket-arena-2006.rbxl')));
  assert.deepEqual(dom.skipped, []);
  // The writer's own files name only known types; a type id 0x7f is patched into one PROP chunk (stored raw).
  const bytes = Buffer.from(encode(decode(readFileSync(join(TEST_FILES_DIR, 'three-unique-parts.rbxm'))), { compress: false }));
  const patched = patchFirstPropType(bytes, 'Anchored', 0x7f);
  const damaged = decode(patched);
  const entry = damaged.skipped.find((e) => e.property === 'Anchored');
  assert.deepEqual(entry, { className: 'Part', property: 'Anchored', count: 3, reason: 'a property type the decoder does not know (type id 0x7f)' });
  const doc = buildProject(damaged, options('p.rbxm', patched.length));
  assert.ok(doc.import.not_imported.some((e) => e.class === 'Part' && e.property === 'Anchored' && e.count === 3));
  assert.ok(doc.instances.every((i) => !('Anchored' in i.properties)));
});

/** The file again with the type byte of the PROP chunk named `name` replaced (chunks stored raw). */
function patchFirstPropType(bytes: Buffer, name: string, typeId: number): Buffer {
  const out = Buffer.from(bytes);
  let pos = 32;
  while (pos + 16 <= out.length) {
    const chunkName = out.toString('latin1', pos, pos + 4);
    const compressed = out.readUInt32LE(pos + 4);
    const size = out.readUInt32LE(pos + 8);
    if (chunkName === 'PROP' && compressed === 0) {
      const data = pos + 16;
      const nameLength = out.readUInt32LE(data + 4);
      if (out.toString('utf8', data + 8, data + 8 + nameLength) === name) {
        out[data + 8 + nameLength] = typeId;
        return out;
      }
    }
    pos += 16 + (compressed || size);
  }
  throw new Error(`no raw PROP chunk named ${name}`);
}

test('the stored document: Brotli round-trips to the same JSON, at most 3× the uploaded file on every real place', async () => {
  for (const name of PLACES) {
    const { bytes, dom } = place(name);
    const json = Buffer.concat([...projectJson(dom, options(name, bytes.length, 'disabled'))]);
    const stored: Buffer[] = [];
    await pipeline(Readable.from(projectJson(dom, options(name, bytes.length, 'disabled'))), documentCompressor(bytes.length), async (source) => {
      for await (const chunk of source) stored.push(chunk as Buffer);
    });
    const compressed = Buffer.concat(stored);
    assert.ok(brotliDecompressSync(compressed).equals(json), `${name}: decompresses to the document`);
    // A 256 KiB window (lgwin 18: the stream's first bits are 1, 001), so a reader decompressing it holds that, not 4 MiB.
    assert.equal(compressed[0]! & 0x0f, 0b0011, `${name}: window bits`);
    assert.ok(compressed.length <= 3 * bytes.length, `${name}: stored ${compressed.length} bytes for a ${bytes.length}-byte file (${(compressed.length / bytes.length).toFixed(2)}×)`);
  }
});

test('Accept-Encoding: br is accepted unless refused with q=0, itself or by `*` when not named', () => {
  for (const [header, accepted] of [['gzip, deflate, br', true], ['br;q=0.5', true], ['gzip', false], ['', false], ['br;q=0', false], ['*', true], ['BR', true], ['identity', false],
    // `*` stands for the codings not named: a refused br stays refused (RFC 9110 12.5.3).
    ['br;q=0, *', false], ['*;q=1, br;q=0', false], ['gzip, br;q=0, *;q=0.5', false], ['gzip, *;q=0', false], ['br, *;q=0', true], ['*;q=0.1', true], ['br ;q=0, *', false], ['br\t; q=0, *', false], [' br ', true], ['br;q = 0', false], ['br; q =0, *', false], ['br;q = 0.5', true]] as const) {
    assert.equal(acceptsDocumentEncoding(header), accepted, header);
  }
});

test('encodeValue and decodeValue are inverse for each encoder', () => {
  const ctx = { refId: (referent: number) => (referent === 0 ? '0' : null) };
  for (const [key, [type, value]] of Object.entries(EVERY_TYPE)) {
    assert.ok(type in ENCODERS);
    const back = decodeValue(type, JSON.parse(encodeValue(type, value, ctx)));
    const want = type === 'Ref' ? (value === 0 ? '0' : null) : type === 'Content' && typeof value === 'object' && value !== null && 'Object' in value ? { Object: '0' } : value;
    assert.ok(valuesEqual(back as Value, want as Value), `${key}: ${JSON.stringify(back)}`);
  }
  assert.equal(getValue(handDom([part('P', [0, 0, 0], [1, 1, 1])]), 0, 'Name'), 'P');
});

/** A binary file of `depth` instances, each the child of the one before: a Folder on top, then Scripts named by `nameOf(level)`. */
function chainFile(depth: number, nameOf: (level: number) => string): Buffer {
  const builder = new DomBuilder('binary');
  const folder = builder.addTable('Folder', new Map([['Name', arrayColumn('String', [nameOf(0)])]]));
  const names = Array.from({ length: depth - 1 }, (_, i) => nameOf(i + 1));
  const scripts = builder.addTable('Script', new Map([['Name', arrayColumn('String', names)], ['Source', arrayColumn('String', names.map(() => 'print(1)'))]]));
  let parent = builder.add(folder, -1);
  for (let i = 1; i < depth; i++) parent = builder.add(scripts, parent);
  return Buffer.from(encode(builder.build()));
}

test('script paths are bounded: a file nesting thousands of scripts gets paths of at most 1,000 characters, the top ancestor, "…" and the nearest names, in the entry and in line 2', () => {
  const depth = 3_000;
  const bytes = chainFile(depth, (level) => (level === 0 ? 'Top' : `S${level}`));
  const dom = decode(bytes);
  const fullNames: string[] = [];
  for (let level = 0, path = ''; level < depth; level++) fullNames.push((path = level === 0 ? 'Top' : `${path}.S${level}`));
  const doc = buildProject(dom, options('chain.rbxl', bytes.length, 'disabled'));
  assert.equal(doc.scripts.length, depth - 1);
  let shortened = 0;
  for (const entry of doc.scripts) {
    const level = Number(entry.name.slice(1));
    const full = fullNames[level]!;
    assert.ok(entry.path.length <= MAX_SCRIPT_PATH_CHARS, `${entry.name}: ${entry.path.length} characters`);
    assert.equal(readScriptMeta(entry.code)?.path, entry.path, 'line 2 carries the same path');
    if (full.length <= MAX_SCRIPT_PATH_CHARS) { assert.equal(entry.path, full); continue; }
    shortened++;
    assert.ok(entry.path.startsWith('Top.\u2026.'), entry.path.slice(0, 20));
    const tail = entry.path.slice('Top.\u2026.'.length);
    assert.ok(full.endsWith(`.${tail}`), `${entry.name}: the nearest names, whole`);
    // As many whole names as fit: one more would pass the bound.
    const next = full.slice(0, full.length - tail.length - 1).split('.').pop()!;
    assert.ok('Top.\u2026.'.length + next.length + 1 + tail.length > MAX_SCRIPT_PATH_CHARS, `${entry.name}: room for ${next}`);
  }
  assert.ok(shortened > 2_000, `${shortened} paths shortened`);
  // The whole document stays linear in the scripts: before, 3,000 nested scripts wrote paths of up to 3,000 names.
  let written = 0;
  for (const chunk of projectJson(dom, options('chain.rbxl', bytes.length, 'disabled'))) written += chunk.length;
  assert.ok(written < depth * 3_000, `${written} bytes of document`);
});

test('a shortened script path leaves out a top ancestor whose name is long, and keeps only whole names', () => {
  const long = (c: string) => c.repeat(600);
  const bytes = chainFile(4, (level) => long('abcd'[level]!));
  const doc = buildProject(decode(bytes), options('long.rbxl', bytes.length, 'enabled'));
  // Each full name passes 1,000 characters (1,201 at the first script); the top's 600 are too many to keep.
  assert.deepEqual(doc.scripts.map((entry) => entry.path), [`\u2026.${long('b')}`, `\u2026.${long('c')}`, `\u2026.${long('d')}`]);
});

test('the analysis reads script paths only where the report shows them: names read grow with the scripts, not with their depth', () => {
  const depth = 3_000;
  const bytes = chainFile(depth, (level) => `S${level}`);
  const dom = decode(bytes);
  const name = dom.name.bind(dom);
  let reads = 0;
  dom.name = (row: number) => { reads++; return name(row); };
  const { report } = analyzeDom(dom, { fileName: 'chain.rbxl', fileSize: bytes.length });
  assert.equal(report.scripts_total, depth - 1);
  // Every full name walked would be about 1.3 million reads (paths of up to 1,000 characters).
  assert.ok(reads < 10 * depth, `${reads} names read`);
});

test('a value whose JSON text passes MAX_DEFAULT_TEXT_BYTES is no class default: written with its instances, read back as it is', () => {
  const long = 'a'.repeat(MAX_DEFAULT_TEXT_BYTES + 16);
  for (const format of ['binary', 'xml'] as const) {
    const builder = new DomBuilder(format);
    const workspace = builder.add(builder.addTable('Workspace'));
    const values = [long, long, long, 'short', 'short'];
    const table = builder.addTable('StringValue', new Map([
      ['Name', arrayColumn('String', values.map((_, i) => `v${i}`))], ['Value', arrayColumn('String', values)],
    ]));
    for (let i = 0; i < values.length; i++) builder.add(table, workspace);
    const dom = format === 'binary' ? decode(encode(builder.build())) : builder.build();
    const doc = JSON.parse(Buffer.concat([...projectJson(dom, options('long.rbxl', 1))]).toString('utf8')) as ProjectDocument;
    assert.equal(doc.classes.StringValue!.defaults?.Value, 'short', `${format}: the long value, though most common, is not the default`);
    const read = [...readInstances(doc)].filter((instance) => instance.class === 'StringValue');
    assert.deepEqual(read.map((instance) => instance.properties.get('Value')?.value), values, format);
  }
});

test('strings whose JSON passes the longest string V8 makes are written a slice at a time: a value, a class\'s common value and a script source', () => {
  // Found by fuzzing: a 95 MB value of control characters (six JSON characters each, from a
  // 373 KB file) made `project` and `dump` fail with "Invalid string length", as did a
  // script's source of them (its scripts[] entry) and two instances sharing one (the class
  // default's sampling).
  // A slice never ends inside a surrogate pair: the text is JSON.stringify's, pairs, lone halves and escapes alike.
  const w = new JsonWriter();
  for (const at of [65534, 65535, 65536, 131071]) {
    for (const inner of ['\u{1F600}', '\uD800', '\uDC00', '\uDBFF\uDBFF\uDFFF', '"\\\n\x7f']) {
      const value = 'a'.repeat(at) + inner + '\x01'.repeat(70_000);
      w.string(value);
      assert.equal(w.takeText(), JSON.stringify(value), `${at} ${JSON.stringify(inner)}`);
    }
  }
  // As an XML file's DOM may be: one class in two tables, the huge rows sampled first, then
  // compared as text with the class default the other table gives.
  const huge = '\x01'.repeat(90_000_000);
  const builder = new DomBuilder('xml');
  const workspace = builder.add(builder.addTable('Workspace'));
  const script = builder.addTable('Script', new Map([['Name', arrayColumn('String', ['s'])], ['Source', arrayColumn('String', [huge])]]));
  builder.add(script, workspace);
  for (const rows of [[huge, huge], ['short', 'short', 'short']]) {
    const values = builder.addTable('StringValue', new Map([['Name', arrayColumn('String', rows.map((_, i) => `v${i}`))], ['Value', arrayColumn('String', rows)]]));
    for (let i = 0; i < rows.length; i++) builder.add(values, workspace);
  }
  const dom = builder.build();
  const count = (pieces: Iterable<Buffer>) => {
    let bytes = 0;
    let tail: Uint8Array = new Uint8Array(0);
    for (const piece of pieces) { bytes += piece.length; tail = piece; }
    return { bytes, tail: Buffer.from(tail).toString('utf8') };
  };
  const project = count(projectJson(dom, options('huge.rbxl', 1)));
  assert.ok(project.bytes > 3 * 6 * huge.length, `the source and both values are in the document (${project.bytes} bytes)`);
  assert.ok(project.tail.endsWith('"assets":[]}'), project.tail.slice(-100));
  const first = projectJson(dom, options('huge.rbxl', 1)).next();
  const head = Buffer.from(first.value as Uint8Array).toString('utf8');
  assert.match(head, /"StringValue":\{"properties":\{"Name":"String","Value":"String"\},"defaults":\{"Value":"short"\}/);
  const dump = count(dumpJson(dom));
  assert.ok(dump.bytes > 3 * 6 * huge.length, `${dump.bytes} bytes`);
});
