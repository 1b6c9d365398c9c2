/**
 * Structured property types: vectors, CFrames, UDims, Rect, Ray, Faces/Axes,
 * colors, number ranges and sequences, PhysicalProperties. Components are Float32
 * (Math.fround) wherever binary files store them as 32-bit floats.
 */
import {
  AXIS_NAMES, FACE_NAMES,
  type CFrameValue, type ColorKeypoint, type Matrix3, type NumberKeypoint, type Vec2, type Vec3,
} from '../values.js';
import { fail, type DecodeContext, type Decoder } from './context.js';
import { bool, float32, floats, int16, int32, readFields, readFieldTexts, badNumber } from './fields.js';
import { parseUint32Bits } from './numbers.js';
import { findChild, childrenOf, textOf, type XmlNode } from './tree.js';

const XY = ['X', 'Y'] as const;
const XYZ = ['X', 'Y', 'Z'] as const;
const CFRAME_FIELDS = ['X', 'Y', 'Z', 'R00', 'R01', 'R02', 'R10', 'R11', 'R12', 'R20', 'R21', 'R22'] as const;

const vec2 = (ctx: DecodeContext, children: XmlNode[]): Vec2 => floats(ctx, children, XY) as Vec2;
const vec3 = (ctx: DecodeContext, children: XmlNode[]): Vec3 => floats(ctx, children, XYZ) as Vec3;

export function readCFrame(ctx: DecodeContext, children: XmlNode[]): CFrameValue {
  const v = floats(ctx, children, CFRAME_FIELDS);
  const orientation: Matrix3 = [[v[3]!, v[4]!, v[5]!], [v[6]!, v[7]!, v[8]!], [v[9]!, v[10]!, v[11]!]];
  return { position: [v[0]!, v[1]!, v[2]!], orientation };
}

const vector2: Decoder = (children, ctx) => ({ type: 'Vector2', value: vec2(ctx, children) });
const vector3: Decoder = (children, ctx) => ({ type: 'Vector3', value: vec3(ctx, children) });

const vector3int16: Decoder = (children, ctx) => {
  const texts = readFieldTexts(ctx, children, XYZ);
  return { type: 'Vector3int16', value: texts.map((text, i) => int16(ctx, text, XYZ[i])) as Vec3 };
};

const coordinateFrame: Decoder = (children, ctx) => ({ type: 'CFrame', value: readCFrame(ctx, children) });

/** Optional<CoordinateFrame>: a <CFrame> child, or nothing for no value. */
const optionalCoordinateFrame: Decoder = (children, ctx) => {
  const inner = findChild(children, 'CFrame');
  return { type: 'OptionalCFrame', value: inner ? readCFrame(ctx, childrenOf(inner, 'CFrame')) : null };
};

const udim: Decoder = (children, ctx) => {
  const [scale, offset] = readFieldTexts(ctx, children, ['S', 'O']);
  return { type: 'UDim', value: [float32(ctx, scale!, 'S'), int32(ctx, offset!, 'O')] };
};

const udim2: Decoder = (children, ctx) => {
  const [xs, xo, ys, yo] = readFieldTexts(ctx, children, ['XS', 'XO', 'YS', 'YO']);
  return {
    type: 'UDim2',
    value: [[float32(ctx, xs!, 'XS'), int32(ctx, xo!, 'XO')], [float32(ctx, ys!, 'YS'), int32(ctx, yo!, 'YO')]],
  };
};

const rect2D: Decoder = (children, ctx) => {
  const [min, max] = readFields(ctx, children, ['min', 'max']);
  return { type: 'Rect', value: [vec2(ctx, min!), vec2(ctx, max!)] };
};

const ray: Decoder = (children, ctx) => {
  const [origin, direction] = readFields(ctx, children, ['origin', 'direction']);
  return { type: 'Ray', value: { origin: vec3(ctx, origin!), direction: vec3(ctx, direction!) } };
};

function bitNames<T extends string>(ctx: DecodeContext, children: XmlNode[], field: string, names: readonly T[]): T[] {
  const [text] = readFieldTexts(ctx, children, [field]);
  const bits = int32(ctx, text!, field);
  return names.filter((_, bit) => (bits & (1 << bit)) !== 0);
}

const faces: Decoder = (children, ctx) => ({ type: 'Faces', value: bitNames(ctx, children, 'faces', FACE_NAMES) });
const axes: Decoder = (children, ctx) => ({ type: 'Axes', value: bitNames(ctx, children, 'axes', AXIS_NAMES) });

function packedColor(ctx: DecodeContext, text: string): Vec3 {
  const packed = parseUint32Bits(text);
  if (packed === undefined) fail(ctx, badNumber('packed color', text));
  return [(packed >>> 16) & 0xff, (packed >>> 8) & 0xff, packed & 0xff];
}

