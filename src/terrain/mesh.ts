/**
 * Terrain as triangle meshes: one solid and one water `MeshGeometry` per chunk
 * (128 studs at the default chunk size), positions relative to the chunk's minimum
 * corner (`origin`, studs), solid triangles grouped by material (group `material` is
 * the terrain material name), water as its own surface. The water surface is drawn
 * where water meets air or empty space; where it meets solid terrain it is hidden and
 * left out, so it is open along shores by design. The solid surface is closed.
 *
 * The triangle count is bounded: when a place's surface at full resolution (one
 * sample per 4-stud voxel) would pass `maxTriangles`, it is meshed again from coarser
 * samples (2, 4, ... voxels per sample: occupancy averaged, the densest material kept)
 * until it fits; `step` says which was used.
 *
 * Each chunk needs a one-sample border from its 26 neighbours. A first pass keeps
 * every chunk's six boundary layers (6·N² samples) instead of its N³ voxels, so
 * memory stays a small fraction of the voxel count.
 *
 * What a pass reads is bounded too: averaging decodes every voxel of every chunk
 * whatever the step, so only a grid of at most `maxMeshVoxels` voxels is averaged
 * (every Studio terrain of up to 4,096 chunks). A larger one is sampled sparsely
 * (`sampling: 'point'`): each sample is the one voxel near its middle, read from the
 * runs of the sampled layers alone through the grid's layer index, so a pass costs the
 * bytes of those layers plus its samples, never the voxel count. `work` counts both.
 */
import type { MeshGeometry, MeshGroup } from '../geometry/mesh.js';
import type { Vec3 } from '../parser/values.js';
import { resolveTerrainLimits, type TerrainLimits } from './limits.js';
import { AIR, MATERIAL_SLOTS, WATER, terrainMaterialName } from './materials.js';
import {
  VOXEL_STUDS, decodeChunk, newChunkVoxels, newRuns, readLayerRuns, type ChunkVoxels, type SmoothGrid, type VoxelRuns,
} from './smooth-grid.js';
import { FloatBuilder, IndexBuilder, newNetsScratch, surfaceNets, type NetsOutput, type SampleBlock } from './surface-nets.js';

export interface TerrainChunkMesh {
  /** Chunk coordinates (chunk units). */
  chunk: Vec3;
  /** Studs: the chunk's minimum corner; positions are relative to it. */
  origin: Vec3;
  solid: MeshGeometry | null;
  water: MeshGeometry | null;
}

export interface TerrainMesh {
  /** Voxels per sample along each axis: 1 at full resolution. */
  step: number;
  /**
   * `mean`: each sample averages the step³ voxels it covers (every voxel decoded);
   * `point`: the grid has more than `maxMeshVoxels` voxels, so each sample is one voxel.
   */
  sampling: 'mean' | 'point';
  chunks: TerrainChunkMesh[];
  triangles: { solid: number; water: number; total: number };
  /** What the meshing read, over every pass (each step tried takes two). */
  work: TerrainMeshWork;
}

export interface TerrainMeshWork {
  /** Passes over the chunks. */
  passes: number;
  /** Voxels decoded one by one (averaging): chunks × side³ a pass; 0 when sampled sparsely. */
  voxels: number;
  /** Runs parsed when sampled sparsely (those of the sampled layers). */
  runs: number;
  /** Samples taken. */
  samples: number;
}

export interface TerrainMeshOptions {
  /** Overrides the limit's triangle budget. */
  maxTriangles?: number;
  /** Mesh at this step only (no coarsening). */
  step?: number;
  limits?: Partial<TerrainLimits>;
}

