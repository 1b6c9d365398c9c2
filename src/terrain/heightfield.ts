/**
 * The terrain as seen from above: per column of cells, the height of the topmost
 * solid surface, its material, and the height of any water above it. This is what
 * the preview picture draws; it costs about one visit per surface voxel, not one per
 * voxel: chunks are read top-down per chunk column and runs are walked backwards
 * (voxels are stored Y-outermost), so a column is settled at its first solid voxel
 * and chunks under a fully settled chunk column are skipped unread.
 */
import { AIR, WATER } from './materials.js';
import { VOXEL_STUDS, newRuns, readRuns, type SmoothGrid } from './smooth-grid.js';

export interface TerrainHeightfield {
  /** Studs: the minimum x and z corner of cell (0, 0). */
  originX: number;
  originZ: number;
  /** Studs per cell edge (a multiple of the 4-stud voxel). */
  cellSize: number;
  /** Cells along x and z; cell (i, j) is at index i + width·j. */
  width: number;
  depth: number;
  /** Studs: the top of the solid surface; -Infinity where the column holds no solid. */
  top: Float32Array;
  /** Terrain material index of the top voxel. */
  material: Uint8Array;
  /** Studs: the water surface above the solid top; -Infinity where none. */
  water: Float32Array;
}

export interface HeightfieldOptions {
  /** Voxels per cell edge (default 1): a cell shows the voxel column at its minimum corner. */
  cellVoxels?: number;
  /** Studs: only columns inside this x/z box (default: the whole grid). */
  region?: { minX: number; minZ: number; maxX: number; maxZ: number };
}

export function terrainHeightfield(grid: SmoothGrid, options: HeightfieldOptions = {}): TerrainHeightfield | null {
  if (grid.count === 0) return null;
  const side = grid.side;
  const L = grid.chunkLog2;
  const k = Math.max(1, Math.floor(options.cellVoxels ?? 1));
  // Voxel column range of the grid, clipped to the region.
  let minX = Infinity, maxX = -Infinity, minZ = Infinity, maxZ = -Infinity;
  for (let c = 0; c < grid.count; c++) {
    const x = grid.coords[c * 3]! * side, z = grid.coords[c * 3 + 2]! * side;
    if (x < minX) minX = x;
    if (x + side - 1 > maxX) maxX = x + side - 1;
    if (z < minZ) minZ = z;
    if (z + side - 1 > maxZ) maxZ = z + side - 1;
  }
  const region = options.region;
  if (region) {
    minX = Math.max(minX, Math.floor(region.minX / VOXEL_STUDS));
    maxX = Math.min(maxX, Math.floor(region.maxX / VOXEL_STUDS));
    minZ = Math.max(minZ, Math.floor(region.minZ / VOXEL_STUDS));
    maxZ = Math.min(maxZ, Math.floor(region.maxZ / VOXEL_STUDS));
    if (minX > maxX || minZ > maxZ) return null;
  }
  const originX = Math.floor(minX / k) * k, originZ = Math.floor(minZ / k) * k;
  const width = Math.floor((maxX - originX) / k) + 1;
  const depth = Math.floor((maxZ - originZ) / k) + 1;
  const top = new Float32Array(width * depth).fill(-Infinity);
  const water = new Float32Array(width * depth).fill(-Infinity);
  const material = new Uint8Array(width * depth);

  // Chunks by column (x, z), highest first.
  const order = Array.from({ length: grid.count }, (_, i) => i);
  const c = grid.coords;
  order.sort((a, b) => c[a * 3]! - c[b * 3]! || c[a * 3 + 2]! - c[b * 3 + 2]! || c[b * 3 + 1]! - c[a * 3 + 1]!);
  const runs = newRuns(grid);
  const columns = side * side;
  const settled = new Uint8Array(columns);
  const wet = new Uint8Array(columns);
  // Columns still open per z row of the chunk: a run over closed rows only is skipped whole.
  const open = new Int32Array(side);
  let openCount = 0;
  let group = -1;
  for (const chunk of order) {
    const cx = c[chunk * 3]!, cy = c[chunk * 3 + 1]!, cz = c[chunk * 3 + 2]!;
    const x0 = cx * side, z0 = cz * side;
    if (x0 + side - 1 < minX || x0 > maxX || z0 + side - 1 < minZ || z0 > maxZ) continue;
    const column = cx * 1e7 + cz;
    if (column !== group) {
      // A new chunk column: open the sampled columns (every k-th voxel column) inside the region.
      group = column;
      settled.fill(1);
      wet.fill(0);
      open.fill(0);
      openCount = 0;
      for (let row = 0; row < side; row++) {
        const z = z0 + row;
        if (z < minZ || z > maxZ || (z - originZ) % k !== 0) continue;
        for (let lx = 0; lx < side; lx++) {
          const x = x0 + lx;
          if (x < minX || x > maxX || (x - originX) % k !== 0) continue;
          settled[row * side + lx] = 0;
          open[row]!++;
          openCount++;
        }
      }
    }
    if (openCount === 0) continue;
    readRuns(grid, chunk, runs);
    const y0 = cy * side;
    for (let r = runs.count - 1; r >= 0 && openCount > 0; r--) {
      const m = runs.material[r]!;
      const solid = runs.solid[r]!;
      const w = runs.water[r]!;
      if ((m === AIR || solid === 0) && w === 0) continue;
      const isSolid = m !== AIR && m !== WATER && solid > 0;
      const first = runs.start[r]!;
      // Row segments from the end: each lies in one x row of one layer.
      for (let v = first + runs.length[r]! - 1; v >= first;) {
        const rowStart = v & ~(side - 1);
        const segmentFirst = rowStart > first ? rowStart : first;
        const row = (v >> L) & (side - 1);
        if (open[row]! > 0) {
          const y = y0 + (v >> (2 * L));
          const lxMin = segmentFirst & (side - 1);
          for (let lx = v & (side - 1); lx >= lxMin; lx--) {
            const col = row * side + lx;
            if (settled[col]) continue;
            const cell = ((x0 + lx - originX) / k | 0) + width * ((z0 + row - originZ) / k | 0);
            if (w > 0 && !wet[col]) {
              wet[col] = 1;
              const h = (y + w / 255) * VOXEL_STUDS;
              if (h > water[cell]!) water[cell] = h;
            }
            if (isSolid) {
              settled[col] = 1;
              open[row]!--;
              openCount--;
              const h = (y + solid / 255) * VOXEL_STUDS;
              if (h > top[cell]!) {
                top[cell] = h;
                material[cell] = m;
              }
            }
          }
        }
        v = segmentFirst - 1;
      }
    }
  }
  // Water under the solid top is hidden.
  for (let i = 0; i < water.length; i++) if (water[i]! <= top[i]!) water[i] = -Infinity;
  return { originX: originX * VOXEL_STUDS, originZ: originZ * VOXEL_STUDS, cellSize: k * VOXEL_STUDS, width, depth, top, material, water };
}
