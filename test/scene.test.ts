/**
 * The scene assembly and scene.glb on real places and generated ones: every glb passes
 * the Khronos validator with zero errors; one node per Workspace BasePart (plus the
 * terrain's and water's nodes, and the bones of skinned meshes); unions fill their
 * Size; offline meshes are placeholders that say so; the report's terrain statistics;
 * mesh conversion (the converted GLB reads back as the decoder's geometry, and
 * malformed blobs say why they were not converted).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { decode } from '../src/parser/index.js';
import { findService, type Dom } from '../src/parser/dom.js';
import { encode } from '../src/parser/writer/index.js';
import { BASE_PART_CLASSES } from '../src/project/classes.js';
import { analyzeDom } from '../src/project/report.js';
import { rowOfId } from '../src/project/ids.js';
import { glbBytes, readGlbGeometry } from '../src/gltf/index.js';
import { decodeMeshAsset, type FileMeshAsset } from '../src/mesh/index.js';
import { assembleScene, convertMeshAsset, sceneDocument, type SceneAssets } from '../src/scene/index.js';
import { generatePlace } from '../bench/generate.js';
import { encodePng, newRaster } from '../src/render/png.js';
import { PLACES_DIR, REPO_ROOT, CORPUS_DIR, TEST_FILES_DIR } from './support/paths.js';
import { DomBuilder } from '../src/parser/dom-build.js';

const validator = createRequire(import.meta.url)('gltf-validator') as {
  validateBytes(data: Uint8Array, options?: object): Promise<{ issues: { numErrors: number; messages: { code: string; severity: number; message: string; pointer?: string }[] } }>;
};

async function validate(bytes: Uint8Array, label: string): Promise<void> {
  const report = await validator.validateBytes(bytes, { maxIssues: 50, format: 'glb' });
  const errors = report.issues.messages.filter((m) => m.severity === 0);
  assert.equal(report.issues.numErrors, 0, `${label}: ${JSON.stringify(errors.slice(0, 5))}`);
}

interface GlbNode { name?: string; mesh?: number; skin?: number; translation?: number[]; rotation?: number[]; scale?: number[]; extras?: Record<string, any>; children?: number[] }
interface Glb { nodes: GlbNode[]; meshes: { primitives: { attributes: Record<string, number> }[] }[]; accessors: { min?: number[]; max?: number[] }[]; skins?: { joints: number[]; skeleton?: number }[] }

function glbJson(bytes: Uint8Array): Glb {
  const length = new DataView(bytes.buffer, bytes.byteOffset).getUint32(12, true);
  return JSON.parse(Buffer.from(bytes.subarray(20, 20 + length)).toString('utf8')) as Glb;
}

/** BaseParts under the Workspace, the Camera's subtree left out (counted here without the assembly). */
function workspaceParts(dom: Dom): number {
  const workspace = findService(dom, 'Workspace');
  let count = 0;
  for (let row = workspace === -1 ? dom.firstRoot : dom.firstChild(workspace); row !== -1;) {
    const className = dom.className(row);
    if (className === 'Camera') { row = dom.after(row, workspace); continue; }
    if (BASE_PART_CLASSES.has(className)) count++;
    row = dom.next(row, workspace);
  }
  return count;
}

/** Nodes that are bones (a skin's joints and skeleton roots). */
function boneNodes(json: Glb): number {
  const bones = new Set<number>();
  for (const skin of json.skins ?? []) {
    skin.joints.forEach((joint) => bones.add(joint));
    if (skin.skeleton !== undefined) bones.add(skin.skeleton);
  }
  return bones.size;
}

function generated(parts: number, unionShare = 0.15): Dom {
  return decode(encode(generatePlace({ parts, scripts: 4, uniqueAssets: Math.round(parts / 8), unionShare, seed: 7 })));
}

const places = readdirSync(PLACES_DIR).filter((name) => /\.rbx[lm]x?$/.test(name)).sort();

