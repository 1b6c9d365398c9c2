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

/**
 * Why a downloaded image cannot be embedded as it is; null when it can. A glTF viewer
 * decodes every image it is given, and the Khronos validator reads each one's header:
 * a PNG cut short (the host sent part of it) fails validation, and one whose header
 * claims 65,535² pixels is a decompression bomb in the viewer, whatever few bytes
 * carry it. So the PNG's chunks must all be there (IHDR first, an IDAT, IEND last)
 * and a JPEG's segments up to its frame header; either's size, at most MAX_IMAGE_PIXELS.
 * Only the structure is read, never the pixels.
 */
export function unembeddable(bytes: Uint8Array): string | null {
  const mimeType = imageMimeType(bytes);
  if (mimeType === null) return 'neither PNG nor JPEG';
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let width = 0, height = 0;
  if (mimeType === 'image/png') {
    if (bytes[6] !== 0x1a || bytes[7] !== 0x0a) return 'a damaged PNG signature';
    let pos = 8, idat = false, end = false;
    while (!end) {
      if (pos + 12 > bytes.length) return 'a PNG cut short';
      const length = view.getUint32(pos);
      const type = String.fromCharCode(bytes[pos + 4]!, bytes[pos + 5]!, bytes[pos + 6]!, bytes[pos + 7]!);
      if (length > bytes.length - pos - 12) return `a PNG cut short (in its ${JSON.stringify(type)} chunk)`;
      if (pos === 8) {
        if (type !== 'IHDR' || length !== 13) return 'a PNG that does not start with its header';
        width = view.getUint32(pos + 8);
        height = view.getUint32(pos + 12);
      } else if (type === 'IDAT') idat = true;
      else if (type === 'IEND') end = true;
      pos += 12 + length;
    }
    if (!idat) return 'a PNG without image data';
  } else {
    // Markers after SOI until a frame header (SOF0-15 but DHT, JPG and DAC): its height and width.
    let pos = 2;
    for (;;) {
      if (pos + 4 > bytes.length) return 'a JPEG cut short before its frame header';
      if (bytes[pos] !== 0xff) return 'a damaged JPEG (no marker where one belongs)';
      const marker = bytes[pos + 1]!;
      if (marker === 0xff) { pos++; continue; }
      if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) { pos += 2; continue; }
      if (marker === 0xd9 || marker === 0xda) return 'a JPEG without a frame header';
      const length = view.getUint16(pos + 2);
      if (length < 2 || pos + 2 + length > bytes.length) return 'a JPEG cut short';
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        if (length < 8) return 'a damaged JPEG frame header';
        height = view.getUint16(pos + 5);
        width = view.getUint16(pos + 7);
        break;
      }
      pos += 2 + length;
    }
  }
  if (!(width > 0 && height > 0)) return `an image of ${width}×${height} pixels`;
  if (width * height > MAX_IMAGE_PIXELS) return `an image of ${width}×${height} pixels, past the ${MAX_IMAGE_PIXELS} allowed`;
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
