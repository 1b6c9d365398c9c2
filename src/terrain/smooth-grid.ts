/**
 * `Terrain.SmoothGrid` (../shared/reference/rbx-dom/smooth-grid.md): a version byte,
 * the chunk size exponent, then chunks until the end of the blob. Each chunk is a
 * 12-byte position delta (three i32, byte-interleaved, big-endian, no zigzag) and
 * run-length-encoded voxels until exactly side³ voxels are read.
 *
 * `readSmoothGrid` walks the whole blob once and checks every run against the chunk's
 * voxel count, every chunk position against the limits and the order the engine
 * writes (ascending X, then Y, then Z): a truncated run, a count past the chunk end or
 * an absurd offset is a `DecodeError` naming the byte offset in the blob. It allocates
 * only the chunk index (small typed arrays sized from the blob: chunk positions and
 * offsets, and where each chunk layer's runs start), never voxels:
 * those are decoded one chunk at a time (`readRuns`, `decodeChunk`) into buffers the
 * caller reuses, so a large terrain never becomes one large array.
 *
 * Voxel order inside a chunk: index = x + side·(z + side·y) (Y outermost, X innermost).
 */
import { DecodeError } from '../parser/errors.js';
import { resolveTerrainLimits, type TerrainLimits } from './limits.js';
import { AIR, WATER } from './materials.js';

const PROPERTY = 'Terrain.SmoothGrid';
const VERSION = 1;
const CHUNK_HEADER_BYTES = 12;
/** Voxel edge in studs. */
export const VOXEL_STUDS = 4;

export interface SmoothGrid {
  readonly bytes: Uint8Array;
  /** log2 of voxels per chunk edge (5 in every file Studio writes). */
  readonly chunkLog2: number;
  /** Voxels per chunk edge. */
  readonly side: number;
  /** Voxels per chunk: side³. */
  readonly chunkVoxels: number;
  readonly count: number;
  /** Chunk positions in chunk units: x, y, z per chunk, in blob order. */
  readonly coords: Int32Array;
  /** Byte offset in `bytes` where each chunk's voxel runs start. */
  readonly offsets: Uint32Array;
  /**
   * Per chunk and layer (y), `side` entries a chunk: the byte offset of the run holding the
   * layer's first voxel, and that run's first voxel. Runs are variable-length, so without
   * this a reader that wants the top layers (the heightfield) parses the whole chunk.
   */
  readonly layerOffsets: Uint32Array;
  readonly layerStarts: Uint32Array;
}

/** One chunk's voxels, `side³` entries each, indexed x + side·(z + side·y). */
export interface ChunkVoxels {
  /** Material index (materials.ts). */
  material: Uint8Array;
  /** Solid occupancy 0..255; 0 for Air and Water voxels. */
  solid: Uint8Array;
  /** Water occupancy 0..255: a Water voxel's occupancy, or the water sharing a solid voxel (shorelines). */
  water: Uint8Array;
}

/** A chunk's runs, as stored: `count` entries of start voxel, length and value. */
export interface VoxelRuns {
  count: number;
  start: Uint32Array;
  length: Uint32Array;
  material: Uint8Array;
  /** As `ChunkVoxels.solid`. */
  solid: Uint8Array;
  /** As `ChunkVoxels.water`. */
  water: Uint8Array;
}

