// Union hulls across a place: a blob repeated under many SharedStrings is decoded once,
// and distinct blobs stop at the place-wide caps (maxPlaceHullWork, maxPlaceHullBytes),
// checked before decoding, with the rest drawn as boxes and said once. Places are real
// binary files, written by the project's writer and decoded again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decode } from '../src/parser/index.js';
import { DomBuilder } from '../src/parser/dom-build.js';
import { arrayColumn } from '../src/parser/columns/column.js';
import { encode } from '../src/parser/writer/index.js';
import { DEFAULT_MESH_LIMITS, unionHullCost } from '../src/mesh/index.js';
import { assembleScene, HULLS_OVER_BUDGET, mapPicture, sceneDocument, type SceneAssembly } from '../src/scene/index.js';
import { cubeHull, writeCsgphs, type HullModel } from './support/mesh-writer.js';
import { atTheSameBound } from './support/union-bound.js';
import { CORPUS_DIR } from './support/paths.js';

/** `n` points on a unit sphere (every one a vertex of their hull), turned by `seed`. */
function sphere(n: number, seed = 0): Float32Array {
  const points = new Float32Array(n * 3);
  for (let i = 0; i < n; i++) {
    const y = 1 - (2 * (i + 0.5)) / n, r = Math.sqrt(1 - y * y), t = i * 2.399963229728653 + seed * 1e-3;
    points.set([Math.cos(t) * r, y, Math.sin(t) * r], i * 3);
  }
  return points;
}

/** `hulls` hulls of `points` points each, stored as points only (the decoder computes their triangles). */
function pointHulls(hulls: number, points: number, seed = 0): HullModel[] {
  return Array.from({ length: hulls }, () => ({ positions: sphere(points, seed), indices: new Uint32Array(0) }));
}

/** A place of one UnionOperation per blob, each with a SharedString of its own, as a file's bytes. */
function unionPlace(blobs: Uint8Array[]): Uint8Array {
  const builder = new DomBuilder('binary');
  const workspace = builder.add(builder.addTable('Workspace'));
  const n = blobs.length;
  const table = builder.addTable('UnionOperation', new Map([
    ['PhysicalConfigData', arrayColumn('SharedString', Array.from({ length: n }, (_, i) => i))],
    ['size', arrayColumn('Vector3', Array.from({ length: n }, () => [4, 4, 4]))],
    ['InitialSize', arrayColumn('Vector3', Array.from({ length: n }, () => [2, 2, 2]))],
    ['CFrame', arrayColumn('CFrame', Array.from({ length: n }, (_, i) => ({ position: [i * 5, 0, 0], orientation: [[1, 0, 0], [0, 1, 0], [0, 0, 1]] })))],
  ]));
  for (let i = 0; i < n; i++) builder.add(table, workspace);
  return encode(builder.build({ sharedStrings: blobs }));
}

/**
 * `count` copies of a CSGPHS 3 blob, each with one byte of its first hull's first 16-byte
 * block (which the decoder steps over) changed: the blobs differ, their hulls do not.
 */
function distinct(blob: Uint8Array, count: number): Uint8Array[] {
  return Array.from({ length: count }, (_, i) => {
    const copy = blob.slice();
    copy[14] = i;
    return copy;
  });
}

const hullShapes = (assembly: SceneAssembly) => assembly.shapes.filter((shape) => shape.source === 'PhysicalConfigData');
const budgetNotes = (notes: string[]) => notes.filter((note) => note.includes('unions drawn as boxes'));

test('a place repeating one CSGPHS blob under 60 SharedStrings decodes it once, and every union shows it', () => {
  const blob = writeCsgphs(pointHulls(2, 64), 3);
  const work = unionHullCost(blob)!.work;
  assert.equal(work, 2 * 64 * 64);
  const dom = decode(unionPlace(Array.from({ length: 60 }, () => blob.slice())));
  assert.equal(dom.sharedStrings.length, 60, 'the file keeps 60 SharedStrings');

  const assembly = assembleScene(dom);
  assert.equal(assembly.hullBudget.decoded, 1, 'decoded once');
  assert.equal(assembly.hullBudget.work, work, 'its hulls computed once');
  assert.equal(hullShapes(assembly).length, 1, 'one shape');
  assert.equal(new Set(assembly.parts.shapes).size, 1, 'every union uses it');
  assert.deepEqual(assembly.placeholders, {});

  // A place budget of exactly one blob's work still draws all 60: repeats cost nothing.
  const tight = assembleScene(dom, { limits: { maxPlaceHullWork: work, maxPlaceHullBytes: assembly.hullBudget.bytes } });
  assert.equal(tight.hullBudget.unionsBoxed, 0);
  assert.deepEqual(tight.placeholders, {});
  assert.deepEqual(budgetNotes(tight.notes), []);
  assert.equal(mapPicture(dom, { width: 64, height: 36 }).hullBudget.decoded, 1, 'the picture decodes it once too');
});

