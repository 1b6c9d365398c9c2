/**
 * Writes Roblox mesh and union blobs from a plain model, for formats and cases the
 * corpus has no file of (mesh 1.01, 4.00, 6.00, CSGPHS 0/6/7, hulls stored as
 * points only) and for malformed variants. Layouts as src/mesh documents them; the
 * decoder is tested by decoding these back.
 */
import draco3d from 'draco3d';
import { deobfuscate } from '../../src/mesh/csg/obfuscation.js';

export interface MeshModel {
  positions: Float32Array;
  normals: Float32Array;
  uvs: Float32Array;
  colors?: Uint8Array;
  /** Every stored face, all LODs. */
  faces: Uint32Array;
  lodOffsets: number[];
  skin?: {
    /** 8 bytes per vertex: 4 bone slots, 4 weights. */
    envelopes: Uint8Array;
    bones: Array<{ name: string; parent: number; rotation: number[]; position: number[] }>;
    subsets: Array<{ faceStart: number; faceCount: number; vertexStart: number; vertexCount: number; bones: number[] }>;
  };
  /** FACS block (5.00, and a FACS chunk in 6.00/7.00). */
  facs?: Uint8Array;
}

/** Little-endian byte builder. */
export class Bytes {
  private buffer = new Uint8Array(256);
  private view = new DataView(this.buffer.buffer);
  length = 0;

  private room(n: number): number {
    if (this.length + n > this.buffer.length) {
      const bigger = new Uint8Array(Math.max(this.buffer.length * 2, this.length + n));
      bigger.set(this.buffer.subarray(0, this.length));
      this.buffer = bigger;
      this.view = new DataView(bigger.buffer);
    }
    const at = this.length;
    this.length += n;
    return at;
  }

  // room() may replace the buffer: take the offset before touching it.
  u8(v: number): this { const at = this.room(1); this.buffer[at] = v; return this; }
  u16(v: number): this { const at = this.room(2); this.view.setUint16(at, v, true); return this; }
  u32(v: number): this { const at = this.room(4); this.view.setUint32(at, v >>> 0, true); return this; }
  f32(v: number): this { const at = this.room(4); this.view.setFloat32(at, v, true); return this; }
  text(s: string): this { for (const c of s) this.u8(c.charCodeAt(0)); return this; }
  bytes(b: ArrayLike<number>): this { const at = this.room(b.length); this.buffer.set(b, at); return this; }
  /** Patches a u32 written earlier. */
  setU32(at: number, v: number): this { this.view.setUint32(at, v >>> 0, true); return this; }
  done(): Uint8Array { return this.buffer.slice(0, this.length); }
}

const vertexCount = (m: MeshModel): number => m.positions.length / 3;

function vertexRecord(out: Bytes, m: MeshModel, i: number, size: 36 | 40): void {
  for (let k = 0; k < 3; k++) out.f32(m.positions[i * 3 + k]!);
  for (let k = 0; k < 3; k++) out.f32(m.normals[i * 3 + k]!);
  out.f32(m.uvs[i * 2]!).f32(m.uvs[i * 2 + 1]!);
  out.bytes([0, 0, 0x7f, 0x7f]);
  if (size === 40) out.bytes(m.colors ? m.colors.subarray(i * 4, i * 4 + 4) : [255, 255, 255, 255]);
}

export function writeMeshText(m: MeshModel, version: '1.00' | '1.01'): Uint8Array {
  const scale = version === '1.00' ? 2 : 1;
  // The shortest digits that read back as the float32, as Roblox's writer prints them (about 6 to 9 digits).
  const n = (v: number): string => {
    const f = Math.fround(v);
    for (let digits = 1; digits < 9; digits++) if (Math.fround(Number(f.toPrecision(digits))) === f) return String(Number(f.toPrecision(digits)));
    return String(Number(f.toPrecision(9)));
  };
  let text = `version ${version}\r\n${m.faces.length / 3}\r\n`;
  for (const i of m.faces) {
    const p = m.positions, q = m.normals, t = m.uvs;
    text += `[${n(p[i * 3]! * scale)},${n(p[i * 3 + 1]! * scale)},${n(p[i * 3 + 2]! * scale)}]`;
    text += `[${n(q[i * 3]!)},${n(q[i * 3 + 1]!)},${n(q[i * 3 + 2]!)}]`;
    text += `[${n(t[i * 2]!)},${n(1 - t[i * 2 + 1]!)},0]`;
  }
  return new TextEncoder().encode(text);
}

