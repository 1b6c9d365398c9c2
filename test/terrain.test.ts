import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decode } from '../src/parser/index.js';
import { DecodeError } from '../src/parser/errors.js';
import {
  AIR, WATER, decodeChunk, meshTerrain, newChunkVoxels, newRuns, readRuns, readSmoothGrid, terrainHeightfield,
  terrainPalette, terrainStats, DEFAULT_MATERIAL_COLORS, DEFAULT_TERRAIN_LIMITS, type SmoothGrid, type TerrainMesh,
} from '../src/terrain/index.js';
import { assembleScene, sceneDocument, terrainBlobs } from '../src/scene/index.js';
import { handDom } from './support/hand-dom.js';
import { closure, makeChunk, repeatChunk, writeSmoothGrid } from './support/smooth-grid.js';
import { PLACES_DIR, REPO_ROOT } from './support/paths.js';

const ROCK = 8, GRASS = 2;
let booga: { grid: SmoothGrid; blob: Uint8Array; colors: Uint8Array | null } | null = null;
function boogaTerrain(): { grid: SmoothGrid; blob: Uint8Array; colors: Uint8Array | null } {
  if (!booga) {
    const terrain = terrainBlobs(decode(readFileSync(join(PLACES_DIR, 'booga.rbxl'))))!;
    booga = { grid: readSmoothGrid(terrain.smoothGrid), blob: terrain.smoothGrid, colors: terrain.materialColors };
  }
  return booga;
}

/** A subset of a grid's chunks (the mesher treats missing neighbours as empty). */
function subGrid(grid: SmoothGrid, keep: (x: number, y: number, z: number) => boolean): SmoothGrid {
  const chosen: number[] = [];
  for (let i = 0; i < grid.count; i++) if (keep(grid.coords[i * 3]!, grid.coords[i * 3 + 1]!, grid.coords[i * 3 + 2]!)) chosen.push(i);
  return {
    ...grid, count: chosen.length,
    coords: Int32Array.from(chosen.flatMap((i) => [grid.coords[i * 3]!, grid.coords[i * 3 + 1]!, grid.coords[i * 3 + 2]!])),
    offsets: Uint32Array.from(chosen.map((i) => grid.offsets[i]!)),
    layerOffsets: Uint32Array.from(chosen.flatMap((i) => [...grid.layerOffsets.subarray(i * grid.side, (i + 1) * grid.side)])),
    layerStarts: Uint32Array.from(chosen.flatMap((i) => [...grid.layerStarts.subarray(i * grid.side, (i + 1) * grid.side)])),
  };
}

test('SmoothGrid: booga decodes to the last byte, every chunk exactly 32,768 voxels', () => {
  const { grid } = boogaTerrain();
  assert.equal(grid.side, 32);
  assert.equal(grid.count, 1633);
  const runs = newRuns(grid);
  const voxels = newChunkVoxels(grid);
  for (let chunk = 0; chunk < grid.count; chunk++) {
    readRuns(grid, chunk, runs);
    let total = 0;
    for (let r = 0; r < runs.count; r++) {
      assert.equal(runs.start[r], total, 'runs are contiguous');
      total += runs.length[r]!;
    }
    assert.equal(total, 32768, `chunk ${chunk}`);
  }
  // A decoded chunk agrees with its runs voxel by voxel.
  decodeChunk(grid, 100, voxels, runs);
  for (let r = 0; r < runs.count; r++) {
    for (let v = runs.start[r]!; v < runs.start[r]! + runs.length[r]!; v++) {
      assert.equal(voxels.material[v], runs.material[r]);
      assert.equal(voxels.solid[v], runs.solid[r]);
    }
  }
});

test('SmoothGrid: booga voxel counts per material, volumes and bounds match the committed snapshot', () => {
  const expected = JSON.parse(readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'booga-terrain.json'), 'utf8'));
  assert.deepEqual(terrainStats(boogaTerrain().grid), expected);
});

