// Union models (MeshData, CSGMDL) across a place: decoded once per distinct content (SHA-256,
// so blobs crafted to share a short hash stay apart), and distinct blobs stop at the place-wide
// cap maxPlaceModelBytes, checked from their counts before decoding and charged whether or not
// a model comes out; past it, unions draw their hulls, else a box, said once. Unreadable union
// data is named for the first few distinct blobs, then counted. Places are real binary files,
// written by the project's writer and decoded again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decode } from '../src/parser/index.js';
import { DomBuilder } from '../src/parser/dom-build.js';
import { arrayColumn } from '../src/parser/columns/column.js';
import type { Column } from '../src/parser/dom.js';
import { encode } from '../src/parser/writer/index.js';
import { decodeMeshAsset, DEFAULT_MESH_LIMITS, unionModelCost } from '../src/mesh/index.js';
import { assembleScene, HULLS_OVER_BUDGET, mapPicture, MODELS_OVER_BUDGET, sceneDocument, UNREADABLE_NOTES, type SceneAssembly } from '../src/scene/index.js';
import { memoryBudget } from '../src/service/budget.js';
import { cubeHull, writeCsgmdl, writeCsgmdl5, writeCsgphs, type MeshModel } from './support/mesh-writer.js';
import { atTheSameBound } from './support/union-bound.js';

/** A ribbon of `vertices` vertices and `triangles` triangles (a strip, wrapping round), every index one byte in CSGMDL 5. */
function ribbon(vertices: number, triangles: number, scale = 1): MeshModel {
  const positions = new Float32Array(vertices * 3);
  for (let i = 0; i < vertices; i++) positions.set([(i >> 1) * 0.01 * scale, (i & 1) * 0.5 * scale, 0], i * 3);
  const faces = new Uint32Array(triangles * 3);
  for (let k = 0; k < triangles; k++) {
    const a = k % (vertices - 2);
    faces.set([a, a + 1, a + 2], k * 3);
  }
  return { positions, normals: new Float32Array(vertices * 3).fill(0.5), uvs: new Float32Array(vertices * 2), faces, lodOffsets: [] };
}

/** `count` copies of a CSGMDL 5 blob, each with its first position's x changed: distinct bytes, the same counts. */
function distinct5(blob: Uint8Array, count: number): Uint8Array[] {
  return Array.from({ length: count }, (_, i) => {
    const copy = blob.slice();
    copy.set(new Uint8Array(Float32Array.of(i * 1e-3).buffer), 12);
    return copy;
  });
}

/** A place of one UnionOperation per MeshData blob (and per hull blob, when given), as a file's bytes. */
function modelPlace(models: Uint8Array[], hulls?: Uint8Array[]): Uint8Array {
  const builder = new DomBuilder('binary');
  const workspace = builder.add(builder.addTable('Workspace'));
  const n = models.length;
  const columns = new Map<string, Column>([
    ['MeshData', arrayColumn('String', models.map((blob) => ({ base64: Buffer.from(blob).toString('base64') })))],
    ['size', arrayColumn('Vector3', Array.from({ length: n }, () => [4, 4, 4]))],
    ['InitialSize', arrayColumn('Vector3', Array.from({ length: n }, () => [2, 2, 2]))],
    ['CFrame', arrayColumn('CFrame', Array.from({ length: n }, (_, i) => ({ position: [i * 5, 0, 0], orientation: [[1, 0, 0], [0, 1, 0], [0, 0, 1]] })))],
  ]);
  if (hulls) columns.set('PhysicalConfigData', arrayColumn('SharedString', Array.from({ length: n }, (_, i) => i)));
  const table = builder.addTable('UnionOperation', columns);
  for (let i = 0; i < n; i++) builder.add(table, workspace);
  return encode(builder.build(hulls ? { sharedStrings: hulls } : {}));
}