test('scene.glb: every corpus place and a generated one pass the Khronos validator; one node per Workspace BasePart plus terrain and water', async () => {
  const inputs: [string, Dom][] = [...places.map((name) => [name, decode(readFileSync(join(PLACES_DIR, name)))] as [string, Dom]), ['generated-3000', generated(3000)]];
  for (const [name, dom] of inputs) {
    const assembly = assembleScene(dom);
    const { doc, stats } = sceneDocument(assembly, { terrain: { maxTriangles: 300_000 } });
    const bytes = glbBytes(doc);
    await validate(bytes, name);
    const json = glbJson(bytes);
    const terrainNodes = json.nodes.filter((node) => node.extras?.kind === 'terrain' || node.extras?.kind === 'water');
    const partNodes = json.nodes.filter((node) => node.extras?.class !== undefined);
    assert.equal(partNodes.length, workspaceParts(dom), `${name}: a node per Workspace BasePart`);
    assert.equal(json.nodes.length, workspaceParts(dom) + terrainNodes.length + boneNodes(json), `${name}: nothing else`);
    assert.equal(stats.parts, workspaceParts(dom));
    // Each part node names its instance: extras.id is the DOM row, and the name is the instance's.
    for (const node of partNodes.slice(0, 500)) {
      const row = rowOfId(node.extras!.id);
      assert.ok(row >= 0 && row < dom.count, `${name}: id ${node.extras!.id}`);
      assert.equal(node.name, dom.name(row));
      assert.equal(node.extras!.class, dom.className(row));
    }
    if (name === 'booga.rbxl') {
      assert.deepEqual(terrainNodes.map((node) => node.extras!.kind).sort(), ['terrain', 'water']);
      assert.ok(terrainNodes.every((node) => rowOfId(node.extras!.id) >= 0 && dom.className(rowOfId(node.extras!.id)) === 'Terrain'));
    }
  }
});

/** For every union node: the box of its mesh, scaled, against the instance's Size; its centre against its CFrame. */
function checkUnions(dom: Dom, bytes: Uint8Array, label: string): number {
  const json = glbJson(bytes);
  let checked = 0;
  for (const node of json.nodes) {
    if (node.extras?.class !== 'UnionOperation' || node.mesh === undefined) continue;
    const row = rowOfId(node.extras.id);
    const table = dom.table(dom.tableOf(row));
    const size = (table.columns.get('size') ?? table.columns.get('Size'))!.get(dom.rowInTable(row)) as number[];
    const accessor = json.accessors[json.meshes[node.mesh]!.primitives[0]!.attributes.POSITION!]!;
    const scale = node.scale ?? [1, 1, 1];
    for (let a = 0; a < 3; a++) {
      const extent = (accessor.max![a]! - accessor.min![a]!) * scale[a]!;
      assert.ok(Math.abs(extent - size[a]!) <= 0.05 * size[a]! + 1e-4, `${label} ${node.name} axis ${a}: extent ${extent}, Size ${size[a]}`);
    }
    checked++;
  }
  return checked;
}

test('scene.glb: a map with nothing to draw (a model of folders, an empty Workspace) passes the validator', async () => {
  // Found by fuzzing: its scene was written as {"nodes": []}, which glTF 2.0 forbids (EMPTY_ENTITY).
  const folder = decode(readFileSync(join(TEST_FILES_DIR, 'default-inserted-folder.rbxm')));
  const builder = new DomBuilder('binary');
  builder.add(builder.addTable('Workspace'));
  for (const [name, dom] of [['default-inserted-folder.rbxm', folder], ['an empty Workspace', builder.build()]] as const) {
    const { doc, stats } = sceneDocument(assembleScene(dom));
    assert.equal(stats.nodes, 0, name);
    await validate(glbBytes(doc), name);
  }
});