test('SmoothGrid: channels are normalised (Water is water, Air holds nothing) and chunks sit where their offsets say', () => {
  const blob = writeSmoothGrid([
    makeChunk([-2, 0, 5], (x, y) => (y < 4 ? [ROCK, 255] : y === 4 ? [ROCK, 100, 80] : y < 8 ? [WATER, 200] : [AIR, 0])),
    makeChunk([-2, 1, -3], () => [AIR, 0]),
  ].sort((a, b) => a.at[0] - b.at[0] || a.at[1] - b.at[1] || a.at[2] - b.at[2]));
  const grid = readSmoothGrid(blob);
  assert.deepEqual([...grid.coords], [-2, 0, 5, -2, 1, -3]);
  const v = decodeChunk(grid, 0);
  const at = (x: number, y: number, z: number): number => x + 32 * (z + 32 * y);
  assert.deepEqual([v.material[at(3, 2, 3)], v.solid[at(3, 2, 3)], v.water[at(3, 2, 3)]], [ROCK, 255, 0]);
  assert.deepEqual([v.material[at(3, 4, 3)], v.solid[at(3, 4, 3)], v.water[at(3, 4, 3)]], [ROCK, 100, 80]);
  assert.deepEqual([v.material[at(3, 6, 3)], v.solid[at(3, 6, 3)], v.water[at(3, 6, 3)]], [WATER, 0, 200]);
  const stats = terrainStats(grid);
  assert.equal(stats.voxels_per_material.Rock, 5 * 1024);
  assert.equal(stats.water_voxels, 4 * 1024);
  assert.deepEqual(stats.bounds, { min: [-256, 0, 640], max: [-128, 32, 768] });
});

test('SmoothGrid: malformed blobs give a DecodeError with the byte offset, never a hang or a large allocation', () => {
  const good = writeSmoothGrid([makeChunk([0, 0, 0], (x, y, z) => [(x + y + z) % 3 ? ROCK : GRASS, 255 - ((x * 7) % 50)])]);
  const expectError = (blob: Uint8Array, pattern: RegExp, limits?: object): DecodeError => {
    const error = (() => { try { readSmoothGrid(blob, limits); } catch (e) { return e; } return null; })();
    assert.ok(error instanceof DecodeError, `expected a DecodeError for ${pattern}, got ${String(error)}`);
    assert.match(error.message, pattern);
    assert.equal(error.property, 'Terrain.SmoothGrid');
    assert.ok(typeof error.offset === 'number' && error.offset >= 0 && error.offset <= blob.length);
    return error;
  };
  // Truncated anywhere inside: header, chunk header, a run's bytes.
  expectError(good.subarray(0, 1), /1 byte/);
  expectError(good.subarray(0, 9), /truncated chunk header/);
  for (const cut of [14, 15, 100, good.length - 1]) expectError(good.subarray(0, cut), /truncated|ends after|no room for another chunk/);
  // A run that passes the end of the chunk: the last run's count made larger.
  // The chunk ends in a run of 10 Grass voxels; its count byte made 255 claims 256.
  const longRun = writeSmoothGrid([makeChunk([0, 0, 0], (x, y, z) => (y === 31 && z === 31 && x >= 22 ? [GRASS, 255] : [ROCK, 255]))]);
  assert.equal(longRun[longRun.length - 1], 9);
  longRun[longRun.length - 1] = 255;
  expectError(longRun, /passes the end of chunk/);
  // Absurd offsets, repeated or unordered chunks.
  const far = Uint8Array.from(good);
  far[2] = 0x40; // x delta = 0x40ffffff... most significant byte of x
  expectError(far, /past the limit/);
  const twice = new Uint8Array(good.length * 2 - 2);
  twice.set(good);
  twice.set(good.subarray(2), good.length); // second chunk has offset (0, 0, 0): the same chunk again
  expectError(twice, /repeats or comes out of order/);
  expectError(Uint8Array.of(2, 5), /version 2/);
  expectError(Uint8Array.of(1, 9, 0, 0, 0), /exponent 9 exceeds/);
  // A size exponent of 8 claims 16.7M voxels per chunk from a few bytes: refused by the
  // run check long before anything that size exists.
  const before = process.memoryUsage().arrayBuffers;
  expectError(Uint8Array.of(1, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80 | ROCK, 255), /no room for another chunk/);
  assert.ok(process.memoryUsage().arrayBuffers - before < 8 << 20);
  expectError(good, /more than 0 chunks/, { maxChunks: 0 });
  assert.equal(readSmoothGrid(new Uint8Array(0)).count, 0, 'an empty blob is no terrain');
});

