/**
 * The preview picture: a 3/4 view from above (orthographic, looking down 35° from the
 * south-east, +X +Z), 1024 px wide, framing the playable area; parts shaded by a
 * directional sun plus ambient light, terrain from its top-down heightfield, water
 * translucent, a gradient sky behind.
 *
 * Framing ignores outliers: the box is the 2nd to 98th percentile of part centres on
 * each axis, each part weighted by its footprint (clamped), so a far spawn box or a
 * 2,000-stud baseplate does not shrink the map to a dot. With no parts the terrain's
 * extent is framed.
 *
 * Cost is kept to a few passes over typed arrays: a part smaller than a pixel is one
 * depth-tested pixel, a box draws its three visible faces directly, the terrain is
 * read top-down (heightfield.ts) at about one cell per pixel and drawn as depth-tested
 * screen rectangles that reach down to their lowest neighbour (no holes on slopes).
 */
import { terrainHeightfield } from '../terrain/heightfield.js';
import { WATER } from '../terrain/materials.js';
import { VOXEL_STUDS } from '../terrain/smooth-grid.js';
import { encodePng, newRaster } from './png.js';
import { clearSky, fillConvex, fillRect, fillTriangle, newCanvas, type Canvas } from './rasterizer.js';
import { EMISSIVE, type RenderScene } from './scene.js';

export interface PictureOptions {
  width?: number;
  /** Height (default 9/16 of the width). */
  height?: number;
}

export interface Picture {
  png: Uint8Array;
  width: number;
  height: number;
  /** Studs: the framed box (min x, y, z, max x, y, z). */
  frame: number[];
  /** Parts drawn as shapes, as single pixels, and not drawn (off the picture). */
  parts: { shaded: number; points: number; culled: number };
  /** Terrain heightfield cells drawn (solid and water). */
  terrainCells: number;
}

const YAW = Math.PI / 4;
const PITCH = (35 * Math.PI) / 180;
const SKY_TOP = [118, 170, 228];
const SKY_BOTTOM = [206, 226, 244];
/** Towards the sun (world space). */
const SUN = normalize([-0.35, 1, 0.45]);
const AMBIENT = 0.5;

export function renderPicture(scene: RenderScene, options: PictureOptions = {}): Picture {
  const width = Math.max(16, Math.round(options.width ?? 1024));
  // Camera axes: forward (into the picture), right, up.
  const f = [-Math.cos(PITCH) * Math.sin(YAW), -Math.sin(PITCH), -Math.cos(PITCH) * Math.cos(YAW)];
  const r = normalize([-f[2]!, 0, f[0]!]);
  const u = cross(r, f);
  const view = { f, r, u };

  const frame = frameBox(scene);
  // The frame's extent on the picture plane.
  let minU = Infinity, maxU = -Infinity, minV = Infinity, maxV = -Infinity;
  for (let k = 0; k < 8; k++) {
    const p = [frame[(k & 1) ? 3 : 0]!, frame[(k & 2) ? 4 : 1]!, frame[(k & 4) ? 5 : 2]!];
    const pu = dot(p, r), pv = dot(p, u);
    minU = Math.min(minU, pu); maxU = Math.max(maxU, pu);
    minV = Math.min(minV, pv); maxV = Math.max(maxV, pv);
  }
  const spanU = Math.max(maxU - minU, 1), spanV = Math.max(maxV - minV, 1);
  const height = Math.max(16, Math.round(options.height ?? width * 0.5625));
  const scale = Math.min(width / (spanU * 1.06), height / (spanV * 1.06));
  const centreU = (minU + maxU) / 2, centreV = (minV + maxV) / 2;
  const camera: Camera = { ...view, scale, ox: width / 2 - centreU * scale, oy: height / 2 + centreV * scale };

  const canvas = canvasOf(width, height);
  clearSky(canvas, SKY_TOP, SKY_BOTTOM);
  const stats = { shaded: 0, points: 0, culled: 0 };
  let terrainCells = 0;
  let water: WaterLayer | null = null;
  if (scene.terrain) {
    const drawn = drawTerrain(canvas, camera, scene, frame);
    terrainCells = drawn.cells;
    water = drawn.water;
  }
  drawParts(canvas, camera, scene, false, stats);
  if (water) blendWater(canvas, water);
  drawParts(canvas, camera, scene, true, stats);
  return { png: encodePng(canvas.raster), width, height, frame, parts: stats, terrainCells };
}