/** <R>/<G>/<B> floats, or (older files) a packed 0xFFRRGGBB integer. */
const color3: Decoder = (children, ctx) => {
  if (findChild(children, 'R')) return { type: 'Color3', value: floats(ctx, children, ['R', 'G', 'B']) as Vec3 };
  const [r, g, b] = packedColor(ctx, textOf(children));
  return { type: 'Color3', value: [Math.fround(r / 255), Math.fround(g / 255), Math.fround(b / 255)] };
};

const color3uint8: Decoder = (children, ctx) => ({ type: 'Color3uint8', value: packedColor(ctx, textOf(children)) });

/** Space-separated floats, in groups of `width`. */
function floatList(ctx: DecodeContext, children: XmlNode[], width: number, what: string): number[] {
  const text = textOf(children).trim();
  if (text === '') return [];
  // Split no further than the cap: 12 MB of "0 " was split into 6 million strings (250 MB) before it was refused.
  const maxNumbers = ctx.limits.maxSequenceLength * width;
  const parts = text.split(/\s+/, maxNumbers + 1);
  if (parts.length > maxNumbers) {
    fail(ctx, `${what} has more than ${ctx.limits.maxSequenceLength} keypoints (maxSequenceLength)`, 'maxSequenceLength');
  }
  if (parts.length % width !== 0) fail(ctx, `${what} has ${parts.length} numbers, not a multiple of ${width}`);
  return parts.map((part) => float32(ctx, part));
}

const numberRange: Decoder = (children, ctx) => {
  const text = textOf(children).trim();
  const parts = text.split(/\s+/, 3); // two numbers; a third says there are more
  if (parts.length !== 2) fail(ctx, `${JSON.stringify(text.slice(0, 40))} is not a NumberRange (two numbers)`);
  return { type: 'NumberRange', value: [float32(ctx, parts[0]!), float32(ctx, parts[1]!)] };
};

const numberSequence: Decoder = (children, ctx) => {
  const numbers = floatList(ctx, children, 3, 'NumberSequence');
  const keypoints: NumberKeypoint[] = [];
  for (let i = 0; i < numbers.length; i += 3) {
    keypoints.push({ time: numbers[i]!, value: numbers[i + 1]!, envelope: numbers[i + 2]! });
  }
  return { type: 'NumberSequence', value: { keypoints } };
};

/** Five numbers per keypoint: time, R, G, B and an envelope that Roblox does not use. */
const colorSequence: Decoder = (children, ctx) => {
  const numbers = floatList(ctx, children, 5, 'ColorSequence');
  const keypoints: ColorKeypoint[] = [];
  for (let i = 0; i < numbers.length; i += 5) {
    keypoints.push({ time: numbers[i]!, color: [numbers[i + 1]!, numbers[i + 2]!, numbers[i + 3]!] });
  }
  return { type: 'ColorSequence', value: { keypoints } };
};

const CUSTOM_PHYSICS_FIELDS = ['Density', 'Friction', 'Elasticity', 'FrictionWeight', 'ElasticityWeight'] as const;

/** 'Default' unless <CustomPhysics> is true; AcousticAbsorption is missing in older files and then 1. */
const physicalProperties: Decoder = (children, ctx) => {
  const [custom] = readFieldTexts(ctx, children, ['CustomPhysics']);
  if (!bool(ctx, custom!, 'CustomPhysics')) return { type: 'PhysicalProperties', value: 'Default' };
  const [density, friction, elasticity, frictionWeight, elasticityWeight] = floats(ctx, children, CUSTOM_PHYSICS_FIELDS);
  const acoustic = findChild(children, 'AcousticAbsorption');
  const acousticAbsorption = acoustic ? float32(ctx, textOf(childrenOf(acoustic, 'AcousticAbsorption')), 'AcousticAbsorption') : 1;
  return {
    type: 'PhysicalProperties',
    value: {
      density: density!, friction: friction!, elasticity: elasticity!,
      frictionWeight: frictionWeight!, elasticityWeight: elasticityWeight!, acousticAbsorption,
    },
  };
};

export const STRUCT_DECODERS: [string, Decoder][] = [
  ['Vector2', vector2],
  ['Vector3', vector3],
  ['Vector3int16', vector3int16],
  ['CoordinateFrame', coordinateFrame],
  ['OptionalCoordinateFrame', optionalCoordinateFrame],
  ['UDim', udim],
  ['UDim2', udim2],
  ['Rect2D', rect2D],
  ['Ray', ray],
  ['Faces', faces],
  ['Axes', axes],
  ['Color3', color3],
  ['Color3uint8', color3uint8],
  ['NumberRange', numberRange],
  ['NumberSequence', numberSequence],
  ['ColorSequence', colorSequence],
  ['PhysicalProperties', physicalProperties],
];