test('SmoothGrid: random corruption of real data ends in a result or a DecodeError, quickly', () => {
  const { blob } = boogaTerrain();
  const sample = blob.subarray(0, 40_000);
  let seed = 7;
  const random = (): number => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  const started = Date.now();
  for (let trial = 0; trial < 60; trial++) {
    const bytes = Uint8Array.from(sample);
    for (let k = 0; k < 4; k++) bytes[2 + Math.floor(random() * (bytes.length - 2))] = Math.floor(random() * 256);
    const cut = bytes.subarray(0, 2 + Math.floor(random() * (bytes.length - 2)));
    try {
      const grid = readSmoothGrid(cut);
      terrainStats(grid);
    } catch (error) {
      assert.ok(error instanceof DecodeError, String(error));
    }
  }
  assert.ok(Date.now() - started < 20_000);
});

test('MaterialColors: the place colours by material index, defaults without them, a wrong size is a DecodeError', () => {
  const colors = boogaTerrain().colors!;
  const palette = terrainPalette(colors, [0.5, 0.25, 1]);
  assert.deepEqual([...palette.subarray(GRASS * 3, GRASS * 3 + 3)], [...colors.subarray(6, 9)]);
  assert.deepEqual([...palette.subarray(WATER * 3, WATER * 3 + 3)], [128, 64, 255]);
  const defaults = terrainPalette(null);
  assert.deepEqual([...defaults.subarray(ROCK * 3, ROCK * 3 + 3)], [...DEFAULT_MATERIAL_COLORS.subarray(ROCK * 3, ROCK * 3 + 3)]);
  assert.throws(() => terrainPalette(new Uint8Array(10)), DecodeError);
});

/** A ball of rock (radius 40 studs) straddling 8 chunks, smooth occupancy at its edge. */
function ballGrid(): SmoothGrid {
  const chunks = [];
  for (const cx of [-1, 0]) for (const cy of [-1, 0]) for (const cz of [-1, 0]) {
    chunks.push(makeChunk([cx, cy, cz], (x, y, z) => {
      const wx = (cx * 32 + x + 0.5) * 4, wy = (cy * 32 + y + 0.5) * 4, wz = (cz * 32 + z + 0.5) * 4;
      const d = 40 - Math.hypot(wx, wy, wz);
      const occupancy = Math.max(0, Math.min(255, Math.round((d / 4 + 0.5) * 255)));
      return occupancy > 0 ? [ROCK, occupancy] : [AIR, 0];
    }));
  }
  return readSmoothGrid(writeSmoothGrid(chunks));
}