/**
 * The last picture's buffers, reused while the size stays the same: a worker renders
 * one picture at a time, and fresh 2–4 MB buffers per picture cost more in page faults
 * and collection than the drawing. (The PNG is a copy, so nothing drawn leaks out.)
 */
let cached: { canvas: Canvas; water: Float32Array } | null = null;
function canvasOf(width: number, height: number): Canvas {
  if (!cached || cached.canvas.width !== width || cached.canvas.height !== height) {
    cached = { canvas: newCanvas(newRaster(width, height)), water: new Float32Array(width * height) };
  }
  return cached.canvas;
}

interface Camera {
  f: number[];
  r: number[];
  u: number[];
  scale: number;
  /** Screen x = dot(p, r)·scale + ox; y = oy − dot(p, u)·scale. */
  ox: number;
  oy: number;
}

// ---------------------------------------------------------------------------
// Framing

/** The box to frame: weighted 2nd–98th percentiles of part centres, or the terrain's extent. */
function frameBox(scene: RenderScene): number[] {
  const parts = scene.parts;
  if (parts.count > 0) {
    const weights = new Float32Array(parts.count);
    const axes = [new Float32Array(parts.count), new Float32Array(parts.count), new Float32Array(parts.count)];
    let drawn = 0;
    for (let i = 0; i < parts.count; i++) {
      const t = parts.transforms;
      const x = t[i * 12]!, y = t[i * 12 + 1]!, z = t[i * 12 + 2]!;
      if (!Number.isFinite(x) || !Number.isFinite(y) || !Number.isFinite(z)) continue;
      const s = parts.scales;
      axes[0]![drawn] = x; axes[1]![drawn] = y; axes[2]![drawn] = z;
      weights[drawn] = Math.min(64, Math.max(1, Math.sqrt(Math.abs(s[i * 3]! * s[i * 3 + 2]!))));
      drawn++;
    }
    if (drawn > 0) {
      const box = [0, 0, 0, 0, 0, 0];
      for (let a = 0; a < 3; a++) {
        const [lo, hi] = weightedRange(axes[a]!.subarray(0, drawn), weights.subarray(0, drawn), 0.02, 0.98);
        box[a] = lo; box[a + 3] = hi;
      }
      return padBox(box);
    }
  }
  if (scene.terrain && scene.terrain.grid.count > 0) {
    const { grid } = scene.terrain;
    const span = grid.side * VOXEL_STUDS;
    const box = [Infinity, Infinity, Infinity, -Infinity, -Infinity, -Infinity];
    for (let c = 0; c < grid.count; c++) {
      for (let a = 0; a < 3; a++) {
        const v = grid.coords[c * 3 + a]! * span;
        box[a] = Math.min(box[a]!, v);
        box[a + 3] = Math.max(box[a + 3]!, v + span);
      }
    }
    return padBox(box);
  }
  return [-16, 0, -16, 16, 8, 16];
}

/**
 * The values at two weighted quantiles, to 1/4096 of the range: a histogram instead of
 * a sort keeps it linear (it runs on every part of a 200k-part map).
 */