const modelShapes = (assembly: SceneAssembly) => assembly.shapes.filter((shape) => shape.source === 'MeshData');
const hullShapes = (assembly: SceneAssembly) => assembly.shapes.filter((shape) => shape.source === 'PhysicalConfigData');
const budgetNotes = (notes: string[]) => notes.filter((note) => note.includes('not decoded: the place\'s union models'));

function fnv1a(bytes: Uint8Array, h = 0x811c9dc5): number {
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h >>> 0;
}

test('unionModelCost reads CSGMDL 2, 4 and 5 counts without decoding, and what decoding allocates stays within them', () => {
  const cube = ribbon(40, 60);
  for (const blob of [writeCsgmdl(cube, 2), writeCsgmdl(cube, 4), writeCsgmdl5(cube)]) {
    const cost = unionModelCost(blob)!;
    // CSGMDL 2 and 4 are decoded from a clear copy of the whole blob: it counts too.
    const copied = blob[6] === 0x35 ? 0 : blob.length;
    assert.deepEqual(cost, { vertices: 40, indices: 180, bytes: 40 * 36 + 180 * 4 + copied });
    const { geometry } = decodeMeshAsset(blob) as { geometry: { positions: Float32Array; normals?: Float32Array; uvs?: Float32Array; colors?: Uint8Array; indices: Uint32Array } };
    const kept = geometry.positions.byteLength + (geometry.normals?.byteLength ?? 0) + (geometry.uvs?.byteLength ?? 0) + (geometry.colors?.byteLength ?? 0) + geometry.indices.byteLength;
    assert.ok(kept <= cost.bytes, `${kept} <= ${cost.bytes}`);
  }
  // CSGMDL 5 decodes every index range, though it keeps the first: all of them count.
  const lods = writeCsgmdl5(ribbon(40, 60), [Array.from({ length: 3000 }, (_, i) => i % 40)]);
  assert.deepEqual(unionModelCost(lods), { vertices: 40, indices: 3180, bytes: 40 * 36 + 3180 * 4 });
  // No union model: nothing to decode.
  assert.equal(unionModelCost(writeCsgphs([cubeHull()], 3)), null);
  // Counts past the blob, or past the caps, are refused as decoding would refuse them.
  assert.throws(() => unionModelCost(writeCsgmdl5(cube).subarray(0, 200)), /CSGMDL 5/);
  assert.throws(() => unionModelCost(writeCsgmdl(cube, 2), { maxVertices: 10 }), /exceeds the limit/);
  assert.throws(() => unionModelCost(writeCsgmdl5(cube), { maxTriangles: 10 }), /exceeds the limit/);
});

test('a place repeating one MeshData blob in 60 unions decodes it once, and blobs sharing an FNV-32 hash and length stay apart', () => {
  const blob = writeCsgmdl5(ribbon(64, 200));
  const cost = unionModelCost(blob)!.bytes;
  const dom = decode(modelPlace(Array.from({ length: 60 }, () => blob)));
  const assembly = assembleScene(dom);
  assert.deepEqual(assembly.modelBudget, { decoded: 1, bytes: cost, unionsUndecoded: 0 });
  assert.equal(modelShapes(assembly).length, 1);
  assert.equal(new Set(assembly.parts.shapes).size, 1, 'every union uses it');
  // A budget of exactly one blob draws all 60: repeats cost nothing.
  const tight = assembleScene(dom, { limits: { maxPlaceModelBytes: cost } });
  assert.equal(tight.modelBudget.unionsUndecoded, 0);
  assert.deepEqual(tight.placeholders, {});
  assert.equal(mapPicture(dom, { width: 64, height: 36 }).modelBudget.decoded, 1, 'the picture decodes it once too');

  // Two different models (a ribbon and one twice its size), whose CSGMDL 4 trailing lists (stepped
  // over by the decoder) are chosen so that the whole blobs share their FNV-1a 32 hash and length.
  const [small, large] = [writeCsgmdl(ribbon(16, 20), 4), writeCsgmdl(ribbon(16, 20, 2), 4)];
  assert.equal(small.length, large.length);
  const tail = small.length - 8; // the trailing list's two values (the writer's 7 and 9, obfuscated)
  const states = [fnv1a(small.subarray(0, tail)), fnv1a(large.subarray(0, tail))];
  // A birthday search over well-spread 32-bit values (FNV mixes poorly upwards from small ones).
  const suffix = (i: number) => new Uint8Array(Uint32Array.of(Math.imul(i, 0x9e3779b1), 0).buffer);
  const seen = new Map<number, number>();
  for (let i = 0; i < 1 << 17; i++) seen.set(fnv1a(suffix(i), states[0]), i);
  let pair: [number, number] | null = null;
  for (let i = 0; i < 1 << 20 && !pair; i++) {
    const other = seen.get(fnv1a(suffix(i), states[1]));
    if (other !== undefined) pair = [other, i];
  }
  assert.ok(pair, 'an FNV-32 collision');
  small.set(suffix(pair[0]), tail);
  large.set(suffix(pair[1]), tail);
  assert.equal(fnv1a(small), fnv1a(large));
  assert.notDeepEqual(small, large);
  const colliding = assembleScene(decode(modelPlace([small, large])));
  const shapes = modelShapes(colliding);
  assert.equal(shapes.length, 2, 'two models, not one');
  assert.notDeepEqual(shapes[0]!.geometry.positions, shapes[1]!.geometry.positions);
  assert.notEqual(colliding.parts.shapes[0], colliding.parts.shapes[1]);
});

