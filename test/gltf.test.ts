import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { decode } from '../src/parser/index.js';
import { buildScene, type SceneNode } from '../src/project/scene.js';
import type { MeshGeometry } from '../src/geometry/mesh.js';
import { meshObjectShape, partShape, placeholder } from '../src/geometry/shapes.js';
import {
  addGeometry, addMaterial, addMesh, addNode, addSkin, addTexture, createGltf, glbBytes, partMaterial, quaternionOf,
  writeGlbFile, type GltfDocument,
} from '../src/gltf/index.js';
import { encodePng, newRaster } from '../src/render/png.js';
import { meshTerrain, readSmoothGrid, terrainPalette } from '../src/terrain/index.js';
import { convertMeshAsset, terrainBlobs } from '../src/scene/index.js';
import { writeMeshV2 } from './support/mesh-writer.js';
import { PLACES_DIR } from './support/paths.js';

const validator = createRequire(import.meta.url)('gltf-validator') as {
  validateBytes(data: Uint8Array, options?: object): Promise<{ issues: { numErrors: number; numWarnings: number; messages: { code: string; severity: number; pointer?: string }[] } }>;
};

async function validate(bytes: Uint8Array): Promise<void> {
  const report = await validator.validateBytes(bytes, { maxIssues: 50 });
  const errors = report.issues.messages.filter((m) => m.severity === 0);
  assert.equal(report.issues.numErrors, 0, JSON.stringify(errors.slice(0, 5)));
}

/** The GLB's JSON chunk. */
function glbJson(bytes: Uint8Array): Record<string, any> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  assert.equal(view.getUint32(0, true), 0x46546c67);
  assert.equal(view.getUint32(8, true), bytes.length);
  const length = view.getUint32(12, true);
  return JSON.parse(Buffer.from(bytes.subarray(20, 20 + length)).toString('utf8'));
}

/** Signed volume of a closed mesh (positive when its faces wind outwards). */
function volume(g: MeshGeometry): number {
  let v = 0;
  const p = g.positions;
  for (let t = 0; t < g.indices.length; t += 3) {
    const a = g.indices[t]! * 3, b = g.indices[t + 1]! * 3, c = g.indices[t + 2]! * 3;
    v += (p[a]! * (p[b + 1]! * p[c + 2]! - p[b + 2]! * p[c + 1]!) - p[a + 1]! * (p[b]! * p[c + 2]! - p[b + 2]! * p[c]!) + p[a + 2]! * (p[b]! * p[c + 1]! - p[b + 1]! * p[c]!)) / 6;
  }
  return v;
}

test('shapes: closed, outward-wound unit solids with the volumes of their shapes', () => {
  const expected: [string, number, number][] = [
    ['Block', 1, 1e-9], ['Wedge', 0.5, 1e-9], ['CornerWedge', 1 / 3, 1e-9], ['Ball', Math.PI / 6, 0.03], ['Cylinder', Math.PI / 4, 0.02],
  ];
  for (const [shape, v, tolerance] of expected) {
    const g = partShape(shape, [1, 1, 1]).geometry;
    assert.ok(Math.abs(volume(g) - v) < tolerance, `${shape}: volume ${volume(g)}`);
    for (const x of g.positions) assert.ok(Math.abs(x) <= 0.5 + 1e-6, `${shape} stays in the unit box`);
  }
  assert.ok(volume(meshObjectShape('CylinderMesh', undefined, [1, 1, 1])!.geometry) > 0.7);
  assert.ok(volume(meshObjectShape('SpecialMesh', 'Head', [1, 1, 1])!.geometry) > 0.6);
});

