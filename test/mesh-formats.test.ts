/**
 * Formats and features the corpus has no file of, written by test/support/mesh-writer
 * and decoded back: meshes 1.01, 4.00, 6.00 (and 7.00 with a Draco stream made here),
 * skinning with subsets, CSGMDL 2/4/5, CSGPHS 0 (BLOCK), 6 and 7, hulls stored as
 * points only, and the sniffing of unknown input.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeMeshAsset, MeshDecodeError, type FileMeshAsset, type UnionGraphicsAsset, type UnionPhysicsAsset } from '../src/mesh/index.js';
import { assertClose, readMeshFile } from './support/mesh-corpus.js';
import { dracoHeapBytes, dracoRenewal } from '../src/mesh/filemesh/draco.js';
import { MIN_DECODER_HEAP_BYTES } from '../src/mesh/limits.js';
import {
  cubeHull, encodeDraco, PHYSICS_VALUES, writeCsgmdl, writeCsgmdl5, writeCsgphs, writeMeshChunked, writeMeshText, writeMeshV2,
  writeMeshV4, type MeshModel,
} from './support/mesh-writer.js';

/** A box of 24 vertices and 12 faces (LOD 0), a 2-face LOD 1, two bones, two subsets tiling LOD 0. */
function skinnedBox(): MeshModel {
  const positions = new Float32Array(72), normals = new Float32Array(72), uvs = new Float32Array(48);
  const colors = new Uint8Array(96);
  const faces: number[] = [];
  for (let side = 0; side < 6; side++) {
    const axis = side >> 1, sign = side & 1 ? 1 : -1;
    for (let c = 0; c < 4; c++) {
      const v = side * 4 + c;
      const p = [0, 0, 0];
      p[axis] = sign;
      p[(axis + 1) % 3] = c & 1 ? 1 : -1;
      p[(axis + 2) % 3] = c & 2 ? 1 : -1;
      positions.set(p.map((x) => x * 1.5 + 0.25), v * 3);
      normals[v * 3 + axis] = sign;
      uvs[v * 2] = (c & 1) * 0.5;
      uvs[v * 2 + 1] = (c >> 1) * 0.25;
      colors.set([side * 40, 255 - side * 40, c * 60, 255], v * 4);
    }
    const b = side * 4;
    faces.push(...(sign > 0 ? [b, b + 1, b + 3, b, b + 3, b + 2] : [b, b + 3, b + 1, b, b + 2, b + 3]));
  }
  faces.push(0, 5, 10, 1, 6, 11);
  const envelopes = new Uint8Array(24 * 8);
  for (let v = 0; v < 24; v++) envelopes.set(v < 12 ? [0, 1, 0, 0, 200, 54, 0, 0] : [0, 0, 0, 0, 255, 0, 0, 0], v * 8);
  return {
    positions, normals, uvs, colors, faces: Uint32Array.from(faces), lodOffsets: [0, 12, 14],
    skin: {
      envelopes,
      bones: [
        { name: 'Root', parent: -1, rotation: [1, 0, 0, 0, 1, 0, 0, 0, 1], position: [0, 1, 0] },
        { name: 'Arm', parent: 0, rotation: [0, -1, 0, 1, 0, 0, 0, 0, 1], position: [2, 3, 4] },
      ],
      subsets: [
        { faceStart: 0, faceCount: 6, vertexStart: 0, vertexCount: 12, bones: [0, 1] },
        { faceStart: 6, faceCount: 6, vertexStart: 12, vertexCount: 12, bones: [1] },
      ],
    },
    facs: Uint8Array.from({ length: 40 }, (_, i) => i * 3),
  };
}

function assertModel(asset: FileMeshAsset, m: MeshModel, what: string, withColors = true): void {
  const g = asset.geometry;
  assertClose(g.positions, m.positions, 1e-6, `${what} positions`);
  assertClose(g.normals, m.normals, 1e-6, `${what} normals`);
  assertClose(g.uvs, m.uvs, 1e-6, `${what} uvs`);
  if (withColors) assert.deepEqual(g.colors, m.colors, `${what} colours`);
  assert.deepEqual(Array.from(g.indices), Array.from(m.faces.subarray(0, 36)), `${what} LOD 0 faces`);
  assert.equal(asset.header.faceCount, 14);
  assert.deepEqual(asset.header.lodOffsets, [0, 12, 14]);
  assert.deepEqual(asset.header.lods, [[0, 12], [12, 14]]);
}