function weightedRange(values: Float32Array, weights: Float32Array, low: number, high: number): [number, number] {
  let min = Infinity, max = -Infinity, total = 0;
  for (let i = 0; i < values.length; i++) {
    if (values[i]! < min) min = values[i]!;
    if (values[i]! > max) max = values[i]!;
    total += weights[i]!;
  }
  if (!(max > min)) return [min, max];
  const bins = 4096;
  const histogram = new Float64Array(bins);
  const step = (max - min) / bins;
  for (let i = 0; i < values.length; i++) histogram[Math.min(bins - 1, Math.floor((values[i]! - min) / step))]! += weights[i]!;
  let sum = 0, lo = min, hi = max, foundLow = false;
  for (let b = 0; b < bins; b++) {
    sum += histogram[b]!;
    if (!foundLow && sum >= total * low) { lo = min + b * step; foundLow = true; }
    if (sum >= total * high) { hi = min + (b + 1) * step; break; }
  }
  return [lo, hi];
}

/** At least 16 studs each way, plus 5% margin. */
function padBox(box: number[]): number[] {
  for (let a = 0; a < 3; a++) {
    const centre = (box[a]! + box[a + 3]!) / 2;
    const half = Math.max(8, ((box[a + 3]! - box[a]!) / 2) * 1.05);
    box[a] = centre - half;
    box[a + 3] = centre + half;
  }
  return box;
}

// ---------------------------------------------------------------------------
// Parts

/** Shading of a face with world normal (nx, ny, nz): ambient plus sun. */
function shade(nx: number, ny: number, nz: number): number {
  const d = nx * SUN[0]! + ny * SUN[1]! + nz * SUN[2]!;
  return AMBIENT + (1 - AMBIENT) * (d > 0 ? d : 0);
}

const corners = new Float64Array(24);
const FX = new Float64Array(4), FY = new Float64Array(4), FZ = new Float64Array(4);
const QX = new Float64Array(4), QZ = new Float64Array(4), SX = new Float64Array(4), SY = new Float64Array(4), SZ = new Float64Array(4);
let transformed = new Float64Array(3 * 1024);

function drawParts(canvas: Canvas, cam: Camera, scene: RenderScene, translucentPass: boolean, stats: Picture['parts']): void {
  const parts = scene.parts;
  const { f, r, u, scale, ox, oy } = cam;
  const box = scene.geometryKeys.get('box') ?? -1;
  const t = parts.transforms, s = parts.scales, col = parts.colors;
  // Opaque parts near to far (what is hidden then fails the depth test instead of being
  // drawn over), translucent ones far to near (so they blend in order).
  const order = depthOrder(parts, f, !translucentPass);
  for (let n = 0; n < order.length; n++) {
    const i = order[n]!;
    const alpha = col[i * 4 + 3]! / 255;
    const translucent = alpha < 0.98;
    if (translucent !== translucentPass || alpha <= 0.02) continue;
    const px = t[i * 12]!, py = t[i * 12 + 1]!, pz = t[i * 12 + 2]!;
    const sx = s[i * 3]!, sy = s[i * 3 + 1]!, sz = s[i * 3 + 2]!;
    const cx = (px * r[0]! + py * r[1]! + pz * r[2]!) * scale + ox;
    const cy = oy - (px * u[0]! + py * u[1]! + pz * u[2]!) * scale;
    const radius = 0.5 * Math.sqrt(sx * sx + sy * sy + sz * sz) * scale;
    if (!(cx + radius >= 0 && cx - radius < canvas.width && cy + radius >= 0 && cy - radius < canvas.height)) {
      stats.culled++;
      continue;
    }
    const emissive = (parts.flags[i]! & EMISSIVE) !== 0;
    const red = col[i * 4]!, green = col[i * 4 + 1]!, blue = col[i * 4 + 2]!;
    const cz = px * f[0]! + py * f[1]! + pz * f[2]!;
    if (radius < 0.75) {
      // Smaller than a pixel: one pixel, lit as a top face.
      stats.points++;
      const x = Math.floor(cx), y = Math.floor(cy);
      if (x < 0 || y < 0 || x >= canvas.width || y >= canvas.height) continue;
      const k = emissive ? 1 : shade(0, 1, 0);
      if (translucentPass) fillTriangle(canvas, x, y, cz, x + 1, y, cz, x, y + 1, cz, red * k, green * k, blue * k, alpha);
      else fillRect(canvas, x, y, x + 1, y + 1, cz, red * k, green * k, blue * k);
      continue;
    }
    stats.shaded++;
    // Part axes in world space (the rotation's columns), scaled.
    const m = i * 12 + 3;
    const ax = [t[m]! * sx, t[m + 3]! * sx, t[m + 6]! * sx];
    const ay = [t[m + 1]! * sy, t[m + 4]! * sy, t[m + 7]! * sy];
    const az = [t[m + 2]! * sz, t[m + 5]! * sz, t[m + 8]! * sz];
    if (parts.geometry[i] === box) {
      drawBox(canvas, cam, px, py, pz, ax, ay, az, red, green, blue, translucent ? alpha : 1, emissive);
    } else {
      drawMesh(canvas, cam, scene.geometries[parts.geometry[i]!]!.positions, scene.geometries[parts.geometry[i]!]!.indices,
        px, py, pz, ax, ay, az, red, green, blue, translucent ? alpha : 1, emissive);
    }
  }
}

