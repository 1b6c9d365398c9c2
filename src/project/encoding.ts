/**
 * The typed value encoding of project documents (version 2) and of `rbxl-import dump`:
 * one JSON form per property type, written from the decoder's value shapes
 * (parser/values.ts) and read back into them by `decodeValue`, the one reader.
 *
 * A value's type is not written next to it: documents keep a type table per class
 * (instances.ts), so each value is its natural JSON, the numbers of its Roblox
 * constructor where that is short (a CFrame is `CFrame.new`'s twelve numbers,
 * `GetComponents()` order). README's "Property encoding" lists every type with an
 * example.
 *
 * Numbers: Float32 values are written in the shortest form that reads back as the
 * same 32-bit float (37.8, not 37.79999923706055); Float64 values in JavaScript's
 * shortest form; -0 as -0; NaN and the infinities as the strings "NaN", "Infinity",
 * "-Infinity" (JSON has no such numbers). Integers above 2^53 (Int64,
 * SecurityCapabilities) are decimal strings, as the decoder gives them.
 */
import type {
  CFrameValue, ColorKeypoint, ContentValue, CustomPhysics, FontValue, NumberKeypoint, PropType, StringValue, Value, Vec3,
} from '../parser/values.js';

/** What encoding needs besides the value: how a referent becomes an instance id. */
export interface EncodeContext {
  /** The document id of the instance a Ref (or Content object) points at; null for none, or for one not in the document. */
  refId(referent: number): string | null;
}

/** A value's JSON text. */
export type Encoder = (value: Value, ctx: EncodeContext) => string;

// ---------------------------------------------------------------------------
// Numbers

/**
 * A float32 value in the shortest decimal that reads back as the same float32
 * (37.8 for the float32 nearest 37.8). The fewest digits are found by rounding
 * x·10^k for k from the first significant digit on and checking that the quotient
 * reads back as x: a few multiplications, about 7× faster than toPrecision. Every
 * candidate is checked, so the text always reads back as x; a value that is not a
 * float32 is written in full.
 */
/** 10^k for k = 0..54 (a float32's smallest magnitude is about 1.4e-45): a table, as Math.pow is slow. */
const POWERS_OF_TEN = Array.from({ length: 55 }, (_, k) => Number(`1e${k}`));

export function float32Text(x: number): string {
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  if (x !== x || x === Infinity || x === -Infinity) return nonFinite(x);
  if (Math.fround(x) !== x) return String(x);
  const magnitude = x < 0 ? -x : x;
  if (magnitude < 1e7) {
    // Decimals before the first significant digit (0 for magnitudes of 0.1 and up).
    const first = magnitude >= 0.1 ? 0 : -Math.floor(Math.log10(magnitude));
    for (let k = first; k < first + 10 && k < POWERS_OF_TEN.length; k++) {
      const power = POWERS_OF_TEN[k]!;
      const candidate = Math.round(x * power) / power;
      if (Math.fround(candidate) === x) return String(candidate);
    }
  }
  for (let digits = 6; digits < 9; digits++) {
    const candidate = Number(x.toPrecision(digits));
    if (Math.fround(candidate) === x) return String(candidate);
  }
  return String(Number(x.toPrecision(9)));
}

/** A float64 value (JavaScript's shortest round-trip form). */
export function float64Text(x: number): string {
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  if (x !== x || x === Infinity || x === -Infinity) return nonFinite(x);
  return String(x);
}

function nonFinite(x: number): string {
  return x !== x ? '"NaN"' : x > 0 ? '"Infinity"' : '"-Infinity"';
}

/** A JSON number (or non-finite string) back to the number. */
function number(json: unknown): number {
  if (typeof json === 'number') return json;
  if (json === 'NaN') return NaN;
  if (json === 'Infinity') return Infinity;
  if (json === '-Infinity') return -Infinity;
  throw new TypeError(`not a number: ${JSON.stringify(json)}`);
}

/** Integers as the decoder gives them (a number, or a decimal string past 2^53); anything else is its JSON. */
function integerText(x: unknown): string {
  return typeof x === 'number' && Number.isInteger(x) ? String(x) : JSON.stringify(x);
}