function assertSkin(asset: FileMeshAsset, what: string): void {
  const skin = asset.geometry.skin;
  assert.ok(skin, `${what}: skinned`);
  assert.deepEqual(asset.header.boneNames, ['Root', 'Arm']);
  assert.deepEqual(skin.bones.map((b) => [b.name, b.parent]), [['Root', -1], ['Arm', 0]]);
  // Rotation rows (0,-1,0), (1,0,0), (0,0,1) at (2,3,4), column-major.
  assert.deepEqual(Array.from(skin.bones[1]!.matrix), [0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 1, 0, 2, 3, 4, 1]);
  assert.deepEqual(Array.from(skin.joints.subarray(0, 4)), [0, 1, 0, 0]);
  // Stored weights summing to 254 are scaled to sum to 1.
  assertClose(skin.weights.subarray(0, 4), [200 / 254, 54 / 254, 0, 0], 1e-6, `${what} weights`);
  // Vertex 12 is in the second subset: its slot 0 is bone 1.
  assert.deepEqual(Array.from(skin.joints.subarray(48, 52)), [1, 0, 0, 0]);
  assertClose(skin.weights.subarray(48, 52), [1, 0, 0, 0], 1e-6, `${what} weights`);
  assert.deepEqual(asset.geometry.groups, [{ start: 0, count: 18, material: 'subset 0' }, { start: 18, count: 18, material: 'subset 1' }]);
  assert.equal(asset.header.subsetCount, 2);
}

test('meshes 4.00, 4.01 and 5.00 written here decode back: vertices, LOD 0, bones, skinning by subset palette, groups, FACS skipped', () => {
  const m = skinnedBox();
  for (const version of ['4.00', '4.01', '5.00'] as const) {
    const asset = decodeMeshAsset(writeMeshV4(m, version)) as FileMeshAsset;
    assert.equal(asset.version, version);
    assertModel(asset, m, version);
    assertSkin(asset, version);
    assert.deepEqual(asset.header.facs, version === '5.00' ? { bytes: 40, format: 1 } : null);
    assert.deepEqual(asset.header.notes, []);
  }
});

test('mesh 6.00 (COREMESH version 1, LODS, SKINNING, FACS, HSRAVIS chunks) decodes back', () => {
  const m = skinnedBox();
  const asset = decodeMeshAsset(writeMeshChunked(m, '6.00')) as FileMeshAsset;
  assert.equal(asset.version, '6.00');
  assertModel(asset, m, '6.00');
  assertSkin(asset, '6.00');
  assert.equal(asset.header.draco, false);
  assert.deepEqual(asset.header.chunks!.map((c) => c.type), ['COREMESH', 'LODS', 'SKINNING', 'FACS', 'HSRAVIS']);
  assert.deepEqual(asset.header.facs, { bytes: 40, format: 1 });
  assert.equal(asset.header.lodType, 3);
  assert.deepEqual(asset.header.notes, []);
});

test('mesh 7.00 with a Draco COREMESH made by the Draco encoder decodes back, colours and skinning included', async () => {
  const m = skinnedBox();
  const asset = decodeMeshAsset(writeMeshChunked(m, '7.00', await encodeDraco(m))) as FileMeshAsset;
  assert.equal(asset.version, '7.00');
  assert.equal(asset.header.draco, true);
  assertModel(asset, m, '7.00');
  assertSkin(asset, '7.00');
});

/** A wavy n × n grid of quads: enough vertices (n = 400: 160k) to grow Draco's heap past its first 16 MiB. */
function gridModel(n: number): MeshModel {
  const count = (n + 1) * (n + 1);
  const positions = new Float32Array(count * 3), normals = new Float32Array(count * 3), uvs = new Float32Array(count * 2);
  for (let r = 0, v = 0; r <= n; r++) {
    for (let s = 0; s <= n; s++, v++) {
      positions.set([s, Math.sin(r + s), r], v * 3);
      normals.set([0, 1, 0], v * 3);
      uvs.set([s / n, r / n], v * 2);
    }
  }
  const faces = new Uint32Array(n * n * 6);
  for (let r = 0, f = 0; r < n; r++) {
    for (let s = 0; s < n; s++, f += 6) {
      const a = r * (n + 1) + s, b = a + n + 1;
      faces.set([a, b, a + 1, a + 1, b, b + 1], f);
    }
  }
  return { positions, normals, uvs, faces, lodOffsets: [0, faces.length / 3] };
}

