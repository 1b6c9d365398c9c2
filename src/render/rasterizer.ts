/**
 * The software rasteriser: flat-coloured convex polygons and screen rectangles into
 * a palette-indexed raster with a depth buffer. Coordinates are pixels, x right, y
 * down, pixel centres at +0.5; depth grows away from the camera.
 *
 * Pixels are 16-bit palette indices laid out as PNG scanlines (a filter byte, 0,
 * before each row), so a pixel write is one store and the picture becomes an 8-bit
 * palette PNG with one narrowing copy (palette.ts), which deflate reads a third as
 * much of as RGB.
 * Opaque fills test and write depth; translucent ones test it and blend through a
 * table per colour and opacity (what each palette entry becomes under them).
 *
 * Occlusion: the canvas keeps, per 8×8 tile, the farthest depth drawn in it (worked
 * out again only for tiles written to since). `hidden` says whether a screen box at a
 * given nearest depth lies behind everything already drawn, so a part that nearer
 * parts cover is skipped before any of its faces is set up.
 */
import { blendIndex, type BlendTable, type Palette } from './palette.js';

export interface Canvas {
  width: number;
  height: number;
  /** 1 + width entries per row: the PNG filter byte, then a palette index per pixel. */
  stride: number;
  pixels: Uint16Array;
  depth: Float32Array;
  palette: Palette;
  /** Tiles per row. */
  tilesX: number;
  /** Per tile: the farthest depth in it (Infinity while any pixel is empty). */
  tileFar: Float32Array;
  /** Per tile: written to since `tileFar` was worked out. */
  tileDirty: Uint8Array;
}

const TILE_LOG2 = 3;
const TILE = 1 << TILE_LOG2;

export function newCanvas(width: number, height: number, palette: Palette): Canvas {
  if (!(Number.isInteger(width) && Number.isInteger(height) && width > 0 && height > 0 && width * height <= 1 << 26)) {
    throw new RangeError(`cannot make a ${width}×${height} picture`);
  }
  const tilesX = Math.ceil(width / TILE), tiles = tilesX * Math.ceil(height / TILE);
  return {
    width, height, stride: width + 1, pixels: new Uint16Array((width + 1) * height), depth: new Float32Array(width * height), palette,
    tilesX, tileFar: new Float32Array(tiles).fill(Infinity), tileDirty: new Uint8Array(tiles),
  };
}

/** Marks the tiles of row y between columns x0 and x1 (inclusive) as written. */
function touch(c: Canvas, y: number, x0: number, x1: number): void {
  const base = (y >> TILE_LOG2) * c.tilesX;
  for (let t = x0 >> TILE_LOG2; t <= x1 >> TILE_LOG2; t++) c.tileDirty[base + t] = 1;
}

/** Whether everything in the screen box [x0, x1] × [y0, y1] is already nearer than `near`. */
export function hidden(c: Canvas, x0: number, y0: number, x1: number, y1: number, near: number): boolean {
  const tx0 = Math.max(0, Math.floor(x0) >> TILE_LOG2), tx1 = Math.min(c.tilesX - 1, Math.floor(x1) >> TILE_LOG2);
  const ty0 = Math.max(0, Math.floor(y0) >> TILE_LOG2), ty1 = Math.min((c.tileFar.length / c.tilesX) - 1, Math.floor(y1) >> TILE_LOG2);
  if (tx0 > tx1 || ty0 > ty1) return false;
  for (let ty = ty0; ty <= ty1; ty++) {
    for (let tx = tx0; tx <= tx1; tx++) {
      const tile = ty * c.tilesX + tx;
      if (c.tileDirty[tile] === 1) {
        c.tileDirty[tile] = 0;
        let far = -Infinity;
        const xEnd = Math.min(c.width, (tx + 1) * TILE), yEnd = Math.min(c.height, (ty + 1) * TILE);
        for (let y = ty * TILE; y < yEnd && far !== Infinity; y++) {
          for (let at = y * c.width + tx * TILE, end = y * c.width + xEnd; at < end; at++) if (c.depth[at]! > far) far = c.depth[at]!;
        }
        c.tileFar[tile] = far;
      }
      if (!(c.tileFar[tile]! < near)) return false;
    }
  }
  return true;
}

// Per-edge half-plane bounds for one polygon: x ≥ k1·y + k0 (left edges), x ≤ k1·y + k0 (right edges).
const LEFT_K1 = new Float64Array(4), LEFT_K0 = new Float64Array(4), RIGHT_K1 = new Float64Array(4), RIGHT_K0 = new Float64Array(4);

/**
 * Fills the convex polygon of `n` (3 or 4) screen vertices in `xs`, `ys`, `zs` (either
 * winding) with palette colour `color`, or blends through `blend` (depth tested, not
 * written), or with `color` −1 only writes the nearer depths. Each row is clipped to the polygon analytically (no division per row), so
 * only covered pixels are visited; depth is the plane through the first three vertices.
 */
