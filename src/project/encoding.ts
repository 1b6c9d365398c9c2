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
  CFrameValue, ColorKeypoint, ContentValue, CustomPhysics, FontValue, NumberKeypoint, PropType, Value, Vec3,
} from '../parser/values.js';
import { JsonCapError, JsonWriter } from './json-writer.js';

export { float32Text } from './json-writer.js';

/** What encoding needs besides the value: how a referent becomes an instance id. */
export interface EncodeContext {
  /** The document id of the instance a Ref (or Content object) points at; null for none, or for one not in the document. */
  refId(referent: number): string | null;
}

/** Writes a value's JSON text. */
export type Encoder = (w: JsonWriter, value: Value, ctx: EncodeContext) => void;

// ---------------------------------------------------------------------------
// Encoders, one per type

/** Integers as the decoder gives them (a number, or a decimal string past 2^53). */
function integer(w: JsonWriter, value: unknown): void {
  if (typeof value === 'number') w.int(value);
  else w.text(JSON.stringify(value));
}

function float32s(w: JsonWriter, values: readonly number[]): void {
  w.float32Array(values, 0, values.length);
}

const string: Encoder = (w, value) => {
  if (typeof value === 'string') w.string(value);
  else w.text(JSON.stringify(value));
};

const json: Encoder = (w, value) => { w.text(JSON.stringify(value)); };

/** An array of integers (Color3uint8, Vector3int16: one on every part), digit by digit; anything else as JSON.stringify writes it. */
const integers: Encoder = (w, value, ctx) => {
  if (!Array.isArray(value) || !value.every(Number.isSafeInteger)) { json(w, value, ctx); return; }
  const values = value as number[];
  w.byte(0x5b);
  for (let i = 0; i < values.length; i++) {
    if (i) w.byte(0x2c);
    w.int(values[i]!);
  }
  w.byte(0x5d);
};

function cframe(w: JsonWriter, value: CFrameValue): void {
  const p = value.position;
  const r = value.orientation;
  w.byte(0x5b);
  w.float32(p[0]); w.byte(0x2c); w.float32(p[1]); w.byte(0x2c); w.float32(p[2]);
  for (let i = 0; i < 3; i++) {
    const row = r[i]!;
    w.byte(0x2c); w.float32(row[0]); w.byte(0x2c); w.float32(row[1]); w.byte(0x2c); w.float32(row[2]);
  }
  w.byte(0x5d);
}

function ref(w: JsonWriter, referent: number, ctx: EncodeContext): void {
  const id = referent === -1 ? null : ctx.refId(referent);
  if (id === null) w.ascii('null');
  else w.string(id);
}