/**
 * Part indices by the depth of their centres, near first (or far first): a counting
 * sort over 4,096 depth buckets, linear in the number of parts.
 */
function depthOrder(parts: RenderScene['parts'], f: number[], nearFirst: boolean): Uint32Array {
  const count = parts.count;
  const t = parts.transforms;
  const depth = new Float32Array(count);
  let min = Infinity, max = -Infinity;
  for (let i = 0; i < count; i++) {
    depth[i] = t[i * 12]! * f[0]! + t[i * 12 + 1]! * f[1]! + t[i * 12 + 2]! * f[2]!;
    const d = depth[i]!; // as stored (float32), so the bucket arithmetic stays within range
    if (d < min) min = d;
    if (d > max) max = d;
  }
  const buckets = 4096;
  const starts = new Uint32Array(buckets + 1);
  const bucket = new Uint16Array(count);
  const span = max > min ? (buckets - 1) / (max - min) : 0;
  for (let i = 0; i < count; i++) {
    const b = Number.isFinite(depth[i]!) ? Math.max(0, Math.min(buckets - 1, Math.floor((depth[i]! - min) * span))) : buckets - 1;
    bucket[i] = nearFirst ? b : buckets - 1 - b;
    starts[bucket[i]! + 1]!++;
  }
  for (let b = 0; b < buckets; b++) starts[b + 1]! += starts[b]!;
  const order = new Uint32Array(count);
  for (let i = 0; i < count; i++) order[starts[bucket[i]!]!++] = i;
  return order;
}

/** Box faces: the corner bits (x, y, z) of each face's four corners, counter-clockwise from outside. */
const BOX_FACES = [
  [1, 3, 7, 5], [0, 4, 6, 2], // +x, -x
  [2, 6, 7, 3], [0, 1, 5, 4], // +y, -y
  [4, 5, 7, 6], [0, 2, 3, 1], // +z, -z
];

/**
 * Part-space point (lx, ly, lz) of a part at (px, py, pz) with scaled axes ax, ay, az:
 * screen x, y and depth into out[at..at+2], and with `world` its world position after them.
 */
function project(
  cam: Camera, px: number, py: number, pz: number, ax: number[], ay: number[], az: number[],
  lx: number, ly: number, lz: number, out: Float64Array, at: number, world = false,
): void {
  const { f, r, u } = cam;
  const wx = px + ax[0]! * lx + ay[0]! * ly + az[0]! * lz;
  const wy = py + ax[1]! * lx + ay[1]! * ly + az[1]! * lz;
  const wz = pz + ax[2]! * lx + ay[2]! * ly + az[2]! * lz;
  out[at] = (wx * r[0]! + wy * r[1]! + wz * r[2]!) * cam.scale + cam.ox;
  out[at + 1] = cam.oy - (wx * u[0]! + wy * u[1]! + wz * u[2]!) * cam.scale;
  out[at + 2] = wx * f[0]! + wy * f[1]! + wz * f[2]!;
  if (world) { out[at + 3] = wx; out[at + 4] = wy; out[at + 5] = wz; }
}