export function fillConvex(
  c: Canvas, xs: Float64Array, ys: Float64Array, zs: Float64Array, n: number, color: number, blend: BlendTable | null,
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
  let row0 = Math.max(0, Math.ceil(minY - 0.5));
  let row1 = Math.min(c.height - 1, Math.floor(maxY - 0.5));
  if (row0 > row1) return;
  // Edges: a·x + b·y + c ≥ 0 inside.
  let lefts = 0, rights = 0;
  for (let i = 0; i < n; i++) {
    const j = i + 1 === n ? 0 : i + 1;
    const a = (ys[i]! - ys[j]!) * s, b = (xs[j]! - xs[i]!) * s, k = (xs[i]! * ys[j]! - xs[j]! * ys[i]!) * s;
    if (a > 0) { LEFT_K1[lefts] = -b / a; LEFT_K0[lefts++] = -k / a; }
    else if (a < 0) { RIGHT_K1[rights] = -b / a; RIGHT_K0[rights++] = -k / a; }
    else if (b !== 0) {
      // A horizontal edge bounds the rows instead.
      const edge = -k / b;
      if (b > 0) row0 = Math.max(row0, Math.ceil(edge - 0.5));
      else row1 = Math.min(row1, Math.floor(edge - 0.5));
    }
  }
  // Depth plane z = dzdx·x + dzdy·y + z0 through vertices 0, 1, 2.
  const x0 = xs[0]!, y0 = ys[0]!, z0 = zs[0]!;
  const ux = xs[1]! - x0, uy = ys[1]! - y0, uz = zs[1]! - z0;
  const vx = xs[2]! - x0, vy = ys[2]! - y0, vz = zs[2]! - z0;
  const det = ux * vy - uy * vx;
  if (det === 0) return;
  const dzdx = (uz * vy - uy * vz) / det;
  const dzdy = (ux * vz - uz * vx) / det;
  const depth = c.depth, pixels = c.pixels, stride = c.stride, width = c.width;
  for (let y = row0; y <= row1; y++) {
    const py = y + 0.5;
    let lo = -Infinity, hi = Infinity;
    for (let e = 0; e < lefts; e++) { const bound = LEFT_K1[e]! * py + LEFT_K0[e]!; if (bound > lo) lo = bound; }
    for (let e = 0; e < rights; e++) { const bound = RIGHT_K1[e]! * py + RIGHT_K0[e]!; if (bound < hi) hi = bound; }
    let x = Math.ceil(lo - 0.5);
    let end = Math.floor(hi - 0.5);
    if (x < 0) x = 0;
    if (end > width - 1) end = width - 1;
    if (x > end) continue;
    let z = z0 + dzdx * (x + 0.5 - x0) + dzdy * (py - y0);
    let at = y * width + x;
    let o = y * stride + 1 + x;
    if (blend === null && color >= 0) {
      touch(c, y, x, end);
      for (; x <= end; x++, at++, o++, z += dzdx) {
        if (z < depth[at]!) { depth[at] = z; pixels[o] = color; }
      }
    } else if (blend === null) {
      for (; x <= end; x++, at++, z += dzdx) if (z < depth[at]!) depth[at] = z;
    } else {
      blendSpan(c, blend, at, o, end - x + 1, z, dzdx);
    }
  }
}

/**
 * Fills the parallelogram with corner (x0, y0, z0) and edges (ux, uy, uz), (vx, vy, vz)
 * (a box face on screen): the general fill unrolled for two pairs of parallel edges.
 * A point is inside when both its coordinates along the edges are in [0, 1]; along a
 * row they change linearly, so each row's span is four multiply-adds.
 */
