/**
 * Every file of ../shared/corpus/meshes decodes to its reference decoding (rbx_mesh's
 * snapshots): the same positions, normals, uvs and colours within 1e-4, the same
 * faces, LOD tables, bones, subsets and hulls. Files without a snapshot decode
 * without error to plausible geometry.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { geometryBounds, type MeshGeometry } from '../src/geometry/mesh.js';
import { decodeMeshAsset, type FileMeshAsset, type UnionGraphicsAsset, type UnionPhysicsAsset } from '../src/mesh/index.js';
import { field, inner, numbers, readSnapshot, type RustStruct, type RustValue } from './support/rust-debug.js';
import { assertClose, meshCorpusFiles, readMeshFile, snapshotPath } from './support/mesh-corpus.js';

const TOLERANCE = 1e-4;

const list = (value: RustValue): RustValue[] => {
  assert.ok(Array.isArray(value), 'expected a list in the snapshot');
  return value;
};
const flat = (values: RustValue[], pick: (v: RustValue) => RustValue): number[] => values.flatMap((v) => numbers(pick(v)));
/** `[VertexId(1), VertexId(2), VertexId(3)]` or `Face2([VertexId2(1), …])` → [1, 2, 3]. */
const faceIndices = (face: RustValue): number[] => {
  const ids = Array.isArray(face) ? face : list(inner(face));
  return ids.map((id) => inner(id) as number);
};

function decodeMesh(name: string): FileMeshAsset {
  const asset = decodeMeshAsset(readMeshFile(name));
  assert.equal(asset.kind, 'mesh');
  return asset;
}

/** Vertex arrays of a snapshot's vertex list (`Vertex1`, `Vertex2`, `Vertex2Truncated`, CSGMDL's `Vertex`). */
function expectedVertices(vertices: RustValue[]): { positions: number[]; normals: number[]; uvs: number[]; colors: number[] | null } {
  const first = vertices[0] as RustStruct;
  return {
    positions: flat(vertices, (v) => field(v, 'pos')),
    normals: flat(vertices, (v) => field(v, 'norm')),
    uvs: vertices.flatMap((v) => numbers(field(v, 'tex')).slice(0, 2)),
    colors: 'color' in first ? flat(vertices, (v) => field(v, 'color')) : null,
  };
}

function assertVertices(geometry: MeshGeometry, expected: ReturnType<typeof expectedVertices>, what: string): void {
  assert.equal(geometry.positions.length / 3, expected.positions.length / 3, `${what}: vertex count`);
  assertClose(geometry.positions, expected.positions, TOLERANCE, `${what} positions`);
  assertClose(geometry.normals, expected.normals, TOLERANCE, `${what} normals`);
  assertClose(geometry.uvs, expected.uvs, TOLERANCE, `${what} uvs`);
  if (expected.colors) assert.deepEqual(Array.from(geometry.colors ?? []), expected.colors, `${what} colours`);
  else assert.equal(geometry.colors, undefined, `${what}: no colours stored`);
}

/** LOD 0's faces from all stored faces and the LOD table (tables shorter than 3 are ignored, as Roblox does). */
function lod0Faces(faces: number[], lods: number[]): number[] {
  return lods.length < 3 ? faces : faces.slice(lods[0]! * 3, lods[1]! * 3);
}

const binaryMeshes: Array<[string, string, string]> = [
  ['torso.mesh', 'mesh__mesh_200', '2.00'],
  ['5115672913', 'mesh__mesh_300', '3.00'],
  ['13674780763', 'mesh__mesh_500', '5.00'],
  ['14818281896', 'mesh__mesh_500_alt1', '5.00'],
];

test('mesh 1.00 (text) matches its reference: positions halved, v flipped, one triangle per three vertices', () => {
  const asset = decodeMesh('158071912');
  const snapshot = readSnapshot(snapshotPath('mesh__mesh_100'));
  assert.equal((field(snapshot, 'revision') as RustStruct).$, 'Version100');
  assert.equal(asset.version, '1.00');
  const vertices = list(field(snapshot, 'vertices'));
  assertVertices(asset.geometry, expectedVertices(vertices), 'mesh 1.00');
  assert.deepEqual(Array.from(asset.geometry.indices), vertices.map((_, i) => i));
  assert.equal(asset.header.faceCount, vertices.length / 3);
});

