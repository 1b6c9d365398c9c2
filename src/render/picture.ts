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
import { blendIndex, blendTable, colorIndex, newPalette, resetPalette, toIndexed, type BlendTable } from './palette.js';
import { encodeIndexedPng } from './png.js';
import { clearBands, fillParallelogram, fillRect, fillTriangle, hidden, markNearest, newCanvas, type Canvas } from './rasterizer.js';
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
  /**
   * Parts drawn as shapes, as single pixels, not drawn (off the picture), not drawn
   * (behind nearer ones), and not drawn because the picture's work was spent (PIXEL_BUDGET).
   */
  parts: { shaded: number; points: number; culled: number; hidden: number; unfinished: number };
  /** Terrain heightfield cells drawn (solid and water). */
  terrainCells: number;
  /** Colours drawn (the PNG's palette holds at most 256 of them: more are reduced by median cut). */
  colors: number;
}

const YAW = Math.PI / 4;
const PITCH = (35 * Math.PI) / 180;
const SKY_TOP = [118, 170, 228];
const SKY_BOTTOM = [206, 226, 244];
/** The sky's gradient in this many bands (palette entries). */
const SKY_BANDS = 24;
/** Light levels a face can take (shading is rounded to them, so a map needs few palette entries). */
const SHADES = 24;
/** A mesh smaller than this on screen (radius, px) is drawn as its box: the triangles would not show. */
const MESH_AS_BOX_PX = 5;
/** Towards the sun (world space). */
const SUN = normalize([-0.35, 1, 0.45]);
const AMBIENT = 0.5;
/**
 * Pixels the parts may cover in all, in screens (each part its screen box): the corpus's
 * places cover at most 6; 60,000 screen-sized parts stacked towards the eye covered
 * 60,000 and held a worker for 35 s.
 */
export const PIXEL_BUDGET = 200;

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
  const palette = canvas.palette;
  resetPalette(palette);
  const bands: number[] = [];
  for (let k = 0; k < SKY_BANDS; k++) {
    const t = k / (SKY_BANDS - 1);
    bands.push(colorIndex(palette, SKY_TOP[0]! + (SKY_BOTTOM[0]! - SKY_TOP[0]!) * t, SKY_TOP[1]! + (SKY_BOTTOM[1]! - SKY_TOP[1]!) * t, SKY_TOP[2]! + (SKY_BOTTOM[2]! - SKY_TOP[2]!) * t));
  }
  clearBands(canvas, bands);
  const stats = { shaded: 0, points: 0, culled: 0, hidden: 0, unfinished: 0 };
  const budget = { pixels: PIXEL_BUDGET * width * height };
  const bounds = geometryBoxes(scene);
  let terrainCells = 0;
  let water: WaterLayer | null = null;
  if (scene.terrain) {
    const drawn = drawTerrain(canvas, camera, scene, frame);
    terrainCells = drawn.cells;
    water = drawn.water;
  }
  drawParts(canvas, camera, scene, bounds, false, stats, budget);
  if (water) blendWater(canvas, water);
  drawParts(canvas, camera, scene, bounds, true, stats, budget);
  const indexed = toIndexed(palette, canvas.pixels, canvas.stride);
  const png = encodeIndexedPng(indexed.scanlines, width, height, indexed.rgb, indexed.colors);
  return { png, width, height, frame, parts: stats, terrainCells, colors: palette.count };
}

/**
 * The last picture's buffers, reused while the size stays the same: a worker renders
 * one picture at a time, and fresh buffers per picture cost more in page faults and
 * collection than the drawing. (The PNG is a copy, so nothing drawn leaks out.)
 */
let cached: { canvas: Canvas; water: Float32Array } | null = null;
function canvasOf(width: number, height: number): Canvas {
  if (!cached || cached.canvas.width !== width || cached.canvas.height !== height) {
    cached = { canvas: newCanvas(width, height, newPalette()), water: new Float32Array(width * height) };
  }
  return cached.canvas;
}