test('mesher: a closed occupancy gives a closed, manifold surface across chunk borders, inside the voxel bounds', () => {
  const grid = ballGrid();
  const mesh = meshTerrain(grid, { step: 1 });
  const result = closure(mesh.chunks);
  assert.ok(result.triangles > 1000);
  assert.deepEqual({ unbalanced: result.unbalanced, repeated: result.repeated, degenerate: result.degenerate }, { unbalanced: 0, repeated: 0, degenerate: 0 });
  // Every vertex within the voxels that hold rock, and on the ball (40 studs) within a voxel.
  const bounds = terrainStats(grid).bounds!;
  for (const chunk of mesh.chunks) {
    const p = chunk.solid!.positions;
    for (let i = 0; i < p.length; i += 3) {
      const world = [p[i]! + chunk.origin[0], p[i + 1]! + chunk.origin[1], p[i + 2]! + chunk.origin[2]];
      for (let a = 0; a < 3; a++) assert.ok(world[a]! >= bounds.min[a]! && world[a]! <= bounds.max[a]!);
      assert.ok(Math.abs(Math.hypot(world[0]!, world[1]!, world[2]!) - 40) < 4);
    }
    assert.deepEqual(chunk.solid!.groups!.map((g) => g.material), ['Rock']);
  }
  // Normals point outwards.
  const chunk = mesh.chunks[0]!;
  const g = chunk.solid!;
  let outward = 0;
  for (let i = 0; i < g.positions.length; i += 3) {
    const w = [0, 1, 2].map((a) => g.positions[i + a]! + chunk.origin[a]!);
    if (w[0]! * g.normals![i]! + w[1]! * g.normals![i + 1]! + w[2]! * g.normals![i + 2]! > 0) outward++;
  }
  assert.equal(outward, g.positions.length / 3);
});

test('mesher: booga is closed (no holes) at full and coarse steps, with per-material groups and bounded triangles', () => {
  const { grid } = boogaTerrain();
  const part = subGrid(grid, (x, _y, z) => x >= -3 && x <= 0 && z >= -3 && z <= 0);
  for (const step of [1, 2]) {
    const mesh = meshTerrain(part, { step });
    const solid = closure(mesh.chunks);
    assert.equal(solid.unbalanced, 0, `step ${step}: every edge has its reverse`);
    assert.equal(solid.degenerate, 0);
    // One-voxel tunnels through a cell face are the only non-manifold edges: rare.
    assert.ok(solid.repeated < solid.triangles / 1000, `step ${step}: ${solid.repeated} repeated edges`);
    assert.equal(mesh.triangles.solid, solid.triangles);
  }
  const names = new Set(meshTerrain(part, { step: 1 }).chunks.flatMap((c) => c.solid?.groups?.map((g) => g.material) ?? []));
  assert.ok(names.has('Grass') && names.has('Rock'), [...names].join(','));
  // The budget coarsens the sampling until the place fits.
  const full = meshTerrain(part, { step: 1 }).triangles.total;
  const bounded = meshTerrain(part, { maxTriangles: Math.floor(full / 2) });
  assert.ok(bounded.step >= 2 && bounded.triangles.total <= full / 2, `step ${bounded.step}, ${bounded.triangles.total} of ${full}`);
  // A rough surface has more than 3.5 times the triangles of its half-resolution mesh:
  // the full mesh is tried, passes the budget, and the coarser one is kept.
  let seed = 3;
  const random = (): number => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  const rough = readSmoothGrid(writeSmoothGrid([makeChunk([0, 0, 0], (x, y, z) => (y < 8 + 4 * Math.sin(x / 3) * Math.cos(z / 4) + random() * 3 ? [ROCK, 255] : [AIR, 0]))]));
  const roughFull = meshTerrain(rough, { step: 1 }).triangles.total, roughHalf = meshTerrain(rough, { step: 2 }).triangles.total;
  assert.ok(roughFull > roughHalf * 3.5);
  const kept = meshTerrain(rough, { maxTriangles: roughFull - 1 });
  assert.deepEqual([kept.step, kept.triangles.total], [2, roughHalf]);
  assert.equal(meshTerrain(rough, { maxTriangles: roughFull }).step, 1);
});

test('mesher: flat runs merge into few triangles; water is its own surface, hidden against solid', () => {
  // Flat rock ground 10 voxels deep, water 3 voxels deep on half of it.
  const grid = readSmoothGrid(writeSmoothGrid([makeChunk([0, 0, 0], (x, y) => (y < 10 ? [ROCK, 255] : y < 13 && x < 16 ? [WATER, 255] : [AIR, 0]))]));
  const mesh = meshTerrain(grid, { step: 1 });
  // Unmerged, the slab's 3,328 voxel faces would be 6,656 triangles, the water's 800 faces 1,600.
  assert.ok(mesh.triangles.solid < 2000, `${mesh.triangles.solid} solid triangles`);
  assert.ok(mesh.triangles.water > 0 && mesh.triangles.water < 1000, `${mesh.triangles.water} water triangles`);
  assert.equal(closure(mesh.chunks).unbalanced, 0);
  const water = mesh.chunks[0]!.water!;
  assert.deepEqual(water.groups!.map((g) => g.material), ['Water']);
  // No water face lies on the rock (y = 40 studs is the rock top).
  for (let i = 1; i < water.positions.length; i += 3) assert.ok(water.positions[i]! > 40.5);
});

