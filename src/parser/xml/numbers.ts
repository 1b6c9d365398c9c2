/**
 * Number spellings of the XML format. Each parser returns undefined for text that
 * is not a number of its kind; the caller turns that into a DecodeError naming the
 * property. Floats follow XSD decimal syntax plus INF/-INF/NAN (any case, as
 * Roblox and Rust's float parsing accept); integers are decimal only.
 */

const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const INTEGER = /^[+-]?\d+$/;
const SPECIAL_FLOATS = new Map<string, number>([
  ['INF', Infinity], ['+INF', Infinity], ['INFINITY', Infinity], ['+INFINITY', Infinity],
  ['-INF', -Infinity], ['-INFINITY', -Infinity],
  ['NAN', NaN], ['+NAN', NaN], ['-NAN', NaN],
]);

export function parseDouble(text: string): number | undefined {
  const trimmed = text.trim();
  if (DECIMAL.test(trimmed)) return Number(trimmed);
  return SPECIAL_FLOATS.get(trimmed.toUpperCase());
}

/** A Float32: the nearest single-precision value, as a binary file would hold it. */
export function parseFloat32(text: string): number | undefined {
  const value = parseDouble(text);
  return value === undefined ? undefined : Math.fround(value);
}

/** An integer within [min, max] (both within the safe-integer range). */
export function parseInteger(text: string, min: number, max: number): number | undefined {
  const trimmed = text.trim();
  if (!INTEGER.test(trimmed)) return undefined;
  const value = Number(trimmed) + 0; // + 0 turns -0 into 0
  return value >= min && value <= max ? value : undefined;
}

export const parseInt32 = (text: string): number | undefined => parseInteger(text, -0x80000000, 0x7fffffff);
export const parseInt16 = (text: string): number | undefined => parseInteger(text, -0x8000, 0x7fff);

/** A 32-bit pattern written signed or unsigned (Enum, packed colors), as its unsigned value. */
export function parseUint32Bits(text: string): number | undefined {
  const value = parseInteger(text, -0x80000000, 0xffffffff);
  return value === undefined ? undefined : value >>> 0;
}

const SAFE_DIGITS = 15; // any integer of up to 15 digits is exact as a double
const MAX_WIDE_DIGITS = 20; // 2^64 has 20 digits

/**
 * A 64-bit integer (signed or unsigned): a number when it is a safe integer, else
 * its decimal string (the value shape of Int64 and SecurityCapabilities).
 */
function parseWide(text: string, unsigned: boolean): number | string | undefined {
  const trimmed = text.trim();
  if (!INTEGER.test(trimmed)) return undefined;
  const negative = trimmed[0] === '-';
  const digits = trimmed.length - (negative || trimmed[0] === '+' ? 1 : 0);
  if (digits <= SAFE_DIGITS) {
    const value = Number(trimmed) + 0; // + 0 turns -0 into 0
    return unsigned && value < 0 ? undefined : value;
  }
  if (digits > MAX_WIDE_DIGITS && trimmed.replace(/^[+-]?0+/, '').length > MAX_WIDE_DIGITS) return undefined; // before BigInt reads a huge text
  const value = BigInt(trimmed);
  if (value < (unsigned ? 0n : INT64_MIN) || value > (unsigned ? UINT64_MAX : INT64_MAX)) return undefined;
  return value >= -MAX_SAFE && value <= MAX_SAFE ? Number(value) : value.toString();
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
const UINT64_MAX = (1n << 64n) - 1n;

export const parseInt64 = (text: string): number | string | undefined => parseWide(text, false);
export const parseUint64 = (text: string): number | string | undefined => parseWide(text, true);

/** `true` / `false` in any case, as Roblox accepts. */
export function parseBool(text: string): boolean | undefined {
  const lower = text.trim().toLowerCase();
  return lower === 'true' ? true : lower === 'false' ? false : undefined;
}
