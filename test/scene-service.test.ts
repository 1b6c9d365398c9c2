/**
 * The map as picture and geometry through the real service on loopback: analyze draws
 * the picture (served to the preview's uploaders only); create downloads a generated
 * place's meshes, union models and images from a loopback asset server (the corpus's
 * real mesh files under the place's ids, and malformed ones), converts them, and lists
 * those it could not convert; scene.glb is built on its first request (once for
 * concurrent ones), passes the Khronos validator, holds one geometry per distinct mesh
 * asset, and is its owner's only.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { collectAssetRefs } from '../src/assets/refs.js';
import { assetPath } from '../src/assets/store.js';
import { GlbTooLargeError } from '../src/scene/glb.js';
import { storedAssets } from '../src/scene/stored-assets.js';
import runTask from '../src/workers/tasks.js';
import { createDiskStore, holdingKeys, listKeys, parseHoldingKey } from '../src/store/backends/index.js';
import { decode } from '../src/parser/index.js';
import { encode } from '../src/parser/writer/index.js';
import { encodePng, newRaster } from '../src/render/png.js';
import { generatePlace } from '../bench/generate.js';
import { startAssetServer, type AssetServer } from './support/asset-server.js';
import { readPng } from './support/png.js';
import { CORPUS_DIR, PLACES_DIR } from './support/paths.js';
import { analyze, as, create, startService, type Service } from './support/service.js';

const validator = createRequire(import.meta.url)('gltf-validator') as {
  validateBytes(data: Uint8Array, options?: object): Promise<{ issues: { numErrors: number; messages: { severity: number; code: string; message: string }[] } }>;
};

const MESHES = join(CORPUS_DIR, 'meshes');
/** Real files served under the place's mesh ids, round robin. */
const MESH_FILES = ['sphere.mesh', 'torso.mesh', '5115672913', '158071912', '13674780763', 'mesh7_127279296594138.bin', '5648093777'];
const UNION_FILES = ['385416572.meshdata', '4500696697_4.meshdata', '13626979828.meshdata5'];

function malformed(): Record<string, Uint8Array> {
  const sphere = readFileSync(join(MESHES, 'sphere.mesh'));
  const lying = Buffer.from(sphere);
  lying.writeUInt32LE(0x7fffffff, 13 + 6);
  const draco = Buffer.from(readFileSync(join(MESHES, 'mesh7_127279296594138.bin')));
  for (let i = 60; i < draco.length - 40; i += 7) draco[i] = draco[i]! ^ 0x5a;
  return { truncated: sphere.subarray(0, 4000), lying, draco, notMesh: Buffer.from('404 page not found') };
}

function png(): Uint8Array {
  const raster = newRaster(4, 4);
  raster.data.fill(200);
  for (let y = 0; y < 4; y++) raster.data[y * raster.stride] = 0;
  return encodePng(raster);
}

