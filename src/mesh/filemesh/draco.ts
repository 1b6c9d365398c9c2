/**
 * COREMESH version 2 geometry: a Draco bitstream, decoded by Google's decoder
 * compiled to WebAssembly (the `draco3d` package). The module loads once per
 * process or worker, when this file is first imported; decoding is synchronous.
 * Draco sizes its own buffers from counts in the stream, so those counts are read
 * here first and checked against the limits before the decoder sees the stream;
 * every buffer it allocates is freed before returning. Freed or not, the module's
 * heap keeps its largest size: past `maxDecoderHeapBytes` the module is replaced by a
 * fresh one, loaded in the background (`renewModule`).
 */
import draco3d, { type DecoderModule } from 'draco3d';
import { MeshDecodeError } from '../errors.js';
import { expansionCap, type MeshLimits } from '../limits.js';
import { fail, meshReader, u8, type MeshReader } from '../reader.js';
import type { VertexArrays } from './vertices.js';

let decoderModule: DecoderModule | null = await draco3d.createDecoderModule({});
let reloading: Promise<void> | null = null;

/**
 * Loads a fresh module in the background and puts it in place when ready; until
 * then the current one, if usable, keeps decoding. A failed load is retried by the
 * next call that needs one.
 */
function renewModule(): void {
  reloading ??= draco3d.createDecoderModule({}).then(
    (fresh) => { decoderModule = fresh; reloading = null; },
    () => { reloading = null; },
  );
}

/** The bytes of the Draco module's heap (0 while none is loaded): what a worker keeps between decodes. */
export function dracoHeapBytes(): number {
  return decoderModule?.HEAPU8.buffer.byteLength ?? 0;
}

/** Settles when no module is being loaded: the fresh one in place, or its load failed (then the next call that needs one retries). */
export async function dracoRenewal(): Promise<void> {
  await reloading;
}

export interface DracoGeometry extends Partial<VertexArrays> {
  positions: Float32Array;
  indices: Uint32Array;
}

/** Decodes a Draco mesh; errors name `outer`'s format and the stream's offset in the file. */
export function decodeDraco(outer: MeshReader, at: number, stream: Uint8Array, limits: MeshLimits): DracoGeometry {
  const counts = readDracoCounts(meshReader(stream, outer.format, 0, stream.length, outer.base + at));
  if (counts.faces > limits.maxTriangles) fail(outer, `Draco face count ${counts.faces} exceeds the limit of ${limits.maxTriangles}`, at);
  if (counts.vertices > limits.maxVertices) fail(outer, `Draco vertex count ${counts.vertices} exceeds the limit of ${limits.maxVertices}`, at);
  // Indices, and position, normal, uv and colour per vertex.
  const declared = counts.faces * 12 + counts.vertices * 36;
  if (declared > expansionCap(limits, stream.length)) {
    fail(outer, `the ${stream.length}-byte Draco stream declares ${counts.faces} faces and ${counts.vertices} vertices, past ${limits.maxExpansion}× its size`, at);
  }
  const M = decoderModule;
  if (!M) {
    renewModule();
    fail(outer, 'the Draco decoder is reloading after a failure; try again', at);
  }
  try {
    return decodeWith(M, outer, at, stream, limits);
  } catch (error) {
    if (error instanceof MeshDecodeError) throw error;
    // An abort inside the module leaves it unusable: load a fresh one for later calls.
    if (decoderModule === M) decoderModule = null;
    renewModule();
    return fail(outer, `the Draco decoder failed: ${(error as Error)?.message ?? String(error)}`, at);
  } finally {
    if (decoderModule === M && M.HEAPU8.buffer.byteLength > limits.maxDecoderHeapBytes) renewModule();
  }
}

function decodeWith(M: DecoderModule, outer: MeshReader, at: number, stream: Uint8Array, limits: MeshLimits): DracoGeometry {
  const decoder = new M.Decoder();
  const buffer = new M.DecoderBuffer();
  const mesh = new M.Mesh();
  try {
    buffer.Init(new Int8Array(stream.buffer, stream.byteOffset, stream.byteLength), stream.byteLength);
    if (decoder.GetEncodedGeometryType(buffer) !== M.TRIANGULAR_MESH) fail(outer, 'the Draco stream is not a triangle mesh', at);
    const status = decoder.DecodeBufferToMesh(buffer, mesh);
    if (!status.ok()) fail(outer, `corrupt Draco stream: ${status.error_msg()}`, at);
    const faces = mesh.num_faces();
    const points = mesh.num_points();
    if (faces > limits.maxTriangles || points > limits.maxVertices) {
      fail(outer, `the Draco mesh has ${points} vertices and ${faces} faces, past the limits`, at);
    }
    const indices = copyOut(M, faces * 3, 4, (ptr, bytes) => decoder.GetTrianglesUInt32Array(mesh, bytes, ptr), (ptr, n) => new Uint32Array(M.HEAPU32.buffer, ptr, n));
    for (let i = 0; i < indices.length; i++) if (indices[i]! >= points) fail(outer, `Draco face ${Math.floor(i / 3)} names vertex ${indices[i]} of ${points}`, at);
    const attribute = (type: number, components: number, name: string) => {
      const id = decoder.GetAttributeId(mesh, type);
      if (id < 0) return null;
      const attr = decoder.GetAttribute(mesh, id);
      const stored = attr.num_components();
      if (stored !== components && !(type === M.COLOR && stored === 3)) fail(outer, `Draco ${name} attribute has ${stored} components, not ${components}`, at);
      return { attr, stored };
    };
    const floats = (type: number, components: number, name: string): Float32Array | undefined => {
      const found = attribute(type, components, name);
      if (!found) return undefined;
      return copyOut(M, points * components, 4,
        (ptr, bytes) => decoder.GetAttributeDataArrayForAllPoints(mesh, found.attr, M.DT_FLOAT32, bytes, ptr),
        (ptr, n) => new Float32Array(M.HEAPF32.buffer, ptr, n));
    };
    const positions = floats(M.POSITION, 3, 'position');
    if (!positions) fail(outer, 'the Draco mesh has no positions', at);
    const normals = floats(M.NORMAL, 3, 'normal');
    const uvs = floats(M.TEX_COORD, 2, 'texture coordinate');
    const color = attribute(M.COLOR, 4, 'colour');
    let colors: Uint8Array | undefined;
    if (color) {
      const stored = copyOut(M, points * color.stored, 1,
        (ptr, bytes) => decoder.GetAttributeDataArrayForAllPoints(mesh, color.attr, M.DT_UINT8, bytes, ptr),
        (ptr, n) => new Uint8Array(M.HEAPU8.buffer, ptr, n));
      colors = color.stored === 4 ? stored : withAlpha(stored, points);
    }
    return { positions, indices, ...(normals ? { normals } : {}), ...(uvs ? { uvs } : {}), ...(colors ? { colors } : {}) };
  } finally {
    M.destroy(mesh);
    M.destroy(buffer);
    M.destroy(decoder);
  }
}