for (const [file, snap, version] of binaryMeshes) {
  test(`mesh ${version} ${file} matches its reference: vertices, LOD 0 faces, LOD table${version === '5.00' ? ', bones, subsets, skinning, FACS size' : ''}`, () => {
    const asset = decodeMesh(file);
    const snapshot = readSnapshot(snapshotPath(snap));
    assert.equal(asset.version, version);
    const stored = field(snapshot, 'vertices');
    const vertices = Array.isArray(stored) ? stored : list(inner(stored));
    assertVertices(asset.geometry, expectedVertices(vertices), `mesh ${file}`);
    if (!Array.isArray(stored)) assert.equal(asset.header.vertexSize, (stored as RustStruct).$ === 'Truncated' ? 36 : 40);
    const faces = list(field(snapshot, 'faces')).flatMap(faceIndices);
    const lods = 'lods' in (snapshot as RustStruct) ? list(field(snapshot, 'lods')).map((l) => inner(l) as number) : [];
    assert.equal(asset.header.faceCount, faces.length / 3);
    assert.deepEqual(asset.header.lodOffsets, lods);
    assert.deepEqual(Array.from(asset.geometry.indices), lod0Faces(faces, lods), 'LOD 0 faces');
    if (lods.length >= 3) assert.equal(asset.header.lods.length, lods.length - 1);
    if (version !== '5.00') return;

    const lodType = (field(snapshot, 'lod_type') as RustStruct).$;
    assert.equal(asset.header.lodType, { ZeuxMeshOptimizer: 3, Type4: 4 }[lodType]);
    assert.equal(asset.header.highQualityLodCount, field(snapshot, 'lod_hq_count'));
    assert.deepEqual(asset.header.facs, { bytes: field(snapshot, 'sizeof_facs'), format: 1 });
    const bones = list(field(snapshot, 'bones'));
    const table = Buffer.from(numbers(field(snapshot, 'bone_names')));
    const names = bones.map((b) => {
      const at = field(b, 'bone_name_pos') as number;
      return table.subarray(at, table.indexOf(0, at)).toString('utf8');
    });
    assert.equal(asset.header.boneCount, bones.length);
    assert.deepEqual(asset.header.boneNames, names);
    const skin = asset.geometry.skin!;
    assert.ok(skin, 'skinned');
    assert.deepEqual(skin.bones.map((b) => b.name), names);
    assert.deepEqual(skin.bones.map((b) => b.parent), bones.map((b) => {
      const id = inner(field(b, 'parent')) as number;
      return id === 0xffff ? -1 : id;
    }));
    const cframe = field(bones[1], 'cframe') as RustStruct;
    const m = skin.bones[1]!.matrix;
    assertClose([m[0]!, m[4]!, m[8]!, m[1]!, m[12]!, m[13]!, m[14]!], [cframe.r00, cframe.r01, cframe.r02, cframe.r10, cframe.x, cframe.y, cframe.z] as number[], TOLERANCE, 'bone 1 matrix');
    const subsets = list(field(snapshot, 'subsets'));
    assert.equal(asset.header.subsetCount, subsets.length);
    // Each vertex's joints are its subset's palette entries for its bone slots; weights sum to 1.
    const envelopes = list(field(snapshot, 'envelopes'));
    for (const subset of subsets) {
      const palette = list(field(subset, 'bones')).map((b) => inner(b) as number);
      const start = field(subset, 'vertices_offset') as number;
      for (let v = start; v < start + (field(subset, 'vertices_len') as number); v++) {
        const slots = numbers(field(envelopes[v], 'bones'));
        const weights = numbers(field(envelopes[v], 'weights'));
        const sum = weights.reduce((a, b) => a + b, 0);
        for (let k = 0; k < 4; k++) {
          if (weights[k] === 0) continue;
          assert.equal(skin.joints[v * 4 + k], palette[slots[k]!], `vertex ${v} joint ${k}`);
          assert.ok(Math.abs(skin.weights[v * 4 + k]! - weights[k]! / sum) < 1e-6, `vertex ${v} weight ${k}`);
        }
      }
    }
  });
}

