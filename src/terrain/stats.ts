/**
 * What the analysis report says about a place's terrain, computed from the runs
 * without decoding voxels one by one: voxels per material, solid and water volume,
 * and the box that holds every voxel with something in it.
 */
import type { Vec3 } from '../parser/values.js';
import { AIR, MATERIAL_SLOTS, WATER, terrainMaterialName } from './materials.js';
import { VOXEL_STUDS, newRuns, readRuns, type SmoothGrid } from './smooth-grid.js';

export interface TerrainStats {
  chunks: number;
  /** Voxels per material name, every material present except Air, in material-index order. */
  voxels_per_material: Record<string, number>;
  /** Voxels of a solid material (neither Air nor Water). */
  solid_voxels: number;
  /** Voxels holding water: Water voxels and solid voxels that share their cell with water. */
  water_voxels: number;
  /** Cubic studs: the sum of solid occupancy × 64 (a voxel is 4³ studs). */
  solid_volume: number;
  /** Cubic studs of water. */
  water_volume: number;
  /** Studs: the box around every voxel holding solid or water; null for an empty grid. */
  bounds: { min: Vec3; max: Vec3 } | null;
}

export function terrainStats(grid: SmoothGrid): TerrainStats {
  const perMaterial = new Float64Array(MATERIAL_SLOTS);
  let waterVoxels = 0;
  let solidVolume = 0;
  let waterVolume = 0;
  const lo = [Infinity, Infinity, Infinity];
  const hi = [-Infinity, -Infinity, -Infinity];
  const runs = newRuns(grid);
  const L = grid.chunkLog2;
  const mask = grid.side - 1;
  for (let chunk = 0; chunk < grid.count; chunk++) {
    readRuns(grid, chunk, runs);
    const base = [grid.coords[chunk * 3]! * grid.side, grid.coords[chunk * 3 + 1]! * grid.side, grid.coords[chunk * 3 + 2]! * grid.side];
    for (let r = 0; r < runs.count; r++) {
      const material = runs.material[r]!;
      const water = runs.water[r]!;
      if (material === AIR && water === 0) continue;
      const length = runs.length[r]!;
      perMaterial[material]! += length; // a material index has 6 bits: < MATERIAL_SLOTS
      solidVolume += runs.solid[r]! * length;
      if (water > 0) {
        waterVoxels += length;
        waterVolume += water * length;
      }
      // The run's box: whole rows or layers once it wraps.
      const first = runs.start[r]!;
      const last = first + length - 1;
      const y0 = first >> (2 * L), y1 = last >> (2 * L);
      let z0 = (first >> L) & mask, z1 = (last >> L) & mask;
      let x0 = first & mask, x1 = last & mask;
      if (y0 !== y1) { z0 = 0; z1 = mask; x0 = 0; x1 = mask; }
      else if (z0 !== z1) { x0 = 0; x1 = mask; }
      extend(lo, hi, 0, base[0]! + x0, base[0]! + x1);
      extend(lo, hi, 1, base[1]! + y0, base[1]! + y1);
      extend(lo, hi, 2, base[2]! + z0, base[2]! + z1);
    }
  }
  const voxels_per_material: Record<string, number> = {};
  for (let m = 0; m < MATERIAL_SLOTS; m++) {
    if (m !== AIR && perMaterial[m]! > 0) voxels_per_material[terrainMaterialName(m)] = perMaterial[m]!;
  }
  let solidVoxels = 0;
  for (let m = 0; m < MATERIAL_SLOTS; m++) if (m !== AIR && m !== WATER) solidVoxels += perMaterial[m]!;
  const cell = VOXEL_STUDS ** 3 / 255;
  return {
    chunks: grid.count,
    voxels_per_material,
    solid_voxels: solidVoxels,
    water_voxels: waterVoxels,
    solid_volume: round3(solidVolume * cell),
    water_volume: round3(waterVolume * cell),
    bounds: lo[0]! <= hi[0]!
      ? {
        min: [lo[0]! * VOXEL_STUDS, lo[1]! * VOXEL_STUDS, lo[2]! * VOXEL_STUDS],
        max: [(hi[0]! + 1) * VOXEL_STUDS, (hi[1]! + 1) * VOXEL_STUDS, (hi[2]! + 1) * VOXEL_STUDS],
      }
      : null,
  };
}

function extend(lo: number[], hi: number[], axis: number, from: number, to: number): void {
  if (from < lo[axis]!) lo[axis] = from;
  if (to > hi[axis]!) hi[axis] = to;
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