export function fillParallelogram(
  c: Canvas, x0: number, y0: number, z0: number, ux: number, uy: number, uz: number, vx: number, vy: number, vz: number,
  color: number, blend: BlendTable | null,
): void {
  const det = ux * vy - uy * vx;
  if (!(Math.abs(det) > 1e-9)) return;
  // (a, b) of pixel (x, y): a = ((x − x0)·vy − (y − y0)·vx) / det, b = ((y − y0)·ux − (x − x0)·uy) / det.
  const ax = vy / det, ay = -vx / det, bx = -uy / det, by = ux / det;
  const minY = Math.min(y0, y0 + uy, y0 + vy, y0 + uy + vy), maxY = Math.max(y0, y0 + uy, y0 + vy, y0 + uy + vy);
  const row0 = Math.max(0, Math.ceil(minY - 0.5)), row1 = Math.min(c.height - 1, Math.floor(maxY - 0.5));
  if (row0 > row1) return;
  const dzdx = uz * ax + vz * bx, dzdy = uz * ay + vz * by;
  // x bounds from a ∈ [0, 1] and b ∈ [0, 1]: x = x0 + (t − (y − y0)·ay) / ax for t = 0, 1 (when ax ≠ 0).
  const invA = ax !== 0 ? 1 / ax : 0, invB = bx !== 0 ? 1 / bx : 0;
  const depth = c.depth, pixels = c.pixels, stride = c.stride, width = c.width;
  for (let y = row0; y <= row1; y++) {
    const dy = y + 0.5 - y0;
    let lo = -Infinity, hi = Infinity;
    const aRow = dy * ay, bRow = dy * by;
    if (ax !== 0) {
      const p = x0 - aRow * invA, q = x0 + (1 - aRow) * invA;
      if (p < q) { lo = p; hi = q; } else { lo = q; hi = p; }
    } else if (aRow < 0 || aRow > 1) continue;
    if (bx !== 0) {
      const p = x0 - bRow * invB, q = x0 + (1 - bRow) * invB;
      if (p < q) { if (p > lo) lo = p; if (q < hi) hi = q; } else { if (q > lo) lo = q; if (p < hi) hi = p; }
    } else if (bRow < 0 || bRow > 1) continue;
    const first = Math.ceil(lo - 0.5), last = Math.floor(hi - 0.5);
    // Small integers from here on (`| 0`, after clamping to the row: a coordinate past
    // ±2^31 would wrap): V8 then indexes the typed arrays without a float check per pixel.
    let x = first < 0 ? 0 : first > width ? width : first | 0;
    const end = last > width - 1 ? width - 1 : last < -1 ? -1 : last | 0;
    if (x > end) continue;
    let z = z0 + dzdx * (x + 0.5 - x0) + dzdy * dy;
    let at = y * width + x;
    let o = y * stride + 1 + x;
    if (blend === null) {
      touch(c, y, x, end);
      for (; x <= end; x++, at++, o++, z += dzdx) {
        if (z < depth[at]!) { depth[at] = z; pixels[o] = color; }
      }
    } else {
      blendSpan(c, blend, at, o, end - x + 1, z, dzdx);
    }
  }
}

/** Keeps the nearest depth of a quad per pixel in `nearest` (a translucent layer blended later); no pixel changes. */
export function markNearest(c: Canvas, xs: Float64Array, ys: Float64Array, zs: Float64Array, nearest: Float32Array): void {
  const saved = c.depth;
  c.depth = nearest;
  try {
    fillConvex(c, xs, ys, zs, 4, -1, null);
  } finally {
    c.depth = saved;
  }
}

const TX = new Float64Array(3), TY = new Float64Array(3), TZ = new Float64Array(3);

/** A triangle through fillConvex. */
export function fillTriangle(
  c: Canvas, x0: number, y0: number, z0: number, x1: number, y1: number, z1: number, x2: number, y2: number, z2: number,
  color: number, blend: BlendTable | null,
): void {
  TX[0] = x0; TX[1] = x1; TX[2] = x2;
  TY[0] = y0; TY[1] = y1; TY[2] = y2;
  TZ[0] = z0; TZ[1] = z1; TZ[2] = z2;
  fillConvex(c, TX, TY, TZ, 3, color, blend);
}

/** Fills the pixel rectangle [x0, x1) × [y0, y1) at one depth (opaque, depth-tested). */
export function fillRect(c: Canvas, x0: number, y0: number, x1: number, y1: number, z: number, color: number): void {
  if (x0 < 0) x0 = 0;
  if (y0 < 0) y0 = 0;
  if (x1 > c.width) x1 = c.width;
  if (y1 > c.height) y1 = c.height;
  const depth = c.depth, pixels = c.pixels, stride = c.stride, width = c.width;
  for (let y = y0; y < y1; y++) {
    if (x0 < x1) touch(c, y, x0, x1 - 1);
    let at = y * width + x0;
    let o = y * stride + 1 + x0;
    for (let x = x0; x < x1; x++, at++, o++) {
      if (z < depth[at]!) { depth[at] = z; pixels[o] = color; }
    }
  }
}

/** Clears to a vertical gradient of palette bands (`bands`, top to bottom) and resets depth. */
export function clearBands(c: Canvas, bands: readonly number[]): void {
  const { pixels, stride } = c;
  for (let y = 0; y < c.height; y++) {
    const o = y * stride;
    pixels[o] = 0; // PNG filter: none
    pixels.fill(bands[Math.min(bands.length - 1, Math.floor((y * bands.length) / c.height))]!, o + 1, o + stride);
  }
  c.depth.fill(Infinity);
  c.tileFar.fill(Infinity);
  c.tileDirty.fill(0);
}

/**
 * A translucent span of `count` pixels from depth index `at` and pixel index `o`: where
 * it lies in front, each pixel becomes its blend with what is under it (blend tables
 * fill in as colours meet). Depth is left as it is, so what lies behind still draws.
 */
function blendSpan(c: Canvas, blend: BlendTable, at: number, o: number, count: number, z: number, dzdx: number): void {
  const depth = c.depth, pixels = c.pixels;
  for (let i = 0; i < count; i++, at++, o++, z += dzdx) {
    if (z < depth[at]!) {
      const under = pixels[o]!;
      const known = under < blend.result.length ? blend.result[under]! : -1;
      pixels[o] = known >= 0 ? known : blendIndex(c.palette, blend, under);
    }
  }
}