test('scene.glb: a union\'s box matches its Size within 5% (booga\'s Workspace unions from their hulls, generated unions scaled from InitialSize)', () => {
  const booga = decode(readFileSync(join(PLACES_DIR, 'booga.rbxl')));
  const assembly = assembleScene(booga);
  assert.equal(Object.keys(assembly.placeholders).filter((reason) => reason.startsWith('union')).length, 0, 'every union has a shape');
  let inWorkspace = 0;
  for (let i = 0; i < assembly.parts.count; i++) if (booga.className(assembly.parts.rows[i]!) === 'UnionOperation') inWorkspace++;
  assert.ok(inWorkspace > 1000);
  assert.equal(checkUnions(booga, glbBytes(sceneDocument(assembly, { terrain: { maxTriangles: 1000, step: 32 } }).doc), 'booga'), inWorkspace);

  // Generated unions at a Size other than their InitialSize: scaled from InitialSize to Size.
  const dom = generated(600, 0.3);
  const stretched = assembleScene(dom);
  let unions = 0;
  for (let i = 0; i < stretched.parts.count; i++) {
    if (stretched.shapes[stretched.parts.shapes[i]!]!.kind !== 'union') continue;
    unions++;
  }
  assert.ok(unions > 50);
  assert.equal(checkUnions(dom, glbBytes(sceneDocument(stretched).doc), 'generated'), unions);
});

test('scene.glb offline: meshes are boxes of their Size marked as placeholders with the reason; downloaded ones are the mesh, fitted to Size', async () => {
  const dom = decode(readFileSync(join(PLACES_DIR, 'roblox-statemachine-demo.rbxl')));
  const offline = glbJson(glbBytes(sceneDocument(assembleScene(dom)).doc));
  const placeholders = offline.nodes.filter((node) => node.extras?.placeholder);
  assert.equal(placeholders.filter((node) => node.extras!.placeholder === 'mesh not downloaded').length, 19);
  assert.ok(placeholders.every((node) => node.extras!.class === 'MeshPart' || node.extras!.class === 'Part'));

  // The same place with every mesh id answered by one corpus mesh: no placeholder is left for them, and the mesh fills each part's Size.
  const sphere = decodeMeshAsset(readFileSync(join(CORPUS_DIR, 'meshes', 'sphere.mesh'))) as FileMeshAsset;
  const assets: SceneAssets = { mesh: () => ({ ok: true, geometry: sphere.geometry }) };
  const assembly = assembleScene(dom, { assets });
  assert.equal(assembly.placeholders['mesh not downloaded'], undefined);
  const bytes = glbBytes(sceneDocument(assembly).doc);
  await validate(bytes, 'statemachine with meshes');
  const json = glbJson(bytes);
  const meshNodes = json.nodes.filter((node) => node.extras?.class === 'MeshPart');
  assert.equal(meshNodes.length, 19);
  // One geometry per distinct mesh asset, shared by every part that shows it.
  const byAsset = new Map<string, Set<number>>();
  for (const node of meshNodes) {
    const row = rowOfId(node.extras!.id);
    const meshId = dom.table(dom.tableOf(row)).columns.get('MeshId')!.get(dom.rowInTable(row));
    assert.equal(typeof meshId, 'string');
    assert.ok((meshId as string).trim().endsWith(node.extras!.asset), `${meshId as string} shown as asset ${node.extras!.asset}`);
    const set = byAsset.get(node.extras!.asset) ?? new Set<number>();
    set.add(json.meshes[node.mesh!]!.primitives[0]!.attributes.POSITION!);
    byAsset.set(node.extras!.asset, set);
  }
  assert.ok(byAsset.size >= 2, `${byAsset.size} assets for ${meshNodes.length} parts`);
  for (const [asset, accessors] of byAsset) assert.equal(accessors.size, 1, `asset ${asset}: written once`);
  assert.equal(new Set([...byAsset.values()].map((set) => [...set][0])).size, byAsset.size, 'and each asset its own geometry');
  for (const node of meshNodes) {
    const row = rowOfId(node.extras!.id);
    const size = dom.table(dom.tableOf(row)).columns.get('size')!.get(dom.rowInTable(row)) as number[];
    const accessor = json.accessors[json.meshes[node.mesh!]!.primitives[0]!.attributes.POSITION!]!;
    for (let a = 0; a < 3; a++) {
      const extent = (accessor.max![a]! - accessor.min![a]!) * node.scale![a]!;
      assert.ok(Math.abs(extent - size[a]!) < 1e-3 * Math.max(1, size[a]!), `MeshPart fitted to Size: ${extent} vs ${size[a]}`);
    }
  }
});