const f32 = (x: unknown): string => float32Text(x as number);
const f32s = (values: readonly number[]): string => {
  let out = '[';
  for (let i = 0; i < values.length; i++) out += (i ? ',' : '') + float32Text(values[i]!);
  return out + ']';
};

// ---------------------------------------------------------------------------
// Encoders, one per type

const string: Encoder = (value) => JSON.stringify(value as StringValue);

function cframeText(value: CFrameValue): string {
  const [x, y, z] = value.position;
  const [r0, r1, r2] = value.orientation;
  return `[${f32(x)},${f32(y)},${f32(z)},${f32(r0[0])},${f32(r0[1])},${f32(r0[2])},${f32(r1[0])},${f32(r1[1])},${f32(r1[2])},${f32(r2[0])},${f32(r2[1])},${f32(r2[2])}]`;
}

function refText(referent: number, ctx: EncodeContext): string {
  const id = referent === -1 ? null : ctx.refId(referent);
  return id === null ? 'null' : JSON.stringify(id);
}

export const ENCODERS: Readonly<Record<PropType, Encoder>> = {
  String: string,
  Bytecode: string,
  Bool: (value) => (value ? 'true' : 'false'),
  Int32: integerText,
  Enum: integerText,
  BrickColor: integerText,
  SharedString: integerText,
  Int64: integerText,
  SecurityCapabilities: integerText,
  Float32: f32,
  Float64: (value) => float64Text(value as number),
  UDim: (value) => {
    const [scale, offset] = value as [number, number];
    return `[${f32(scale)},${integerText(offset)}]`;
  },
  UDim2: (value) => {
    const [[xs, xo], [ys, yo]] = value as [[number, number], [number, number]];
    return `[${f32(xs)},${integerText(xo)},${f32(ys)},${integerText(yo)}]`;
  },
  Ray: (value) => {
    const { origin, direction } = value as { origin: Vec3; direction: Vec3 };
    return `[${f32s(origin)},${f32s(direction)}]`;
  },
  Faces: (value) => JSON.stringify(value),
  Axes: (value) => JSON.stringify(value),
  Color3: (value) => f32s(value as number[]),
  Vector2: (value) => f32s(value as number[]),
  Vector3: (value) => f32s(value as number[]),
  NumberRange: (value) => f32s(value as number[]),
  Rect: (value) => {
    const [[x0, y0], [x1, y1]] = value as [[number, number], [number, number]];
    return `[${f32(x0)},${f32(y0)},${f32(x1)},${f32(y1)}]`;
  },
  Vector3int16: (value) => JSON.stringify(value),
  Color3uint8: (value) => JSON.stringify(value),
  CFrame: (value) => cframeText(value as CFrameValue),
  OptionalCFrame: (value) => (value === null ? 'null' : cframeText(value as CFrameValue)),
  Ref: (value, ctx) => refText(value as number, ctx),
  NumberSequence: (value) => {
    let out = '[';
    const keypoints = (value as { keypoints: NumberKeypoint[] }).keypoints;
    for (let i = 0; i < keypoints.length; i++) {
      const k = keypoints[i]!;
      out += `${i ? ',' : ''}[${f32(k.time)},${f32(k.value)},${f32(k.envelope)}]`;
    }
    return out + ']';
  },
  ColorSequence: (value) => {
    let out = '[';
    const keypoints = (value as { keypoints: ColorKeypoint[] }).keypoints;
    for (let i = 0; i < keypoints.length; i++) {
      const k = keypoints[i]!;
      out += `${i ? ',' : ''}[${f32(k.time)},${f32(k.color[0])},${f32(k.color[1])},${f32(k.color[2])}]`;
    }
    return out + ']';
  },
  PhysicalProperties: (value) => {
    if (value === 'Default') return 'null';
    const p = value as CustomPhysics;
    return `[${f32(p.density)},${f32(p.friction)},${f32(p.elasticity)},${f32(p.frictionWeight)},${f32(p.elasticityWeight)},${f32(p.acousticAbsorption)}]`;
  },
  UniqueId: (value) => JSON.stringify(value),
  Font: (value) => {
    const { family, weight, style, cachedFaceId } = value as FontValue;
    return JSON.stringify({ family, weight, style, cachedFaceId });
  },
  Content: (value, ctx) => {
    const content = value as ContentValue;
    if (content === 'None') return 'null';
    if ('Uri' in content) return JSON.stringify(content.Uri);
    return `{"object":${refText(content.Object, ctx)}}`;
  },
};

