/**
 * A place's terrain as the assembly, the report and the picture read it: the
 * Workspace's Terrain, its SmoothGrid blob and colours. A malformed SmoothGrid is
 * reported (the rest of the map still shows), never a reason to refuse the map.
 */
import { findService, getValue, type Dom } from '../parser/dom.js';
import { DecodeError } from '../parser/errors.js';
import { readSmoothGrid, type SmoothGrid } from '../terrain/smooth-grid.js';
import { terrainPalette } from '../terrain/materials.js';
import { stringBytes } from './columns.js';

export interface TerrainBlobs {
  /** The Terrain instance's row. */
  row: number;
  smoothGrid: Uint8Array;
  materialColors: Uint8Array | null;
  /** Terrain.WaterColor, 0..1 per channel. */
  waterColor: number[] | null;
  waterTransparency: number;
}

export interface SceneTerrain {
  row: number;
  grid: SmoothGrid;
  /** RGB per terrain material index (terrainPalette). */
  palette: Uint8Array;
  waterTransparency: number;
}

/** The first Terrain among the Workspace's children (of the roots in a model file); null without one or without a SmoothGrid. */
export function terrainBlobs(dom: Dom): TerrainBlobs | null {
  const row = terrainRow(dom);
  if (row === -1) return null;
  const smoothGrid = stringBytes(dom, row, 'SmoothGrid');
  if (!smoothGrid) return null;
  const water = getValue(dom, row, 'WaterColor');
  const transparency = getValue(dom, row, 'WaterTransparency');
  return {
    row,
    smoothGrid,
    materialColors: stringBytes(dom, row, 'MaterialColors'),
    waterColor: Array.isArray(water) && water.length === 3 && water.every((c) => typeof c === 'number') ? (water) : null,
    waterTransparency: typeof transparency === 'number' && Number.isFinite(transparency) ? Math.min(1, Math.max(0, transparency)) : 0.3,
  };
}

export function terrainRow(dom: Dom): number {
  const workspace = findService(dom, 'Workspace');
  for (let row = workspace === -1 ? dom.firstRoot : dom.firstChild(workspace); row !== -1; row = dom.nextSibling(row)) {
    if (dom.className(row) === 'Terrain') return row;
  }
  return -1;
}

/**
 * A Terrain's SmoothGrid read once, for the report's statistics and the picture or
 * scene.glb (`readSceneTerrain` takes it): null grid without voxels, with `error` when
 * the blob is malformed.
 */
export function readTerrainGrid(dom: Dom, row: number): { row: number; grid: SmoothGrid | null; error?: string } {
  const bytes = stringBytes(dom, row, 'SmoothGrid');
  if (!bytes || bytes.length <= 2) return { row, grid: null };
  try {
    const grid = readSmoothGrid(bytes);
    return { row, grid: grid.count > 0 ? grid : null };
  } catch (error) {
    if (!(error instanceof DecodeError)) throw error;
    return { row, grid: null, error: error.message };
  }
}

/**
 * The terrain ready to mesh or draw; null without terrain voxels. A malformed
 * SmoothGrid or MaterialColors is named in `notes` and leaves the terrain out (or its
 * colours at their defaults). `read` is the grid already read for the report.
 */
export function readSceneTerrain(dom: Dom, notes: string[], read?: { row: number; grid: SmoothGrid | null; error?: string }): SceneTerrain | null {
  const blobs = terrainBlobs(dom);
  if (!blobs || blobs.smoothGrid.length <= 2) return null;
  const { grid, error } = read?.row === blobs.row ? read : readTerrainGrid(dom, blobs.row);
  if (error) notes.push(`terrain left out: ${error}`);
  if (!grid) return null;
  let palette: Uint8Array;
  try {
    palette = terrainPalette(blobs.materialColors, blobs.waterColor);
  } catch (error) {
    if (!(error instanceof DecodeError)) throw error;
    notes.push(`terrain colours are Studio's defaults: ${error.message}`);
    palette = terrainPalette(null, blobs.waterColor);
  }
  return { row: blobs.row, grid, palette, waterTransparency: blobs.waterTransparency };
}
