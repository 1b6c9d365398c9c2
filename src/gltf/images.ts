/**
 * Images for glTF materials. glTF embeds PNG and JPEG as they are, so a downloaded
 * image is only sniffed; the one image that must be made is a SurfaceAppearance's
 * metalness and roughness, which Roblox keeps as two greyscale maps and glTF as one
 * (roughness in green, metalness in blue). For that, PNGs are decoded here:
 * 8- and 16-bit grey, grey+alpha, RGB, RGBA and palette images (1, 2, 4 and 8 bits),
 * not interlaced. Sizes are checked before anything is allocated; a malformed or
 * unsupported image throws an `ImageError` (the caller leaves the map out).
 */
import { inflateSync } from 'node:zlib';
import { encodePng, newRaster } from '../render/png.js';

export class ImageError extends Error {
  override name = 'ImageError';
}

export type ImageMimeType = 'image/png' | 'image/jpeg';

/** What the bytes are, from their signature; null for anything glTF cannot embed. */
export function imageMimeType(bytes: Uint8Array): ImageMimeType | null {
  if (bytes.length > 8 && bytes[0] === 0x89 && bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47 && bytes[4] === 0x0d && bytes[5] === 0x0a) return 'image/png';
  if (bytes.length > 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  return null;
}

/** One channel per pixel (the first: grey, or red), row by row. */
export interface GreyImage {
  width: number;
  height: number;
  data: Uint8Array;
}

/** Largest image decoded: Roblox itself caps uploads at 1024², this leaves room. */
export const MAX_IMAGE_PIXELS = 4096 * 4096;

const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/** The first channel of a PNG (grey, or red; a palette image's entries' red). */
export function decodePngChannel(bytes: Uint8Array): GreyImage {
  if (imageMimeType(bytes) !== 'image/png') throw new ImageError('not a PNG');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = 8;
  let width = 0, height = 0, depth = 0, colorType = -1;
  let palette: Uint8Array | null = null;
  const idat: Uint8Array[] = [];
  let idatBytes = 0;
  while (pos + 12 <= bytes.length) {
    const length = view.getUint32(pos);
    const type = String.fromCharCode(bytes[pos + 4]!, bytes[pos + 5]!, bytes[pos + 6]!, bytes[pos + 7]!);
    if (pos + 12 + length > bytes.length) throw new ImageError(`PNG chunk ${type} runs past the end`);
    const body = bytes.subarray(pos + 8, pos + 8 + length);
    if (type === 'IHDR') {
      if (length !== 13) throw new ImageError('PNG header is not 13 bytes');
      width = view.getUint32(pos + 8);
      height = view.getUint32(pos + 12);
      depth = body[8]!;
      colorType = body[9]!;
      if (body[12] !== 0) throw new ImageError('interlaced PNGs are not read');
      if (!(width > 0 && height > 0 && width * height <= MAX_IMAGE_PIXELS)) throw new ImageError(`PNG of ${width}×${height} pixels is past the limit`);
      if (CHANNELS[colorType] === undefined) throw new ImageError(`PNG colour type ${colorType}`);
      const depths = colorType === 0 ? [1, 2, 4, 8, 16] : colorType === 3 ? [1, 2, 4, 8] : [8, 16];
      if (!depths.includes(depth)) throw new ImageError(`PNG colour type ${colorType} with ${depth}-bit samples`);
    } else if (type === 'PLTE') {
      palette = body;
    } else if (type === 'IDAT') {
      idat.push(body);
      idatBytes += length;
    } else if (type === 'IEND') {
      break;
    }
    pos += 12 + length;
  }
  if (width === 0) throw new ImageError('PNG without a header');
  if (colorType === 3 && (!palette || palette.length % 3 !== 0)) throw new ImageError('palette PNG without a palette');
  const channels = CHANNELS[colorType]!;
  const bitsPerPixel = channels * depth;
  const stride = Math.ceil((width * bitsPerPixel) / 8);
  const expected = (stride + 1) * height;
  let raw: Buffer;
  try {
    const joined = new Uint8Array(idatBytes);
    let at = 0;
    for (const piece of idat) { joined.set(piece, at); at += piece.length; }
    raw = inflateSync(joined, { maxOutputLength: expected });
  } catch (error) {
    throw new ImageError(`PNG data does not inflate: ${(error as Error).message}`);
  }
  if (raw.length !== expected) throw new ImageError(`PNG data holds ${raw.length} bytes, ${expected} expected`);

  const step = Math.max(1, bitsPerPixel >> 3); // bytes per pixel for the filters
  const out = new Uint8Array(width * height);
  let previous = new Uint8Array(stride);
  let line = new Uint8Array(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const src = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let i = 0; i < stride; i++) {
      const left = i >= step ? line[i - step]! : 0;
      const up = previous[i]!;
      const corner = i >= step ? previous[i - step]! : 0;
      let value = src[i]!;
      switch (filter) {
        case 0: break;
        case 1: value += left; break;
        case 2: value += up; break;
        case 3: value += (left + up) >> 1; break;
        case 4: {
          const p = left + up - corner;
          const pa = Math.abs(p - left), pb = Math.abs(p - up), pc = Math.abs(p - corner);
          value += pa <= pb && pa <= pc ? left : pb <= pc ? up : corner;
          break;
        }
        default: throw new ImageError(`PNG row ${y} has filter ${filter}`);
      }
      line[i] = value & 255;
    }
    const row = y * width;
    if (depth >= 8) {
      const bytesPerSample = depth >> 3;
      for (let x = 0; x < width; x++) {
        const sample = line[x * channels * bytesPerSample]!;
        out[row + x] = colorType === 3 ? paletteRed(palette!, sample) : sample;
      }
    } else {
      const perByte = 8 / depth, mask = (1 << depth) - 1;
      for (let x = 0; x < width; x++) {
        const sample = (line[Math.floor(x / perByte)]! >> (8 - depth * (1 + (x % perByte)))) & mask;
        out[row + x] = colorType === 3 ? paletteRed(palette!, sample) : Math.round((sample * 255) / mask);
      }
    }
    const swap = previous;
    previous = line;
    line = swap;
  }
  return { width, height, data: out };
}