test('shapes: Roblox orientation and scale conventions', () => {
  // Wedge: full back face at +Z, slope facing front (-Z) and up.
  const wedge = partShape('Wedge', [2, 4, 6]);
  const { positions, normals } = wedge.geometry;
  let slope = false;
  for (let i = 0; i < positions.length; i += 3) {
    if (positions[i + 1] === 0.5) assert.equal(positions[i + 2], 0.5, 'the top edge is at the back');
    if (normals![i + 1]! > 0.1 && normals![i + 2]! < -0.1) slope = true;
  }
  assert.ok(slope);
  assert.deepEqual(wedge.scale, [2, 4, 6]);
  // CornerWedge: the one top vertex is at (+X, +Y, -Z).
  const corner = partShape('CornerWedge', [1, 1, 1]).geometry.positions;
  for (let i = 0; i < corner.length; i += 3) if (corner[i + 1] === 0.5) assert.deepEqual([corner[i], corner[i + 2]], [0.5, -0.5]);
  // Cylinder along X, round: diameter min(Y, Z). Ball: diameter min of all.
  assert.deepEqual(partShape('Cylinder', [10, 4, 6]).scale, [10, 4, 4]);
  assert.deepEqual(partShape('Ball', [3, 5, 4]).scale, [3, 3, 3]);
  const cylinder = partShape('Cylinder', [1, 1, 1]).geometry.positions;
  let xs = 0;
  for (let i = 0; i < cylinder.length; i += 3) if (Math.abs(Math.abs(cylinder[i]!) - 0.5) < 1e-6) xs++;
  assert.equal(xs, cylinder.length / 3, 'every cylinder vertex sits on an end at x = ±0.5');
  // CylinderMesh stands along Y; SpecialMesh Sphere stretches; Brick uses Size × Scale; FileMesh has no primitive.
  assert.deepEqual(meshObjectShape('CylinderMesh', undefined, [4, 10, 6], [1, 0.5, 1])!.scale, [4, 5, 4]);
  assert.deepEqual(meshObjectShape('SpecialMesh', 'Sphere', [2, 4, 6], [1, 2, 0.5])!.scale, [2, 8, 3]);
  assert.deepEqual(meshObjectShape('SpecialMesh', 'Cylinder', [2, 4, 6], [1, 1, 1])!.scale, [2, 4, 4]);
  assert.deepEqual(meshObjectShape('BlockMesh', undefined, [2, 2, 2], [0.5, 1, 2], [0, 1, 0])!.offset, [0, 1, 0]);
  assert.equal(meshObjectShape('SpecialMesh', 'FileMesh', [1, 1, 1]), null);
  assert.equal(partShape('Mesh', [1, 2, 3]).placeholder, true);
  // A truss is a lattice along its longest axis, inside its size.
  const truss = partShape('Truss', [2, 10, 2]).geometry.positions;
  let top = -Infinity;
  for (let i = 1; i < truss.length; i += 3) top = Math.max(top, truss[i]!);
  assert.equal(top, 5);
  assert.ok(truss.length / 3 > 24 * 6);
});

