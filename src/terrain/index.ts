/** Roblox terrain: SmoothGrid decoding, statistics, meshing and the top-down heightfield. */
export {
  readSmoothGrid, readRuns, newRuns, decodeChunk, newChunkVoxels, chunkOrigin, VOXEL_STUDS,
  type SmoothGrid, type ChunkVoxels, type VoxelRuns,
} from './smooth-grid.js';
export { terrainStats, type TerrainStats } from './stats.js';
export { meshTerrain, type TerrainMesh, type TerrainChunkMesh, type TerrainMeshOptions } from './mesh.js';
export { terrainHeightfield, type TerrainHeightfield, type HeightfieldOptions } from './heightfield.js';
export { TERRAIN_MATERIALS, AIR, WATER, terrainMaterialName, terrainPalette, DEFAULT_MATERIAL_COLORS } from './materials.js';
export { DEFAULT_TERRAIN_LIMITS, resolveTerrainLimits, type TerrainLimits } from './limits.js';
