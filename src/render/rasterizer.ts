/**
 * The software rasteriser: flat-coloured triangles and screen rectangles into an RGB
 * raster (PNG scanline layout) with a depth buffer. Coordinates are pixels, x right, y
 * down, pixel centres at +0.5; depth grows away from the camera. Opaque fills test and
 * write depth; translucent ones test it and blend over what is there.
 */
import type { Raster } from './png.js';

export interface Canvas {
  raster: Raster;
  width: number;
  height: number;
  depth: Float32Array;
}

export function newCanvas(raster: Raster): Canvas {
  return { raster, width: raster.width, height: raster.height, depth: new Float32Array(raster.width * raster.height).fill(Infinity) };
}

/**
 * Fills the convex polygon of `n` (3 or 4) screen vertices in `xs`, `ys`, `zs` (either
 * winding) with colour (r, g, b); `alpha` 1 is opaque, below 1 blends without writing
 * depth. Each row is clipped to the polygon's span analytically, so only covered
 * pixels are visited; depth is the plane through the first three vertices. With
 * `nearest`, only the nearest depth per pixel is kept there (a translucent layer drawn later).
 */
export function fillConvex(
  c: Canvas, xs: ArrayLike<number>, ys: ArrayLike<number>, zs: ArrayLike<number>, n: number,
  r: number, g: number, b: number, alpha: number, nearest?: Float32Array,
): void {
  let area = 0;
  let minY = Infinity, maxY = -Infinity;
  for (let i = 0; i < n; i++) {
    const j = i + 1 === n ? 0 : i + 1;
    area += xs[i]! * ys[j]! - xs[j]! * ys[i]!;
    if (ys[i]! < minY) minY = ys[i]!;
    if (ys[i]! > maxY) maxY = ys[i]!;
  }
  if (area === 0 || !Number.isFinite(area)) return;
  const s = area > 0 ? 1 : -1;
  // Edges: a·x + b·y + c ≥ 0 inside.
  for (let i = 0; i < n; i++) {
    const j = i + 1 === n ? 0 : i + 1;
    EA[i] = (ys[i]! - ys[j]!) * s;
    EB[i] = (xs[j]! - xs[i]!) * s;
    EC[i] = (xs[i]! * ys[j]! - xs[j]! * ys[i]!) * s;
  }
  // Depth plane z = dzdx·x + dzdy·y + z0 through vertices 0, 1, 2.
  const x0 = xs[0]!, y0 = ys[0]!, z0 = zs[0]!;
  const ux = xs[1]! - x0, uy = ys[1]! - y0, uz = zs[1]! - z0;
  const vx = xs[2]! - x0, vy = ys[2]! - y0, vz = zs[2]! - z0;
  const det = ux * vy - uy * vx;
  if (det === 0) return;
  const dzdx = (uz * vy - uy * vz) / det;
  const dzdy = (ux * vz - uz * vx) / det;
  const row0 = Math.max(0, Math.ceil(minY - 0.5));
  const row1 = Math.min(c.height - 1, Math.floor(maxY - 0.5));
  const depth = c.depth, data = c.raster.data, stride = c.raster.stride, width = c.width;
  const opaque = alpha >= 1;
  const keep = 1 - alpha;
  for (let y = row0; y <= row1; y++) {
    const py = y + 0.5;
    let lo = -Infinity, hi = Infinity;
    for (let i = 0; i < n; i++) {
      const a = EA[i]!, rest = EB[i]! * py + EC[i]!;
      if (a > 0) { const bound = -rest / a; if (bound > lo) lo = bound; }
      else if (a < 0) { const bound = -rest / a; if (bound < hi) hi = bound; }
      else if (rest < 0) { lo = Infinity; break; }
    }
    let x = Math.ceil(lo - 0.5);
    let end = Math.floor(hi - 0.5);
    if (x < 0) x = 0;
    if (end > width - 1) end = width - 1;
    if (x > end) continue;
    let z = z0 + dzdx * (x + 0.5 - x0) + dzdy * (py - y0);
    let at = y * width + x;
    if (nearest) {
      for (; x <= end; x++, at++, z += dzdx) if (z < nearest[at]!) nearest[at] = z;
      continue;
    }
    let o = y * stride + 1 + x * 3;
    for (; x <= end; x++, at++, o += 3, z += dzdx) {
      if (z >= depth[at]!) continue;
      if (opaque) {
        depth[at] = z;
        data[o] = r; data[o + 1] = g; data[o + 2] = b;
      } else {
        data[o] = data[o]! * keep + r * alpha;
        data[o + 1] = data[o + 1]! * keep + g * alpha;
        data[o + 2] = data[o + 2]! * keep + b * alpha;
      }
    }
  }
}

const EA = new Float64Array(4), EB = new Float64Array(4), EC = new Float64Array(4);
const TX = new Float64Array(3), TY = new Float64Array(3), TZ = new Float64Array(3);

/** A triangle through fillConvex. */
export function fillTriangle(
  c: Canvas, x0: number, y0: number, z0: number, x1: number, y1: number, z1: number, x2: number, y2: number, z2: number,
  r: number, g: number, b: number, alpha: number,
): void {
  TX[0] = x0; TX[1] = x1; TX[2] = x2;
  TY[0] = y0; TY[1] = y1; TY[2] = y2;
  TZ[0] = z0; TZ[1] = z1; TZ[2] = z2;
  fillConvex(c, TX, TY, TZ, 3, r, g, b, alpha);
}

/** Fills the pixel rectangle [x0, x1) × [y0, y1) at one depth (opaque, depth-tested). */
export function fillRect(c: Canvas, x0: number, y0: number, x1: number, y1: number, z: number, r: number, g: number, b: number): void {
  if (x0 < 0) x0 = 0;
  if (y0 < 0) y0 = 0;
  if (x1 > c.width) x1 = c.width;
  if (y1 > c.height) y1 = c.height;
  const depth = c.depth, data = c.raster.data, stride = c.raster.stride, width = c.width;
  for (let y = y0; y < y1; y++) {
    let at = y * width + x0;
    let o = y * stride + 1 + x0 * 3;
    for (let x = x0; x < x1; x++, at++, o += 3) {
      if (z >= depth[at]!) continue;
      depth[at] = z;
      data[o] = r; data[o + 1] = g; data[o + 2] = b;
    }
  }
}

/** Clears to a vertical gradient from `top` to `bottom` (RGB) and resets depth. */
export function clearSky(c: Canvas, top: readonly number[], bottom: readonly number[]): void {
  const { data, stride } = c.raster;
  for (let y = 0; y < c.height; y++) {
    const t = y / Math.max(1, c.height - 1);
    const o = y * stride;
    data[o] = 0; // PNG filter: none
    data[o + 1] = Math.round(top[0]! + (bottom[0]! - top[0]!) * t);
    data[o + 2] = Math.round(top[1]! + (bottom[1]! - top[1]!) * t);
    data[o + 3] = Math.round(top[2]! + (bottom[2]! - top[2]!) * t);
    // Double the filled span until the row is full.
    for (let filled = 3; filled < stride - 1; filled *= 2) {
      data.copyWithin(o + 1 + filled, o + 1, o + 1 + Math.min(filled, stride - 1 - filled));
    }
  }
  c.depth.fill(Infinity);
}
