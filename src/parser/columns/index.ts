/** Dispatch from a PROP chunk's type to the decoder of its family. */
import type { Column } from '../dom.js';
import type { Cursor } from '../reader.js';
import type { PropType } from '../values.js';
import type { ColumnContext } from './column.js';
import { readCFrameColumn, readOptionalCFrameColumn } from './cframe.js';
import { readBoolColumn, readFloat32Column, readFloat64Column, readInt32Column, readInt64Column, readRefColumn, readSecurityCapabilitiesColumn, readUint32Column } from './numbers.js';
import { readStringColumn } from './strings.js';
import { readBitSetColumn, readColorSequenceColumn, readContentColumn, readFontColumn, readNumberSequenceColumn, readPhysicalPropertiesColumn, readUniqueIdColumn } from './structs.js';
import { readColor3uint8Column, readFloatStructColumn, readPlainFloatColumn, readRectColumn, readUDim2Column, readUDimColumn, readVector3int16Column } from './vectors.js';

export type { ColumnContext } from './column.js';

const READERS: Record<PropType, (c: Cursor, ctx: ColumnContext) => Column> = {
  String: (c, ctx) => readStringColumn(c, ctx, 'String'),
  Bytecode: (c, ctx) => readStringColumn(c, ctx, 'Bytecode'),
  Bool: readBoolColumn,
  Int32: readInt32Column,
  Float32: readFloat32Column,
  Float64: readFloat64Column,
  UDim: readUDimColumn,
  UDim2: readUDim2Column,
  Ray: (c, ctx) => readPlainFloatColumn(c, ctx, 'Ray'),
  Faces: (c, ctx) => readBitSetColumn(c, ctx, 'Faces'),
  Axes: (c, ctx) => readBitSetColumn(c, ctx, 'Axes'),
  BrickColor: (c, ctx) => readUint32Column(c, ctx, 'BrickColor'),
  Color3: (c, ctx) => readFloatStructColumn(c, ctx, 'Color3', 3),
  Vector2: (c, ctx) => readFloatStructColumn(c, ctx, 'Vector2', 2),
  Vector3: (c, ctx) => readFloatStructColumn(c, ctx, 'Vector3', 3),
  CFrame: readCFrameColumn,
  Enum: (c, ctx) => readUint32Column(c, ctx, 'Enum'),
  Ref: readRefColumn,
  Vector3int16: readVector3int16Column,
  NumberSequence: readNumberSequenceColumn,
  ColorSequence: readColorSequenceColumn,
  NumberRange: (c, ctx) => readPlainFloatColumn(c, ctx, 'NumberRange'),
  Rect: readRectColumn,
  PhysicalProperties: readPhysicalPropertiesColumn,
  Color3uint8: readColor3uint8Column,
  Int64: readInt64Column,
  SharedString: (c, ctx) => readUint32Column(c, ctx, 'SharedString'),
  OptionalCFrame: readOptionalCFrameColumn,
  UniqueId: readUniqueIdColumn,
  Font: readFontColumn,
  SecurityCapabilities: readSecurityCapabilitiesColumn,
  Content: readContentColumn,
};

export function readColumn(type: PropType, c: Cursor, ctx: ColumnContext): Column {
  return READERS[type](c, ctx);
}