function drawBox(
  canvas: Canvas, cam: Camera, px: number, py: number, pz: number, ax: number[], ay: number[], az: number[],
  red: number, green: number, blue: number, alpha: number, emissive: boolean,
): void {
  const f = cam.f;
  for (let k = 0; k < 8; k++) {
    project(cam, px, py, pz, ax, ay, az, (k & 1) ? 0.5 : -0.5, (k & 2) ? 0.5 : -0.5, (k & 4) ? 0.5 : -0.5, corners, k * 3);
  }
  for (let face = 0; face < 6; face++) {
    const axis = face >> 1 === 0 ? ax : face >> 1 === 1 ? ay : az;
    const sign = face & 1 ? -1 : 1;
    const length = Math.sqrt(axis[0]! * axis[0]! + axis[1]! * axis[1]! + axis[2]! * axis[2]!) || 1;
    const nx = (axis[0]! * sign) / length, ny = (axis[1]! * sign) / length, nz = (axis[2]! * sign) / length;
    // Facing the camera when the normal points against the view direction.
    if (nx * f[0]! + ny * f[1]! + nz * f[2]! >= 0) continue;
    const k = emissive ? 1 : shade(nx, ny, nz);
    const q = BOX_FACES[face]!;
    for (let v = 0; v < 4; v++) {
      FX[v] = corners[q[v]! * 3]!;
      FY[v] = corners[q[v]! * 3 + 1]!;
      FZ[v] = corners[q[v]! * 3 + 2]!;
    }
    fillConvex(canvas, FX, FY, FZ, 4, red * k, green * k, blue * k, alpha);
  }
}

function drawMesh(
  canvas: Canvas, cam: Camera, positions: Float32Array, indices: Uint32Array, px: number, py: number, pz: number,
  ax: number[], ay: number[], az: number[], red: number, green: number, blue: number, alpha: number, emissive: boolean,
): void {
  const vertices = positions.length / 3;
  if (transformed.length < vertices * 6) transformed = new Float64Array(vertices * 6);
  const out = transformed;
  for (let v = 0; v < vertices; v++) {
    project(cam, px, py, pz, ax, ay, az, positions[v * 3]!, positions[v * 3 + 1]!, positions[v * 3 + 2]!, out, v * 6, true);
  }
  for (let k = 0; k + 2 < indices.length; k += 3) {
    const a = indices[k]! * 6, b = indices[k + 1]! * 6, c = indices[k + 2]! * 6;
    // Front faces are counter-clockwise seen from the camera: clockwise on the y-down screen.
    const area = (out[b]! - out[a]!) * (out[c + 1]! - out[a + 1]!) - (out[c]! - out[a]!) * (out[b + 1]! - out[a + 1]!);
    if (area >= 0) continue;
    let k2 = 1;
    if (!emissive) {
      const ux = out[b + 3]! - out[a + 3]!, uy = out[b + 4]! - out[a + 4]!, uz = out[b + 5]! - out[a + 5]!;
      const vx = out[c + 3]! - out[a + 3]!, vy = out[c + 4]! - out[a + 4]!, vz = out[c + 5]! - out[a + 5]!;
      const nx = uy * vz - uz * vy, ny = uz * vx - ux * vz, nz = ux * vy - uy * vx;
      const length = Math.sqrt(nx * nx + ny * ny + nz * nz) || 1;
      k2 = shade(nx / length, ny / length, nz / length);
    }
    fillTriangle(canvas, out[a]!, out[a + 1]!, out[a + 2]!, out[b]!, out[b + 1]!, out[b + 2]!, out[c]!, out[c + 1]!, out[c + 2]!, red * k2, green * k2, blue * k2, alpha);
  }
}

