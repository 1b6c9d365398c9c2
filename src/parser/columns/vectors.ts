/** Fixed-size struct columns built from float/int planes: UDim(2), Ray, Vector2/3, Color3, Vector3int16, Color3uint8, NumberRange, Rect. */
import type { Column } from '../dom.js';
import { readInterleavedF32, readInterleavedI32 } from '../interleave.js';
import { checkCount, need, type Cursor } from '../reader.js';
import type { PropType, Vec2, Vec3 } from '../values.js';
import { column, type ColumnContext } from './column.js';

export function readUDimColumn(c: Cursor, { count }: ColumnContext): Column {
  const scale = readInterleavedF32(c, count, 'UDim scale');
  const offset = readInterleavedI32(c, count, 'UDim offset');
  return column('UDim', count, (row) => [scale[row]!, offset[row]!]);
}

export function readUDim2Column(c: Cursor, { count }: ColumnContext): Column {
  const xScale = readInterleavedF32(c, count, 'UDim2 X.Scale');
  const yScale = readInterleavedF32(c, count, 'UDim2 Y.Scale');
  const xOffset = readInterleavedI32(c, count, 'UDim2 X.Offset');
  const yOffset = readInterleavedI32(c, count, 'UDim2 Y.Offset');
  return column('UDim2', count, (row) => [[xScale[row]!, xOffset[row]!], [yScale[row]!, yOffset[row]!]]);
}

/** Vector2, Vector3 and Color3: one interleaved float plane set per component. */
export function readFloatStructColumn(c: Cursor, { count }: ColumnContext, type: PropType, components: 2 | 3): Column {
  const planes: Float32Array[] = [];
  for (let i = 0; i < components; i++) planes.push(readInterleavedF32(c, count, type));
  const [x, y, z] = planes as [Float32Array, Float32Array, Float32Array?];
  if (components === 2) return column(type, count, (row): Vec2 => [x[row]!, y[row]!]);
  return column(type, count, (row): Vec3 => [x[row]!, y[row]!, z![row]!]);
}

/** Ray and NumberRange: little-endian f32 values in sequence, no interleaving. */
export function readPlainFloatColumn(c: Cursor, { count }: ColumnContext, type: 'Ray' | 'NumberRange'): Column {
  const width = type === 'Ray' ? 6 : 2;
  checkCount(c, count, width * 4, type);
  const at = need(c, count * width * 4, type);
  const values = new Float32Array(count * width);
  for (let i = 0; i < values.length; i++) values[i] = c.view.getFloat32(at + i * 4, true);
  if (type === 'NumberRange') return column(type, count, (row) => [values[row * 2]!, values[row * 2 + 1]!]);
  return column(type, count, (row) => {
    const o = row * 6;
    return { origin: [values[o]!, values[o + 1]!, values[o + 2]!], direction: [values[o + 3]!, values[o + 4]!, values[o + 5]!] };
  });
}

export function readVector3int16Column(c: Cursor, { count }: ColumnContext): Column {
  checkCount(c, count, 6, 'Vector3int16');
  const at = need(c, count * 6, 'Vector3int16');
  const values = new Int16Array(count * 3);
  for (let i = 0; i < values.length; i++) values[i] = c.view.getInt16(at + i * 2, true);
  return column('Vector3int16', count, (row) => [values[row * 3]!, values[row * 3 + 1]!, values[row * 3 + 2]!]);
}

/** Three consecutive byte arrays: all R, all G, all B. */
export function readColor3uint8Column(c: Cursor, { count }: ColumnContext): Column {
  checkCount(c, count, 3, 'Color3uint8');
  const at = need(c, count * 3, 'Color3uint8');
  const values = c.bytes.slice(at, at + count * 3);
  return column('Color3uint8', count, (row) => [values[row]!, values[count + row]!, values[2 * count + row]!]);
}

export function readRectColumn(c: Cursor, { count }: ColumnContext): Column {
  const minX = readInterleavedF32(c, count, 'Rect');
  const minY = readInterleavedF32(c, count, 'Rect');
  const maxX = readInterleavedF32(c, count, 'Rect');
  const maxY = readInterleavedF32(c, count, 'Rect');
  return column('Rect', count, (row) => [[minX[row]!, minY[row]!], [maxX[row]!, maxY[row]!]]);
}