export function readSmoothGrid(bytes: Uint8Array, limits?: Partial<TerrainLimits>): SmoothGrid {
  const caps = resolveTerrainLimits(limits);
  if (bytes.length === 0) return emptyGrid(bytes, 5);
  if (bytes.length < 2) throw fail('the blob is 1 byte; it needs a version and a chunk size', 0);
  if (bytes[0] !== VERSION) throw fail(`unsupported SmoothGrid version ${bytes[0]} (only ${VERSION} exists)`, 0);
  const chunkLog2 = bytes[1]!;
  if (chunkLog2 > caps.maxChunkLog2) throw fail(`chunk size exponent ${chunkLog2} exceeds the limit of ${caps.maxChunkLog2}`, 1);
  const side = 1 << chunkLog2;
  const chunkVoxels = side * side * side;
  // Every chunk takes at least its header and one byte per 256 voxels: that bounds the index before it is sized.
  const minChunkBytes = CHUNK_HEADER_BYTES + Math.ceil(chunkVoxels / 256);
  const capacity = Math.min(caps.maxChunks, Math.floor((bytes.length - 2) / minChunkBytes));
  const coords = new Int32Array(capacity * 3);
  const offsets = new Uint32Array(capacity);
  // 8 bytes per layer and chunk; a chunk of `side` layers takes at least 12 + side³/256 bytes, so
  // this index is under 5× the blob (the worst, side 8 or 16) and at most maxChunks × side × 8
  // bytes (16 MiB at Studio's 32-voxel chunks).
  const layerOffsets = new Uint32Array(capacity * side);
  const layerStarts = new Uint32Array(capacity * side);
  const layers: LayerIndex = { offsets: layerOffsets, starts: layerStarts, base: 0, layerVoxels: side * side };
  let count = 0;
  let x = 0, y = 0, z = 0;
  let pos = 2;
  while (pos < bytes.length) {
    if (count >= caps.maxChunks) throw fail(`more than ${caps.maxChunks} chunks (the limit)`, pos);
    if (bytes.length - pos < CHUNK_HEADER_BYTES) {
      throw fail(`truncated chunk header: ${bytes.length - pos} bytes left, a header is ${CHUNK_HEADER_BYTES}`, pos);
    }
    const nx = x + interleavedI32(bytes, pos, 0);
    const ny = y + interleavedI32(bytes, pos, 1);
    const nz = z + interleavedI32(bytes, pos, 2);
    const reach = caps.maxChunkCoordinate;
    if (Math.abs(nx) > reach || Math.abs(ny) > reach || Math.abs(nz) > reach) {
      throw fail(`chunk offset leads to (${nx}, ${ny}, ${nz}), past the limit of ±${reach} chunks`, pos);
    }
    if (count > 0 && !(nx > x || (nx === x && (ny > y || (ny === y && nz > z))))) {
      throw fail(`chunk (${nx}, ${ny}, ${nz}) repeats or comes out of order after (${x}, ${y}, ${z})`, pos);
    }
    if (count >= capacity) {
      throw fail(`no room for another chunk: one of ${chunkVoxels} voxels takes at least ${minChunkBytes} bytes, ${bytes.length - pos} are left`, pos);
    }
    x = nx; y = ny; z = nz;
    pos += CHUNK_HEADER_BYTES;
    coords[count * 3] = x; coords[count * 3 + 1] = y; coords[count * 3 + 2] = z;
    offsets[count] = pos;
    layers.base = count * side;
    pos = parseRuns(bytes, pos, chunkVoxels, null, x, y, z, 0, chunkVoxels, layers);
    count++;
  }
  return {
    bytes, chunkLog2, side, chunkVoxels, count, coords: coords.subarray(0, count * 3), offsets: offsets.subarray(0, count),
    layerOffsets: layerOffsets.subarray(0, count * side), layerStarts: layerStarts.subarray(0, count * side),
  };
}

function emptyGrid(bytes: Uint8Array, chunkLog2: number): SmoothGrid {
  const side = 1 << chunkLog2;
  return {
    bytes, chunkLog2, side, chunkVoxels: side * side * side, count: 0, coords: new Int32Array(0), offsets: new Uint32Array(0),
    layerOffsets: new Uint32Array(0), layerStarts: new Uint32Array(0),
  };
}

/** Axis `axis` of the 3 interleaved big-endian i32 at `pos`: its bytes sit 3 apart, most significant first. */
function interleavedI32(bytes: Uint8Array, pos: number, axis: number): number {
  return (bytes[pos + axis]! << 24) | (bytes[pos + 3 + axis]! << 16) | (bytes[pos + 6 + axis]! << 8) | bytes[pos + 9 + axis]!;
}

function fail(reason: string, offset: number): DecodeError {
  return new DecodeError(reason, { property: PROPERTY, offset });
}

/**
 * Reads one chunk's runs from `pos` (at voxel `from`, until voxel `to`), recording them
 * in `runs` and the layer index in `layers` when given; returns the position after the
 * last run read. Each voxel: a flag byte (material in bits 0-5, bit 6: an
 * occupancy byte follows, bit 7: a count byte follows), then the occupancy, then the
 * count; count 0 means one voxel followed by its water occupancy, count n ≥ 1 means
 * n + 1 voxels.
 */