describe('scene service', () => {
  let service: Service;
  let assets: AssetServer;
  let place: Uint8Array;
  const served = new Map<string, string>(); // id → what it is
  const bad = new Map<string, string>(); // id → which malformation

  before(async () => {
    place = encode(generatePlace({ parts: 300, scripts: 2, uniqueAssets: 400, unionShare: 0.15, seed: 11 }));
    const refs = collectAssetRefs(decode(place));
    const scripts: Record<string, { type: 'bytes'; body: Uint8Array }> = {};
    const broken = Object.entries(malformed());
    let mesh = 0, union = 0;
    for (const { id, kind } of refs.ids) {
      if (kind === 'mesh') {
        // The first meshes get the malformed files, the rest real ones.
        if (bad.size < broken.length) {
          const [what, bytes] = broken[bad.size]!;
          bad.set(id, what);
          scripts[id] = { type: 'bytes', body: bytes };
        } else {
          const file = MESH_FILES[mesh++ % MESH_FILES.length]!;
          served.set(id, file);
          scripts[id] = { type: 'bytes', body: readFileSync(join(MESHES, file)) };
        }
      } else if (kind === 'union') {
        const file = UNION_FILES[union++ % UNION_FILES.length]!;
        served.set(id, file);
        scripts[id] = { type: 'bytes', body: readFileSync(join(MESHES, file)) };
      } else {
        scripts[id] = { type: 'bytes', body: kind === 'image' ? png() : Buffer.from(`${kind} ${id}`) };
      }
    }
    assert.ok(mesh >= 10 && union >= 5, `${mesh} meshes, ${union} union models`);
    assets = await startAssetServer({ assets: scripts });
    service = await startService({ assetUrlTemplate: assets.templateUrl, assetRetries: 0 });
  });

  after(async () => {
    await service?.close();
    await assets?.close();
  });

  test('analyze draws the picture; it is served to the preview\'s uploaders only', async () => {
    const bytes = readFileSync(join(PLACES_DIR, 'rocket-arena-2006.rbxl'));
    const { preview_hash, report } = await analyze(service, bytes, 'arena.rbxl', as('alice'));
    const picture = report.picture as { url: string; width: number; height: number };
    assert.equal(picture.url, `/api-rbxl/previews/${preview_hash}/image.png`);
    assert.equal(picture.width, 1024);
    const response = await fetch(service.url + picture.url, { headers: as('alice') });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'image/png');
    // Cached privately, and per user: the credentials are part of the cache key.
    assert.equal(response.headers.get('cache-control'), 'private, max-age=3600');
    assert.equal(response.headers.get('vary'), 'Authorization, X-User-Id, X-Auth-Override');
    const image = readPng(new Uint8Array(await response.arrayBuffer()));
    assert.deepEqual([image.width, image.height], [picture.width, picture.height]);
    // Not only sky: the arena's parts cover much of it.
    let sky = 0;
    for (let i = 0; i < image.rgb.length; i += 3) if (image.rgb[i + 2]! > image.rgb[i]! + 40) sky++;
    assert.ok(sky < image.width * image.height * 0.6);
    assert.equal((await fetch(service.url + picture.url, { headers: as('mallory') })).status, 404);
    assert.equal((await fetch(service.url + picture.url)).status, 401);
    assert.equal((await fetch(service.url + `/api-rbxl/previews/${'0'.repeat(64)}/image.png`, { headers: as('alice') })).status, 404);
    // A later uploader of the same bytes may see it too.
    await analyze(service, bytes, 'mine.rbxl', as('bob'));
    assert.equal((await fetch(service.url + picture.url, { headers: as('bob') })).status, 200);
  });

  test('create converts the downloaded meshes and union models; the malformed ones are listed with their reason, and scene.glb uses the rest', async () => {
    const { preview_hash } = await analyze(service, place, 'generated.rbxl', as('carol'));
    const created = await create(service, { preview_hash }, as('carol')) as Awaited<ReturnType<typeof create>> & {
      assets_not_converted: { id: string; kind: string; reason: string; message: string }[];
    };
    assert.equal(created.assets_failed, 0, JSON.stringify(created.asset_failures));
    const notConverted = new Map(created.assets_not_converted.map((entry) => [entry.id, entry]));
    assert.deepEqual([...notConverted.keys()].sort(), [...bad.keys()].sort());
    const reasons = Object.fromEntries([...bad].map(([id, what]) => [what, notConverted.get(id)!.reason]));
    assert.equal(reasons.truncated, 'corrupt');
    assert.equal(reasons.lying, 'too_large');
    assert.equal(reasons.notMesh, 'not_a_mesh');
    assert.ok(['corrupt', 'too_large', 'unsupported_feature'].includes(reasons.draco!), reasons.draco);
    for (const entry of notConverted.values()) assert.ok(entry.message.length > 0);

    // The project says per asset whether it was converted and why not: its summary (the page's data) and its document.
    type Listed = { id: string; conversion?: { converted: boolean; reason?: string; triangles?: number } };
    const summary = await (await fetch(`${service.url}/api-rbxl/projects/${created.project_id}/summary`, { headers: as('carol') })).json() as { assets: Listed[] };
    const document = await (await fetch(`${service.url}/api-rbxl/projects/${created.project_id}`, { headers: as('carol') })).json() as {
      assets: Listed[]; instances: { id: string; class: string; name: string }[];
    };
    for (const [where, listed] of [['summary', summary.assets], ['document', document.assets]] as const) {
      const byId = new Map(listed.map((asset) => [asset.id, asset.conversion]));
      for (const [id, entry] of notConverted) assert.deepEqual([byId.get(id)?.converted, byId.get(id)?.reason], [false, entry.reason], `${where}: ${id}`);
      for (const id of served.keys()) {
        const conversion = byId.get(id);
        assert.equal(conversion?.converted, true, `${where}: ${id} (${served.get(id)}) converted`);
        assert.ok((conversion?.triangles ?? 0) > 0);
      }
      assert.ok(listed.filter((asset) => asset.conversion === undefined).length > 0, `${where}: images carry no conversion`);
    }

    // Two requests at once: one build, the same bytes.
    const url = `${service.url}/api-rbxl/projects/${created.project_id}/scene.glb`;
    const [first, second] = await Promise.all([fetch(url, { headers: as('carol') }), fetch(url, { headers: as('carol') })]);
    assert.equal(first.status, 200, await first.clone().text().catch(() => ''));
    assert.equal(first.headers.get('content-type'), 'model/gltf-binary');
    const glb = new Uint8Array(await first.arrayBuffer());
    assert.deepEqual(new Uint8Array(await second.arrayBuffer()), glb);
    const health = await (await fetch(`${service.url}/api-rbxl/health`)).json() as { workers: { tasks: { scene: number; convert: number } } };
    assert.equal(health.workers.tasks.scene, 1, 'built once');
    assert.ok(health.workers.tasks.convert >= 1);

    const report = await validator.validateBytes(glb, { maxIssues: 20 });
    assert.equal(report.issues.numErrors, 0, JSON.stringify(report.issues.messages.filter((m) => m.severity === 0).slice(0, 3)));
    const length = new DataView(glb.buffer, glb.byteOffset).getUint32(12, true);
    const json = JSON.parse(Buffer.from(glb.subarray(20, 20 + length)).toString('utf8')) as {
      nodes: { mesh?: number; extras?: Record<string, string> }[]; meshes: { primitives: { attributes: Record<string, number> }[] }[];
    };
    // Every node names its instance by the document's id: same class, same name (Terrain and Water: the Terrain's).
    const instances = new Map(document.instances.map((instance) => [instance.id, instance]));
    let named = 0;
    for (const node of json.nodes as { name?: string; extras?: Record<string, string> }[]) {
      if (node.extras?.id === undefined) continue;
      const instance = instances.get(node.extras.id);
      assert.ok(instance, `node ${node.name} has id ${node.extras.id}, an instance of the document`);
      if (node.extras.kind === 'terrain' || node.extras.kind === 'water') {
        assert.equal(instance.class, 'Terrain');
      } else {
        assert.equal(instance.class, node.extras.class, `node ${node.name}`);
        assert.equal(instance.name, node.name);
      }
      named++;
    }
    assert.ok(named >= 300, `${named} nodes carry an id`);

    // One geometry per distinct converted asset (meshes and union models), shared by its parts.
    const geometries = new Map<string, Set<number>>();
    for (const node of json.nodes) {
      const asset = node.extras?.asset;
      if (asset === undefined || node.mesh === undefined) continue;
      assert.ok(served.has(asset), `asset ${asset} was served as a real file`);
      const set = geometries.get(asset) ?? new Set<number>();
      set.add(json.meshes[node.mesh]!.primitives[0]!.attributes.POSITION!);
      geometries.set(asset, set);
    }
    const why = new Map<string, number>(); for (const node of json.nodes) if (node.extras?.placeholder) why.set(node.extras.placeholder, (why.get(node.extras.placeholder) ?? 0) + 1);
    const meshAssets = [...served.keys()].filter((id) => geometries.has(id));
    assert.ok(meshAssets.length > 0, JSON.stringify([...why]));
    assert.equal(meshAssets.length, served.size, 'every served mesh and union model is in the scene');
    for (const [asset, set] of geometries) assert.equal(set.size, 1, `asset ${asset}'s geometry written once`);
    // The malformed meshes stand as placeholder boxes that say why.
    const placeholders = json.nodes.filter((node) => node.extras?.placeholder?.startsWith('mesh not converted'));
    assert.ok(placeholders.length >= bad.size);

    // Owner only; a later request is served from the store (no second build).
    assert.equal((await fetch(url, { headers: as('mallory') })).status, 404);
    assert.equal((await fetch(url, { headers: as('carol') })).status, 200);
    const after = await (await fetch(`${service.url}/api-rbxl/health`)).json() as { workers: { tasks: { scene: number } } };
    assert.equal(after.workers.tasks.scene, 1);
  });

  test('a built scene.glb counts in its owner\'s share with the document; deleting the project removes both', async () => {
    const bytes = readFileSync(join(PLACES_DIR, 'rocket-arena-2006.rbxl'));
    const { preview_hash } = await analyze(service, bytes, 'arena.rbxl', as('dora'));
    const { project_id: id } = await create(service, { preview_hash }, as('dora'));
    const objects = createDiskStore({ root: join(service.dataDir, 'objects') });
    const counted = async (): Promise<number[]> => {
      const sizes: number[] = [];
      for await (const key of listKeys(objects, holdingKeys.projectEntries('dora', id))) sizes.push(parseHoldingKey(key)!.bytes);
      return sizes.sort((a, b) => a - b);
    };
    const [document] = await counted();
    assert.ok(document! > 0);
    const glb = await fetch(`${service.url}/api-rbxl/projects/${id}/scene.glb`, { headers: as('dora') });
    assert.equal(glb.status, 200);
    const sceneBytes = (await glb.arrayBuffer()).byteLength;
    assert.deepEqual(await counted(), [document!, document! + sceneBytes]);
    assert.equal((await fetch(`${service.url}/api-rbxl/projects/${id}`, { method: 'DELETE', headers: as('dora') })).status, 204);
    assert.deepEqual(await counted(), []);
    await objects.close();
  });

  test('the viewer\'s three.js files are served from the package; nothing else of node_modules is', async () => {
    const module = await fetch(`${service.url}/api-rbxl/vendor/three/build/three.module.js`);
    assert.equal(module.status, 200);
    assert.match(module.headers.get('content-type') ?? '', /javascript/);
    assert.equal((await fetch(`${service.url}/api-rbxl/vendor/three/examples/jsm/loaders/GLTFLoader.js`)).status, 200);
    assert.equal((await fetch(`${service.url}/api-rbxl/vendor/three/package.json`)).status, 404);
    assert.equal((await fetch(`${service.url}/api-rbxl/vendor/three/../../package.json`)).status, 404);
  });
});