test('report: the terrain\'s voxels per material, volumes and bounds; a malformed SmoothGrid is a warning, not a failure', () => {
  const booga = decode(readFileSync(join(PLACES_DIR, 'booga.rbxl')));
  const { report } = analyzeDom(booga, { fileName: 'booga.rbxl', fileSize: 1 });
  const expected = JSON.parse(readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'booga-terrain.json'), 'utf8'));
  assert.equal(report.terrain.present, true);
  assert.deepEqual(report.terrain.voxels_per_material, expected.voxels_per_material);
  assert.equal(report.terrain.water_volume, expected.water_volume);
  assert.deepEqual(report.terrain.bounds, expected.bounds);
  assert.equal(report.terrain.chunks, 1633);

  // The same place with its SmoothGrid cut short: the analysis stands, the terrain is named in the warnings.
  const terrainTable = booga.tables.find((table) => table.className === 'Terrain')!;
  const smooth = terrainTable.columns.get('SmoothGrid')!;
  const whole = Buffer.from((smooth.get(0) as { base64: string }).base64, 'base64');
  const cut = { type: smooth.type, length: smooth.length, get: () => ({ base64: whole.subarray(0, 5000).toString('base64') }), bytes: () => whole.subarray(0, 5000) };
  terrainTable.columns.set('SmoothGrid', cut);
  const damaged = analyzeDom(booga, { fileName: 'booga.rbxl', fileSize: 1 }).report;
  assert.equal(damaged.terrain.voxels_per_material && Object.keys(damaged.terrain.voxels_per_material).length, 0);
  assert.ok(damaged.warnings.some((w) => /^terrain: the SmoothGrid cannot be read/.test(w)), damaged.warnings.join('\n'));
  assert.equal(assembleScene(booga).terrain, null);
});

test('mesh conversion: the converted GLB reads back as the decoded LOD 0 (positions, faces, bones); malformed blobs say why', async () => {
  const dir = join(CORPUS_DIR, 'meshes');
  for (const name of ['13674780763', 'sphere.mesh', 'mesh7_127279296594138.bin', '4500696697_4.meshdata', 'CSGPHS_8_02.data']) {
    const bytes = readFileSync(join(dir, name));
    const converted = convertMeshAsset(bytes);
    assert.ok(converted.ok, name);
    await validate(converted.glb, name);
    const back = readGlbGeometry(converted.glb);
    const asset = decodeMeshAsset(bytes);
    assert.equal(back.indices.length / 3, converted.info.triangles, name);
    if (asset.kind === 'mesh') {
      assert.equal(converted.info.triangles, asset.geometry.indices.length / 3);
      // Every triangle corner at the same place as in the decoded mesh.
      for (let t = 0; t < back.indices.length; t += 97) {
        for (let k = 0; k < 3; k++) assert.ok(Math.abs(back.positions[back.indices[t]! * 3 + k]! - asset.geometry.positions[asset.geometry.indices[t]! * 3 + k]!) < 1e-6);
      }
      assert.equal(back.skin?.bones.length ?? 0, asset.geometry.skin?.bones.length ?? 0, `${name}: bones`);
    }
  }
  const sphere = readFileSync(join(dir, 'sphere.mesh'));
  const truncated = convertMeshAsset(sphere.subarray(0, 4000));
  assert.deepEqual([truncated.ok, !truncated.ok && truncated.reason], [false, 'corrupt']);
  const lying = Buffer.from(sphere);
  lying.writeUInt32LE(0x7fffffff, 13 + 6); // version 4.01 header: the vertex count
  assert.equal((convertMeshAsset(lying) as { reason: string }).reason, 'too_large');
  assert.equal((convertMeshAsset(Buffer.from('version 9.00\n...')) as { reason: string }).reason, 'unknown_version');
  assert.equal((convertMeshAsset(Buffer.from('<html>not found</html>')) as { reason: string }).reason, 'not_a_mesh');
  assert.equal((convertMeshAsset(readFileSync(join(dir, 'CSGK.data'))) as { reason: string }).reason, 'no_geometry');
  const v7 = Buffer.from(readFileSync(join(dir, 'mesh7_127279296594138.bin')));
  for (let i = 60; i < v7.length - 40; i += 7) v7[i] = v7[i]! ^ 0x5a; // the Draco stream scrambled
  const draco = convertMeshAsset(v7);
  assert.equal(draco.ok, false);
  assert.ok(['corrupt', 'too_large', 'unsupported_feature'].includes((draco as { reason: string }).reason));
});