test('heightfield: the top of the solid, its material and the water above it, column by column', () => {
  const grid = readSmoothGrid(writeSmoothGrid([
    makeChunk([0, 0, 0], (x, y) => (y < 5 + (x >> 3) ? [x < 16 ? GRASS : ROCK, 255] : y < 12 ? [WATER, 255] : [AIR, 0])),
  ]));
  const field = terrainHeightfield(grid)!;
  assert.equal(field.width, 32);
  assert.equal(field.cellSize, 4);
  assert.equal(field.top[0], 5 * 4);
  assert.equal(field.top[31], (5 + 3) * 4);
  assert.equal(field.material[0], GRASS);
  assert.equal(field.material[31], ROCK);
  assert.equal(field.water[0], 12 * 4);
  const coarse = terrainHeightfield(grid, { cellVoxels: 4, region: { minX: 0, minZ: 0, maxX: 63, maxZ: 63 } })!;
  assert.equal(coarse.width, 4);
  assert.equal(coarse.cellSize, 16);
  // Booga: every top inside the place's voxel bounds.
  const { grid: big } = boogaTerrain();
  const bounds = terrainStats(big).bounds!;
  const top = terrainHeightfield(big, { cellVoxels: 4 })!;
  let solid = 0;
  for (const h of top.top) if (h > -Infinity) { solid++; assert.ok(h >= bounds.min[1] && h <= bounds.max[1]); }
  assert.ok(solid > 10_000);
});

/** The heightfield by brute force: every voxel of every chunk decoded, each sampled column scanned from the top. */
function bruteHeightfield(grid: SmoothGrid, k: number): { top: Float32Array; material: Uint8Array; water: Float32Array; width: number } {
  const side = grid.side;
  let minX = Infinity, maxX = -Infinity, minZ = Infinity, maxZ = -Infinity;
  for (let c = 0; c < grid.count; c++) {
    minX = Math.min(minX, grid.coords[c * 3]! * side); maxX = Math.max(maxX, grid.coords[c * 3]! * side + side - 1);
    minZ = Math.min(minZ, grid.coords[c * 3 + 2]! * side); maxZ = Math.max(maxZ, grid.coords[c * 3 + 2]! * side + side - 1);
  }
  const originX = Math.floor(minX / k) * k, originZ = Math.floor(minZ / k) * k;
  const width = Math.floor((maxX - originX) / k) + 1, depth = Math.floor((maxZ - originZ) / k) + 1;
  // Per sampled column: the highest solid (y + occupancy) and the highest water at or above it.
  const top = new Float32Array(width * depth).fill(-Infinity), water = new Float32Array(width * depth).fill(-Infinity);
  const topY = new Float64Array(width * depth).fill(-Infinity);
  const material = new Uint8Array(width * depth);
  const wetTop = new Float64Array(width * depth).fill(-Infinity);
  const voxels = newChunkVoxels(grid), runs = newRuns(grid);
  for (let c = 0; c < grid.count; c++) {
    decodeChunk(grid, c, voxels, runs);
    const [cx, cy, cz] = [grid.coords[c * 3]! * side, grid.coords[c * 3 + 1]! * side, grid.coords[c * 3 + 2]! * side];
    for (let lz = 0; lz < side; lz++) {
      if ((cz + lz - originZ) % k !== 0) continue;
      for (let lx = 0; lx < side; lx++) {
        if ((cx + lx - originX) % k !== 0) continue;
        const cell = (cx + lx - originX) / k + width * ((cz + lz - originZ) / k);
        for (let ly = side - 1; ly >= 0; ly--) {
          const v = lx + side * (lz + side * ly);
          const y = cy + ly;
          const m = voxels.material[v]!, solid = voxels.solid[v]!, w = voxels.water[v]!;
          if (w > 0 && y > wetTop[cell]! && y >= topY[cell]!) { wetTop[cell] = y; water[cell] = (y + w / 255) * 4; }
          if (m !== AIR && m !== WATER && solid > 0 && y > topY[cell]!) {
            topY[cell] = y; top[cell] = (y + solid / 255) * 4; material[cell] = m;
          }
        }
      }
    }
  }
  for (let i = 0; i < water.length; i++) if (!(wetTop[i]! >= topY[i]!) || water[i]! <= top[i]!) water[i] = -Infinity;
  return { top, material, water, width };
}