test('distinct heavy blobs (one byte apart) stop at the place\'s hull work: the rest are boxes, said once', () => {
  // Twelve blobs as the hostile upload's: four 4,096-point hulls each, every one within maxHullWork.
  const blobs = distinct(writeCsgphs(pointHulls(4, 4096, 1), 3), 12);
  const each = unionHullCost(blobs[0]!)!.work;
  assert.equal(each, DEFAULT_MESH_LIMITS.maxHullWork);
  const dom = decode(unionPlace(blobs));

  const assembly = assembleScene(dom);
  const { decoded, work, unionsBoxed } = assembly.hullBudget;
  assert.equal(decoded, Math.floor(DEFAULT_MESH_LIMITS.maxPlaceHullWork / each), 'decoding stops at the place\'s work');
  assert.ok(work <= DEFAULT_MESH_LIMITS.maxPlaceHullWork);
  assert.equal(unionsBoxed, 12 - decoded);
  assert.deepEqual(assembly.placeholders, { [HULLS_OVER_BUDGET]: 12 - decoded });
  assert.deepEqual(budgetNotes(assembly.notes), [
    `${12 - decoded} unions drawn as boxes: the place's union hulls pass the limit on computing and keeping them ` +
    `(maxPlaceHullWork ${DEFAULT_MESH_LIMITS.maxPlaceHullWork}, maxPlaceHullBytes ${DEFAULT_MESH_LIMITS.maxPlaceHullBytes})`,
  ]);
  // scene.glb carries the same note first and the boxes as placeholders.
  const { doc } = sceneDocument(assembly);
  const extras = doc.extras as { notes: string[]; placeholders: Record<string, number> };
  assert.equal(extras.notes[0], budgetNotes(assembly.notes)[0]);
  assert.equal(extras.placeholders[HULLS_OVER_BUDGET], 12 - decoded);
});

test('stored hulls stop at the place\'s hull bytes, checked from their headers before decoding', () => {
  // Eight cubes a blob (96 triangles: 8,064 bytes flat-shaded), nothing computed.
  const blobs = distinct(writeCsgphs(Array.from({ length: 8 }, (_, i) => cubeHull(1, [i * 3, 0, 0])), 3), 20);
  assert.deepEqual(unionHullCost(blobs[0]!), { work: 0, triangles: 96 });
  const blobBytes = 96 * 84;
  const dom = decode(unionPlace(blobs));
  const assembly = assembleScene(dom, { limits: { maxPlaceHullBytes: 5 * blobBytes + 100 } });
  assert.equal(assembly.hullBudget.decoded, 5, 'the sixth is refused from its headers, not decoded');
  assert.equal(assembly.hullBudget.bytes, 5 * blobBytes);
  assert.equal(assembly.hullBudget.unionsBoxed, 15);
  assert.equal(budgetNotes(assembly.notes).length, 1);
  assert.equal(hullShapes(assembly).length, 5);
});

test('CSGPHS 8, whose counts are inside its ZSTD frame, stops at the place\'s hull bytes too', () => {
  const names = ['00', '01', '02', '03', '04', '05'].map((n) => `CSGPHS_8_${n}.data`);
  const blobs = names.map((name) => new Uint8Array(readFileSync(join(CORPUS_DIR, 'meshes', name))));
  const dom = decode(unionPlace(blobs));
  const all = assembleScene(dom);
  assert.equal(all.hullBudget.decoded, 6);
  assert.equal(all.hullBudget.unionsBoxed, 0);
  // Room for the first three: the fourth's decode is held to the triangles left, and refused.
  const firstThree = hullShapes(all).slice(0, 3).reduce((sum, shape) => sum + shape.geometry.indices.length * 28, 0);
  const capped = assembleScene(dom, { limits: { maxPlaceHullBytes: firstThree + 84 } });
  assert.equal(hullShapes(capped).length, 3);
  assert.equal(capped.hullBudget.decoded, 4, 'the fourth is decompressed, its face count refused, and nothing after it is tried');
  assert.equal(capped.hullBudget.bytes, firstThree);
  assert.equal(capped.hullBudget.unionsBoxed, 3);
  assert.deepEqual(capped.notes.filter((note) => /unreadable/.test(note)), [], 'over the budget is not unreadable');
});

test('the service\'s analysis warns once and its scene.glb and the CLI\'s stop at the same bound', async () => {
  const blobs = distinct(writeCsgphs(pointHulls(2, 256, 3), 3), 40);
  const each = unionHullCost(blobs[0]!)!.work;
  // The CLI runs under the defaults: 40 blobs of 131,072 work fit 1,024 of them, so make them heavier.
  const heavy = distinct(writeCsgphs(pointHulls(4, 4096, 4), 3), 4);
  const run = await atTheSameBound(unionPlace(blobs), { maxPlaceHullWork: 3 * each }, unionPlace(heavy));
  const warnings = run.warnings.filter((warning) => warning.includes('unions drawn as boxes'));
  assert.deepEqual(warnings, ['picture: 37 unions drawn as boxes (the place\'s union hulls pass the limit on computing and keeping them; scene.glb draws them the same way)']);
  assert.deepEqual(run.placeholders, { [HULLS_OVER_BUDGET]: 37 });
  assert.equal(run.cli.code, 0, run.cli.stderr);
  assert.match(run.cli.stdout, new RegExp(`placeholders: 2 ${HULLS_OVER_BUDGET}`));
});