test('distinct heavy CSGMDL 5 blobs stop at maxPlaceModelBytes, checked from their counts before decoding: the rest are boxes, said once, first', () => {
  const blobs = distinct5(writeCsgmdl5(ribbon(256, 20_000)), 20);
  const each = unionModelCost(blobs[0]!)!.bytes;
  assert.equal(each, 256 * 36 + 60_000 * 4);
  const dom = decode(modelPlace(blobs));
  const limits = { maxPlaceModelBytes: 5 * each + 100 };
  const assembly = assembleScene(dom, { limits });
  assert.deepEqual(assembly.modelBudget, { decoded: 5, bytes: 5 * each, unionsUndecoded: 15 }, 'the sixth is refused from its counts, not decoded');
  assert.equal(modelShapes(assembly).length, 5);
  assert.deepEqual(assembly.placeholders, { [MODELS_OVER_BUDGET]: 15 });
  const note = `15 unions' models (MeshData) not decoded: the place's union models pass the limit on decoding them (maxPlaceModelBytes ${limits.maxPlaceModelBytes}); they are drawn as their hulls, else as boxes`;
  assert.equal(assembly.notes[0], note);
  assert.deepEqual(budgetNotes(assembly.notes), [note]);
  const { doc } = sceneDocument(assembly);
  const extras = doc.extras as { notes: string[]; placeholders: Record<string, number> };
  assert.equal(extras.notes[0], note);
  assert.equal(extras.placeholders[MODELS_OVER_BUDGET], 15);

  // The defaults hold a real place's models (the corpus CSGMDL 5 is 48 KB) by the hundreds.
  assert.equal(DEFAULT_MESH_LIMITS.maxPlaceModelBytes, 64 << 20);
  assert.equal(assembleScene(dom).modelBudget.decoded, 20);

  // With hulls to fall back on, the unions past the cap draw them (within the hulls' own cap).
  const hulls = Array.from({ length: 20 }, (_, i) => writeCsgphs([cubeHull(1, [i, 0, 0])], 3));
  const withHulls = assembleScene(decode(modelPlace(blobs, hulls)), { limits });
  assert.equal(withHulls.modelBudget.unionsUndecoded, 15);
  assert.equal(hullShapes(withHulls).length, 15);
  assert.deepEqual(withHulls.placeholders, {});
  assert.equal(budgetNotes(withHulls.notes).length, 1);
  // And past both caps, the box is the hulls'.
  const neither = assembleScene(decode(modelPlace(blobs, hulls)), { limits: { ...limits, maxPlaceHullBytes: 0 } });
  assert.deepEqual(neither.placeholders, { [HULLS_OVER_BUDGET]: 15 });
});