// ---------------------------------------------------------------------------
// Terrain

interface WaterLayer {
  depth: Float32Array;
  color: number[];
  alpha: number;
}

function drawTerrain(canvas: Canvas, cam: Camera, scene: RenderScene, frame: number[]): { cells: number; water: WaterLayer | null } {
  const terrain = scene.terrain!;
  // A cell's diagonal (what it spans on screen at 45°) covers about 3 px: fine enough for
  // a 1024-px overview, and the cell count (the cost) stays near a tenth of the pixels.
  const pixelStuds = 1 / cam.scale;
  const cellVoxels = Math.max(1, Math.ceil((3 * pixelStuds) / (VOXEL_STUDS * Math.SQRT2)));
  // Everything that can show inside the picture: the frame grown by what the view reaches.
  const reach = (Math.max(canvas.width, canvas.height) / cam.scale) * 0.75;
  const region = { minX: frame[0]! - reach, minZ: frame[2]! - reach, maxX: frame[3]! + reach, maxZ: frame[5]! + reach };
  const field = terrainHeightfield(terrain.grid, { cellVoxels, region });
  if (!field) return { cells: 0, water: null };
  const { f, r, u, scale, ox, oy } = cam;
  const palette = terrain.palette;
  const cs = field.cellSize;
  // Half the box around a cell's footprint on screen (a diamond at 45°): these boxes
  // cover the ground with about 2× overdraw and no gaps. And how far a stud of height moves down.
  const halfW = Math.max(0.5, (cs * scale * (Math.abs(r[0]!) + Math.abs(r[2]!))) / 2);
  const halfH = Math.max(0.5, (cs * scale * (Math.abs(u[0]!) + Math.abs(u[2]!))) / 2);
  const { width, depth: rows, top } = field;
  let waterDepth: Float32Array | null = null;
  let cells = 0;
  const stepX = cs * r[0]! * scale, stepBase = -cs * u[0]! * scale, stepDepth = cs * f[0]!;
  const rise = u[1]! * scale, depthRise = f[1]!;
  const inv2cs = 1 / (2 * cs);
  for (let j = 0; j < rows; j++) {
    const wz = field.originZ + (j + 0.5) * cs;
    const wx0 = field.originX + 0.5 * cs;
    let sx = (wx0 * r[0]! + wz * r[2]!) * scale + ox - stepX;
    let base = oy - (wx0 * u[0]! + wz * u[2]!) * scale - stepBase;
    let zBase = wx0 * f[0]! + wz * f[2]! - stepDepth;
    const row = width * j;
    for (let i = 0; i < width; i++) {
      sx += stepX; base += stepBase; zBase += stepDepth;
      const at = row + i;
      const h = top[at]!;
      if (h === -Infinity || sx + halfW < 0 || sx - halfW >= canvas.width) continue;
      const sy = base - h * rise;
      // Neighbours (missing ones count as this cell): the drop to the lowest, and the slope.
      const left = i > 0 ? top[at - 1]! : -Infinity, right = i + 1 < width ? top[at + 1]! : -Infinity;
      const back = j > 0 ? top[at - width]! : -Infinity, front = j + 1 < rows ? top[at + width]! : -Infinity;
      let low = h;
      if (left < low) low = left;
      if (right < low) low = right;
      if (back < low) low = back;
      if (front < low) low = front;
      if (low === -Infinity) low = h - cs;
      const y0 = Math.ceil(sy - halfH - 0.5), y1 = Math.floor(sy + halfH + (h - low) * rise - 0.5) + 1;
      if (y1 < 0 || y0 >= canvas.height) continue;
      const nx = ((left === -Infinity ? h : left) - (right === -Infinity ? h : right)) * inv2cs;
      const nz = ((back === -Infinity ? h : back) - (front === -Infinity ? h : front)) * inv2cs;
      const length = Math.sqrt(nx * nx + 1 + nz * nz);
      const k = shade(nx / length, 1 / length, nz / length);
      const m = field.material[at]! * 3;
      fillRect(canvas, Math.ceil(sx - halfW - 0.5), y0, Math.floor(sx + halfW - 0.5) + 1, y1, zBase + h * depthRise, palette[m]! * k, palette[m + 1]! * k, palette[m + 2]! * k);
      cells++;
    }
    // Water: runs of one height along the row as one quad each (an ocean is a few
    // thousand quads, not a million cells), keeping only the nearest depth per pixel;
    // it is blended once after the opaque passes.
    for (let i = 0; i < width;) {
      const w = field.water[i + width * j]!;
      if (w === -Infinity) { i++; continue; }
      let end = i + 1;
      while (end < width && field.water[end + width * j] === w) end++;
      waterDepth ??= cached!.water.fill(Infinity);
      const x0 = field.originX + i * cs, x1 = field.originX + end * cs;
      const z0 = field.originZ + j * cs, z1 = z0 + cs;
      QX[0] = x0; QZ[0] = z0; QX[1] = x1; QZ[1] = z0; QX[2] = x1; QZ[2] = z1; QX[3] = x0; QZ[3] = z1;
      for (let k = 0; k < 4; k++) {
        SX[k] = (QX[k]! * r[0]! + w * r[1]! + QZ[k]! * r[2]!) * scale + ox;
        SY[k] = oy - (QX[k]! * u[0]! + w * u[1]! + QZ[k]! * u[2]!) * scale;
        SZ[k] = QX[k]! * f[0]! + w * f[1]! + QZ[k]! * f[2]!;
      }
      fillConvex(canvas, SX, SY, SZ, 4, 0, 0, 0, 1, waterDepth);
      cells += end - i;
      i = end;
    }
  }
  if (!waterDepth) return { cells, water: null };
  const color = [palette[WATER * 3]!, palette[WATER * 3 + 1]!, palette[WATER * 3 + 2]!];
  // Keep water visible even when the place makes it nearly clear.
  const alpha = Math.min(0.85, Math.max(0.35, 1 - terrain.waterTransparency));
  return { cells, water: { depth: waterDepth, color, alpha } };
}