function paletteRed(palette: Uint8Array, index: number): number {
  if (index * 3 >= palette.length) throw new ImageError(`palette index ${index} past the ${palette.length / 3} entries`);
  return palette[index * 3]!;
}

/**
 * glTF's metallic-roughness texture from Roblox's two maps: green = roughness,
 * blue = metalness (either may be missing: then 255, so the factor alone counts). The
 * smaller map is sampled up to the larger one's size.
 */
export function metallicRoughnessPng(metalness: GreyImage | null, roughness: GreyImage | null): Uint8Array {
  const base = metalness && roughness ? (metalness.width * metalness.height >= roughness.width * roughness.height ? metalness : roughness) : metalness ?? roughness;
  if (!base) throw new ImageError('neither a metalness nor a roughness map');
  const { width, height } = base;
  const raster = newRaster(width, height);
  const sample = (image: GreyImage | null, x: number, y: number): number => {
    if (!image) return 255;
    const sx = Math.min(image.width - 1, Math.floor((x * image.width) / width));
    const sy = Math.min(image.height - 1, Math.floor((y * image.height) / height));
    return image.data[sy * image.width + sx]!;
  };
  for (let y = 0; y < height; y++) {
    const o = y * raster.stride;
    raster.data[o] = 0;
    for (let x = 0; x < width; x++) {
      raster.data[o + 1 + x * 3] = 255; // red: occlusion, unused here
      raster.data[o + 2 + x * 3] = sample(roughness, x, y);
      raster.data[o + 3 + x * 3] = sample(metalness, x, y);
    }
  }
  return encodePng(raster, 6);
}