const unionModels: Array<[string, string, string]> = [
  ['385416572.meshdata', 'union_graphics__meshdata_385416572_2', '2'],
  ['5692112940_2.meshdata', 'union_graphics__meshdata_5692112940_2', '2'],
  ['4500696697_4.meshdata', 'union_graphics__meshdata_4500696697_4', '4'],
];

for (const [file, snap, version] of unionModels) {
  test(`CSGMDL ${version} ${file} matches its reference: vertices, colours, faces, hash`, () => {
    const asset = decodeMeshAsset(readMeshFile(file)) as UnionGraphicsAsset;
    assert.equal(asset.kind, 'union_graphics');
    assert.equal(asset.version, version);
    const snapshot = readSnapshot(snapshotPath(snap));
    const mesh = field(snapshot, 'mesh');
    assertVertices(asset.geometry, expectedVertices(list(field(mesh, 'vertices'))), `CSGMDL ${file}`);
    assert.deepEqual(Array.from(asset.geometry.indices), list(field(mesh, 'faces')).flatMap(faceIndices));
    assert.equal(asset.header.hash, String.fromCharCode(...numbers(field(field(snapshot, 'hash'), 'hash'))));
  });
}

for (const [file, snap] of [['13626979828.meshdata5', 'union_graphics__meshdata_13626979828_5'], ['14846974687_5.meshdata', 'union_graphics__meshdata_14846974687_5']] as const) {
  test(`CSGMDL 5 ${file} matches its reference: positions, quantized normals, uvs, colours, delta-coded indices`, () => {
    const asset = decodeMeshAsset(readMeshFile(file)) as UnionGraphicsAsset;
    assert.equal(asset.kind, 'union_graphics');
    assert.equal(asset.version, '5');
    const snapshot = readSnapshot(snapshotPath(snap));
    const g = asset.geometry;
    assertClose(g.positions, list(field(snapshot, 'positions')).flatMap(numbers), TOLERANCE, 'positions');
    // Quantized: the dequantization must be the format's exactly, not just close.
    assertClose(g.normals, list(field(snapshot, 'normals')).flatMap((n) => numbers(inner(n))), 1e-7, 'normals');
    assertClose(g.uvs, list(field(snapshot, 'tex')).flatMap(numbers), TOLERANCE, 'uvs');
    assert.deepEqual(Array.from(g.colors!), list(field(snapshot, 'colors')).flatMap(numbers));
    const faces = field(snapshot, 'faces');
    assert.deepEqual(Array.from(g.indices), numbers(field(faces, 'indices')));
    assert.equal(asset.header.extraIndexRanges, list(field(faces, '_unknown')).length);
  });
}

/** Per-hull positions and faces of a CSGPHS snapshot (3/5: a list of meshes; 8: ranges into shared arrays). */
function expectedHulls(snapshot: RustValue): Array<{ positions: number[]; faces: number[] }> {
  if ('meshes' in (snapshot as RustStruct)) {
    return list(field(snapshot, 'meshes')).map((m) => ({
      positions: list(field(m, 'positions')).flatMap(numbers),
      faces: list(field(m, 'faces')).flatMap(faceIndices),
    }));
  }
  const hulls = field(field(snapshot, 'mesh'), 'hulls');
  const faceRanges = numbers(field(hulls, 'face_ranges'));
  const posRanges = numbers(field(hulls, 'pos_ranges'));
  const faces = numbers(field(hulls, 'faces'));
  const positions = numbers(field(hulls, 'positions'));
  return faceRanges.slice(1).map((end, i) => ({
    positions: positions.slice(posRanges[i], posRanges[i + 1]),
    faces: faces.slice(faceRanges[i], end),
  }));
}

const physics: Array<[string, string, string]> = [
  ['CSGPHS_3.data', 'union_physics__csgphs_3', '3'],
  ['CSGPHS_5.data', 'union_physics__csgphs_5', '5'],
  ['CSGPHS_8_00.data', 'union_physics__csgphs_8', '8'],
  ['CSGPHS_8_raw_hulls_206.data', 'union_physics__csgphs_8_raw_hull_1', '8'],
];

