/**
 * One encoder per property type (the families live in scalars, strings, vectors,
 * cframe and structs), and the value written for an instance that lacks a property
 * its class carries.
 */
import type { PropType, Value } from '../values.js';
import type { ValueEncoder } from './context.js';
import { writeCFrames, writeOptionalCFrames } from './cframe.js';
import { writeBools, writeFloat32s, writeFloat64s, writeInt32s, writeInt64s, writeRefs, writeSecurityCapabilities, writeSharedStrings, writeUint32s } from './scalars.js';
import { writeStrings } from './strings.js';
import { writeAxes, writeColorSequences, writeContents, writeFaces, writeFonts, writeNumberSequences, writePhysicalProperties, writeUniqueIds } from './structs.js';
import { floatStructWriter, writeColor3uint8s, writeNumberRanges, writeRays, writeRects, writeUDim2s, writeUDims, writeVector3int16s } from './vectors.js';

export const ENCODERS: Readonly<Record<PropType, ValueEncoder>> = {
  String: writeStrings,
  Bytecode: writeStrings,
  Bool: writeBools,
  Int32: writeInt32s,
  Float32: writeFloat32s,
  Float64: writeFloat64s,
  UDim: writeUDims,
  UDim2: writeUDim2s,
  Ray: writeRays,
  Faces: writeFaces,
  Axes: writeAxes,
  BrickColor: writeUint32s,
  Color3: floatStructWriter('a Color3 [r, g, b]', 3),
  Vector2: floatStructWriter('a Vector2 [x, y]', 2),
  Vector3: floatStructWriter('a Vector3 [x, y, z]', 3),
  CFrame: writeCFrames,
  Enum: writeUint32s,
  Ref: writeRefs,
  Vector3int16: writeVector3int16s,
  NumberSequence: writeNumberSequences,
  ColorSequence: writeColorSequences,
  NumberRange: writeNumberRanges,
  Rect: writeRects,
  PhysicalProperties: writePhysicalProperties,
  Color3uint8: writeColor3uint8s,
  Int64: writeInt64s,
  SharedString: writeSharedStrings,
  OptionalCFrame: writeOptionalCFrames,
  UniqueId: writeUniqueIds,
  Font: writeFonts,
  SecurityCapabilities: writeSecurityCapabilities,
  Content: writeContents,
};

/**
 * Fill-in values (Roblox's defaults where a type has an obvious one). SharedString
 * has none here: the writer appends an empty shared string and points at it.
 */
export const DEFAULT_VALUES: Readonly<Record<Exclude<PropType, 'SharedString'>, Value>> = {
  String: '',
  Bytecode: '',
  Bool: false,
  Int32: 0,
  Float32: 0,
  Float64: 0,
  UDim: [0, 0],
  UDim2: [[0, 0], [0, 0]],
  Ray: { origin: [0, 0, 0], direction: [0, 0, 0] },
  Faces: [],
  Axes: [],
  BrickColor: 194, // Medium stone grey
  Color3: [0, 0, 0],
  Vector2: [0, 0],
  Vector3: [0, 0, 0],
  CFrame: { position: [0, 0, 0], orientation: [[1, 0, 0], [0, 1, 0], [0, 0, 1]] },
  Enum: 0,
  Ref: -1,
  Vector3int16: [0, 0, 0],
  NumberSequence: { keypoints: [{ time: 0, value: 0, envelope: 0 }, { time: 1, value: 0, envelope: 0 }] },
  ColorSequence: { keypoints: [{ time: 0, color: [1, 1, 1] }, { time: 1, color: [1, 1, 1] }] },
  NumberRange: [0, 0],
  Rect: [[0, 0], [0, 0]],
  PhysicalProperties: 'Default',
  Color3uint8: [0, 0, 0],
  Int64: 0,
  OptionalCFrame: null,
  UniqueId: '00000000000000000000000000000000',
  Font: { family: 'rbxasset://fonts/families/SourceSansPro.json', weight: 'Regular', style: 'Normal', cachedFaceId: null },
  SecurityCapabilities: 0,
  Content: 'None',
};