test('glb: every shape, materials (transparent, Neon), an embedded image and instancing pass the Khronos validator', async () => {
  const doc = createGltf({ source: 'test' });
  const raster = newRaster(8, 8);
  raster.data.fill(180);
  for (let y = 0; y < 8; y++) raster.data[y * raster.stride] = 0;
  const png = encodePng(raster);
  const texture = addTexture(doc, png, 'image/png', 'decal');
  const textured = addMaterial(doc, { baseColor: [1, 1, 1, 1], baseColorTexture: texture });
  const glass = addMaterial(doc, partMaterial({ color: [120, 200, 255], transparency: 0.6, material: 'Glass' }));
  const neon = addMaterial(doc, partMaterial({ color: [255, 0, 0], transparency: 0, material: 'Neon' }));
  assert.equal(addMaterial(doc, partMaterial({ color: [255, 0, 0], transparency: 0, material: 'Neon' })), neon, 'identical materials are shared');
  const shapes = ['Block', 'Ball', 'Cylinder', 'Wedge', 'CornerWedge', 'Truss'].map((s) => partShape(s, [4, 2, 6]));
  shapes.push(...['Head', 'Torso', 'Sphere', 'Cylinder', 'Wedge', 'Brick', 'Prism', 'Pyramid', 'ParallelRamp', 'RightAngleRamp', 'CornerWedge']
    .map((t) => meshObjectShape('SpecialMesh', t, [2, 1, 1], [1.25, 1.25, 1.25])!));
  shapes.push(meshObjectShape('CylinderMesh', undefined, [1, 4, 1])!, meshObjectShape('BlockMesh', undefined, [1, 1, 1])!, placeholder([3, 3, 3]));
  const geometries = new Map<string, number>();
  let id = 0;
  for (const shape of shapes) {
    let g = geometries.get(shape.key);
    if (g === undefined) geometries.set(shape.key, (g = addGeometry(doc, shape.geometry)));
    for (const material of [textured, glass, neon]) {
      const mesh = addMesh(doc, g, material);
      addNode(doc, {
        name: `part ${id}`, mesh, translation: [id * 3, 1, 0], rotation: quaternionOf([[0, 0, 1], [0, 1, 0], [-1, 0, 0]]), scale: shape.scale,
        extras: { id: `i${id++}` },
      });
    }
  }
  const bytes = glbBytes(doc);
  await validate(bytes);
  const json = glbJson(bytes);
  assert.equal(json.nodes.length, shapes.length * 3);
  assert.equal(json.nodes[5].extras.id, 'i5');
  assert.equal(json.images[0].mimeType, 'image/png');
  assert.equal(json.materials[neon].emissiveFactor[0], 1);
  assert.equal(json.materials[glass].alphaMode, 'BLEND');
  assert.ok(Math.abs(json.materials[glass].pbrMetallicRoughness.baseColorFactor[3] - 0.4) < 1e-6);
  // Instancing: the 3 meshes of one shape share its accessors.
  assert.equal(json.meshes[0].primitives[0].attributes.POSITION, json.meshes[1].primitives[0].attributes.POSITION);
  // The image's bytes are in the binary chunk as given.
  const view = json.bufferViews[json.images[0].bufferView];
  const binStart = 20 + new DataView(bytes.buffer, bytes.byteOffset).getUint32(12, true) + 8;
  assert.deepEqual(new Uint8Array(bytes.subarray(binStart + view.byteOffset, binStart + view.byteOffset + view.byteLength)), new Uint8Array(png));
  // A textured material on a geometry without UVs is refused before anything is written.
  const bare = addGeometry(doc, { positions: Float32Array.of(0, 0, 0, 1, 0, 0, 0, 1, 0), indices: Uint32Array.of(0, 1, 2) });
  assert.throws(() => addMesh(doc, bare, textured), /no UVs/);
  assert.throws(() => addTexture(doc, Uint8Array.of(1, 2, 3, 4), 'image/png'), /not a image\/png/);
});

test('glb: a skinned mesh (joints, weights, inverse bind matrices) passes the validator', async () => {
  const doc = createGltf();
  const bones = [
    { name: 'Root', parent: -1, matrix: Float64Array.of(1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1) },
    { name: 'Arm', parent: 0, matrix: Float64Array.of(0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 1, 0, 1, 2, 0, 1) },
    { name: 'Hand', parent: 1, matrix: Float64Array.of(0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 1, 0, 1, 3, 0, 1) },
  ];
  const geometry: MeshGeometry = {
    positions: Float32Array.of(0, 0, 0, 1, 0, 0, 0, 2, 0, 1, 2, 0, 0, 3, 0),
    normals: Float32Array.of(0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1),
    indices: Uint32Array.of(0, 1, 2, 1, 3, 2, 2, 3, 4),
    skin: {
      bones,
      joints: Uint16Array.of(0, 0, 0, 0, 0, 1, 0, 0, 1, 2, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0),
      weights: Float32Array.of(1, 0, 0, 0, 3, 1, 0, 0, 0.5, 0.5, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0),
    },
  };
  const skin = addSkin(doc, geometry.skin!, undefined, 'Rig');
  const material = addMaterial(doc, partMaterial({ color: [200, 150, 100], transparency: 0, material: 'SmoothPlastic' }));
  addNode(doc, { name: 'Character', mesh: addMesh(doc, addGeometry(doc, geometry), material), skin });
  const bytes = glbBytes(doc);
  await validate(bytes);
  const json = glbJson(bytes);
  assert.equal(json.skins[0].joints.length, 3);
  assert.equal(json.accessors[json.skins[0].inverseBindMatrices].count, 3);
  assert.deepEqual(json.nodes.filter((n: { name?: string }) => bones.some((b) => b.name === n.name)).map((n: { name: string }) => n.name).sort(), ['Arm', 'Hand', 'Root']);
});