test('scene.glb\'s images and meshes are counted as they are read: past the GLB\'s bound the build stops there, not after holding them all', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rbxl-scene-total-'));
  try {
    const ids = ['1001', '1002', '1003', '1004'];
    const table = new Map<string, string>();
    for (const id of ids) {
      const bytes = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(100_000, Number(id) & 0xff)]);
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      mkdirSync(dirname(assetPath(dataDir, sha256)), { recursive: true });
      writeFileSync(assetPath(dataDir, sha256), bytes);
      table.set(id, sha256);
    }
    const assets = storedAssets({ dataDir, assets: table, maxBytes: 1 << 20, maxTotalBytes: 250_000 });
    assert.equal(assets.image('1001')?.length, 100_008);
    assert.equal(assets.image('1002')?.length, 100_008);
    assert.throws(() => assets.image('1003'), (error: unknown) =>
      error instanceof GlbTooLargeError && error.maxBytes === 250_000 && /the images and meshes it holds come to 300024 already/.test(error.message));
    // Converted meshes count too: a real mesh, converted on first use, is more than the 92 bytes left.
    const mesh = readFileSync(join(CORPUS_DIR, 'meshes', 'torso.mesh'));
    const meshSha = createHash('sha256').update(mesh).digest('hex');
    mkdirSync(dirname(assetPath(dataDir, meshSha)), { recursive: true });
    writeFileSync(assetPath(dataDir, meshSha), mesh);
    const withMesh = storedAssets({ dataDir, assets: new Map([...table, ['2001', meshSha]]), maxBytes: 1 << 20, maxTotalBytes: 100_100 });
    assert.equal(withMesh.image('1001')?.length, 100_008);
    assert.throws(() => withMesh.mesh('2001'), (error: unknown) => error instanceof GlbTooLargeError && error.maxBytes === 100_100);
    // Without a total bound (the default) every image is read.
    const unbounded = storedAssets({ dataDir, assets: table, maxBytes: 1 << 20 });
    for (const id of ids) assert.equal(unbounded.image(id)?.length, 100_008);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a scene.glb that does not fit its owner\'s share is refused (507 quota_exceeded) and not stored', async () => {
  const bytes = readFileSync(join(PLACES_DIR, 'rocket-arena-2006.rbxl'));
  // Room for the preview and the document, not for the scene (about 340 KB).
  const service = await startService({ userMaxBytes: 200_000 });
  try {
    const { preview_hash } = await analyze(service, bytes, 'arena.rbxl', as('erin'));
    const { project_id: id } = await create(service, { preview_hash }, as('erin'));
    const refused = await fetch(`${service.url}/api-rbxl/projects/${id}/scene.glb`, { headers: as('erin') });
    assert.equal(refused.status, 507);
    assert.equal((await refused.json() as { error: { code: string } }).error.code, 'quota_exceeded');
    const stored = await readdir(join(service.dataDir, 'objects', 'projects', id));
    assert.ok(!stored.some((name) => name.startsWith('scene.glb')), stored.join(' '));
    // Asked again without room made: refused at once, without another build.
    const scenesBuilt = async (): Promise<number> => (await (await fetch(`${service.url}/api-rbxl/health`)).json() as { workers: { tasks: { scene: number } } }).workers.tasks.scene;
    const built = await scenesBuilt();
    for (let i = 0; i < 3; i++) {
      const again = await fetch(`${service.url}/api-rbxl/projects/${id}/scene.glb`, { headers: as('erin') });
      assert.equal(again.status, 507);
      assert.match((await again.json() as { error: { message: string } }).error.message, /USER_MAX_BYTES/);
    }
    assert.equal(await scenesBuilt(), built);
  } finally {
    await service.close();
  }
});

