/**
 * Caps that a SmoothGrid blob meets before anything is allocated or meshed, in the
 * manner of the place decoder's limits.ts.
 */
import { withDefaults } from '../parser/limits.js';

export interface TerrainLimits {
  /** Most chunks in one blob (each is 128³ studs at the default chunk size). */
  maxChunks: number;
  /** Largest |chunk coordinate| on any axis; the engine refuses chunks past 262,144. */
  maxChunkCoordinate: number;
  /** Largest chunk size exponent (voxels per chunk edge = 2^n); the engine reads 0..8. */
  maxChunkLog2: number;
  /** Most triangles the mesher emits for a place (solid and water together) before it coarsens. */
  maxTriangles: number;
  /**
   * Most samples one meshing pass takes (chunks × (chunk edge / step)³), and most samples
   * along a chunk's edge (`maxSamplesPerEdge`): the mesher starts at the finest step
   * within both. Studio writes 32³ chunks, which meet the edge bound at full resolution,
   * and 67,108,864 samples is 2,048 of them; the engine reads chunks up to 256³, and a
   * 4 KB place of five such asked for 84 million samples at full resolution, with
   * 256³-sample scratch per chunk: 22 s and 877 MB.
   */
  maxMeshSamples: number;
  maxSamplesPerEdge: number;
  /**
   * Most voxels one meshing pass decodes one by one (chunks × chunk edge³) to average
   * each sample from the voxels it covers. The sample bounds above bound what a pass
   * emits, not what it reads: averaging visits every voxel of every chunk whatever the
   * step, and the chunk count is bounded only by the blob's bytes (2,000 chunks of 256³,
   * a 1 MB file, were 33.5 billion voxels: a pass took over a minute). A grid with more
   * voxels is sampled sparsely: one voxel per sample, read from the runs of the sampled
   * layers only (the layer index says where they start), so a pass costs at most the
   * bytes of those layers plus its samples. 134,217,728 is 4,096 of Studio's 32³ chunks
   * (about 2.5 times the largest corpus terrain) or 8 chunks of 256³.
   */
  maxMeshVoxels: number;
}

export const DEFAULT_TERRAIN_LIMITS: TerrainLimits = Object.freeze({
  maxChunks: 65_536,
  maxChunkCoordinate: 262_144,
  maxChunkLog2: 8,
  maxTriangles: 1_500_000,
  maxMeshSamples: 1 << 26,
  maxSamplesPerEdge: 64,
  maxMeshVoxels: 1 << 27,
});

export function resolveTerrainLimits(partial?: Partial<TerrainLimits>): TerrainLimits {
  return withDefaults(DEFAULT_TERRAIN_LIMITS, partial);
}
