/** Scalar families: Bool, Int32, Float32, Float64, Enum, BrickColor, Ref, SharedString, Int64, SecurityCapabilities. */
import type { Value } from '../values.js';
import type { ByteWriter } from './bytes.js';
import type { EncodeContext } from './context.js';
import { writeInterleavedFloats, writeInterleavedInt32, writeInterleavedInt64, writeInterleavedUint32, writeReferents } from './interleave.js';
import { fail, float, int32, int64, uint32 } from './shape.js';

export function writeBools(w: ByteWriter, values: readonly Value[]): void {
  const at = w.claim(values.length);
  values.forEach((value, row) => {
    if (typeof value !== 'boolean') fail('a boolean', value, row);
    w.bytes[at + row] = value ? 1 : 0;
  });
}

export function writeInt32s(w: ByteWriter, values: readonly Value[]): void {
  writeInterleavedInt32(w, values.map((value, row) => int32(value, row)));
}

export function writeFloat32s(w: ByteWriter, values: readonly Value[]): void {
  writeInterleavedFloats(w, values.map((value, row) => float(value, row)));
}

/** Float64: plain little-endian doubles, no interleaving. */
export function writeFloat64s(w: ByteWriter, values: readonly Value[]): void {
  values.forEach((value, row) => w.f64(float(value, row)));
}

/** Enum and BrickColor: big-endian u32, interleaved, untransformed. */
export function writeUint32s(w: ByteWriter, values: readonly Value[]): void {
  writeInterleavedUint32(w, values.map((value, row) => uint32(value, row)));
}

export function writeRefs(w: ByteWriter, values: readonly Value[]): void {
  writeReferents(w, values.map((value, row) => int32(value, row, 'a referent (-1 for none)')));
}

export function writeSharedStrings(w: ByteWriter, values: readonly Value[], ctx: EncodeContext): void {
  const what = `an index into the ${ctx.sharedStringCount} shared strings`;
  writeInterleavedUint32(w, values.map((value, row) => sharedStringIndex(value, row, ctx.sharedStringCount, what)));
}

function sharedStringIndex(value: Value, row: number, count: number, what: string): number {
  const index = uint32(value, row, what);
  if (index >= count) fail(what, value, row);
  return index;
}

export function writeInt64s(w: ByteWriter, values: readonly Value[]): void {
  writeInterleavedInt64(w, values.map((value, row) => int64(value, row, 'an Int64 (number or decimal string)')));
}

/** The capability bit set, stored like Int64 (rbx-dom writes the u64 bits as an i64). */
export function writeSecurityCapabilities(w: ByteWriter, values: readonly Value[]): void {
  writeInterleavedInt64(w, values.map((value, row) => int64(value, row, 'SecurityCapabilities bits (number or decimal string)')));
}