export function writeMeshV2(m: MeshModel, version: '2.00' | '3.00' | '3.01', vertexSize: 36 | 40): Uint8Array {
  const out = new Bytes().text(`version ${version}\n`);
  const lods = version !== '2.00';
  out.u16(lods ? 16 : 12).u8(vertexSize).u8(12);
  if (lods) out.u16(4).u16(m.lodOffsets.length);
  out.u32(vertexCount(m)).u32(m.faces.length / 3);
  for (let i = 0; i < vertexCount(m); i++) vertexRecord(out, m, i, vertexSize);
  for (const index of m.faces) out.u32(index);
  if (lods) for (const lod of m.lodOffsets) out.u32(lod);
  return out.done();
}

function nameTable(m: MeshModel): { table: Uint8Array; offsets: number[] } {
  const out = new Bytes();
  const offsets = (m.skin?.bones ?? []).map((b) => { const at = out.length; out.text(b.name).u8(0); return at; });
  return { table: out.done(), offsets };
}

function skinRecords(out: Bytes, m: MeshModel, offsets: number[]): void {
  for (const [i, b] of (m.skin?.bones ?? []).entries()) {
    out.u32(offsets[i]!).u16(b.parent < 0 ? 0xffff : b.parent).u16(0xffff).f32(0);
    for (const v of b.rotation) out.f32(v);
    for (const v of b.position) out.f32(v);
  }
}

function subsetRecords(out: Bytes, m: MeshModel): void {
  for (const s of m.skin?.subsets ?? []) {
    out.u32(s.faceStart).u32(s.faceCount).u32(s.vertexStart).u32(s.vertexCount).u32(s.bones.length);
    for (let k = 0; k < 26; k++) out.u16(s.bones[k] ?? 0xffff);
  }
}

export function writeMeshV4(m: MeshModel, version: '4.00' | '4.01' | '5.00'): Uint8Array {
  const out = new Bytes().text(`version ${version}\n`);
  const facs = version === '5.00';
  const { table, offsets } = nameTable(m);
  const bones = m.skin?.bones.length ?? 0;
  out.u16(facs ? 32 : 24).u16(3).u32(vertexCount(m)).u32(m.faces.length / 3).u16(m.lodOffsets.length).u16(bones)
    .u32(table.length).u16(m.skin?.subsets.length ?? 0).u8(1).u8(0);
  if (facs) out.u32(1).u32(m.facs?.length ?? 0);
  for (let i = 0; i < vertexCount(m); i++) vertexRecord(out, m, i, 40);
  if (bones > 0) out.bytes(m.skin!.envelopes);
  for (const index of m.faces) out.u32(index);
  for (const lod of m.lodOffsets) out.u32(lod);
  skinRecords(out, m, offsets);
  out.bytes(table);
  subsetRecords(out, m);
  if (facs && m.facs) out.bytes(m.facs);
  return out.done();
}

function chunk(out: Bytes, type: string, version: number, body: Uint8Array): void {
  out.text(type.padEnd(8, '\0')).u32(version).u32(body.length).bytes(body);
}

