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
 * Fills triangle (x0, y0, z0)-(x1, y1, z1)-(x2, y2, z2) with colour (r, g, b);
 * `alpha` 1 is opaque, below 1 blends without writing depth.
 */
export function fillTriangle(
  c: Canvas, x0: number, y0: number, z0: number, x1: number, y1: number, z1: number, x2: number, y2: number, z2: number,
  r: number, g: number, b: number, alpha: number,
): void {
  const area = (x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0);
  if (area === 0 || !Number.isFinite(area)) return;
  let minX = Math.floor(Math.min(x0, x1, x2)), maxX = Math.ceil(Math.max(x0, x1, x2));
  let minY = Math.floor(Math.min(y0, y1, y2)), maxY = Math.ceil(Math.max(y0, y1, y2));
  if (minX < 0) minX = 0;
  if (minY < 0) minY = 0;
  if (maxX > c.width - 1) maxX = c.width - 1;
  if (maxY > c.height - 1) maxY = c.height - 1;
  if (minX > maxX || minY > maxY) return;
  // Edge functions w_i(x, y) = a_i·x + b_i·y + c_i, positive inside for either winding.
  const s = area > 0 ? 1 : -1;
  const a0 = (y1 - y2) * s, b0 = (x2 - x1) * s, c0 = (x1 * y2 - x2 * y1) * s;
  const a1 = (y2 - y0) * s, b1 = (x0 - x2) * s, c1 = (x2 * y0 - x0 * y2) * s;
  const a2 = (y0 - y1) * s, b2 = (x1 - x0) * s, c2 = (x0 * y1 - x1 * y0) * s;
  const inv = 1 / (area * s);
  // Depth as a plane over the screen.
  const dzdx = (a0 * z0 + a1 * z1 + a2 * z2) * inv;
  const dzdy = (b0 * z0 + b1 * z1 + b2 * z2) * inv;
  const zc = (c0 * z0 + c1 * z1 + c2 * z2) * inv;
  const depth = c.depth, data = c.raster.data, stride = c.raster.stride, width = c.width;
  const opaque = alpha >= 1;
  const keep = 1 - alpha;
  for (let y = minY; y <= maxY; y++) {
    const py = y + 0.5;
    const px = minX + 0.5;
    let w0 = a0 * px + b0 * py + c0, w1 = a1 * px + b1 * py + c1, w2 = a2 * px + b2 * py + c2;
    let z = dzdx * px + dzdy * py + zc;
    let at = y * width + minX;
    let o = y * stride + 1 + minX * 3;
    for (let x = minX; x <= maxX; x++, at++, o += 3, w0 += a0, w1 += a1, w2 += a2, z += dzdx) {
      if (w0 < 0 || w1 < 0 || w2 < 0 || z >= depth[at]!) continue;
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
