/**
 * Checks that a property value has the shape values.ts gives its type, so a wrong
 * value becomes a clear error instead of a silently wrong byte (NaN, a wrapped
 * integer). Each check names the row; the PROP writer adds class and property.
 */
import { ValueShapeError } from './errors.js';

function describe(value: unknown): string {
  const text = JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
  return text === undefined ? String(value) : text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

export function fail(what: string, value: unknown, row: number): never {
  throw new ValueShapeError(`expected ${what}, got ${describe(value)}`, row);
}

/** The value as a plain object to read fields from, or null when it is not one. */
export function fields(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** Any number, NaN and the infinities included (float types). */
export function float(value: unknown, row: number, what = 'a number'): number {
  if (typeof value !== 'number') fail(what, value, row);
  return value;
}

export function integer(value: unknown, row: number, min: number, max: number, what: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) fail(what, value, row);
  return value;
}

export const int32 = (value: unknown, row: number, what = 'an Int32'): number =>
  integer(value, row, -0x80000000, 0x7fffffff, what);

export const uint32 = (value: unknown, row: number, what = 'a u32'): number =>
  integer(value, row, 0, 0xffffffff, what);

/** A fixed-length array of numbers. */
export function floats(value: unknown, length: number, row: number, what: string): number[] {
  if (!Array.isArray(value) || value.length !== length || !value.every((v) => typeof v === 'number')) fail(what, value, row);
  return value;
}

export function text(value: unknown, row: number, what = 'a string'): string {
  if (typeof value !== 'string') fail(what, value, row);
  return value;
}

/** A 64-bit integer given as a number (safe integer) or a decimal string. */
export function int64(value: unknown, row: number, what: string): bigint {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  if (typeof value === 'string' && /^-?\d{1,20}$/.test(value)) {
    const big = BigInt(value);
    if (big >= -(2n ** 63n) && big < 2n ** 64n) return big;
  }
  return fail(what, value, row);
}
