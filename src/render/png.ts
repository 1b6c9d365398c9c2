/**
 * PNG output: the preview picture as an 8-bit palette image (the renderer draws palette
 * indices straight into PNG scanline layout, a filter byte, 0, before each row, so
 * encoding is one zlib deflate at level 1 plus the chunk framing: the flat colours
 * compress well even at the fastest level), and RGB images (textures made for glTF).
 */
import { Buffer } from 'node:buffer';
import { crc32, deflateSync } from 'node:zlib';

/** An RGB image in PNG scanline layout: `stride` = 1 + 3·width bytes per row. */
export interface Raster {
  width: number;
  height: number;
  stride: number;
  data: Uint8Array;
}

export function newRaster(width: number, height: number): Raster {
  if (!(Number.isInteger(width) && Number.isInteger(height) && width > 0 && height > 0 && width * height <= 1 << 26)) {
    throw new RangeError(`cannot make a ${width}×${height} image`);
  }
  const stride = 1 + width * 3;
  return { width, height, stride, data: new Uint8Array(stride * height) };
}

const SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);

export function encodePng(raster: Raster, level = 1): Uint8Array {
  const header = new Uint8Array(13);
  const view = new DataView(header.buffer);
  view.setUint32(0, raster.width);
  view.setUint32(4, raster.height);
  header[8] = 8; // bit depth
  header[9] = 2; // colour type: RGB
  // compression, filter and interlace methods: 0
  const idat = deflateSync(raster.data, { level });
  return Buffer.concat([SIGNATURE, chunk('IHDR', header), chunk('IDAT', idat), chunk('IEND', new Uint8Array(0))]);
}

/** A palette image from scanlines already in PNG layout (`width + 1` bytes a row, filter byte 0 first). */
export function encodeIndexedPng(scanlines: Uint8Array, width: number, height: number, palette: Uint8Array, colors: number, level = 1): Uint8Array {
  if (scanlines.length !== (width + 1) * height) throw new RangeError(`${scanlines.length} bytes are not ${height} rows of ${width} pixels`);
  if (!(colors >= 1 && colors <= 256 && palette.length >= colors * 3)) throw new RangeError(`a palette of ${colors} colours`);
  const header = new Uint8Array(13);
  const view = new DataView(header.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  header[8] = 8; // bit depth
  header[9] = 3; // colour type: palette
  const idat = deflateSync(scanlines, { level });
  return Buffer.concat([SIGNATURE, chunk('IHDR', header), chunk('PLTE', palette.subarray(0, colors * 3)), chunk('IDAT', idat), chunk('IEND', new Uint8Array(0))]);
}

function chunk(type: string, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + body.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, body.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(body, 8);
  view.setUint32(8 + body.length, crc32(out.subarray(4, 8 + body.length)));
  return out;
}