export function meshTerrain(grid: SmoothGrid, options: TerrainMeshOptions = {}): TerrainMesh {
  const limits = resolveTerrainLimits(options.limits);
  const budget = options.maxTriangles ?? limits.maxTriangles;
  // Known from the chunk count before anything is decoded.
  const sampling = grid.count * grid.chunkVoxels > limits.maxMeshVoxels ? 'point' : 'mean';
  const work: TerrainMeshWork = { passes: 0, voxels: 0, runs: 0, samples: 0 };
  const meshAtStep = (step: number, most: number): TerrainMesh | null => meshPasses(grid, step, most, sampling, work);
  if (options.step !== undefined) {
    if (!(options.step >= 1 && options.step <= grid.side && grid.side % options.step === 0)) {
      throw new RangeError(`step ${options.step} must divide the chunk edge of ${grid.side} voxels`);
    }
    return meshAtStep(options.step, Infinity)!;
  }
  // Mesh at twice the step first (an eighth of the samples): a surface at full
  // resolution has about four times its triangles, so a place far over budget skips the
  // full mesh instead of abandoning it near the end; a miss still falls back correctly.
  let fine = 1;
  while (fine < grid.side && (grid.side / fine > limits.maxSamplesPerEdge || grid.count * (grid.side / fine) ** 3 > limits.maxMeshSamples)) fine *= 2;
  for (;;) {
    const coarseStep = fine * 2;
    if (coarseStep > grid.side) return meshAtStep(fine, Infinity)!;
    const coarse = meshAtStep(coarseStep, coarseStep >= grid.side ? Infinity : budget);
    if (!coarse) {
      // Even the coarser step is over budget: try the next pair up.
      fine = Math.min(grid.side, coarseStep * 2);
      continue;
    }
    if (coarse.triangles.total * 3.5 <= budget) {
      const mesh = meshAtStep(fine, budget);
      if (mesh) return mesh;
    }
    return coarse;
  }
}

const CHANNELS = 3;

/**
 * Meshes every chunk at one step (two passes, counted in `work`, which the result
 * shares); null as soon as the budget is passed.
 */
function meshPasses(grid: SmoothGrid, step: number, budget: number, sampling: 'mean' | 'point', work: TerrainMeshWork): TerrainMesh | null {
  const n = grid.side / step;
  const P = n + 2;
  const face = n * n;
  const samples = newSamples(n);
  let sampleChunk: (chunk: number) => void;
  if (sampling === 'mean') {
    const voxels = newChunkVoxels(grid);
    const runs = newRuns(grid);
    sampleChunk = (chunk) => {
      decodeChunk(grid, chunk, voxels, runs);
      sample(voxels, grid.side, step, samples);
      work.voxels += grid.chunkVoxels;
      work.samples += n ** 3;
    };
  } else {
    const runs = newRuns(grid, grid.side * grid.side);
    sampleChunk = (chunk) => {
      work.runs += pointSample(grid, chunk, step, runs, samples);
      work.samples += n ** 3;
    };
  }

  // Pass 1: every chunk's six boundary layers, and where each chunk is.
  work.passes++;
  const index = new Map<string, number>();
  const shells = new Uint8Array(grid.count * 6 * CHANNELS * face);
  for (let chunk = 0; chunk < grid.count; chunk++) {
    index.set(key(grid.coords[chunk * 3]!, grid.coords[chunk * 3 + 1]!, grid.coords[chunk * 3 + 2]!), chunk);
    sampleChunk(chunk);
    const shell = shells.subarray(chunk * 6 * CHANNELS * face, (chunk + 1) * 6 * CHANNELS * face);
    for (let axis = 0; axis < 3; axis++) {
      for (let high = 0; high < 2; high++) {
        const layer = high ? n - 1 : 0;
        for (let v = 0; v < n; v++) {
          for (let u = 0; u < n; u++) {
            const s = sampleIndex(n, axis, layer, u, v);
            const at = ((axis * 2 + high) * CHANNELS) * face + u + n * v;
            shell[at] = samples.material[s]!;
            shell[at + face] = samples.solid[s]!;
            shell[at + 2 * face] = samples.water[s]!;
          }
        }
      }
    }
  }

  // Pass 2: each chunk's padded block, then its solid and water surfaces.
  const block = { material: new Uint8Array(P ** 3), solid: new Uint8Array(P ** 3), water: new Uint8Array(P ** 3), blocked: new Uint8Array(P ** 3) };
  const scratch = newNetsScratch(n);
  const unit = step * VOXEL_STUDS;
  const chunks: TerrainChunkMesh[] = [];
  const neighbours = new Int32Array(27);
  let solidTriangles = 0, waterTriangles = 0;
  work.passes++;
  for (let chunk = 0; chunk < grid.count; chunk++) {
    const cx = grid.coords[chunk * 3]!, cy = grid.coords[chunk * 3 + 1]!, cz = grid.coords[chunk * 3 + 2]!;
    for (let d = 0; d < 27; d++) {
      const dx = (d % 3) - 1, dy = (Math.floor(d / 3) % 3) - 1, dz = Math.floor(d / 9) - 1;
      neighbours[d] = index.get(key(cx + dx, cy + dy, cz + dz)) ?? -1;
    }
    sampleChunk(chunk);
    fillBlock(block, samples, shells, neighbours, n);

    const solidOut = newOutput(MATERIAL_SLOTS);
    // Neighbour slots 12, 10 and 4 are the chunks below on x, y and z.
    const ownsLowBorder: [boolean, boolean, boolean] = [neighbours[12]! < 0, neighbours[10]! < 0, neighbours[4]! < 0];
    const solidCount = surfaceNets({ n, value: block.solid, material: block.material, blocked: null, ownsLowBorder }, scratch, solidOut, unit);
    const waterOut = newOutput(1);
    const waterBlock: SampleBlock = { n, value: block.water, material: ZEROS(P ** 3), blocked: block.blocked, ownsLowBorder };
    const waterCount = surfaceNets(waterBlock, scratch, waterOut, unit);
    solidTriangles += solidCount;
    waterTriangles += waterCount;
    if (solidTriangles + waterTriangles > budget) return null;
    if (solidCount === 0 && waterCount === 0) continue;
    const span = grid.side * VOXEL_STUDS;
    chunks.push({
      chunk: [cx, cy, cz],
      origin: [cx * span, cy * span, cz * span],
      solid: solidCount ? geometryOf(solidOut, (m) => terrainMaterialName(m)) : null,
      water: waterCount ? geometryOf(waterOut, () => 'Water') : null,
    });
  }
  return { step, sampling, chunks, triangles: { solid: solidTriangles, water: waterTriangles, total: solidTriangles + waterTriangles }, work };
}