/** A palette entry for a colour at light level k (rounded to SHADES levels). */
function shaded(canvas: Canvas, r: number, g: number, b: number, k: number): number {
  const q = Math.round(k * SHADES) / SHADES;
  return colorIndex(canvas.palette, r * q, g * q, b * q);
}

/** Each geometry's bounding box (centre, half extent), for meshes drawn as boxes when small. */
function geometryBoxes(scene: RenderScene): Float64Array {
  const boxes = new Float64Array(scene.geometries.length * 6);
  scene.geometries.forEach((geometry, g) => {
    const p = geometry.positions;
    let x0 = Infinity, y0 = Infinity, z0 = Infinity, x1 = -Infinity, y1 = -Infinity, z1 = -Infinity;
    for (let i = 0; i + 2 < p.length; i += 3) {
      const x = p[i]!, y = p[i + 1]!, z = p[i + 2]!;
      if (!(Number.isFinite(x) && Number.isFinite(y) && Number.isFinite(z))) continue;
      if (x < x0) x0 = x; if (x > x1) x1 = x;
      if (y < y0) y0 = y; if (y > y1) y1 = y;
      if (z < z0) z0 = z; if (z > z1) z1 = z;
    }
    if (!(x0 <= x1)) { x0 = y0 = z0 = -0.5; x1 = y1 = z1 = 0.5; }
    boxes.set([(x0 + x1) / 2, (y0 + y1) / 2, (z0 + z1) / 2, (x1 - x0) / 2, (y1 - y0) / 2, (z1 - z0) / 2], g * 6);
  });
  return boxes;
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

const QX = new Float64Array(4), QZ = new Float64Array(4), SX = new Float64Array(4), SY = new Float64Array(4), SZ = new Float64Array(4);
let transformed = new Float64Array(3 * 1024);

function drawParts(
  canvas: Canvas, cam: Camera, scene: RenderScene, boxes: Float64Array, translucentPass: boolean, stats: Picture['parts'], budget: { pixels: number },
): void {
  const parts = scene.parts;
  const { f, r, u, scale, ox, oy } = cam;
  const box = scene.geometryKeys.get('box') ?? -1;
  const t = parts.transforms, s = parts.scales, col = parts.colors;
  // Opaque parts near to far (what is hidden then fails the depth test instead of being
  // drawn over), translucent ones far to near (so they blend in order).
  const order = translucentPass ? depthOrder(parts, f, false) : nearFirstOrder(parts, cam, canvas);
  const blends = new Map<number, BlendTable>();
  for (let n = 0; n < order.length; n++) {
    const i = order[n]!;
    const alpha = col[i * 4 + 3]! / 255;
    const translucent = alpha < 0.98;
    if (translucent !== translucentPass || alpha <= 0.02) continue;
    const geometry = parts.geometry[i]!;
    const sx = s[i * 3]!, sy = s[i * 3 + 1]!, sz = s[i * 3 + 2]!;
    // The part's box in part space: the unit box for primitives, the geometry's own box for meshes.
    const g6 = geometry * 6;
    const bx = boxes[g6 + 3]! * 2, by = boxes[g6 + 4]! * 2, bz = boxes[g6 + 5]! * 2;
    const m = i * 12 + 3;
    const cxl = boxes[g6]! * sx, cyl = boxes[g6 + 1]! * sy, czl = boxes[g6 + 2]! * sz;
    const px = t[i * 12]! + t[m]! * cxl + t[m + 1]! * cyl + t[m + 2]! * czl;
    const py = t[i * 12 + 1]! + t[m + 3]! * cxl + t[m + 4]! * cyl + t[m + 5]! * czl;
    const pz = t[i * 12 + 2]! + t[m + 6]! * cxl + t[m + 7]! * cyl + t[m + 8]! * czl;
    const cx = (px * r[0]! + py * r[1]! + pz * r[2]!) * scale + ox;
    const cy = oy - (px * u[0]! + py * u[1]! + pz * u[2]!) * scale;
    const radius = 0.5 * Math.sqrt(sx * sx * bx * bx + sy * sy * by * by + sz * sz * bz * bz) * scale;
    if (!(cx + radius >= 0 && cx - radius < canvas.width && cy + radius >= 0 && cy - radius < canvas.height)) {
      stats.culled++;
      continue;
    }
    const emissive = (parts.flags[i]! & EMISSIVE) !== 0;
    const red = col[i * 4]!, green = col[i * 4 + 1]!, blue = col[i * 4 + 2]!;
    let blend: BlendTable | null = null;
    if (translucent) {
      const key = (red << 16 | green << 8 | blue) * 256 + col[i * 4 + 3]!;
      blend = blends.get(key) ?? null;
      if (!blend) blends.set(key, (blend = blendTable(red, green, blue, alpha)));
    }
    const cz = px * f[0]! + py * f[1]! + pz * f[2]!;
    // Behind what nearer parts (and the terrain) already drew: skipped whole.
    if (hidden(canvas, cx - radius, cy - radius, cx + radius, cy + radius, cz - radius / scale)) {
      stats.hidden++;
      continue;
    }
    if (radius < 0.75) {
      // Smaller than a pixel: one pixel, lit as a top face.
      stats.points++;
      const x = Math.floor(cx), y = Math.floor(cy);
      if (x < 0 || y < 0 || x >= canvas.width || y >= canvas.height) continue;
      const k = emissive ? 1 : shade(0, 1, 0);
      if (translucent) fillTriangle(canvas, x, y, cz, x + 1, y, cz, x, y + 1, cz, 0, shadeBlend(canvas, blend!, k, blends));
      else fillRect(canvas, x, y, x + 1, y + 1, cz, shaded(canvas, red, green, blue, k));
      continue;
    }
    // A shape costs about the screen box it covers, drawn or depth-tested away: past the
    // budget the rest is left out (and counted), so a file of huge parts stacked towards
    // the eye cannot hold a worker for minutes.
    const cost = Math.min(canvas.width, 2 * radius + 1) * Math.min(canvas.height, 2 * radius + 1);
    if (cost > budget.pixels) {
      stats.unfinished++;
      continue;
    }
    budget.pixels -= cost;
    stats.shaded++;
    const look = LOOK;
    look.canvas = canvas; look.red = red; look.green = green; look.blue = blue; look.emissive = emissive; look.blend = blend; look.blends = blends;
    if (geometry === box || radius < MESH_AS_BOX_PX) {
      // The box's axes in world space (the rotation's columns), at its size.
      drawBox(cam, cx, cy, cz,
        t[m]! * sx * bx, t[m + 3]! * sx * bx, t[m + 6]! * sx * bx,
        t[m + 1]! * sy * by, t[m + 4]! * sy * by, t[m + 7]! * sy * by,
        t[m + 2]! * sz * bz, t[m + 5]! * sz * bz, t[m + 8]! * sz * bz, look);
    } else {
      const ax = [t[m]! * sx, t[m + 3]! * sx, t[m + 6]! * sx];
      const ay = [t[m + 1]! * sy, t[m + 4]! * sy, t[m + 7]! * sy];
      const az = [t[m + 2]! * sz, t[m + 5]! * sz, t[m + 8]! * sz];
      const g = scene.geometries[geometry]!;
      drawMesh(cam, g.positions, g.indices, t[i * 12]!, t[i * 12 + 1]!, t[i * 12 + 2]!, ax, ay, az, look);
    }
  }
}

/** Reused for every part (one object, not one per part). */
const LOOK: Look = { canvas: null as unknown as Canvas, red: 0, green: 0, blue: 0, emissive: false, blend: null, blends: new Map() };

/** How a part's faces are coloured: its colour shaded per face, or its blend table shaded. */
interface Look {
  canvas: Canvas;
  red: number;
  green: number;
  blue: number;
  emissive: boolean;
  blend: BlendTable | null;
  blends: Map<number, BlendTable>;
}

/** The blend table of a translucent colour at light level k. */
function shadeBlend(canvas: Canvas, base: BlendTable, k: number, blends: Map<number, BlendTable>): BlendTable {
  const q = Math.round(k * SHADES);
  const r = Math.round((base.r * q) / SHADES), g = Math.round((base.g * q) / SHADES), b = Math.round((base.b * q) / SHADES);
  const key = -((r << 16 | g << 8 | b) * 256 + Math.round(base.alpha * 255)) - 1;
  let table = blends.get(key);
  if (!table) blends.set(key, (table = blendTable(r, g, b, base.alpha)));
  void canvas;
  return table;
}

/** The colour of a face at light level k, left in FACE (one object, not one per face). */
const FACE: { color: number; blend: BlendTable | null } = { color: 0, blend: null };
function faceColor(look: Look, k: number): void {
  if (look.emissive) k = 1;
  if (look.blend) { FACE.color = 0; FACE.blend = shadeBlend(look.canvas, look.blend, k, look.blends); }
  else { FACE.color = shaded(look.canvas, look.red, look.green, look.blue, k); FACE.blend = null; }
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

/**
 * Opaque parts in 16 layers of depth, near first, and within a layer by screen cell
 * (a 16 × 16 grid): near-to-far enough that hidden parts fail the occlusion and depth
 * tests, while parts drawn one after another touch the same few rows of the buffers
 * (in plain depth order they jump across the picture, and memory latency dominates).
 */
function nearFirstOrder(parts: RenderScene['parts'], cam: Camera, canvas: Canvas): Uint32Array {
  const count = parts.count;
  const t = parts.transforms;
  const { f, r, u, scale, ox, oy } = cam;
  const depth = new Float32Array(count);
  let min = Infinity, max = -Infinity;
  for (let i = 0; i < count; i++) {
    depth[i] = t[i * 12]! * f[0]! + t[i * 12 + 1]! * f[1]! + t[i * 12 + 2]! * f[2]!;
    const d = depth[i]!;
    if (d < min) min = d;
    if (d > max) max = d;
  }
  const layers = 16, cells = 16;
  const starts = new Uint32Array(layers * cells * cells + 1);
  const bucket = new Uint16Array(count);
  const span = max > min ? (layers - 1e-9) / (max - min) : 0;
  for (let i = 0; i < count; i++) {
    const px = t[i * 12]!, py = t[i * 12 + 1]!, pz = t[i * 12 + 2]!;
    const sx = (px * r[0]! + py * r[1]! + pz * r[2]!) * scale + ox, sy = oy - (px * u[0]! + py * u[1]! + pz * u[2]!) * scale;
    const layer = Number.isFinite(depth[i]!) ? Math.min(layers - 1, Math.floor((depth[i]! - min) * span)) : layers - 1;
    const cx = Math.max(0, Math.min(cells - 1, Math.floor((sx / canvas.width) * cells)));
    const cy = Math.max(0, Math.min(cells - 1, Math.floor((sy / canvas.height) * cells)));
    const b = (layer * cells + cy) * cells + (cy & 1 ? cells - 1 - cx : cx);
    bucket[i] = Number.isFinite(b) ? b : layers * cells * cells - 1;
    starts[bucket[i]! + 1]!++;
  }
  for (let b = 0; b < starts.length - 1; b++) starts[b + 1]! += starts[b]!;
  const order = new Uint32Array(count);
  for (let i = 0; i < count; i++) order[starts[bucket[i]!]!++] = i;
  return order;
}


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

/**
 * A box centred at screen (cx, cy) and depth cz with world axes A, B, C (its full
 * edges): each axis on screen once, then the faces that look at the camera (the ones
 * whose outward axis points against the view) as parallelograms.
 */
function drawBox(
  cam: Camera, cx: number, cy: number, cz: number,
  ax: number, ay: number, az: number, bx: number, by: number, bz: number, qx: number, qy: number, qz: number, look: Look,
): void {
  const { f, r, u, scale } = cam;
  // Each axis on screen: x, y (pixels) and depth.
  const Ax = (ax * r[0]! + ay * r[1]! + az * r[2]!) * scale, Ay = -(ax * u[0]! + ay * u[1]! + az * u[2]!) * scale, Az = ax * f[0]! + ay * f[1]! + az * f[2]!;
  const Bx = (bx * r[0]! + by * r[1]! + bz * r[2]!) * scale, By = -(bx * u[0]! + by * u[1]! + bz * u[2]!) * scale, Bz = bx * f[0]! + by * f[1]! + bz * f[2]!;
  const Cx = (qx * r[0]! + qy * r[1]! + qz * r[2]!) * scale, Cy = -(qx * u[0]! + qy * u[1]! + qz * u[2]!) * scale, Cz = qx * f[0]! + qy * f[1]! + qz * f[2]!;
  // The face on the side of each axis that faces the camera (depth decreasing outwards).
  if (Az !== 0) boxFace(look, cx, cy, cz, Ax, Ay, Az, Bx, By, Bz, Cx, Cy, Cz, ax, ay, az);
  if (Bz !== 0) boxFace(look, cx, cy, cz, Bx, By, Bz, Cx, Cy, Cz, Ax, Ay, Az, bx, by, bz);
  if (Cz !== 0) boxFace(look, cx, cy, cz, Cx, Cy, Cz, Ax, Ay, Az, Bx, By, Bz, qx, qy, qz);
}

/** The face of a box across axis N (screen Nx, Ny, Nz; world nx, ny, nz), spanned by the other two axes. */
function boxFace(
  look: Look, cx: number, cy: number, cz: number, Nx: number, Ny: number, Nz: number,
  Ux: number, Uy: number, Uz: number, Vx: number, Vy: number, Vz: number, nx: number, ny: number, nz: number,
): void {
  const s = Nz < 0 ? 0.5 : -0.5;
  const length = Math.sqrt(nx * nx + ny * ny + nz * nz) || 1;
  const k = shade((nx * s * 2) / length, (ny * s * 2) / length, (nz * s * 2) / length);
  faceColor(look, k);
  // The face's corner at −U/2 − V/2, and its two edges.
  fillParallelogram(look.canvas,
    cx + Nx * s - (Ux + Vx) / 2, cy + Ny * s - (Uy + Vy) / 2, cz + Nz * s - (Uz + Vz) / 2,
    Ux, Uy, Uz, Vx, Vy, Vz, FACE.color, FACE.blend);
}

function drawMesh(
  cam: Camera, positions: Float32Array, indices: Uint32Array, px: number, py: number, pz: number,
  ax: number[], ay: number[], az: number[], look: Look,
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
    if (!(area < 0)) continue;
    const ux = out[b + 3]! - out[a + 3]!, uy = out[b + 4]! - out[a + 4]!, uz = out[b + 5]! - out[a + 5]!;
    const vx = out[c + 3]! - out[a + 3]!, vy = out[c + 4]! - out[a + 4]!, vz = out[c + 5]! - out[a + 5]!;
    const nx = uy * vz - uz * vy, ny = uz * vx - ux * vz, nz = ux * vy - uy * vx;
    const length = Math.sqrt(nx * nx + ny * ny + nz * nz) || 1;
    faceColor(look, shade(nx / length, ny / length, nz / length));
    fillTriangle(look.canvas, out[a]!, out[a + 1]!, out[a + 2]!, out[b]!, out[b + 1]!, out[b + 2]!, out[c]!, out[c + 1]!, out[c + 2]!, FACE.color, FACE.blend);
  }
}

// ---------------------------------------------------------------------------
// Terrain

interface WaterLayer {
  depth: Float32Array;
  color: number[];
  alpha: number;
  /** Screen rows the water's quads reach (the blend visits only these). */
  rowMin: number;
  rowMax: number;
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
  // Half a cell's box on screen: as wide as its footprint (a diamond at 45°) and half as
  // tall, the box of the same area. Cell centres form a centred lattice that these boxes
  // tile without gaps or overdraw (the diamond's bounding box would paint every pixel
  // twice); slopes are closed by each cell's skirt. And how far a stud of height moves down.
  const halfW = Math.max(0.5, (cs * scale * (Math.abs(r[0]!) + Math.abs(r[2]!))) / 2);
  const halfH = Math.max(0.5, (cs * scale * (Math.abs(u[0]!) + Math.abs(u[2]!))) / 4);
  const { width, depth: rows, top } = field;
  let waterDepth: Float32Array | null = null;
  let waterRowMin = Infinity, waterRowMax = -Infinity;
  let cells = 0;
  const stepX = cs * r[0]! * scale, stepBase = -cs * u[0]! * scale, stepDepth = cs * f[0]!;
  const rise = u[1]! * scale, depthRise = f[1]!;
  const inv2cs = 1 / (2 * cs);
  const colors = new Int32Array(256 * (SHADES + 1)).fill(-1);
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
      // Only the neighbours nearer the camera (+x, +z) can leave a gap below this cell on
      // screen; a lower one behind is covered by this cell's own top.
      let low = h;
      if (right < low) low = right;
      if (front < low) low = front;
      if (low === -Infinity) low = h - cs;
      const y0 = Math.ceil(sy - halfH - 0.5), y1 = Math.floor(sy + halfH + (h - low) * rise - 0.5) + 1;
      if (y1 < 0 || y0 >= canvas.height) continue;
      const nx = ((left === -Infinity ? h : left) - (right === -Infinity ? h : right)) * inv2cs;
      const nz = ((back === -Infinity ? h : back) - (front === -Infinity ? h : front)) * inv2cs;
      const length = Math.sqrt(nx * nx + 1 + nz * nz);
      // The colour of this material at this light level: looked up once per pair, not per cell.
      const level = Math.round(shade(nx / length, 1 / length, nz / length) * SHADES);
      const key = field.material[at]! * (SHADES + 1) + level;
      let color = colors[key]!;
      if (color < 0) {
        const m = field.material[at]! * 3;
        color = colors[key] = shaded(canvas, palette[m]!, palette[m + 1]!, palette[m + 2]!, level / SHADES);
      }
      fillRect(canvas, Math.ceil(sx - halfW - 0.5), y0, Math.floor(sx + halfW - 0.5) + 1, y1, zBase + h * depthRise, color);
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
      markNearest(canvas, SX, SY, SZ, waterDepth);
      for (let k = 0; k < 4; k++) {
        if (SY[k]! < waterRowMin) waterRowMin = SY[k]!;
        if (SY[k]! > waterRowMax) waterRowMax = SY[k]!;
      }
      cells += end - i;
      i = end;
    }
  }
  if (!waterDepth) return { cells, water: null };
  const color = [palette[WATER * 3]!, palette[WATER * 3 + 1]!, palette[WATER * 3 + 2]!];
  // Keep water visible even when the place makes it nearly clear.
  const alpha = Math.min(0.85, Math.max(0.35, 1 - terrain.waterTransparency));
  return {
    cells,
    water: { depth: waterDepth, color, alpha, rowMin: Math.max(0, Math.floor(waterRowMin) - 1), rowMax: Math.min(canvas.height - 1, Math.ceil(waterRowMax) + 1) },
  };
}