test('heightfield: booga (read top-down through the layer index) equals every voxel decoded and scanned', () => {
  const { grid } = boogaTerrain();
  for (const k of [3, 1]) {
    const field = terrainHeightfield(grid, { cellVoxels: k })!;
    const brute = bruteHeightfield(grid, k);
    assert.equal(field.width, brute.width);
    let differ = 0, solid = 0, wet = 0;
    for (let i = 0; i < field.top.length; i++) {
      if (field.top[i] !== brute.top[i] || field.water[i] !== brute.water[i] || (field.top[i]! > -Infinity && field.material[i] !== brute.material[i])) differ++;
      if (field.top[i]! > -Infinity) solid++;
      if (field.water[i]! > -Infinity) wet++;
    }
    assert.equal(differ, 0, `cell size ${k}: ${differ} cells differ`);
    assert.ok(solid > 10_000 && wet > 1_000, `${solid} solid and ${wet} wet cells`);
    if (k === 1) break;
  }
});

test('mesher: one pass takes at most maxMeshSamples samples, and maxSamplesPerEdge along a chunk edge, so large chunks start at a coarser step', () => {
  // Two chunks of 64³ voxels (Studio writes 32³; the engine reads up to 256³): rolling rock ground.
  const ground = (x: number, y: number, z: number): [number, number] => (y < 20 + 6 * Math.sin(x / 9) * Math.cos(z / 7) ? [ROCK, 255] : [AIR, 0]);
  const grid = readSmoothGrid(writeSmoothGrid([makeChunk([0, 0, 0], ground, 64), makeChunk([1, 0, 0], ground, 64)], 6));
  assert.equal(meshTerrain(grid).step, 1, '524,288 samples: within the default bound');
  const capped = meshTerrain(grid, { limits: { maxMeshSamples: 100_000 } });
  assert.equal(capped.step, 2, 'the finest step whose pass has at most 100,000 samples (65,536)');
  assert.ok(capped.triangles.total > 0);
  assert.equal(capped.triangles.total, meshTerrain(grid, { step: 2 }).triangles.total);
  assert.equal(meshTerrain(grid, { limits: { maxMeshSamples: 2 * 64 ** 3 } }).step, 1, 'a bound the full pass meets');
  assert.equal(meshTerrain(grid, { limits: { maxSamplesPerEdge: 32 } }).step, 2, 'at most 32 samples along a chunk edge');
  assert.equal(meshTerrain(grid, { limits: { maxSamplesPerEdge: 16 } }).step, 4);
  assert.equal(meshTerrain(grid, { limits: { maxMeshSamples: 1 } }).step >= 32, true, 'at least one sample per chunk');
});

/** SHA-256 of a terrain mesh's chunks: where each is, and its positions, normals, indices and groups. */
function meshDigest(mesh: TerrainMesh): string {
  const hash = createHash('sha256');
  for (const chunk of mesh.chunks) {
    hash.update(JSON.stringify([chunk.chunk, chunk.origin]));
    for (const g of [chunk.solid, chunk.water]) {
      if (!g) { hash.update('-'); continue; }
      for (const array of [g.positions, g.normals!, g.indices]) hash.update(new Uint8Array(array.buffer, array.byteOffset, array.byteLength));
      hash.update(JSON.stringify(g.groups));
    }
  }
  return hash.digest('hex');
}