/** Has the decoder fill a malloc'd block, copies it out of the heap and frees it. */
function copyOut<T extends Uint8Array | Uint32Array | Float32Array>(
  M: DecoderModule, count: number, bytesEach: number,
  fill: (ptr: number, bytes: number) => boolean, view: (ptr: number, count: number) => T,
): T {
  const bytes = count * bytesEach;
  const ptr = M._malloc(Math.max(bytes, 4));
  try {
    if (!fill(ptr, bytes)) throw new Error('the decoder could not copy an attribute out');
    // Read the heap only now: decoding may have grown (and so replaced) it.
    return view(ptr, count).slice() as T;
  } finally {
    M._free(ptr);
  }
}

function withAlpha(rgb: Uint8Array, points: number): Uint8Array {
  const out = new Uint8Array(points * 4);
  for (let i = 0; i < points; i++) {
    out[i * 4] = rgb[i * 3]!;
    out[i * 4 + 1] = rgb[i * 3 + 1]!;
    out[i * 4 + 2] = rgb[i * 3 + 2]!;
    out[i * 4 + 3] = 255;
  }
  return out;
}

/**
 * The face and vertex counts a Draco 2.2 mesh stream declares (Draco bitstream
 * specification, sections 3 to 7): header, optional metadata, then the sequential or
 * Edgebreaker connectivity header. (Edgebreaker output may split vertices along
 * attribute seams, at most three per face: the decoded count is checked again.)
 */
export function readDracoCounts(r: MeshReader): { faces: number; vertices: number } {
  for (const char of 'DRACO') if (u8(r, 'Draco magic') !== char.charCodeAt(0)) fail(r, 'the stream does not start with "DRACO"', 0);
  const major = u8(r, 'Draco version'), minor = u8(r, 'Draco version');
  if (major !== 2 || minor !== 2) fail(r, `unsupported Draco bitstream version ${major}.${minor} (2.2 is read)`, 5);
  const encoderType = u8(r, 'Draco encoder type');
  if (encoderType !== 1) fail(r, `the Draco stream is a ${encoderType === 0 ? 'point cloud' : `type ${encoderType} geometry`}, not a triangle mesh`, 7);
  const method = u8(r, 'Draco encoder method');
  const flags = u8(r, 'Draco flags') | (u8(r, 'Draco flags') << 8);
  if (flags & 0x8000) skipDracoMetadata(r);
  if (method === 0) {
    const faces = varUint(r, 'Draco face count');
    const vertices = varUint(r, 'Draco point count');
    return { faces, vertices };
  }
  if (method === 1) {
    u8(r, 'Edgebreaker traversal type');
    const vertices = varUint(r, 'Draco vertex count');
    const faces = varUint(r, 'Draco face count');
    return { faces, vertices };
  }
  return fail(r, `unknown Draco encoder method ${method}`, 8);
}

function skipDracoMetadata(r: MeshReader): void {
  const attributes = varUint(r, 'Draco metadata count');
  for (let i = 0; i < attributes; i++) {
    varUint(r, 'Draco metadata id');
    skipMetadataElement(r, 0);
  }
  skipMetadataElement(r, 0);
}

function skipMetadataElement(r: MeshReader, depth: number): void {
  if (depth > 32) fail(r, 'Draco metadata nests too deeply');
  const entries = varUint(r, 'Draco metadata entries');
  for (let i = 0; i < entries; i++) {
    skipBytes(r, u8(r, 'Draco metadata key size'));
    skipBytes(r, u8(r, 'Draco metadata value size'));
  }
  const children = varUint(r, 'Draco sub-metadata count');
  for (let i = 0; i < children; i++) {
    skipBytes(r, u8(r, 'Draco sub-metadata key size'));
    skipMetadataElement(r, depth + 1);
  }
}

function skipBytes(r: MeshReader, count: number): void {
  if (count > r.end - r.pos) fail(r, 'unexpected end of data in Draco metadata');
  r.pos += count;
}

/** LEB128, at most 32 bits. */
function varUint(r: MeshReader, what: string): number {
  let value = 0;
  for (let shift = 0; shift < 35; shift += 7) {
    const b = u8(r, what);
    value += (b & 0x7f) * 2 ** shift;
    if (!(b & 0x80)) return value > 0xffffffff ? fail(r, `${what} does not fit 32 bits`) : value;
  }
  return fail(r, `${what} is not a valid variable-length number`);
}
