/**
 * Property value shapes shared by the binary and XML decoders, the writer and the
 * JSON dumps. They are the shapes of ../shared/conformance/README.md, except that
 * non-finite floats stay real numbers in memory (the JSON dump turns them into
 * "NaN"/"Infinity" strings).
 */

export type PropType =
  | 'String' | 'Bool' | 'Int32' | 'Float32' | 'Float64' | 'UDim' | 'UDim2' | 'Ray'
  | 'Faces' | 'Axes' | 'BrickColor' | 'Color3' | 'Vector2' | 'Vector3' | 'CFrame'
  | 'Enum' | 'Ref' | 'Vector3int16' | 'NumberSequence' | 'ColorSequence' | 'NumberRange'
  | 'Rect' | 'PhysicalProperties' | 'Color3uint8' | 'Int64' | 'SharedString' | 'Bytecode'
  | 'OptionalCFrame' | 'UniqueId' | 'Font' | 'SecurityCapabilities' | 'Content';

/** A String value: text when the bytes are valid UTF-8, else the bytes in base64. */
export type StringValue = string | { base64: string };
export type Vec2 = [number, number];
export type Vec3 = [number, number, number];
export type Matrix3 = [Vec3, Vec3, Vec3];
export interface CFrameValue { position: Vec3; orientation: Matrix3 }
export interface NumberKeypoint { time: number; value: number; envelope: number }
export interface ColorKeypoint { time: number; color: Vec3 }
export interface CustomPhysics {
  density: number; friction: number; elasticity: number;
  frictionWeight: number; elasticityWeight: number; acousticAbsorption: number;
}
export interface FontValue { family: string; weight: string; style: string; cachedFaceId: string | null }
export type ContentValue = 'None' | { Uri: string } | { Object: number };

export type Value =
  | StringValue | boolean | number | string
  | Vec2 | Vec3 | [Vec2, Vec2] | { origin: Vec3; direction: Vec3 }
  | string[] | CFrameValue | null
  | { keypoints: NumberKeypoint[] } | { keypoints: ColorKeypoint[] }
  // eslint-disable-next-line @typescript-eslint/no-redundant-type-constituents -- 'Default' and 'None' name the special strings
  | 'Default' | CustomPhysics | FontValue | ContentValue;

export interface Property { type: PropType; value: Value }

export const FACE_NAMES = ['Right', 'Top', 'Back', 'Left', 'Bottom', 'Front'] as const;
export const AXIS_NAMES = ['X', 'Y', 'Z'] as const;

export const FONT_WEIGHTS: Record<number, string> = {
  100: 'Thin', 200: 'ExtraLight', 300: 'Light', 400: 'Regular', 500: 'Medium',
  600: 'SemiBold', 700: 'Bold', 800: 'ExtraBold', 900: 'Heavy',
};
export const FONT_STYLES = ['Normal', 'Italic'] as const;

/**
 * Deep equality of two values in these shapes; numbers compare with Object.is (so NaN
 * equals NaN and -0 differs from 0, as their JSON forms do).
 */
export function valuesEqual(a: Value | undefined, b: Value | undefined): boolean {
  if (typeof a === 'number' || typeof b === 'number') return Object.is(a, b);
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!valuesEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a), kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const key of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, key)) return false;
    if (!valuesEqual((a as Record<string, Value>)[key], (b as Record<string, Value>)[key])) return false;
  }
  return true;
}

/** JSON.stringify replacer that writes non-finite floats the way the chunk view does. */
export function jsonReplacer(_key: string, value: unknown): unknown {
  if (typeof value === 'number' && !Number.isFinite(value)) {
    return Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity';
  }
  if (typeof value === 'bigint') return value.toString();
  return value;
}