test('scene.glb built at once for one owner do not all pass a share with room for one', async () => {
  const bytes = readFileSync(join(PLACES_DIR, 'rocket-arena-2006.rbxl'));
  /** A preview, three projects of it and their scenes, requested at once; the owner's counted bytes before the scenes and the scenes' answers. */
  const scenesAtOnce = async (userMaxBytes: number): Promise<{ held: number; statuses: number[]; sizes: number[] }> => {
    const service = await startService({ userMaxBytes });
    try {
      const { preview_hash } = await analyze(service, bytes, 'arena.rbxl', as('gus'));
      const ids = [];
      for (let i = 0; i < 3; i++) ids.push((await create(service, { preview_hash }, as('gus'))).project_id);
      let held = 0;
      for await (const key of listKeys(createDiskStore({ root: join(service.dataDir, 'objects') }), holdingKeys.user('gus'))) held += parseHoldingKey(key)?.bytes ?? 0;
      // Entries of no bytes, which a share check lists: its listing takes long enough
      // for both scenes' checks to be under way at once.
      const padding = join(service.dataDir, 'objects', dirname(holdingKeys.preview('gus', '0'.repeat(64), 0, 0)));
      mkdirSync(padding, { recursive: true });
      const expiry = Date.now() + 86_400_000;
      for (let i = 0; i < 4000; i++) {
        const key = holdingKeys.preview('gus', createHash('sha256').update(String(i)).digest('hex'), expiry, 0);
        writeFileSync(join(service.dataDir, 'objects', key), '');
      }
      const answers = await Promise.all(ids.map((id) => fetch(`${service.url}/api-rbxl/projects/${id}/scene.glb`, { headers: as('gus') })));
      const sizes = await Promise.all(answers.map(async (answer) => (await answer.arrayBuffer()).byteLength));
      return { held, statuses: answers.map((answer) => answer.status).sort(), sizes };
    } finally {
      await service.close();
    }
  };
  const roomy = await scenesAtOnce(1 << 30);
  assert.deepEqual(roomy.statuses, [200, 200, 200]);
  const scene = roomy.sizes[0]!;
  // Room for what the owner holds and one scene and a half: one scene is served, the other refused.
  const tight = await scenesAtOnce(roomy.held + scene + (scene >> 1));
  assert.deepEqual(tight.statuses, [200, 507, 507]);
});