test('a Draco decode that leaves the decoder heap past maxDecoderHeapBytes replaces the module: the memory is let go, and decoding goes on meanwhile', async () => {
  const m = gridModel(400);
  const file = writeMeshChunked(m, '7.00', await encodeDraco(m));
  await dracoRenewal();
  const fresh = dracoHeapBytes();
  assert.equal(fresh, MIN_DECODER_HEAP_BYTES, 'the floor resolveMeshLimits puts under the cap is a fresh module\'s heap');
  const limits = { maxDecoderHeapBytes: fresh };
  const first = decodeMeshAsset(file, limits) as FileMeshAsset;
  const grown = dracoHeapBytes();
  assert.ok(grown > fresh, `the heap grew (${fresh} → ${grown} bytes)`);
  assertClose(first.geometry.positions, m.positions, 1e-6, 'positions');
  // Until the fresh module is in place, the grown one keeps decoding.
  const second = decodeMeshAsset(file, limits) as FileMeshAsset;
  assert.deepEqual(second.geometry.positions, first.geometry.positions);
  await dracoRenewal();
  assert.equal(dracoHeapBytes(), fresh, 'a fresh module replaced the grown one');
  const third = decodeMeshAsset(file, limits) as FileMeshAsset;
  assert.deepEqual(third.geometry.indices, first.geometry.indices);
  // Under the default cap (64 MiB) the grown heap is kept for the next mesh.
  await dracoRenewal();
  decodeMeshAsset(file);
  await dracoRenewal();
  assert.ok(dracoHeapBytes() > fresh, 'kept under the default cap');
});

test('mesh 1.00 stores positions doubled and 1.01 as they are; both store v flipped; 2.00/3.00/3.01 with 36- and 40-byte vertices', () => {
  const m = skinnedBox();
  for (const version of ['1.00', '1.01'] as const) {
    const asset = decodeMeshAsset(writeMeshText(m, version)) as FileMeshAsset;
    assert.equal(asset.version, version);
    const expected = new Float32Array(Array.from(m.faces).flatMap((i) => Array.from(m.positions.subarray(i * 3, i * 3 + 3))));
    assertClose(asset.geometry.positions, expected, 1e-6, `${version} positions`);
    const uvs = Array.from(m.faces).flatMap((i) => Array.from(m.uvs.subarray(i * 2, i * 2 + 2)));
    assertClose(asset.geometry.uvs, uvs, 1e-6, `${version} uvs`);
    assert.equal(asset.header.faceCount, 14);
  }
  for (const [version, size] of [['2.00', 36], ['2.00', 40], ['3.00', 40], ['3.01', 36]] as const) {
    const asset = decodeMeshAsset(writeMeshV2(m, version, size)) as FileMeshAsset;
    assert.equal(asset.header.vertexSize, size);
    assertClose(asset.geometry.positions, m.positions, 1e-6, `${version} positions`);
    assert.equal(asset.geometry.colors === undefined, size === 36);
    assert.equal(asset.geometry.indices.length / 3, version === '2.00' ? 14 : 12);
  }
});

test('CSGMDL 2, 4 and 5 written here decode back', () => {
  const m = skinnedBox();
  m.faces = m.faces.slice(0, 36);
  for (const version of [2, 4] as const) {
    const asset = decodeMeshAsset(writeCsgmdl(m, version)) as UnionGraphicsAsset;
    assert.equal(asset.version, String(version));
    assertClose(asset.geometry.positions, m.positions, 0, 'positions');
    assertClose(asset.geometry.uvs, m.uvs, 0, 'uvs');
    assert.deepEqual(asset.geometry.colors, m.colors);
    assert.deepEqual(asset.geometry.indices, m.faces);
    assert.equal(asset.header.hash, '0123456789abcdef');
  }
  const asset = decodeMeshAsset(writeCsgmdl5(m, [[3, 2, 1], [0, 20, 23]])) as UnionGraphicsAsset;
  assert.equal(asset.version, '5');
  assertClose(asset.geometry.normals, m.normals, 1e-4, 'normals');
  assert.deepEqual(asset.geometry.indices, m.faces);
  assert.equal(asset.header.extraIndexRanges, 2);
});