/** Water over whatever lies behind it (terrain, opaque parts), lit as a flat surface. */
function blendWater(canvas: Canvas, water: WaterLayer): void {
  const { depth, color, alpha } = water;
  const k = shade(0, 1, 0);
  const r = color[0]! * k, g = color[1]! * k, b = color[2]! * k;
  const keep = 1 - alpha;
  const data = canvas.raster.data, stride = canvas.raster.stride;
  for (let y = 0; y < canvas.height; y++) {
    for (let x = 0; x < canvas.width; x++) {
      const p = y * canvas.width + x;
      const z = depth[p]!;
      if (z === Infinity || z >= canvas.depth[p]!) continue;
      const o = y * stride + 1 + x * 3;
      if (canvas.depth[p] === Infinity) {
        // Nothing under the water in the file: draw it as deep water, not as tinted sky.
        data[o] = r * 0.8; data[o + 1] = g * 0.8; data[o + 2] = b * 0.8;
      } else {
        data[o] = data[o]! * keep + r * alpha;
        data[o + 1] = data[o + 1]! * keep + g * alpha;
        data[o + 2] = data[o + 2]! * keep + b * alpha;
      }
      canvas.depth[p] = z;
    }
  }
}

function normalize(v: number[]): number[] {
  const length = Math.hypot(v[0]!, v[1]!, v[2]!);
  return [v[0]! / length, v[1]! / length, v[2]! / length];
}

function cross(a: number[], b: number[]): number[] {
  return [a[1]! * b[2]! - a[2]! * b[1]!, a[2]! * b[0]! - a[0]! * b[2]!, a[0]! * b[1]! - a[1]! * b[0]!];
}

function dot(a: number[], b: number[]): number {
  return a[0]! * b[0]! + a[1]! * b[1]! + a[2]! * b[2]!;
}