test('scene.glb: a downloaded image cut short, damaged or declaring a huge size is left out with a note, and the file passes the validator', async () => {
  const dom = decode(readFileSync(join(PLACES_DIR, 'slime-defense.rbxl')));
  const raster = newRaster(16, 16);
  raster.data.fill(200);
  const png = encodePng(raster);
  const sized = (width: number, height: number): Uint8Array => {
    const bytes = Uint8Array.from(png);
    new DataView(bytes.buffer).setUint32(16, width);
    new DataView(bytes.buffer).setUint32(20, height);
    return bytes;
  };
  const jpeg = (width: number, height: number, cut = 0): Uint8Array =>
    Uint8Array.of(0xff, 0xd8, 0xff, 0xc0, 0, 11, 8, height >> 8, height & 255, width >> 8, width & 255, 1, 1, 0x11, 0, 0xff, 0xd9).subarray(0, 17 - cut);
  const cases: [string, Uint8Array, RegExp | null][] = [
    ['whole PNG', png, null],
    ['whole JPEG header', jpeg(8, 8), null],
    // The host's answer cut short (its Content-Length said so): the Khronos validator's IMAGE_UNEXPECTED_EOS.
    ['half a PNG', png.subarray(0, png.length >> 1), /is a PNG cut short/],
    ['a PNG header alone', png.subarray(0, 33), /is a PNG cut short/],
    ['a PNG without IEND', png.subarray(0, png.length - 12), /is a PNG cut short/],
    ['a PNG of 65535² pixels', sized(65_535, 65_535), /is an image of 65535×65535 pixels, past the/],
    ['a PNG of 0 pixels', sized(0, 16), /is an image of 0×16 pixels/],
    ['a JPEG cut before its frame', jpeg(8, 8, 10), /is a JPEG cut short/],
    ['a JPEG of 65535² pixels', jpeg(65_535, 65_535), /past the/],
  ];
  for (const [label, bytes, note] of cases) {
    const { doc, stats } = sceneDocument(assembleScene(dom), { images: { image: () => bytes } });
    const glb = glbBytes(doc);
    await validate(glb, label);
    const json = glbJson(glb) as Glb & { images?: unknown[] };
    if (note === null) {
      assert.ok((json.images?.length ?? 0) > 0, `${label}: embedded`);
    } else {
      assert.equal(json.images?.length ?? 0, 0, `${label}: left out`);
      assert.ok(stats.notes.some((line) => note.test(line)), `${label}: ${JSON.stringify(stats.notes)}`);
    }
  }
});