test('CSGPHS 0 (BLOCK), 6 and 7 written here decode: no hulls for BLOCK, mass properties and geometry type kept', () => {
  const block = decodeMeshAsset(writeCsgphs([], 0)) as UnionPhysicsAsset;
  assert.equal(block.block, true);
  assert.equal(block.geometry, null);
  assert.deepEqual(block.hulls, []);

  const cube = cubeHull(2, [1, 0, 0]);
  const six = decodeMeshAsset(writeCsgphs([cube], 6)) as UnionPhysicsAsset;
  assert.equal(six.version, '6');
  assert.equal(six.hulls.length, 1);
  assert.deepEqual(six.hulls[0]!.indices, cube.indices);
  assertClose([six.header.physics!.volume, ...six.header.physics!.centerOfGravity, ...six.header.physics!.inertia], PHYSICS_VALUES, 1e-6, 'physics');
  // Real places (booga) store up to 19 hulls after version 6's mass properties.
  const sixMany = decodeMeshAsset(writeCsgphs([cube, cubeHull(1, [5, 5, 5]), cubeHull(0.5)], 6)) as UnionPhysicsAsset;
  assert.equal(sixMany.hulls.length, 3);
  assert.equal(sixMany.geometry!.positions.length, 72);

  const seven = decodeMeshAsset(writeCsgphs([cube, cubeHull(1, [5, 5, 5])], 7, 2)) as UnionPhysicsAsset;
  assert.equal(seven.header.geomType, 2);
  assert.equal(seven.hulls.length, 2);
  assert.equal(seven.geometry!.positions.length, 48);
  assert.equal(seven.geometry!.indices[36], 8, 'the second hull\'s indices move past the first hull\'s vertices');
});

test('a CSGPHS hull stored as points only gets the triangles of its convex hull', () => {
  const cube = cubeHull(1);
  // Add points inside the cube and on its faces: the hull must leave them out.
  const inner = [0, 0, 0, 0.5, -0.5, 0.2, 1, 0, 0, 0, 1, 0.5];
  const positions = Float32Array.from([...cube.positions, ...inner]);
  for (const version of [3, 5, 7] as const) {
    const asset = decodeMeshAsset(writeCsgphs([{ positions, indices: new Uint32Array(0) }, cube], version)) as UnionPhysicsAsset;
    const hull = asset.hulls[0]!;
    assert.equal(hull.computed, true);
    assert.equal(asset.hulls[1]!.computed, false);
    assert.equal(hull.indices.length, 36, 'a cube hull has 12 triangles');
    for (const index of hull.indices) assert.ok(index < 8, 'only the corners are hull vertices');
    assert.equal(asset.geometry!.indices.length, 72);
  }
});

test('unknown or unsupported input: one MeshDecodeError naming the format', () => {
  const cases: Array<[Uint8Array, string, RegExp]> = [
    [new Uint8Array(0), 'unknown', /empty/],
    [new TextEncoder().encode('<roblox!'), 'unknown', /not a Roblox mesh or union blob/],
    [new TextEncoder().encode('version 8.00\n'), 'mesh', /unsupported mesh version "8.00"/],
    [new TextEncoder().encode('version 2.00'), 'mesh', /version line does not end/],
    [new TextEncoder().encode('CSGPHS\x04\0\0\0'), 'CSGPHS 4', /unsupported CSGPHS version 4/],
    [writeCsgmdl(skinnedBox(), 2).map((b, i) => (i === 6 ? b ^ 1 : b)), 'CSGMDL 3', /unsupported CSGMDL version 3/],
    [new TextEncoder().encode('CSGKxyz'), 'CSGK', /unexpected end of data reading key/],
  ];
  for (const [bytes, format, message] of cases) {
    assert.throws(() => decodeMeshAsset(bytes), (error: unknown) => {
      assert.ok(error instanceof MeshDecodeError, String(error));
      assert.equal(error.format, format);
      assert.match(error.message, message);
      return true;
    });
  }
});