/** Water over whatever lies behind it (terrain, opaque parts), lit as a flat surface. */
function blendWater(canvas: Canvas, water: WaterLayer): void {
  const { depth, color, alpha } = water;
  const k = shade(0, 1, 0);
  const table = blendTable(color[0]! * k, color[1]! * k, color[2]! * k, alpha);
  // Nothing under the water in the file: drawn as deep water, not as tinted sky.
  const deep = colorIndex(canvas.palette, color[0]! * k * 0.8, color[1]! * k * 0.8, color[2]! * k * 0.8);
  const pixels = canvas.pixels, stride = canvas.stride, palette = canvas.palette, under = canvas.depth, width = canvas.width;
  for (let y = water.rowMin; y <= water.rowMax; y++) {
    for (let x = 0, p = y * width, o = y * stride + 1; x < width; x++, p++, o++) {
      const z = depth[p]!;
      if (z === Infinity || z >= under[p]!) continue;
      if (under[p] === Infinity) pixels[o] = deep;
      else {
        // The table's known entries first: a call per pixel only for colours not yet blended.
        const index = pixels[o]!;
        const known = index < table.result.length ? table.result[index]! : -1;
        pixels[o] = known >= 0 ? known : blendIndex(palette, table, index);
      }
      under[p] = z;
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
