/**
 * The picture's colours. Drawing works on palette indices (16-bit, so no colour is
 * ever refused or changed while drawing); each colour is added once, by exact value,
 * when a fill first asks for it. Shading is quantised by the callers, so most maps
 * need a few dozen to a few hundred colours.
 *
 * The PNG is an 8-bit palette image: with 256 colours or fewer the indices are
 * narrowed as they are; with more, the used colours are reduced to 256 by median cut
 * (weighted by how many pixels show each) and every pixel is mapped once.
 *
 * Translucency works on indices too: a blend table, made per colour and opacity,
 * says what each palette entry becomes under it, filled in as pixels ask.
 */
export interface Palette {
  /** r, g, b per entry (grows). */
  rgb: Uint8Array;
  count: number;
  /** 0xRRGGBB → index. */
  lookup: Map<number, number>;
}

export interface BlendTable {
  r: number;
  g: number;
  b: number;
  alpha: number;
  /** Per palette index: the blended index, −1 until first asked (grows with the palette). */
  result: Int32Array;
}

/** The most colours a picture holds while it is drawn (16-bit indices). */
const MAX_COLORS = 65536;

export function newPalette(): Palette {
  return { rgb: new Uint8Array(768), count: 0, lookup: new Map() };
}

export function resetPalette(palette: Palette): void {
  palette.count = 0;
  palette.lookup.clear();
}

/** The index of a colour (components rounded and clamped to 0..255). */
export function colorIndex(palette: Palette, r: number, g: number, b: number): number {
  const R = byte(r), G = byte(g), B = byte(b);
  const key = (R << 16) | (G << 8) | B;
  const known = palette.lookup.get(key);
  if (known !== undefined) return known;
  let index: number;
  if (palette.count < MAX_COLORS) {
    index = palette.count++;
    if (index * 3 + 3 > palette.rgb.length) {
      const bigger = new Uint8Array(Math.min(MAX_COLORS * 3, palette.rgb.length * 2));
      bigger.set(palette.rgb);
      palette.rgb = bigger;
    }
    palette.rgb[index * 3] = R; palette.rgb[index * 3 + 1] = G; palette.rgb[index * 3 + 2] = B;
  } else {
    index = nearest(palette.rgb, palette.count, R, G, B);
  }
  palette.lookup.set(key, index);
  return index;
}

export function blendTable(r: number, g: number, b: number, alpha: number): BlendTable {
  return { r, g, b, alpha, result: new Int32Array(256).fill(-1) };
}

/** What palette entry `under` becomes with the table's colour over it. */
export function blendIndex(palette: Palette, table: BlendTable, under: number): number {
  if (under < table.result.length) {
    const known = table.result[under]!;
    if (known >= 0) return known;
  } else {
    const bigger = new Int32Array(Math.max(under + 1, table.result.length * 2)).fill(-1);
    bigger.set(table.result);
    table.result = bigger;
  }
  const keep = 1 - table.alpha, a = table.alpha;
  const index = colorIndex(palette,
    palette.rgb[under * 3]! * keep + table.r * a,
    palette.rgb[under * 3 + 1]! * keep + table.g * a,
    palette.rgb[under * 3 + 2]! * keep + table.b * a);
  table.result[under] = index;
  return index;
}

/**
 * The picture as 8-bit PNG scanlines and its palette: `pixels` holds 16-bit indices
 * in the same layout (a filter byte, 0, before each row).
 */
export function toIndexed(palette: Palette, pixels: Uint16Array, stride: number): { scanlines: Uint8Array; rgb: Uint8Array; colors: number } {
  const scanlines = new Uint8Array(pixels.length);
  if (palette.count <= 256) {
    scanlines.set(pixels); // every index fits in a byte: a native narrowing copy
    return { scanlines, rgb: palette.rgb.subarray(0, palette.count * 3), colors: Math.max(1, palette.count) };
  }
  // Pixels per colour (the filter bytes count for index 0: a few hundred among ~600k, no matter).
  const weights = new Float64Array(palette.count);
  for (let i = 0; i < pixels.length; i++) { const index = pixels[i]!; weights[index] = weights[index]! + 1; }
  const { map, rgb, colors } = medianCut(palette, weights, 256);
  for (let i = 0; i < pixels.length; i++) scanlines[i] = map[pixels[i]!]!;
  for (let row = 0; row < pixels.length; row += stride) scanlines[row] = 0; // the filter bytes: none
  return { scanlines, rgb, colors };
}

/**
 * Median cut over the palette's colours, weighted: the box with the most weight times
 * spread is split at the weighted median of its widest channel until there are
 * `target` boxes; each box becomes its weighted mean colour.
 */
function medianCut(palette: Palette, weights: Float64Array, target: number): { map: Uint8Array; rgb: Uint8Array; colors: number } {
  const used: number[] = [];
  for (let i = 0; i < palette.count; i++) if (weights[i]! > 0) used.push(i);
  const p = palette.rgb;
  type Box = { members: number[]; score: number; channel: number };
  const boxOf = (members: number[]): Box => {
    let best = 0, channel = 0, total = 0;
    for (let c = 0; c < 3; c++) {
      let lo = 255, hi = 0;
      for (const m of members) { const v = p[m * 3 + c]!; if (v < lo) lo = v; if (v > hi) hi = v; }
      if (hi - lo > best) { best = hi - lo; channel = c; }
    }
    for (const m of members) total += weights[m]!;
    return { members, score: members.length > 1 ? best * Math.sqrt(total) : -1, channel };
  };
  const boxes: Box[] = [boxOf(used)];
  while (boxes.length < target) {
    let pick = -1;
    for (let b = 0; b < boxes.length; b++) if (boxes[b]!.score > 0 && (pick === -1 || boxes[b]!.score > boxes[pick]!.score)) pick = b;
    if (pick === -1) break;
    const { members, channel } = boxes[pick]!;
    members.sort((a, b) => p[a * 3 + channel]! - p[b * 3 + channel]!);
    let half = 0, total = 0;
    for (const m of members) total += weights[m]!;
    let cut = 1;
    for (let k = 0; k < members.length - 1; k++) {
      half += weights[members[k]!]!;
      if (half >= total / 2) { cut = k + 1; break; }
      cut = k + 1;
    }
    boxes.splice(pick, 1, boxOf(members.slice(0, cut)), boxOf(members.slice(cut)));
  }
  const map = new Uint8Array(palette.count);
  const rgb = new Uint8Array(boxes.length * 3);
  boxes.forEach((box, index) => {
    let r = 0, g = 0, b = 0, total = 0;
    for (const m of box.members) {
      const w = weights[m]!;
      r += p[m * 3]! * w; g += p[m * 3 + 1]! * w; b += p[m * 3 + 2]! * w; total += w;
      map[m] = index;
    }
    rgb[index * 3] = Math.round(r / total); rgb[index * 3 + 1] = Math.round(g / total); rgb[index * 3 + 2] = Math.round(b / total);
  });
  return { map, rgb, colors: Math.max(1, boxes.length) };
}

function nearest(rgb: Uint8Array, count: number, R: number, G: number, B: number): number {
  let index = 0, best = Infinity;
  for (let i = 0; i < count; i++) {
    const dr = rgb[i * 3]! - R, dg = rgb[i * 3 + 1]! - G, db = rgb[i * 3 + 2]! - B;
    const d = 2 * dr * dr + 4 * dg * dg + 3 * db * db;
    if (d < best) { best = d; index = i; }
  }
  return index;
}

function byte(x: number): number {
  const n = Math.round(x);
  return n >= 0 ? (n <= 255 ? n : 255) : 0;
}