/** The box around a mesh's solid vertices in world studs: min x, y, z, max x, y, z. */
function solidBox(mesh: TerrainMesh): number[] {
  const box = [Infinity, Infinity, Infinity, -Infinity, -Infinity, -Infinity];
  for (const chunk of mesh.chunks) {
    const p = chunk.solid?.positions ?? [];
    for (let i = 0; i < p.length; i++) {
      const v = p[i]! + chunk.origin[i % 3]!;
      box[i % 3] = Math.min(box[i % 3]!, v);
      box[3 + (i % 3)] = Math.max(box[3 + (i % 3)]!, v);
    }
  }
  return box;
}

/** One 256³ chunk (chunk size exponent 8, which the engine reads): grass below half height, air above; a run per row. */
let bigChunk: Uint8Array | null = null;
function bigChunkBlob(): Uint8Array {
  bigChunk ??= writeSmoothGrid([makeChunk([0, 0, 0], (_x, y) => (y < 128 ? [GRASS, 255] : [AIR, 0]), 256)], 8);
  return bigChunk;
}

test('mesher: a grid of many 256³ chunks is sampled sparsely: a pass reads the sampled layers\' runs and its samples, not every voxel', () => {
  // 24 such chunks are 403 million voxels, three times maxMeshVoxels; a 1 MB place of 2,000
  // held a worker past the two-minute task deadline when every pass decoded them all.
  const grid = readSmoothGrid(repeatChunk(bigChunkBlob(), 24));
  const limits = DEFAULT_TERRAIN_LIMITS;
  assert.ok(grid.count * grid.chunkVoxels >= 3 * limits.maxMeshVoxels);
  let storedRuns = 0;
  const runs = newRuns(grid);
  for (let chunk = 0; chunk < grid.count; chunk++) storedRuns += readRuns(grid, chunk, runs).count;
  assert.equal(storedRuns, 24 * 256 * 256);

  const mesh = meshTerrain(grid);
  assert.equal(mesh.sampling, 'point');
  assert.equal(mesh.step, 4, 'the finest step within maxSamplesPerEdge');
  assert.equal(mesh.work.voxels, 0, 'no chunk is decoded whole');
  // Each pass parses the runs of one layer in `step` (256 a layer here): at step 4 a quarter of
  // what the blob holds, at step 8 (tried first) an eighth. Its samples are within maxMeshSamples.
  assert.ok(mesh.work.passes >= 2 && mesh.work.passes <= 4, `${mesh.work.passes} passes`);
  assert.ok(mesh.work.runs <= mesh.work.passes * storedRuns / mesh.step, `${mesh.work.runs} runs parsed in ${mesh.work.passes} passes`);
  assert.ok(mesh.work.samples <= mesh.work.passes * grid.count * (grid.side / mesh.step) ** 3);
  assert.ok(mesh.work.samples <= mesh.work.passes * limits.maxMeshSamples);
  // The slab still shows: closed, its top at 128 voxels (512 studs).
  assert.equal(mesh.chunks.length, 24);
  assert.equal(closure(mesh.chunks).unbalanced, 0);
  let top = -Infinity;
  for (const chunk of mesh.chunks) for (let i = 1; i < chunk.solid!.positions.length; i += 3) top = Math.max(top, chunk.solid!.positions[i]!);
  assert.ok(Math.abs(top - 512) <= 2, `top at ${top} studs`);

  // Where the voxels fit the bound the same chunks are averaged; a step-aligned slab meshes alike either way.
  const two = readSmoothGrid(repeatChunk(bigChunkBlob(), 2));
  const averaged = meshTerrain(two, { step: 8 });
  const sparse = meshTerrain(two, { step: 8, limits: { maxMeshVoxels: two.chunkVoxels } });
  assert.deepEqual([averaged.sampling, averaged.work.voxels, averaged.work.runs], ['mean', 2 * 2 * two.chunkVoxels, 0]);
  assert.deepEqual([sparse.sampling, sparse.work.voxels], ['point', 0]);
  assert.equal(meshDigest(sparse), meshDigest(averaged));
});

