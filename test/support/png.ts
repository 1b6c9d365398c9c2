/** A small PNG reader for the tests: 8-bit RGB/RGBA/palette, every filter type, no interlace. */
import { inflateSync } from 'node:zlib';

export interface Image {
  width: number;
  height: number;
  /** RGB per pixel. */
  rgb: Uint8Array;
}

export function readPng(bytes: Uint8Array): Image {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  signature.forEach((b, i) => { if (bytes[i] !== b) throw new Error('not a PNG'); });
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = 8, width = 0, height = 0, channels = 0;
  let palette: Uint8Array | null = null;
  const idat: Uint8Array[] = [];
  while (pos < bytes.length) {
    const length = view.getUint32(pos);
    const type = String.fromCharCode(...bytes.subarray(pos + 4, pos + 8));
    const body = bytes.subarray(pos + 8, pos + 8 + length);
    if (type === 'IHDR') {
      width = view.getUint32(pos + 8);
      height = view.getUint32(pos + 12);
      if (body[8] !== 8 || body[12] !== 0) throw new Error('only 8-bit, non-interlaced PNGs');
      channels = body[9] === 2 ? 3 : body[9] === 6 ? 4 : body[9] === 3 ? 1 : 0;
      if (!channels) throw new Error('only RGB, RGBA or palette PNGs');
    } else if (type === 'PLTE') palette = body;
    else if (type === 'IDAT') idat.push(body);
    else if (type === 'IEND') break;
    pos += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const pixels = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    for (let x = 0; x < stride; x++) {
      const value = raw[y * (stride + 1) + 1 + x]!;
      const a = x >= channels ? pixels[y * stride + x - channels]! : 0;
      const b = y > 0 ? pixels[(y - 1) * stride + x]! : 0;
      const c = x >= channels && y > 0 ? pixels[(y - 1) * stride + x - channels]! : 0;
      const predictor = filter === 0 ? 0 : filter === 1 ? a : filter === 2 ? b : filter === 3 ? (a + b) >> 1 : paeth(a, b, c);
      pixels[y * stride + x] = (value + predictor) & 255;
    }
  }
  const rgb = new Uint8Array(width * height * 3);
  if (channels === 1) {
    if (!palette) throw new Error('palette PNG without PLTE');
    for (let p = 0; p < width * height; p++) {
      const index = pixels[p]!;
      if (index * 3 + 2 >= palette.length) throw new Error(`palette index ${index} past the palette`);
      for (let k = 0; k < 3; k++) rgb[p * 3 + k] = palette[index * 3 + k]!;
    }
  } else {
    for (let p = 0; p < width * height; p++) for (let k = 0; k < 3; k++) rgb[p * 3 + k] = pixels[p * channels + k]!;
  }
  return { width, height, rgb };
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

export function pixel(image: Image, x: number, y: number): [number, number, number] {
  const i = (Math.floor(y) * image.width + Math.floor(x)) * 3;
  return [image.rgb[i]!, image.rgb[i + 1]!, image.rgb[i + 2]!];
}