/** 6.00/7.00: COREMESH (version 1 records, or version 2 with `draco`), LODS, SKINNING, FACS, HSRAVIS. */
export function writeMeshChunked(m: MeshModel, version: '6.00' | '7.00', draco?: Uint8Array): Uint8Array {
  const out = new Bytes().text(`version ${version}\n`);
  const core = new Bytes();
  if (draco) {
    core.u32(draco.length).bytes(draco);
  } else {
    core.u32(vertexCount(m));
    for (let i = 0; i < vertexCount(m); i++) vertexRecord(core, m, i, 40);
    core.u32(m.faces.length / 3);
    for (const index of m.faces) core.u32(index);
  }
  chunk(out, 'COREMESH', draco ? 2 : 1, core.done());
  const lods = new Bytes().u16(3).u8(1).u32(m.lodOffsets.length);
  for (const lod of m.lodOffsets) lods.u32(lod);
  chunk(out, 'LODS', 1, lods.done());
  if (m.skin) {
    const skin = new Bytes().u32(m.skin.envelopes.length / 8).bytes(m.skin.envelopes).u32(m.skin.bones.length);
    const { table, offsets } = nameTable(m);
    skinRecords(skin, m, offsets);
    skin.u32(table.length).bytes(table).u32(m.skin.subsets.length);
    subsetRecords(skin, m);
    chunk(out, 'SKINNING', 1, skin.done());
  }
  if (m.facs) chunk(out, 'FACS', 1, m.facs);
  chunk(out, 'HSRAVIS', 1, new Bytes().u32(vertexCount(m)).bytes(new Uint8Array(Math.ceil(vertexCount(m) / 8))).done());
  return out.done();
}

let encoderModule: Awaited<ReturnType<typeof loadEncoder>> | null = null; // eslint-disable-line @typescript-eslint/no-redundant-type-constituents -- the encoder is untyped (any)
async function loadEncoder() {
  return (draco3d as any).createEncoderModule({}) as Promise<any>;
}

/** A Draco stream of the model's geometry (sequential encoding, which keeps vertex and face order). */
export async function encodeDraco(m: MeshModel, quantizePositionBits = 0): Promise<Uint8Array> {
  encoderModule ??= await loadEncoder();
  const E = encoderModule;
  const builder = new E.MeshBuilder();
  const mesh = new E.Mesh();
  const n = vertexCount(m);
  builder.AddFacesToMesh(mesh, m.faces.length / 3, m.faces);
  builder.AddFloatAttributeToMesh(mesh, E.POSITION, n, 3, m.positions);
  builder.AddFloatAttributeToMesh(mesh, E.NORMAL, n, 3, m.normals);
  builder.AddFloatAttributeToMesh(mesh, E.TEX_COORD, n, 2, m.uvs);
  if (m.colors) builder.AddUInt8Attribute(mesh, E.COLOR, n, 4, m.colors);
  const encoder = new E.Encoder();
  encoder.SetEncodingMethod(E.MESH_SEQUENTIAL_ENCODING);
  if (quantizePositionBits) encoder.SetAttributeQuantization(E.POSITION, quantizePositionBits);
  const data = new E.DracoInt8Array();
  const length = encoder.EncodeMeshToDracoBuffer(mesh, data);
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) out[i] = data.GetValue(i) & 0xff;
  E.destroy(data); E.destroy(encoder); E.destroy(mesh); E.destroy(builder);
  if (length === 0) throw new Error('Draco encoding failed');
  return out;
}

function csgmdlVertices(out: Bytes, m: MeshModel): void {
  out.u32(vertexCount(m)).u32(84);
  for (let i = 0; i < vertexCount(m); i++) {
    for (let k = 0; k < 3; k++) out.f32(m.positions[i * 3 + k]!);
    for (let k = 0; k < 3; k++) out.f32(m.normals[i * 3 + k]!);
    out.bytes(m.colors ? m.colors.subarray(i * 4, i * 4 + 4) : [255, 255, 255, 255]);
    out.u32(1).f32(m.uvs[i * 2]!).f32(m.uvs[i * 2 + 1]!);
    out.bytes(new Uint8Array(16)).f32(0).f32(0).f32(0).bytes(new Uint8Array(16));
  }
  out.u32(m.faces.length);
  for (const index of m.faces) out.u32(index);
}

/** CSGMDL 2 or 4, obfuscated as Roblox stores it. */
export function writeCsgmdl(m: MeshModel, version: 2 | 4): Uint8Array {
  const out = new Bytes().text('CSGMDL').u32(version).text('0123456789abcdef').bytes(new Uint8Array(16));
  csgmdlVertices(out, m);
  if (version === 4) out.u32(2).u32(7).u32(9);
  return deobfuscate(out.done());
}

