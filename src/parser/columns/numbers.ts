/** Scalar columns: Bool, Int32, Float32, Float64, Enum, BrickColor, Ref, SharedString, Int64, SecurityCapabilities. */
import type { Column } from '../dom.js';
import { int64ToValue, readInterleavedF32, readInterleavedI32, readInterleavedI64, readInterleavedU32, readReferents, uint64ToValue } from '../interleave.js';
import { checkCount, need, type Cursor } from '../reader.js';
import type { PropType } from '../values.js';
import { column, type ColumnContext } from './column.js';

export function readBoolColumn(c: Cursor, { count }: ColumnContext): Column {
  checkCount(c, count, 1, 'bool');
  const at = need(c, count, 'bool');
  const values = c.bytes.slice(at, at + count);
  return column('Bool', count, (row) => values[row] !== 0);
}

export function readInt32Column(c: Cursor, { count }: ColumnContext): Column {
  const values = readInterleavedI32(c, count, 'Int32');
  return column('Int32', count, (row) => values[row]!);
}

export function readFloat32Column(c: Cursor, { count }: ColumnContext): Column {
  const values = readInterleavedF32(c, count, 'Float32');
  return column('Float32', count, (row) => values[row]!);
}

export function readFloat64Column(c: Cursor, { count }: ColumnContext): Column {
  checkCount(c, count, 8, 'Float64');
  const at = need(c, count * 8, 'Float64');
  const values = new Float64Array(count);
  for (let i = 0; i < count; i++) values[i] = c.view.getFloat64(at + i * 8, true);
  return column('Float64', count, (row) => values[row]!);
}

/** Enum, BrickColor and SharedString: big-endian u32, interleaved, no transformation. */
export function readUint32Column(c: Cursor, { count }: ColumnContext, type: PropType): Column {
  const values = readInterleavedU32(c, count, type);
  return column(type, count, (row) => values[row]!);
}

export function readRefColumn(c: Cursor, { count }: ColumnContext): Column {
  const values = readReferents(c, count, 'Ref');
  return column('Ref', count, (row) => values[row]!);
}

export function readInt64Column(c: Cursor, { count }: ColumnContext): Column {
  const { hi, lo } = readInterleavedI64(c, count, 'Int64');
  return column('Int64', count, (row) => int64ToValue(hi[row]!, lo[row]!));
}

/** Stored like Int64 (zigzag), read back as the unsigned bit set. */
export function readSecurityCapabilitiesColumn(c: Cursor, { count }: ColumnContext): Column {
  const { hi, lo } = readInterleavedI64(c, count, 'SecurityCapabilities');
  return column('SecurityCapabilities', count, (row) => uint64ToValue(hi[row]!, lo[row]!));
}