test('mesher: sparse sampling keeps the surface closed across chunk borders and near the averaged one', () => {
  const ground = (x: number, y: number, z: number): [number, number] => (y < 20 + 6 * Math.sin(x / 9) * Math.cos(z / 7) ? [ROCK, 255] : [AIR, 0]);
  const grid = readSmoothGrid(writeSmoothGrid([makeChunk([0, 0, 0], ground, 64), makeChunk([1, 0, 0], ground, 64), makeChunk([1, 0, 1], ground, 64)], 6));
  for (const step of [2, 4]) {
    const averaged = meshTerrain(grid, { step });
    const sparse = meshTerrain(grid, { step, limits: { maxMeshVoxels: grid.chunkVoxels } });
    assert.equal(sparse.sampling, 'point');
    const solid = closure(sparse.chunks);
    assert.equal(solid.unbalanced, 0, `step ${step}: every edge has its reverse`);
    assert.equal(solid.degenerate, 0);
    assert.ok(Math.abs(sparse.triangles.total - averaged.triangles.total) < averaged.triangles.total * 0.25,
      `step ${step}: ${sparse.triangles.total} triangles sampled sparsely, ${averaged.triangles.total} averaged`);
    // The same ground: its box within a sample (step × 4 studs) of the averaged one's on every axis.
    const [a, b] = [solidBox(averaged), solidBox(sparse)];
    for (let i = 0; i < 6; i++) assert.ok(Math.abs(a[i]! - b[i]!) <= step * 4, `step ${step}: box ${b.join(',')} against ${a.join(',')}`);
  }
});

test('scene.glb: terrain too large to average says so in the notes and on its node', () => {
  // 9 chunks of 256³: 151 million voxels, past maxMeshVoxels.
  const smoothGrid = Buffer.from(repeatChunk(bigChunkBlob(), 9)).toString('base64');
  const dom = handDom([{ class: 'Workspace', children: [{ class: 'Terrain', props: { SmoothGrid: ['String', { base64: smoothGrid }] } }] }]);
  const { doc, stats } = sceneDocument(assembleScene(dom));
  assert.equal(stats.terrain?.sampling, 'point');
  assert.ok(stats.notes.some((note) => /^terrain sampled sparsely: its 9 chunks hold 150994944 voxels, more than the 134217728 .*\(maxMeshVoxels\)/.test(note)), stats.notes.join('\n'));
  const node = doc.nodes.map((json) => JSON.parse(json) as { name?: string; extras?: Record<string, unknown> }).find((n) => n.name === 'Terrain')!;
  assert.deepEqual([node.extras?.kind, node.extras?.sampling, node.extras?.step], ['terrain', 'point', 4]);
});

test('mesher: real terrain (booga: 1,633 Studio chunks) is averaged from every voxel and meshes exactly as before', () => {
  const { grid } = boogaTerrain();
  assert.ok(grid.count * grid.chunkVoxels <= DEFAULT_TERRAIN_LIMITS.maxMeshVoxels);
  const mesh = meshTerrain(grid);
  assert.equal(mesh.sampling, 'mean');
  assert.equal(mesh.step, 2);
  assert.deepEqual(mesh.triangles, { solid: 514_294, water: 7_292, total: 521_586 });
  assert.equal(mesh.work.voxels, mesh.work.passes * grid.count * 32_768);
  // The digest of the mesh made before sparse sampling existed (the same in scene.glb's bytes).
  assert.equal(meshDigest(mesh), 'e9b4ed37e570665697e7b14c4f86b89798467ffd98d4860da93fd272ab503cf8');
});