export function encodeValue(type: PropType, value: Value, ctx: EncodeContext): string {
  return ENCODERS[type](value, ctx);
}

// ---------------------------------------------------------------------------
// The reader

/**
 * A decoded value: the decoder's shape for its type, except that a Ref is the id of
 * the instance it points at (null for none), as is a Content object's `Object`.
 */
export type DocValue = Value | string | null | { Object: string | null };

/** A float32 back to the decoder's value (the double that is that float32). */
const float32 = (json: unknown): number => Math.fround(number(json));

/** `length` float32 values. */
const numbers = (json: unknown, length: number): number[] => {
  if (!Array.isArray(json) || json.length !== length) throw new TypeError(`expected ${length} numbers, got ${JSON.stringify(json)}`);
  return json.map(float32);
};

function cframeOf(json: unknown): CFrameValue {
  const n = numbers(json, 12);
  return { position: [n[0]!, n[1]!, n[2]!], orientation: [[n[3]!, n[4]!, n[5]!], [n[6]!, n[7]!, n[8]!], [n[9]!, n[10]!, n[11]!]] };
}

const asIs = (json: unknown): DocValue => json as DocValue;

const DECODERS: Readonly<Record<PropType, (json: unknown) => DocValue>> = {
  String: asIs,
  Bytecode: asIs,
  Bool: asIs,
  Int32: asIs,
  Enum: asIs,
  BrickColor: asIs,
  SharedString: asIs,
  Int64: asIs,
  SecurityCapabilities: asIs,
  Float32: float32,
  Float64: number,
  UDim: (json) => {
    const [scale, offset] = json as [unknown, number];
    return [float32(scale), offset];
  },
  UDim2: (json) => {
    const [xs, xo, ys, yo] = json as [unknown, number, unknown, number];
    return [[float32(xs), xo], [float32(ys), yo]];
  },
  Ray: (json) => {
    const [origin, direction] = json as [unknown, unknown];
    return { origin: numbers(origin, 3) as Vec3, direction: numbers(direction, 3) as Vec3 };
  },
  Faces: asIs,
  Axes: asIs,
  Color3: (json) => numbers(json, 3) as Vec3,
  Vector2: (json) => numbers(json, 2) as [number, number],
  Vector3: (json) => numbers(json, 3) as Vec3,
  NumberRange: (json) => numbers(json, 2) as [number, number],
  Rect: (json) => {
    const [x0, y0, x1, y1] = numbers(json, 4) as [number, number, number, number];
    return [[x0, y0], [x1, y1]];
  },
  Vector3int16: asIs,
  Color3uint8: asIs,
  CFrame: cframeOf,
  OptionalCFrame: (json) => (json === null ? null : cframeOf(json)),
  Ref: asIs,
  NumberSequence: (json) => ({
    keypoints: (json as unknown[]).map((k): NumberKeypoint => {
      const [time, value, envelope] = numbers(k, 3) as [number, number, number];
      return { time, value, envelope };
    }),
  }),
  ColorSequence: (json) => ({
    keypoints: (json as unknown[]).map((k): ColorKeypoint => {
      const [time, r, g, b] = numbers(k, 4) as [number, number, number, number];
      return { time, color: [r, g, b] };
    }),
  }),
  PhysicalProperties: (json) => {
    if (json === null) return 'Default';
    const [density, friction, elasticity, frictionWeight, elasticityWeight, acousticAbsorption] = numbers(json, 6) as number[];
    return { density: density!, friction: friction!, elasticity: elasticity!, frictionWeight: frictionWeight!, elasticityWeight: elasticityWeight!, acousticAbsorption: acousticAbsorption! };
  },
  UniqueId: asIs,
  Font: asIs,
  Content: (json) => {
    if (json === null) return 'None';
    if (typeof json === 'string') return { Uri: json };
    return { Object: (json as { object: string | null }).object };
  },
};

/** A value of a v2 document (or dump) back in the decoder's shape for `type` (references as ids). */
export function decodeValue(type: PropType, json: unknown): DocValue {
  const decoder = DECODERS[type];
  if (!decoder) throw new TypeError(`unknown property type ${JSON.stringify(type)}`);
  return decoder(json);
}