let zeros = new Uint8Array(0);
/** A shared all-zero material array (water has one material). */
function ZEROS(length: number): Uint8Array {
  if (zeros.length < length) zeros = new Uint8Array(length);
  return zeros.subarray(0, length);
}

function key(x: number, y: number, z: number): string {
  return `${x},${y},${z}`;
}

interface Samples { material: Uint8Array; solid: Uint8Array; water: Uint8Array }

function newSamples(n: number): Samples {
  return { material: new Uint8Array(n ** 3), solid: new Uint8Array(n ** 3), water: new Uint8Array(n ** 3) };
}

/** Samples are indexed x + n·(y + n·z), like the padded block. */
function sampleIndex(n: number, axis: number, layer: number, u: number, v: number): number {
  // u, v are the other two axes in increasing order.
  if (axis === 0) return layer + n * (u + n * v);
  if (axis === 1) return u + n * (layer + n * v);
  return u + n * (v + n * layer);
}

/**
 * Chunk voxels (x + side·(z + side·y)) to samples (x + n·(y + n·z)): one voxel each at
 * step 1; at step s the mean occupancy of s³ voxels and the material with the most solid.
 */
function sample(voxels: ChunkVoxels, side: number, step: number, out: Samples): void {
  const n = side / step;
  const { material, solid, water } = voxels;
  if (step === 1) {
    for (let y = 0; y < n; y++) {
      for (let z = 0; z < n; z++) {
        const from = side * (z + side * y);
        const to = n * (y + n * z);
        out.material.set(material.subarray(from, from + side), to);
        out.solid.set(solid.subarray(from, from + side), to);
        out.water.set(water.subarray(from, from + side), to);
      }
    }
    return;
  }
  const count = step ** 3;
  for (let sz = 0; sz < n; sz++) {
    for (let sy = 0; sy < n; sy++) {
      for (let sx = 0; sx < n; sx++) {
        let solidSum = 0, waterSum = 0, best = -1, bestMaterial = AIR;
        for (let y = sy * step; y < (sy + 1) * step; y++) {
          for (let z = sz * step; z < (sz + 1) * step; z++) {
            let v = sx * step + side * (z + side * y);
            for (let x = 0; x < step; x++, v++) {
              const s = solid[v]!;
              solidSum += s;
              waterSum += water[v]!;
              if (s > best) { best = s; bestMaterial = material[v]!; }
            }
          }
        }
        const at = sx + n * (sy + n * sz);
        out.solid[at] = Math.round(solidSum / count);
        out.water[at] = Math.round(waterSum / count);
        out.material[at] = best > 0 ? bestMaterial : waterSum > 0 ? WATER : AIR;
      }
    }
  }
}

/**
 * Chunk `chunk` sampled sparsely: sample (sx, sy, sz) is the voxel ((s-1)/2 past its
 * minimum corner on each axis, rounded down), with the material rule of `sample` for one
 * voxel. Only the sampled layers' runs are parsed (the layer index says where each layer's
 * first run starts), and samples are taken in storage order as the runs go by, so the cost
 * is those runs plus the samples. Returns the runs parsed.
 */