for (const [file, snap, version] of physics) {
  test(`CSGPHS ${version} ${file} matches its reference: hull count, each hull's positions and faces, the merged geometry`, () => {
    const asset = decodeMeshAsset(readMeshFile(file)) as UnionPhysicsAsset;
    assert.equal(asset.kind, 'union_physics');
    assert.equal(asset.version, version);
    const snapshot = readSnapshot(snapshotPath(snap));
    const expected = expectedHulls(snapshot);
    assert.equal(asset.hulls.length, expected.length, 'hull count');
    let base = 0;
    const merged: number[] = [];
    expected.forEach((hull, i) => {
      assertClose(asset.hulls[i]!.positions, hull.positions, TOLERANCE, `hull ${i} positions`);
      assert.deepEqual(Array.from(asset.hulls[i]!.indices), hull.faces, `hull ${i} faces`);
      assert.equal(asset.hulls[i]!.computed, false);
      merged.push(...hull.faces.map((f) => f + base));
      base += hull.positions.length / 3;
    });
    assertClose(asset.geometry!.positions, expected.flatMap((h) => h.positions), TOLERANCE, 'merged positions');
    assert.deepEqual(Array.from(asset.geometry!.indices), merged, 'merged faces');
    if (version === '8') {
      const mesh = field(snapshot, 'mesh');
      assert.equal(asset.header.rawHullCount, field(mesh, 'raw_hull_count'));
      assert.equal(asset.header.geomType, Number((field(snapshot, 'geom_type') as RustStruct).$.replace('Type', '')));
      const aabb = field(mesh, 'aabb');
      assertClose([...asset.header.bounds!.min, ...asset.header.bounds!.max], [...numbers(field(aabb, 'min')), ...numbers(field(aabb, 'max'))], TOLERANCE, 'bounds');
    }
  });
}

test('CSGK gives its key and no geometry', () => {
  const asset = decodeMeshAsset(readMeshFile('CSGK.data'));
  const snapshot = readSnapshot(snapshotPath('union_physics__csgk'));
  assert.equal(asset.kind, 'union_key');
  assert.equal(asset.geometry, null);
  assert.equal(asset.kind === 'union_key' && asset.key, String.fromCharCode(...numbers(field(snapshot, 'uuid_ascii_hex'))));
});

/**
 * Faces naming real vertices with finite positions, a real extent, unit-ish normals
 * and finite uvs on the vertices LOD 0 uses (Roblox leaves NaN vertices that only
 * coarser LODs drop in some files: those must not be used).
 */
function assertPlausible(geometry: MeshGeometry, what: string): { min: number[]; max: number[] } {
  const bounds = geometryBounds(geometry.positions);
  assert.ok(bounds, `${what}: has finite positions`);
  for (let k = 0; k < 3; k++) {
    const extent = bounds.max[k]! - bounds.min[k]!;
    assert.ok(extent > 0 && extent < 1e4, `${what}: extent ${extent} on axis ${k}`);
  }
  const vertices = geometry.positions.length / 3;
  assert.ok(geometry.indices.length > 0 && geometry.indices.length % 3 === 0);
  const used = new Set<number>();
  for (const index of geometry.indices) { assert.ok(index < vertices); used.add(index); }
  for (const i of used) {
    for (let k = 0; k < 3; k++) assert.ok(Number.isFinite(geometry.positions[i * 3 + k]!), `${what}: vertex ${i} is finite`);
    if (geometry.uvs) assert.ok(Number.isFinite(geometry.uvs[i * 2]!) && Number.isFinite(geometry.uvs[i * 2 + 1]!), `${what}: uv ${i} is finite`);
  }
  if (geometry.normals) {
    for (const i of used) {
      const length = Math.hypot(geometry.normals[i * 3]!, geometry.normals[i * 3 + 1]!, geometry.normals[i * 3 + 2]!);
      assert.ok(Math.abs(length - 1) < 0.02, `${what}: normal ${i} has length ${length}`);
    }
  }
  return bounds;
}