test('a mesh conversion decodes no more than the task\'s mesh limits allow (the budget\'s share)', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rbxl-mesh-limits-'));
  try {
    const mesh = readFileSync(join(CORPUS_DIR, 'meshes', 'sphere.mesh'));
    const sha256 = createHash('sha256').update(mesh).digest('hex');
    mkdirSync(dirname(assetPath(dataDir, sha256)), { recursive: true });
    writeFileSync(assetPath(dataDir, sha256), mesh);
    const limits = { maxFileBytes: 1 << 20, decode: {}, maxDocumentBytes: 1 << 26 };
    const small = await runTask({ kind: 'convert', dataDir, sha256s: [sha256], limits: { ...limits, mesh: { maxVertices: 10, maxTriangles: 10 } } });
    assert.ok('records' in small);
    assert.equal(small.records[0]!.converted, false);
    assert.equal((small.records[0] as { reason: string }).reason, 'too_large');
    // The record is shared by every instance: one whose budget allows more converts it again
    // (a smaller one's refusal is not the answer for all), and that answer then stands.
    const same = await runTask({ kind: 'convert', dataDir, sha256s: [sha256], limits: { ...limits, mesh: { maxVertices: 10, maxTriangles: 10 } } });
    assert.ok('records' in same && !same.records[0]!.converted);
    const larger = await runTask({ kind: 'convert', dataDir, sha256s: [sha256], limits });
    assert.ok('records' in larger && larger.records[0]!.converted, JSON.stringify(larger));
    const after = await runTask({ kind: 'convert', dataDir, sha256s: [sha256], limits: { ...limits, mesh: { maxVertices: 10, maxTriangles: 10 } } });
    assert.ok('records' in after && after.records[0]!.converted);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