function pointSample(grid: SmoothGrid, chunk: number, step: number, runs: VoxelRuns, out: Samples): number {
  const side = grid.side;
  const n = side / step;
  const offset = (step - 1) >> 1;
  let parsed = 0;
  for (let sy = 0; sy < n; sy++) {
    const y = sy * step + offset;
    readLayerRuns(grid, chunk, y, y, runs);
    parsed += runs.count;
    let r = 0;
    let end = runs.start[0]! + runs.length[0]!;
    for (let sz = 0; sz < n; sz++) {
      const row = side * (sz * step + offset + side * y);
      for (let sx = 0; sx < n; sx++) {
        const v = row + sx * step + offset;
        while (end <= v) { r++; end = runs.start[r]! + runs.length[r]!; }
        const at = sx + n * (sy + n * sz);
        const solid = runs.solid[r]!, water = runs.water[r]!;
        out.solid[at] = solid;
        out.water[at] = water;
        out.material[at] = solid > 0 ? runs.material[r]! : water > 0 ? WATER : AIR;
      }
    }
  }
  return parsed;
}

/** The chunk's samples inside, its neighbours' boundary layers around (empty where no neighbour). */
function fillBlock(
  block: { material: Uint8Array; solid: Uint8Array; water: Uint8Array; blocked: Uint8Array },
  samples: Samples, shells: Uint8Array, neighbours: Int32Array, n: number,
): void {
  const P = n + 2;
  const face = n * n;
  const local = [0, 0, 0];
  for (let pz = 0; pz < P; pz++) {
    for (let py = 0; py < P; py++) {
      const edgeRow = pz === 0 || pz === P - 1 || py === 0 || py === P - 1;
      for (let px = 0; px < P; px++) {
        const at = px + P * (py + P * pz);
        if (!edgeRow && px > 0 && px < P - 1) {
          const s = (px - 1) + n * ((py - 1) + n * (pz - 1));
          block.material[at] = samples.material[s]!;
          block.solid[at] = samples.solid[s]!;
          block.water[at] = samples.water[s]!;
          continue;
        }
        local[0] = px - 1; local[1] = py - 1; local[2] = pz - 1;
        const dx = local[0] < 0 ? -1 : local[0] >= n ? 1 : 0;
        const dy = local[1] < 0 ? -1 : local[1] >= n ? 1 : 0;
        const dz = local[2] < 0 ? -1 : local[2] >= n ? 1 : 0;
        const neighbour = neighbours[(dx + 1) + 3 * (dy + 1) + 9 * (dz + 1)]!;
        if (neighbour < 0) {
          block.material[at] = AIR; block.solid[at] = 0; block.water[at] = 0;
          continue;
        }
        // The neighbour's sample, found in the boundary layer of the first axis that left this chunk.
        const d = [dx, dy, dz];
        const q = [local[0] - dx * n, local[1] - dy * n, local[2] - dz * n];
        const axis = dx ? 0 : dy ? 1 : 2;
        const high = d[axis]! < 0 ? 1 : 0;
        const u = q[axis === 0 ? 1 : 0]!, v = q[axis === 2 ? 1 : 2]!;
        const base = (neighbour * 6 + axis * 2 + high) * CHANNELS * face + u + n * v;
        block.material[at] = shells[base]!;
        block.solid[at] = shells[base + face]!;
        block.water[at] = shells[base + 2 * face]!;
      }
    }
  }
  const total = P ** 3;
  for (let i = 0; i < total; i++) block.blocked[i] = block.solid[i]! >= 128 ? 1 : 0;
}

function newOutput(materials: number): NetsOutput {
  return { positions: new FloatBuilder(), normals: new FloatBuilder(), indices: Array.from({ length: materials }, () => new IndexBuilder()) };
}

function geometryOf(out: NetsOutput, name: (material: number) => string): MeshGeometry {
  let total = 0;
  for (const list of out.indices) total += list.length;
  const indices = new Uint32Array(total);
  const groups: MeshGroup[] = [];
  let at = 0;
  out.indices.forEach((list, material) => {
    if (list.length === 0) return;
    indices.set(list.data.subarray(0, list.length), at);
    groups.push({ start: at, count: list.length, material: name(material) });
    at += list.length;
  });
  return { positions: out.positions.take(), normals: out.normals.take(), indices, groups };
}
