/**
 * Meshes `version 1.00` and `1.01`: text. A face-count line, then for each corner of
 * each face `[x,y,z][nx,ny,nz][u,v,w]`. Version 1.00 stores positions at twice
 * their size; both store v flipped against the binary versions. No index buffer:
 * every three vertices are a triangle.
 */
import type { FileMeshAsset } from '../types.js';
import type { MeshLimits } from '../limits.js';
import { fail, meshReader, type MeshReader } from '../reader.js';

const latin1 = new TextDecoder('latin1');
/** The shortest vector, "[0,0,0]": what a declared face count must leave room for. */
const MIN_VECTOR_BYTES = 7;

export function decodeTextMesh(bytes: Uint8Array, version: string, bodyStart: number, limits: MeshLimits): FileMeshAsset {
  const r = meshReader(bytes, `mesh ${version}`, bodyStart);
  // A complete file ends with a vector's "]" (and maybe white space): cheap to check first.
  let last = bytes.length - 1;
  while (last >= bodyStart && (bytes[last] === 0x20 || bytes[last] === 0x09 || bytes[last] === 0x0a || bytes[last] === 0x0d)) last--;
  if (last < bodyStart || bytes[last] !== 0x5d) fail(r, 'the data does not end with a complete vector ("]")', last + 1);
  const faceCount = readFaceCountLine(r);
  if (faceCount > limits.maxTriangles) fail(r, `face count ${faceCount} exceeds the limit of ${limits.maxTriangles}`);
  const vertexCount = faceCount * 3;
  if (vertexCount > limits.maxVertices) fail(r, `vertex count ${vertexCount} exceeds the limit of ${limits.maxVertices}`);
  if (vertexCount * 3 * MIN_VECTOR_BYTES > r.end - r.pos) {
    fail(r, `face count ${faceCount} needs at least ${vertexCount * 3 * MIN_VECTOR_BYTES} bytes of vectors, only ${r.end - r.pos} left`);
  }
  const scale = version === '1.00' ? 0.5 : 1;
  const positions = new Float32Array(vertexCount * 3);
  const normals = new Float32Array(vertexCount * 3);
  const uvs = new Float32Array(vertexCount * 2);
  const vector: number[] = [0, 0, 0];
  // One string of the whole file, so each number is a slice of it (offsets are the same: latin1 is one byte per character).
  const text = latin1.decode(bytes);
  for (let i = 0; i < vertexCount; i++) {
    readVector(r, text, vector);
    positions[i * 3] = vector[0]! * scale;
    positions[i * 3 + 1] = vector[1]! * scale;
    positions[i * 3 + 2] = vector[2]! * scale;
    readVector(r, text, vector);
    normals[i * 3] = vector[0]!;
    normals[i * 3 + 1] = vector[1]!;
    normals[i * 3 + 2] = vector[2]!;
    readVector(r, text, vector);
    uvs[i * 2] = vector[0]!;
    uvs[i * 2 + 1] = 1 - vector[1]!;
  }
  skipSpace(r);
  if (r.pos < r.end) fail(r, `data after the ${faceCount} faces the header declares`);
  const indices = new Uint32Array(vertexCount);
  for (let i = 0; i < vertexCount; i++) indices[i] = i;
  return {
    kind: 'mesh',
    version,
    geometry: { positions, normals, uvs, indices },
    header: {
      vertexCount, faceCount, lodOffsets: [], lods: [[0, faceCount]], lodType: null, highQualityLodCount: null,
      subsetCount: 0, boneCount: 0, boneNames: [], facs: null, vertexSize: null, draco: false, chunks: null, notes: [],
    },
  };
}

function readFaceCountLine(r: MeshReader): number {
  const start = r.pos;
  let text = '';
  while (r.pos < r.end && r.bytes[r.pos] !== 0x0a && r.pos - start < 16) text += String.fromCharCode(r.bytes[r.pos++]!);
  if (r.pos >= r.end || r.bytes[r.pos] !== 0x0a) fail(r, 'the face count line does not end', start);
  r.pos++;
  const trimmed = text.trim();
  if (!/^\d{1,10}$/.test(trimmed)) fail(r, `the face count line ${JSON.stringify(trimmed)} is not a number`, start);
  return Number(trimmed);
}

function skipSpace(r: MeshReader): void {
  while (r.pos < r.end) {
    const b = r.bytes[r.pos]!;
    if (b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d) return;
    r.pos++;
  }
}

function expect(r: MeshReader, char: number, what: string): void {
  skipSpace(r);
  if (r.pos >= r.end) fail(r, `unexpected end of data: expected ${what}`);
  if (r.bytes[r.pos] !== char) fail(r, `expected ${what}, found ${JSON.stringify(String.fromCharCode(r.bytes[r.pos]!))}`);
  r.pos++;
}

/** `[a,b,c]` into `out`. */
function readVector(r: MeshReader, text: string, out: number[]): void {
  expect(r, 0x5b, '"["');
  out[0] = readNumber(r, text);
  expect(r, 0x2c, '","');
  out[1] = readNumber(r, text);
  expect(r, 0x2c, '","');
  out[2] = readNumber(r, text);
  expect(r, 0x5d, '"]"');
}

const POWERS_OF_TEN = Array.from({ length: 23 }, (_, i) => 10 ** i);

/**
 * A decimal number: sign, digits with at most one point (one digit at least), then
 * an optional exponent. Up to 15 significant digits and a power of ten up to 10^22,
 * one exact integer divided or multiplied by one exact power gives the correctly
 * rounded value (what Number() gives, faster); anything longer goes to Number().
 */
function readNumber(r: MeshReader, text: string): number {
  skipSpace(r);
  const bytes = r.bytes;
  const start = r.pos, end = Math.min(r.end, start + 64);
  let p = start;
  const negative = bytes[p] === 0x2d;
  if (negative || bytes[p] === 0x2b) p++;
  let mantissa = 0, digits = 0, scale = 0, b: number;
  while (p < end && (b = bytes[p]!) >= 0x30 && b <= 0x39) { mantissa = mantissa * 10 + (b - 0x30); if (mantissa) digits++; p++; }
  let mantissaDigits = p - start - (negative || bytes[start] === 0x2b ? 1 : 0);
  if (p < end && bytes[p] === 0x2e) {
    const point = ++p;
    while (p < end && (b = bytes[p]!) >= 0x30 && b <= 0x39) { mantissa = mantissa * 10 + (b - 0x30); if (mantissa) digits++; p++; }
    scale = point - p;
    mantissaDigits += p - point;
  }
  if (mantissaDigits === 0) fail(r, 'expected a number', start);
  if (p < end && (bytes[p] === 0x65 || bytes[p] === 0x45)) {
    let q = p + 1;
    const negativeExponent = bytes[q] === 0x2d;
    if (negativeExponent || bytes[q] === 0x2b) q++;
    const from = q;
    let exponent = 0;
    while (q < end && (b = bytes[q]!) >= 0x30 && b <= 0x39) { exponent = Math.min(exponent * 10 + (b - 0x30), 1e6); q++; }
    if (q === from) fail(r, 'a number has an empty exponent', start);
    scale += negativeExponent ? -exponent : exponent;
    p = q;
  }
  r.pos = p;
  if (digits > 15 || scale < -22 || scale > 22) return Number(text.slice(start, p));
  const value = scale < 0 ? mantissa / POWERS_OF_TEN[-scale]! : mantissa * POWERS_OF_TEN[scale]!;
  return negative ? -value : value;
}