/** CSGMDL 5: obfuscated magic, quantized normals, delta-coded indices with range markers [0, n]. */
export function writeCsgmdl5(m: MeshModel, extraRanges: number[][] = []): Uint8Array {
  const n = vertexCount(m);
  const magic = deobfuscate(new Bytes().text('CSGMDL').u32(5).done());
  const out = new Bytes().bytes(magic).u16(n);
  for (const v of m.positions) out.f32(v);
  const quantized = (values: Float32Array): void => {
    out.u16(n).u32(n * 6);
    for (const v of values) out.u16(Math.round(v * 32767) + 0x7fff);
  };
  quantized(m.normals);
  out.u16(n);
  for (let i = 0; i < n; i++) out.bytes(m.colors ? m.colors.subarray(i * 4, i * 4 + 4) : [255, 255, 255, 255]);
  out.u16(n);
  for (let i = 0; i < n; i++) out.u8(1);
  out.u16(n);
  for (const v of m.uvs) out.f32(v);
  quantized(new Float32Array(n * 3));
  const lists = [Array.from(m.faces), ...extraRanges];
  const all = lists.flat();
  const data = new Bytes();
  let last = 0;
  for (const index of all) {
    const step = index - last;
    if (step >= 0 && step < 0x40) data.u8(step);
    else if (step < 0 && step >= -0x40) data.u8(step + 0x80);
    else {
      const code = step & 0x7fffff;
      data.u8(0x80 + (code >> 16)).u8((code >> 8) & 0xff).u8(code & 0xff);
    }
    last = index;
  }
  const body = data.done();
  out.u32(all.length).u32(body.length).bytes(body);
  const markers = [0];
  for (const l of lists) markers.push(markers[markers.length - 1]! + l.length);
  out.u8(markers.length);
  for (const marker of markers) out.u32(marker);
  return out.done();
}

export interface HullModel {
  positions: Float32Array;
  /** Empty for a hull stored as points only. */
  indices: Uint32Array;
}

function hullRecord(out: Bytes, hull: HullModel): void {
  out.u32(16).bytes(new Uint8Array(16));
  out.u32(16).bytes(new Uint8Array(12)).f32(1);
  out.u32(hull.positions.length).u32(4);
  for (const v of hull.positions) out.f32(v);
  out.u32(hull.indices.length);
  for (const index of hull.indices) out.u32(index);
}

const PHYSICS = [2.5, 0.1, 0.2, 0.3, 1, 0, 0, 1, 0, 1];

export function writeCsgphs(hulls: HullModel[], version: 0 | 3 | 5 | 6 | 7, geomType = 1): Uint8Array {
  const out = new Bytes().text('CSGPHS').u32(version);
  if (version === 0) return out.text('BLOCK').done();
  if (version === 7) out.u8(geomType);
  if (version === 6 || version === 7) for (const v of PHYSICS) out.f32(v);
  for (const hull of hulls) hullRecord(out, hull);
  return out.done();
}

export const PHYSICS_VALUES = PHYSICS;

/** A unit cube (8 corners, 12 outward triangles) scaled by `s` and moved by `t`. */
export function cubeHull(s = 1, t: [number, number, number] = [0, 0, 0]): HullModel {
  const positions = new Float32Array(24);
  for (let i = 0; i < 8; i++) {
    positions[i * 3] = ((i & 1) ? s : -s) + t[0];
    positions[i * 3 + 1] = ((i & 2) ? s : -s) + t[1];
    positions[i * 3 + 2] = ((i & 4) ? s : -s) + t[2];
  }
  const indices = Uint32Array.of(
    0, 2, 1, 1, 2, 3, 4, 5, 6, 5, 7, 6, 0, 1, 4, 1, 5, 4,
    2, 6, 3, 3, 6, 7, 0, 4, 2, 2, 4, 6, 1, 3, 5, 3, 7, 5,
  );
  return { positions, indices };
}
