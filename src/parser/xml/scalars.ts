/**
 * Single-value property types: strings, binary strings, bools, integers, floats,
 * enums, SecurityCapabilities and UniqueId.
 */
import { fail, type DecodeContext, type Decoder } from './context.js';
import { badNumber, bool, float32, int32 } from './fields.js';
import { parseDouble, parseInt64, parseUint32Bits, parseUint64 } from './numbers.js';
import { base64Size, bytesToStringValue, decodeBase64, exceedsBytes } from './text.js';
import { textOf, type XmlNode } from './tree.js';

/** Character data of a string-valued element, held to maxStringBytes. */
export function stringText(ctx: DecodeContext, children: XmlNode[]): string {
  const text = textOf(children);
  if (exceedsBytes(text, ctx.limits.maxStringBytes)) fail(ctx, `string longer than ${ctx.limits.maxStringBytes} bytes (maxStringBytes)`, 'maxStringBytes');
  return text;
}

/** Base64 character data, decoded, held to maxStringBytes. */
export function base64Bytes(ctx: DecodeContext, text: string): Uint8Array {
  if (base64Size(text) > ctx.limits.maxStringBytes * 1.5 + 1024) {
    // Far above the cap even allowing for line breaks: refuse before decoding.
    fail(ctx, `binary string longer than ${ctx.limits.maxStringBytes} bytes (maxStringBytes)`, 'maxStringBytes');
  }
  const bytes = decodeBase64(text);
  if (!bytes) fail(ctx, 'content is not base64');
  if (bytes.length > ctx.limits.maxStringBytes) fail(ctx, `binary string longer than ${ctx.limits.maxStringBytes} bytes (maxStringBytes)`, 'maxStringBytes');
  return bytes;
}

const string: Decoder = (children, ctx) => ({ type: 'String', value: stringText(ctx, children) });

/** Base64 of arbitrary bytes; binary files hold the same bytes as a String. */
const binaryString: Decoder = (children, ctx) => ({
  type: 'String',
  value: bytesToStringValue(base64Bytes(ctx, textOf(children))),
});

/**
 * BrickColor properties are written as <int>; binary files type them BrickColor.
 * These are the ones Roblox serializes, now or in older files (rbx-dom's reflection
 * database): by name on any class, plus BrickColorValue.Value.
 */
const BRICK_COLOR_PROPERTIES = new Set([
  'BrickColor', 'brickColor', 'TeamColor', 'SkinColor', 'Color',
  'HeadColor', 'LeftArmColor', 'LeftLegColor', 'RightArmColor', 'RightLegColor', 'TorsoColor',
  'BackgroundColor', 'BorderColor', 'TextColor', 'SurfaceColor',
]);

function isBrickColor(className: string, propertyName: string): boolean {
  return BRICK_COLOR_PROPERTIES.has(propertyName) || (className === 'BrickColorValue' && propertyName === 'Value');
}

const int: Decoder = (children, ctx) => ({
  type: isBrickColor(ctx.className, ctx.propertyName) ? 'BrickColor' : 'Int32',
  value: int32(ctx, textOf(children)),
});

const int64: Decoder = (children, ctx) => {
  const text = textOf(children);
  const value = parseInt64(text);
  return value === undefined ? fail(ctx, badNumber('64-bit integer', text)) : { type: 'Int64', value };
};

const float: Decoder = (children, ctx) => ({ type: 'Float32', value: float32(ctx, textOf(children)) });

const double: Decoder = (children, ctx) => {
  const text = textOf(children);
  const value = parseDouble(text);
  return value === undefined ? fail(ctx, badNumber('double', text)) : { type: 'Float64', value };
};

const boolean: Decoder = (children, ctx) => ({ type: 'Bool', value: bool(ctx, textOf(children)) });

/** Enum values are unsigned 32-bit in binary files. */
const token: Decoder = (children, ctx) => {
  const text = textOf(children);
  const value = parseUint32Bits(text);
  return value === undefined ? fail(ctx, badNumber('enum value', text)) : { type: 'Enum', value };
};

const securityCapabilities: Decoder = (children, ctx) => {
  const text = textOf(children);
  const value = parseUint64(text);
  return value === undefined ? fail(ctx, badNumber('64-bit capability set', text)) : { type: 'SecurityCapabilities', value };
};

const HEX_32 = /^[0-9a-fA-F]{32}$/;

/**
 * The XML text is random (16 hex digits), time (8) and index (8): already the order
 * and the rotated `random` the binary decoder prints, so only the case is normalised.
 */
const uniqueId: Decoder = (children, ctx) => {
  const text = textOf(children).trim();
  if (!HEX_32.test(text)) fail(ctx, `${JSON.stringify(text.slice(0, 40))} is not a UniqueId (32 hex digits)`);
  return { type: 'UniqueId', value: text.toLowerCase() };
};

export const SCALAR_DECODERS: [string, Decoder][] = [
  ['string', string],
  ['ProtectedString', string],
  ['BinaryString', binaryString],
  ['bool', boolean],
  ['int', int],
  ['int64', int64],
  ['float', float],
  ['double', double],
  ['token', token],
  ['SecurityCapabilities', securityCapabilities],
  ['UniqueId', uniqueId],
];
