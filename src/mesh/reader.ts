/**
 * A bounds-checked little-endian cursor over mesh bytes, as `src/parser/reader.ts`
 * is for places: every read checks what is left first, and every declared count is
 * checked against the bytes that must follow (and a cap) before anything is
 * allocated, so a truncated or lying file raises a MeshDecodeError.
 */
import { MeshDecodeError } from './errors.js';
import type { MeshLimits } from './limits.js';

export interface MeshReader {
  readonly bytes: Uint8Array;
  readonly view: DataView;
  pos: number;
  readonly end: number;
  /** Format named in errors, e.g. "mesh 4.01". */
  readonly format: string;
  /** Offset of `bytes[0]` in the input, so errors name input offsets (0 unless reading decompressed data). */
  readonly base: number;
}

export function meshReader(bytes: Uint8Array, format: string, pos = 0, end = bytes.length, base = 0): MeshReader {
  return { bytes, view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), pos, end, format, base };
}

/** A reader over the next `length` bytes (which must be there); the outer reader moves past them. */
export function subReader(r: MeshReader, length: number, what: string, format = r.format): MeshReader {
  const at = take(r, length, what);
  return { bytes: r.bytes, view: r.view, pos: at, end: at + length, format, base: r.base };
}

/** Throws for what is wrong at `at`; `limit` names the cap a declared count passed (MeshDecodeError.limit). */
export function fail(r: MeshReader, what: string, at = r.pos, limit?: keyof MeshLimits): never {
  throw new MeshDecodeError(r.format, r.base + at, what, limit);
}

export function left(r: MeshReader): number {
  return r.end - r.pos;
}

/** Moves past `count` bytes, which must be there; returns where they start. */
export function take(r: MeshReader, count: number, what: string): number {
  if (!(count >= 0) || count > r.end - r.pos) {
    fail(r, `unexpected end of data reading ${what}: need ${count} bytes, ${r.end - r.pos} left`);
  }
  const at = r.pos;
  r.pos += count;
  return at;
}

/** Checks a declared count against its cap. */
export function checkCap(r: MeshReader, what: string, count: number, cap: number, at = r.pos): void {
  if (count > cap) fail(r, `${what} ${count} exceeds the limit of ${cap}`, at);
}

/**
 * Checks a declared count against a cap and against the bytes its records need
 * (`bytesEach` per element, read from here on) before anything is allocated.
 */
export function checkCount(r: MeshReader, count: number, bytesEach: number, what: string, cap: number, limit?: keyof MeshLimits): void {
  if (count > cap) fail(r, `${what} count ${count} exceeds the limit of ${cap}`, r.pos, limit);
  if (count * bytesEach > r.end - r.pos) {
    fail(r, `${what} count ${count} needs ${count * bytesEach} bytes, only ${r.end - r.pos} left`);
  }
}

/**
 * Checks that a layout's sections, sized from counts a header declares, fit in what
 * is left, before any of them is read: a truncated file fails here at once.
 */
export function checkLayout(r: MeshReader, sections: ReadonlyArray<readonly [what: string, bytes: number]>): void {
  let total = 0;
  for (const [, bytes] of sections) total += bytes;
  if (total > r.end - r.pos) {
    const parts = sections.filter(([, bytes]) => bytes > 0).map(([what, bytes]) => `${what} ${bytes}`).join(', ');
    fail(r, `the header declares ${total} bytes of records (${parts}), only ${r.end - r.pos} left`);
  }
}

export function u8(r: MeshReader, what = 'u8'): number {
  return r.bytes[take(r, 1, what)]!;
}

export function u16(r: MeshReader, what = 'u16'): number {
  return r.view.getUint16(take(r, 2, what), true);
}

export function u32(r: MeshReader, what = 'u32'): number {
  return r.view.getUint32(take(r, 4, what), true);
}

export function f32(r: MeshReader, what = 'f32'): number {
  return r.view.getFloat32(take(r, 4, what), true);
}

/** `count` little-endian u32 values (count already checked). */
export function u32Array(r: MeshReader, count: number, what: string): Uint32Array {
  const at = take(r, count * 4, what);
  const out = new Uint32Array(count);
  for (let i = 0; i < count; i++) out[i] = r.view.getUint32(at + i * 4, true);
  return out;
}

/** `count` little-endian f32 values (count already checked). */
export function f32Array(r: MeshReader, count: number, what: string): Float32Array {
  const at = take(r, count * 4, what);
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) out[i] = r.view.getFloat32(at + i * 4, true);
  return out;
}

/** Whether the bytes at `at` spell `text` (ASCII). */
export function startsWith(bytes: Uint8Array, text: string, at = 0): boolean {
  if (bytes.length < at + text.length) return false;
  for (let i = 0; i < text.length; i++) if (bytes[at + i] !== text.charCodeAt(i)) return false;
  return true;
}