test('a blob that decodes to no model still spends what its counts declare', () => {
  // The first index range is empty (the model), the second holds every triangle: decoded, then dropped.
  const empty = writeCsgmdl5({ ...ribbon(256, 0), faces: new Uint32Array(0) }, [Array.from(ribbon(256, 20_000).faces)]);
  const blobs = distinct5(empty, 10);
  const each = unionModelCost(blobs[0]!)!.bytes;
  const assembly = assembleScene(decode(modelPlace(blobs)), { limits: { maxPlaceModelBytes: 3 * each } });
  assert.deepEqual(assembly.modelBudget, { decoded: 3, bytes: 3 * each, unionsUndecoded: 7 });
  assert.equal(modelShapes(assembly).length, 0);
});

test('a CSGMDL 2 or 4 blob padded past its model is charged the copy it is decoded from', () => {
  // An empty model and 1 MiB after it: no vertex, no index, but decoding copies the whole blob into clear first.
  for (const version of [2, 4] as const) {
    const padded = new Uint8Array(writeCsgmdl({ ...ribbon(3, 0), faces: new Uint32Array(0) }, version).length + (1 << 20));
    padded.set(writeCsgmdl({ ...ribbon(3, 0), faces: new Uint32Array(0) }, version));
    assert.ok(unionModelCost(padded)!.bytes >= padded.length, `CSGMDL ${version}`);
  }
});

test('once the model budget is spent, MeshData that holds no model or cannot be read is still said as such', () => {
  const heavy = writeCsgmdl5(ribbon(1000, 4000));
  const csgk = new TextEncoder().encode('CSGK' + 'a'.repeat(60));
  const junk = new TextEncoder().encode('not a union at all, just text');
  const blobs = [heavy, csgk, csgk.map((b, i) => (i === 10 ? 98 : b)), junk];
  const assembly = assembleScene(decode(modelPlace(blobs)), { limits: { maxPlaceModelBytes: 1000 } });
  // Only the heavy model is past the budget; the CSGK keys hold no model; the junk is unreadable.
  assert.equal(assembly.modelBudget.unionsUndecoded, 1);
  assert.equal(assembly.placeholders[MODELS_OVER_BUDGET], 1);
  assert.equal(assembly.placeholders['union without hulls or model'], 3);
  assert.equal(assembly.notes.filter((note) => /MeshData is unreadable/.test(note)).length, 1);
});

test('unreadable union data is named for the first distinct blobs, then counted', () => {
  const good = writeCsgmdl(ribbon(16, 20), 2);
  // 30 distinct MeshData blobs: 15 with a byte after the model (the decode refuses them), 15 cut short (the counts do).
  const models = Array.from({ length: 30 }, (_, i) => (i < 15
    ? Uint8Array.of(...good, i)
    : good.subarray(0, good.length - 1 - i)));
  // 14 distinct PhysicalConfigData blobs that are no mesh at all.
  const hulls = Array.from({ length: 30 }, (_, i) => new TextEncoder().encode(`not hulls ${i % 14}`));
  const assembly = assembleScene(decode(modelPlace(models, hulls)));
  const modelNotes = assembly.notes.filter((note) => note.startsWith('a union\'s MeshData is unreadable'));
  const hullNotes = assembly.notes.filter((note) => note.startsWith('a union\'s PhysicalConfigData is unreadable'));
  assert.equal(modelNotes.length, UNREADABLE_NOTES);
  assert.equal(hullNotes.length, UNREADABLE_NOTES);
  assert.ok(assembly.notes.includes(`20 more distinct MeshData blobs are unreadable (the first ${UNREADABLE_NOTES} are named above)`), assembly.notes.join('\n'));
  assert.ok(assembly.notes.includes(`4 more distinct PhysicalConfigData blobs are unreadable (the first ${UNREADABLE_NOTES} are named above)`), assembly.notes.join('\n'));
  assert.equal(assembly.notes.length, 2 * UNREADABLE_NOTES + 2);
});