test('glb: texture coordinates that are not finite numbers are written as 0, so a damaged mesh still passes the validator', async () => {
  // Found by fuzzing: a flipped byte in a union's MeshData made a NaN uv, and scene.glb (and
  // `mesh --gltf`, and create's converted meshes) failed the validator (ACCESSOR_INVALID_FLOAT).
  const uvs = Float32Array.of(0.25, 0.5, Number.NaN, 1, 0.75, Infinity);
  const geometry: MeshGeometry = { positions: Float32Array.of(0, 0, 0, 1, 0, 0, 0, 1, 0), uvs, indices: Uint32Array.of(0, 1, 2) };
  const doc = createGltf();
  addNode(doc, { name: 'Damaged', mesh: addMesh(doc, addGeometry(doc, geometry), addMaterial(doc, { baseColor: [1, 1, 1, 1] })) });
  const bytes = glbBytes(doc);
  await validate(bytes);
  const json = glbJson(bytes);
  const accessor = json.accessors[json.meshes[0].primitives[0].attributes.TEXCOORD_0];
  const view = json.bufferViews[accessor.bufferView];
  const bin = bytes.subarray(20 + new DataView(bytes.buffer, bytes.byteOffset).getUint32(12, true) + 8);
  const written = new Float32Array(bin.slice(view.byteOffset, view.byteOffset + view.byteLength).buffer);
  assert.deepEqual([...written], [0.25, 0.5, 0, 1, 0.75, 0]);
  assert.ok(Number.isNaN(uvs[2]), 'the caller\'s array is left as it was');

  const mesh = writeMeshV2({ positions: geometry.positions, normals: Float32Array.of(0, 0, 1, 0, 0, 1, 0, 0, 1), uvs, faces: geometry.indices, lodOffsets: [] }, '2.00', 36);
  const converted = convertMeshAsset(mesh);
  assert.ok(converted.ok, JSON.stringify(converted));
  await validate(converted.glb);
});