function parseRuns(
  bytes: Uint8Array, pos: number, total: number, runs: VoxelRuns | null, cx: number, cy: number, cz: number, from = 0, to = total,
  layers: LayerIndex | null = null,
): number {
  const end = bytes.length;
  let voxels = from;
  let count = 0;
  let layer = 0, nextLayer = 0;
  while (voxels < to) {
    const at = pos;
    if (pos >= end) throw fail(`chunk (${cx}, ${cy}, ${cz}) ends after ${voxels} of ${total} voxels: the blob is truncated`, pos);
    const flag = bytes[pos++]!;
    const material = flag & 63;
    let occupancy = material === AIR ? 0 : 255;
    if (flag & 64) {
      if (pos >= end) throw fail(`truncated voxel: its occupancy byte is missing in chunk (${cx}, ${cy}, ${cz})`, at);
      occupancy = bytes[pos++]!;
    }
    let length = 1;
    let water = 0;
    if (flag & 128) {
      if (pos >= end) throw fail(`truncated voxel: its count byte is missing in chunk (${cx}, ${cy}, ${cz})`, at);
      const stored = bytes[pos++]!;
      if (stored === 0) {
        if (pos >= end) throw fail(`truncated voxel: its water occupancy byte is missing in chunk (${cx}, ${cy}, ${cz})`, at);
        water = bytes[pos++]!;
      } else {
        length = stored + 1;
      }
    }
    if (voxels + length > total) {
      throw fail(`a run of ${length} voxels passes the end of chunk (${cx}, ${cy}, ${cz}) at voxel ${voxels} of ${total}`, at);
    }
    if (runs) {
      runs.start[count] = voxels;
      runs.length[count] = length;
      runs.material[count] = material;
      // Normalise to the two channels: Water's occupancy is water, and Air holds no solid.
      if (material === WATER) {
        runs.solid[count] = 0;
        runs.water[count] = occupancy;
      } else {
        runs.solid[count] = material === AIR ? 0 : occupancy;
        runs.water[count] = water;
      }
    }
    count++;
    voxels += length;
    if (layers) {
      for (; nextLayer < voxels; layer++, nextLayer += layers.layerVoxels) {
        layers.offsets[layers.base + layer] = at;
        layers.starts[layers.base + layer] = voxels - length;
      }
    }
  }
  if (runs) runs.count = count;
  return pos;
}

/** Where parseRuns notes, per layer of the chunk from `base`, the run holding the layer's first voxel. */
interface LayerIndex {
  offsets: Uint32Array;
  starts: Uint32Array;
  base: number;
  layerVoxels: number;
}

/** Room for `capacity` runs: a whole chunk's by default; a layer's (`readLayerRuns` of one layer) never pass side². */
export function newRuns(grid: SmoothGrid, capacity = grid.chunkVoxels): VoxelRuns {
  const n = capacity;
  return {
    count: 0, start: new Uint32Array(n), length: new Uint32Array(n),
    material: new Uint8Array(n), solid: new Uint8Array(n), water: new Uint8Array(n),
  };
}

/** Fills `runs` with chunk `index`'s runs (the blob was checked by readSmoothGrid). */
export function readRuns(grid: SmoothGrid, index: number, runs: VoxelRuns): VoxelRuns {
  if (!(index >= 0 && index < grid.count)) throw new RangeError(`no chunk ${index} (the grid has ${grid.count})`);
  const c = grid.coords;
  parseRuns(grid.bytes, grid.offsets[index]!, grid.chunkVoxels, runs, c[index * 3]!, c[index * 3 + 1]!, c[index * 3 + 2]!);
  return runs;
}

/**
 * Fills `runs` with the runs of chunk `index` that hold voxels of layers `from` to `to`
 * (inclusive); the first may start in a lower layer, the last may reach a higher one.
 */
export function readLayerRuns(grid: SmoothGrid, index: number, from: number, to: number, runs: VoxelRuns): VoxelRuns {
  if (!(index >= 0 && index < grid.count)) throw new RangeError(`no chunk ${index} (the grid has ${grid.count})`);
  if (!(from >= 0 && from <= to && to < grid.side)) throw new RangeError(`no layers ${from}..${to} (a chunk has ${grid.side})`);
  const c = grid.coords;
  const at = index * grid.side + from;
  const layerVoxels = grid.side * grid.side;
  parseRuns(grid.bytes, grid.layerOffsets[at]!, grid.chunkVoxels, runs, c[index * 3]!, c[index * 3 + 1]!, c[index * 3 + 2]!, grid.layerStarts[at], (to + 1) * layerVoxels);
  return runs;
}

export function newChunkVoxels(grid: SmoothGrid): ChunkVoxels {
  const n = grid.chunkVoxels;
  return { material: new Uint8Array(n), solid: new Uint8Array(n), water: new Uint8Array(n) };
}

/** Decodes chunk `index` into `out` (reused between calls), every one of its side³ voxels. */
export function decodeChunk(grid: SmoothGrid, index: number, out: ChunkVoxels = newChunkVoxels(grid), runs: VoxelRuns = newRuns(grid)): ChunkVoxels {
  readRuns(grid, index, runs);
  const { material, solid, water } = out;
  for (let r = 0; r < runs.count; r++) {
    const from = runs.start[r]!;
    const to = from + runs.length[r]!;
    material.fill(runs.material[r]!, from, to);
    solid.fill(runs.solid[r]!, from, to);
    water.fill(runs.water[r]!, from, to);
  }
  return out;
}

/** World position (studs) of a chunk's minimum corner. */
export function chunkOrigin(grid: SmoothGrid, index: number): [number, number, number] {
  const span = grid.side * VOXEL_STUDS;
  return [grid.coords[index * 3]! * span, grid.coords[index * 3 + 1]! * span, grid.coords[index * 3 + 2]! * span];
}