test('limits are checked before anything is allocated: a smaller cap refuses what the defaults accept', () => {
  const bytes = writeMeshV4(skinnedBox(), '4.01');
  assert.ok(decodeMeshAsset(bytes));
  assert.throws(() => decodeMeshAsset(bytes, { maxVertices: 23 }), /vertex count 24 exceeds the limit of 23/);
  assert.throws(() => decodeMeshAsset(bytes, { maxBones: 1 }), /bone count 2 exceeds the limit of 1/);
  assert.throws(() => decodeMeshAsset(writeMeshChunked(skinnedBox(), '6.00'), { maxVertices: 23 }), /vertex count 24 exceeds the limit of 23/);
  assert.throws(() => decodeMeshAsset(writeMeshChunked(skinnedBox(), '6.00'), { maxTriangles: 13 }), /face count 14 exceeds the limit of 13/);
  assert.throws(() => decodeMeshAsset(bytes, { maxInputBytes: 100 }), /past the limit of 100/);
  assert.throws(() => decodeMeshAsset(writeCsgphs([cubeHull(1), cubeHull(2)], 3), { maxHulls: 1 }), /more than 1 hulls/);
  const points = { positions: cubeHull(1).positions, indices: new Uint32Array(0) };
  assert.throws(() => decodeMeshAsset(writeCsgphs([points], 3), { maxHullPoints: 7 }), /limited to 7 points/);
  // The blob's computing work: three 8-point hulls are 192 (points squared), past a cap of 150 at the third.
  assert.equal((decodeMeshAsset(writeCsgphs([points, points], 3), { maxHullWork: 150 }) as UnionPhysicsAsset).hulls.length, 2);
  assert.throws(() => decodeMeshAsset(writeCsgphs([points, points, points], 3), { maxHullWork: 150 }), /hull 2: .*maxHullWork 150/);
  assert.equal((decodeMeshAsset(writeCsgphs([points, points, points], 3)) as UnionPhysicsAsset).hulls.length, 3, 'within the default');
  const draco = readMeshFile('mesh7_127279296594138.bin');
  assert.throws(() => decodeMeshAsset(draco, { maxTriangles: 267 }), /Draco face count 268 exceeds the limit of 267/);
  assert.throws(() => decodeMeshAsset(draco, { maxVertices: 407 }), /Draco vertex count 408 exceeds the limit of 407/);
  // A frame that claims 100 MB (under the 256 MiB cap) from 8 KB: past 256× its size.
  const inflated = readMeshFile('CSGPHS_8_00.data').slice();
  inflated[16] = 0x80 | (inflated[16]! & 0x3f);
  new DataView(inflated.buffer).setUint32(17, 100_000_000, true);
  assert.throws(() => decodeMeshAsset(inflated), /declares 100000000 bytes from 8223, past 256× its size/);
  assert.throws(() => decodeMeshAsset(readMeshFile('CSGPHS_8_00.data'), { maxDecompressedBytes: 1000 }), /declares 11964 bytes, past the limit of 1000/);
});

test('text mesh numbers read exactly as Number() reads them (the fast path and the long one)', () => {
  const numbers = ['0', '-0', '1', '-0.968616', '1.50996e-007', '.5', '5.', '+2.25', '1e22', '1E23', '123456789012345678', '0.1',
    '3.4028235e38', '1e-45', '-7.0064923216240862e-46', '0.000000000000000000000001', '99999999999999.99', '4.9406564584124654e-324'];
  while (numbers.length % 27) numbers.push('0');
  const vectors: string[] = [];
  for (let i = 0; i < numbers.length; i += 3) vectors.push(`[${numbers[i]}, ${numbers[i + 1]},${numbers[i + 2]}]`);
  const faces = vectors.length / 9;
  const text = `version 1.01\n${faces}\n${vectors.join('')}\n`;
  const asset = decodeMeshAsset(new TextEncoder().encode(text)) as FileMeshAsset;
  const g = asset.geometry;
  for (let v = 0; v < faces * 3; v++) {
    const [p, n, t] = [0, 1, 2].map((k) => numbers.slice((v * 3 + k) * 3, (v * 3 + k) * 3 + 3).map((x) => Math.fround(Number(x))));
    assert.deepEqual(Array.from(g.positions.subarray(v * 3, v * 3 + 3)), p, `vertex ${v} position`);
    assert.deepEqual(Array.from(g.normals!.subarray(v * 3, v * 3 + 3)), n, `vertex ${v} normal`);
    assert.deepEqual(Array.from(g.uvs!.subarray(v * 2, v * 2 + 2)), [t![0]!, Math.fround(1 - Number(numbers[(v * 3 + 2) * 3 + 1]))], `vertex ${v} uv`);
  }
  for (const bad of ['-', '.', '1e', '1e+', '0x10', 'nan', '1,5']) {
    const broken = text.replace('[0, ', `[${bad}, `);
    assert.throws(() => decodeMeshAsset(new TextEncoder().encode(broken)), MeshDecodeError, bad);
  }
});