export const ENCODERS: Readonly<Record<PropType, Encoder>> = {
  String: string,
  Bytecode: string,
  Bool: (w, value) => w.bool(value === true),
  Int32: integer,
  Enum: integer,
  BrickColor: integer,
  SharedString: integer,
  Int64: integer,
  SecurityCapabilities: integer,
  Float32: (w, value) => w.float32(value as number),
  Float64: (w, value) => w.float64(value as number),
  UDim: (w, value) => {
    const [scale, offset] = value as [number, number];
    w.byte(0x5b); w.float32(scale); w.byte(0x2c); integer(w, offset); w.byte(0x5d);
  },
  UDim2: (w, value) => {
    const [[xs, xo], [ys, yo]] = value as [[number, number], [number, number]];
    w.byte(0x5b); w.float32(xs); w.byte(0x2c); integer(w, xo); w.byte(0x2c); w.float32(ys); w.byte(0x2c); integer(w, yo); w.byte(0x5d);
  },
  Ray: (w, value) => {
    const { origin, direction } = value as { origin: Vec3; direction: Vec3 };
    w.byte(0x5b); float32s(w, origin); w.byte(0x2c); float32s(w, direction); w.byte(0x5d);
  },
  Faces: json,
  Axes: json,
  Color3: (w, value) => float32s(w, value as number[]),
  Vector2: (w, value) => float32s(w, value as number[]),
  Vector3: (w, value) => float32s(w, value as number[]),
  NumberRange: (w, value) => float32s(w, value as number[]),
  Rect: (w, value) => {
    const [[x0, y0], [x1, y1]] = value as [[number, number], [number, number]];
    float32s(w, [x0, y0, x1, y1]);
  },
  Vector3int16: integers,
  Color3uint8: integers,
  CFrame: (w, value) => cframe(w, value as CFrameValue),
  OptionalCFrame: (w, value) => { if (value === null) w.ascii('null'); else cframe(w, value as CFrameValue); },
  Ref: (w, value, ctx) => ref(w, value as number, ctx),
  NumberSequence: (w, value) => {
    const keypoints = (value as { keypoints: NumberKeypoint[] }).keypoints;
    w.byte(0x5b);
    for (let i = 0; i < keypoints.length; i++) {
      const k = keypoints[i]!;
      if (i) w.byte(0x2c);
      float32s(w, [k.time, k.value, k.envelope]);
    }
    w.byte(0x5d);
  },
  ColorSequence: (w, value) => {
    const keypoints = (value as { keypoints: ColorKeypoint[] }).keypoints;
    w.byte(0x5b);
    for (let i = 0; i < keypoints.length; i++) {
      const k = keypoints[i]!;
      if (i) w.byte(0x2c);
      float32s(w, [k.time, k.color[0], k.color[1], k.color[2]]);
    }
    w.byte(0x5d);
  },
  PhysicalProperties: (w, value) => {
    if (value === 'Default') { w.ascii('null'); return; }
    const p = value as CustomPhysics;
    float32s(w, [p.density, p.friction, p.elasticity, p.frictionWeight, p.elasticityWeight, p.acousticAbsorption]);
  },
  UniqueId: string,
  Font: (w, value) => {
    const { family, weight, style, cachedFaceId } = value as FontValue;
    w.text(JSON.stringify({ family, weight, style, cachedFaceId }));
  },
  Content: (w, value, ctx) => {
    const content = value as ContentValue;
    if (content === 'None') w.ascii('null');
    else if ('Uri' in content) w.string(content.Uri);
    else { w.ascii('{"object":'); ref(w, content.Object, ctx); w.byte(0x7d); }
  },
};

/** A value's JSON text as a string (for class defaults and tests; documents are written with ENCODERS). */
export function encodeValue(type: PropType, value: Value, ctx: EncodeContext): string {
  ENCODERS[type](scratch, value, ctx);
  return scratch.takeText();
}

const scratch = new JsonWriter(4096);

/**
 * A value's JSON text when it takes at most `maxBytes` bytes (about: see JsonWriter),
 * else undefined, found out without making the whole text: what is compared with a class
 * default, whose text is within the same cap (instances.ts).
 */
export function encodeValueWithin(type: PropType, value: Value, ctx: EncodeContext, maxBytes: number): string | undefined {
  let writer = cappedScratch.get(maxBytes);
  if (!writer) cappedScratch.set(maxBytes, (writer = new JsonWriter(4096, maxBytes)));
  try {
    ENCODERS[type](writer, value, ctx);
  } catch (error) {
    if (!(error instanceof JsonCapError)) throw error;
    writer.discard();
    return undefined;
  }
  return writer.takeText();
}

const cappedScratch = new Map<number, JsonWriter>();

/** A JSON number (or non-finite string) back to the number. */
function number(json: unknown): number {
  if (typeof json === 'number') return json;
  if (json === 'NaN') return NaN;
  if (json === 'Infinity') return Infinity;
  if (json === '-Infinity') return -Infinity;
  throw new TypeError(`not a number: ${JSON.stringify(json)}`);
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
    const [density, friction, elasticity, frictionWeight, elasticityWeight, acousticAbsorption] = numbers(json, 6);
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
  // An own key only: a type read from a document may be `constructor` or `toString`.
  const decoder = Object.hasOwn(DECODERS, type) ? DECODERS[type] : undefined;
  if (!decoder) throw new TypeError(`unknown property type ${JSON.stringify(type)}`);
  return decoder(json);
}
