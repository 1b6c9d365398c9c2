/**
 * The terrain as seen from above: per column of cells, the height of the topmost
 * solid surface, its material, and the height of any water above it. This is what
 * the preview picture draws; it costs about one visit per surface voxel, not one per
 * voxel: chunks are read top-down per chunk column, and each chunk layer by layer from
 * the top through the grid's layer index (runs walked backwards: voxels are stored
 * Y-outermost), so a column is settled at its first solid voxel, layers and chunks under
 * a settled chunk column are never parsed, only the sampled columns (every k-th) are
 * visited, and water below a column's first water is skipped.
 */
import { AIR, WATER } from './materials.js';
import { VOXEL_STUDS, newRuns, readLayerRuns, type SmoothGrid } from './smooth-grid.js';

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
  // Open columns per z row not yet wet: water below a column's first water changes nothing, so
  // a water-only run over rows without such columns (a sea's depth) is skipped.
  const dry = new Int32Array(side);
  let dryCount = 0;
  // Per local column and row of the chunk column: the nearest sampled column at or left of it
  // (−1 for none), and the cell index parts, so the walk needs no division.
  const sampledLeft = new Int32Array(side);
  const cellX = new Int32Array(side), cellZ = new Int32Array(side);
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
      dry.fill(0);
      dryCount = 0;
      // The sampled rows and columns (every k-th from the origin) of this chunk column inside the region.
      const rowLast = Math.min(side - 1, maxZ - z0), lxLast = Math.min(side - 1, maxX - x0);
      for (let i = 0, last = -1; i < side; i++) {
        if ((((x0 + i - originX) % k) + k) % k === 0) last = i;
        sampledLeft[i] = last;
        cellX[i] = Math.floor((x0 + i - originX) / k);
        cellZ[i] = width * Math.floor((z0 + i - originZ) / k);
      }
      for (let row = nextSampled(Math.max(0, minZ - z0), z0 - originZ, k); row <= rowLast; row += k) {
        for (let lx = nextSampled(Math.max(0, minX - x0), x0 - originX, k); lx <= lxLast; lx += k) {
          settled[row * side + lx] = 0;
          open[row]!++;
          openCount++;
          dry[row]!++;
          dryCount++;
        }
      }
    }
    if (openCount === 0) continue;
    const y0 = cy * side;
    // Layers top-down, each read on its own (the layer index says where its runs start):
    // under a chunk column's surface nothing more is read.
    for (let layer = side - 1; layer >= 0 && openCount > 0; layer--) {
      readLayerRuns(grid, chunk, layer, layer, runs);
      const layerFirst = layer << (2 * L), layerLast = layerFirst + (1 << (2 * L)) - 1;
      const y = y0 + layer;
      for (let r = runs.count - 1; r >= 0 && openCount > 0; r--) {
        const m = runs.material[r]!;
        const solid = runs.solid[r]!;
        const w = runs.water[r]!;
        if ((m === AIR || solid === 0) && w === 0) continue;
        const isSolid = m !== AIR && m !== WATER && solid > 0;
        if (!isSolid && dryCount === 0) continue;
        const first = Math.max(runs.start[r]!, layerFirst);
        // Row segments from the end: each lies in one x row of the layer.
        for (let v = Math.min(runs.start[r]! + runs.length[r]! - 1, layerLast); v >= first;) {
          const rowStart = v & ~(side - 1);
          const segmentFirst = rowStart > first ? rowStart : first;
          const row = (v >> L) & (side - 1);
          if (isSolid ? open[row]! > 0 : dry[row]! > 0) {
            const lxMin = segmentFirst & (side - 1);
            // Only the sampled columns (every k-th from the origin).
            const rowCell = cellZ[row]!;
            for (let lx = sampledLeft[v & (side - 1)]!; lx >= lxMin; lx -= k) {
              const col = row * side + lx;
              if (settled[col]) continue;
              const cell = cellX[lx]! + rowCell;
              if (w > 0 && !wet[col]) {
                wet[col] = 1;
                dry[row]!--;
                dryCount--;
                const h = (y + w / 255) * VOXEL_STUDS;
                if (h > water[cell]!) water[cell] = h;
              }
              if (isSolid) {
                settled[col] = 1;
                open[row]!--;
                openCount--;
                if (!wet[col]) { dry[row]!--; dryCount--; }
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
  }
  // Water under the solid top is hidden.
  for (let i = 0; i < water.length; i++) if (water[i]! <= top[i]!) water[i] = -Infinity;
  return { originX: originX * VOXEL_STUDS, originZ: originZ * VOXEL_STUDS, cellSize: k * VOXEL_STUDS, width, depth, top, material, water };
}

/** The first v' ≥ v with (offset + v') a multiple of k. */
function nextSampled(v: number, offset: number, k: number): number {
  const r = (((offset + v) % k) + k) % k;
  return r === 0 ? v : v + k - r;
}