test('the budget gives union models a fifth of a task, and the analysis, the scene build and the CLI stop at the same bound', async () => {
  const budget = memoryBudget({ maxMemoryMb: 512, workers: 1, previewCacheBytes: 64 << 20 });
  const taskBytes = (budget.perWorkerMb - 64) * 2 ** 20;
  assert.equal(budget.task.mesh.maxPlaceModelBytes, Math.floor(taskBytes * 0.2));
  assert.equal(memoryBudget({ maxMemoryMb: 65_536, workers: 1, previewCacheBytes: 0 }).task.mesh.maxPlaceModelBytes, DEFAULT_MESH_LIMITS.maxPlaceModelBytes);

  const blobs = distinct5(writeCsgmdl5(ribbon(64, 1000)), 40);
  const each = unionModelCost(blobs[0]!)!.bytes;
  // The CLI runs under the defaults (64 MiB): blobs of 2M triangles (24 MB decoded each, 6 MB stored) fit two.
  const heavy = distinct5(writeCsgmdl5(ribbon(64, 2_000_000)), 4);
  assert.equal(unionModelCost(heavy[0]!)!.bytes, 64 * 36 + 6_000_000 * 4);
  const run = await atTheSameBound(modelPlace(blobs), { maxPlaceModelBytes: 3 * each }, modelPlace(heavy));
  const warnings = run.warnings.filter((warning) => warning.includes('(MeshData) not decoded'));
  assert.deepEqual(warnings, ['picture: 37 unions\' models (MeshData) not decoded, drawn as their hulls or boxes (the place\'s union models pass the limit on decoding them; scene.glb draws them the same way)']);
  assert.deepEqual(run.placeholders, { [MODELS_OVER_BUDGET]: 37 });
  assert.equal(run.cli.code, 0, run.cli.stderr);
  assert.match(run.cli.stdout, new RegExp(`placeholders: 2 ${MODELS_OVER_BUDGET}; 2 unions' models \\(MeshData\\) past the place's limit`));
});

test('a union model whose triangles use a vertex that is not a finite number draws its hulls; such vertices no triangle uses are left out', () => {
  // Found by fuzzing: one flipped byte in a MeshData blob made a NaN position, and scene.glb's
  // writer threw on it (`rbxl-import gltf` exited 1, the scene build answered 500).
  const broken = ribbon(40, 60);
  broken.positions[5 * 3 + 1] = Number.NaN;
  const spare = ribbon(40, 60);
  const extend = (array: Float32Array, values: number[]) => Float32Array.from([...array, ...values]);
  const unused: MeshModel = { ...spare, positions: extend(spare.positions, [Infinity, 0, 0]), normals: extend(spare.normals, [0, 1, 0]), uvs: extend(spare.uvs, [0, 0]) };
  const models = [writeCsgmdl(broken, 2), writeCsgmdl(broken, 4), writeCsgmdl5(broken), writeCsgmdl(unused, 2), writeCsgmdl(unused, 4), writeCsgmdl5(unused)];
  const hulls = models.map((_, i) => writeCsgphs([cubeHull(1, [i, 0, 0])], 3));
  const assembly = assembleScene(decode(modelPlace(models, hulls)));
  const notes = assembly.notes.filter((note) => note.includes('the triangles use vertices that are not finite numbers'));
  assert.deepEqual(notes.map((note) => /CSGMDL \d/.exec(note)![0]).sort(), ['CSGMDL 2', 'CSGMDL 4', 'CSGMDL 5']);
  assert.equal(hullShapes(assembly).length, 3);
  const drawn = modelShapes(assembly);
  assert.equal(drawn.length, 3);
  for (const shape of drawn) {
    assert.equal(shape.geometry.positions.length, 40 * 3);
    assert.ok(shape.geometry.positions.every(Number.isFinite));
  }
  const { doc } = sceneDocument(assembly);
  assert.equal(doc.nodes.length, models.length);
});