test('glb: a large instanced scene streams to a file byte-identical to the in-memory GLB, and validates', async () => {
  const doc = createGltf();
  const box = partShape('Block', [1, 1, 1]);
  const geometry = addGeometry(doc, box.geometry);
  const meshes = [0, 1, 2, 3].map((k) => addMesh(doc, geometry, addMaterial(doc, partMaterial({ color: [k * 60, 100, 200], transparency: 0, material: 'Plastic' }))));
  const group = addNode(doc, { name: 'Workspace' });
  for (let i = 0; i < 20_000; i++) {
    addNode(doc, { name: `Part${i}`, mesh: meshes[i % 4], translation: [i % 200, 0, Math.floor(i / 200)], scale: [1, 1 + (i % 3), 1], extras: { id: `p${i}` } }, group);
  }
  const bytes = glbBytes(doc);
  const dir = mkdtempSync(join(tmpdir(), 'glb-'));
  try {
    const written = await writeGlbFile(doc, join(dir, 'scene.glb'));
    assert.equal(written, bytes.length);
    assert.deepEqual(new Uint8Array(readFileSync(join(dir, 'scene.glb'))), bytes);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  await validate(bytes);
  const json = glbJson(bytes);
  assert.equal(json.nodes.length, 20_001);
  assert.equal(json.nodes[0].children.length, 20_000);
  assert.equal(json.accessors.length, 4, 'one geometry: position, normal, uv, indices');
  assert.ok(bytes.length < 3_000_000, `${bytes.length} bytes`);
});

function sceneParts(nodes: SceneNode[], out: Extract<SceneNode, { type: 'part' }>[] = []): Extract<SceneNode, { type: 'part' }>[] {
  for (const node of nodes) {
    if (node.type === 'part') out.push(node);
    if (node.children) sceneParts(node.children, out);
  }
  return out;
}

test('glb: a real place (parts of every shape, booga terrain chunks with per-material primitives and water) validates', async () => {
  const dom = decode(readFileSync(join(PLACES_DIR, 'booga.rbxl')));
  const doc = createGltf();
  const geometries = new Map<string, number>();
  for (const part of sceneParts(buildScene(dom).children)) {
    if (!part.size) continue;
    const shape = part.mesh?.mesh_type !== undefined
      ? meshObjectShape('SpecialMesh', part.mesh.mesh_type, part.size, part.mesh.scale, part.mesh.offset) ?? placeholder(part.size)
      : partShape(part.shape, part.size);
    let g = geometries.get(shape.key);
    if (g === undefined) geometries.set(shape.key, (g = addGeometry(doc, shape.geometry)));
    const material = addMaterial(doc, partMaterial({ color: part.color, transparency: part.transparency, material: part.material.name }));
    addNode(doc, { name: part.name, mesh: addMesh(doc, g, material), translation: part.position, rotation: quaternionOf(part.rotation), scale: shape.scale });
  }
  addTerrain(doc, dom);
  const bytes = glbBytes(doc);
  await validate(bytes);
  assert.ok(glbJson(bytes).nodes.length > 4000);
});

/** Terrain chunks near the middle of booga: one node per chunk, a primitive per material. */
function addTerrain(doc: GltfDocument, dom: ReturnType<typeof decode>): void {
  const blobs = terrainBlobs(dom)!;
  const full = readSmoothGrid(blobs.smoothGrid);
  const keep: number[] = [];
  for (let i = 0; i < full.count; i++) if (Math.abs(full.coords[i * 3]!) <= 1 && Math.abs(full.coords[i * 3 + 2]!) <= 1) keep.push(i);
  const grid = { ...full, count: keep.length, coords: Int32Array.from(keep.flatMap((i) => [...full.coords.subarray(i * 3, i * 3 + 3)])), offsets: Uint32Array.from(keep.map((i) => full.offsets[i]!)) };
  const palette = terrainPalette(blobs.materialColors, blobs.waterColor);
  const names = ['Air', 'Water', 'Grass', 'Slate', 'Concrete', 'Brick', 'Sand', 'WoodPlanks', 'Rock', 'Glacier', 'Snow', 'Sandstone', 'Mud', 'Basalt', 'Ground', 'CrackedLava', 'Asphalt', 'Cobblestone', 'Ice', 'LeafyGrass', 'Salt', 'Limestone', 'Pavement'];
  const materialOf = (name: string): number => {
    const index = Math.max(0, names.indexOf(name));
    return addMaterial(doc, partMaterial({ color: [palette[index * 3]!, palette[index * 3 + 1]!, palette[index * 3 + 2]!], transparency: name === 'Water' ? blobs.waterTransparency : 0, material: name }));
  };
  const terrain = addNode(doc, { name: 'Terrain' });
  const mesh = meshTerrain(grid, { step: 2 });
  for (const chunk of mesh.chunks) {
    for (const surface of [chunk.solid, chunk.water]) {
      if (!surface) continue;
      const g = addGeometry(doc, surface);
      addNode(doc, { name: `Terrain ${chunk.chunk.join(',')}`, mesh: addMesh(doc, g, surface.groups!.map((group) => materialOf(group.material!))), translation: chunk.origin }, terrain);
    }
  }
}