test('files without a reference decode to plausible geometry: mesh 3.01, 4.01 (a sphere), 7.00 (Draco) at its LOD 0 face count', () => {
  const m301 = decodeMesh('5648093777');
  assert.equal(m301.version, '3.01');
  assertPlausible(m301.geometry, 'mesh 3.01');
  assert.deepEqual(m301.header.lods.map(([a, b]) => b - a), [2498, 1080, 481]);
  assert.equal(m301.geometry.indices.length / 3, 2498);
  assert.deepEqual(m301.header.notes, ['17 vertices have non-finite positions; LOD 0 does not use them']);

  const sphere = decodeMesh('sphere.mesh');
  assert.equal(sphere.version, '4.01');
  const bounds = assertPlausible(sphere.geometry, 'mesh 4.01');
  // A sphere: centred, every vertex at nearly the same distance from its centre.
  const centre = [0, 1, 2].map((k) => (bounds.min[k]! + bounds.max[k]!) / 2);
  const radius = (bounds.max[0]! - bounds.min[0]!) / 2;
  const p = sphere.geometry.positions;
  for (let i = 0; i < p.length; i += 3) {
    const r = Math.hypot(p[i]! - centre[0]!, p[i + 1]! - centre[1]!, p[i + 2]! - centre[2]!);
    assert.ok(Math.abs(r - radius) < radius * 0.02, `sphere vertex ${i / 3} at ${r}, radius ${radius}`);
  }
  assert.equal(sphere.header.lods.length, 5);
  assert.equal(sphere.geometry.indices.length / 3, sphere.header.lods[0]![1]);

  const m7 = decodeMesh('mesh7_127279296594138.bin');
  assert.equal(m7.version, '7.00');
  assert.equal(m7.header.draco, true);
  assertPlausible(m7.geometry, 'mesh 7.00');
  // The Draco header declares 268 faces and 408 points; the LODS chunk's table [0, 0] is
  // shorter than 3 entries, so LOD 0 is every face.
  assert.deepEqual(m7.header.lodOffsets, [0, 0]);
  assert.equal(m7.geometry.indices.length / 3, 268);
  assert.equal(m7.geometry.positions.length / 3, 408);
  assert.deepEqual(m7.header.chunks!.map((c) => c.type), ['COREMESH', 'LODS']);
});

test('CSGPHS 8 files without a reference decode to closed hulls inside their stored bounds', () => {
  for (const file of meshCorpusFiles().filter((f) => /^CSGPHS_8_0[1-5]/.test(f))) {
    const asset = decodeMeshAsset(readMeshFile(file)) as UnionPhysicsAsset;
    assert.equal(asset.version, '8');
    assertPlausibleHulls(asset, file);
  }
});

/** Each hull is a closed surface (every edge used once in each direction) and lies within the stored bounds. */
function assertPlausibleHulls(asset: UnionPhysicsAsset, what: string): void {
  const { min, max } = asset.header.bounds ?? { min: [-Infinity, -Infinity, -Infinity], max: [Infinity, Infinity, Infinity] };
  asset.hulls.forEach((hull, h) => {
    const p = hull.positions;
    for (let i = 0; i < p.length; i++) assert.ok(p[i]! >= min[i % 3]! - 1e-3 && p[i]! <= max[i % 3]! + 1e-3, `${what} hull ${h}: point outside the bounds`);
    const edges = new Map<string, number>();
    for (let t = 0; t < hull.indices.length; t += 3) {
      for (let k = 0; k < 3; k++) {
        const key = `${hull.indices[t + k]}>${hull.indices[t + (k + 1) % 3]}`;
        edges.set(key, (edges.get(key) ?? 0) + 1);
      }
    }
    for (const [key, count] of edges) {
      const [a, b] = key.split('>');
      assert.equal(count, 1, `${what} hull ${h}: edge ${key} used ${count} times`);
      assert.equal(edges.get(`${b}>${a}`), 1, `${what} hull ${h}: edge ${key} has no twin`);
    }
  });
}

test('every corpus file is covered by a test above', () => {
  const covered = new Set([
    '158071912', ...binaryMeshes.map(([f]) => f), ...unionModels.map(([f]) => f), '13626979828.meshdata5', '14846974687_5.meshdata',
    ...physics.map(([f]) => f), 'CSGK.data', '5648093777', 'sphere.mesh', 'mesh7_127279296594138.bin',
  ]);
  for (const file of meshCorpusFiles()) assert.ok(covered.has(file) || /^CSGPHS_8_0[1-5]/.test(file), `${file} is tested`);
});
