/**
 * Reading the parts of a property element: named child elements and their numbers,
 * failing with a DecodeError that names the property and the part.
 */
import { fail, type DecodeContext } from './context.js';
import { parseBool, parseFloat32, parseInt16, parseInt32 } from './numbers.js';
import { childrenOf, findChild, tagOf, textOf, TEXT, CDATA, type XmlNode } from './tree.js';

/**
 * The children of the named child elements, in the order of `names`. Studio writes
 * them in that order, so they are matched by position first and searched only when
 * the order differs.
 */
export function readFields(ctx: DecodeContext, children: XmlNode[], names: readonly string[]): XmlNode[][] {
  const out: XmlNode[][] = new Array<XmlNode[]>(names.length);
  let next = 0;
  for (const child of children) {
    if (next === names.length) break;
    if (TEXT in child || CDATA in child) continue;
    if (!(names[next]! in child)) break;
    out[next] = childrenOf(child, names[next]!);
    next++;
  }
  if (next === names.length) return out;
  for (let i = 0; i < names.length; i++) {
    const field = findChild(children, names[i]!);
    if (!field) fail(ctx, `<${tagOf(ctx.element)}> has no <${names[i]}> element`);
    out[i] = childrenOf(field, names[i]!);
  }
  return out;
}

/** The texts of the named child elements. */
export function readFieldTexts(ctx: DecodeContext, children: XmlNode[], names: readonly string[]): string[] {
  return readFields(ctx, children, names).map(textOf);
}

export function float32(ctx: DecodeContext, text: string, field?: string): number {
  const value = parseFloat32(text);
  return value === undefined ? fail(ctx, badNumber('float', text, field)) : value;
}

export function int32(ctx: DecodeContext, text: string, field?: string): number {
  const value = parseInt32(text);
  return value === undefined ? fail(ctx, badNumber('32-bit integer', text, field)) : value;
}

export function int16(ctx: DecodeContext, text: string, field?: string): number {
  const value = parseInt16(text);
  return value === undefined ? fail(ctx, badNumber('16-bit integer', text, field)) : value;
}

export function bool(ctx: DecodeContext, text: string, field?: string): boolean {
  const value = parseBool(text);
  return value === undefined ? fail(ctx, badNumber('bool', text, field)) : value;
}

export function badNumber(kind: string, text: string, field?: string): string {
  const shown = text.length > 40 ? `${text.slice(0, 40)}…` : text;
  return `${JSON.stringify(shown)} is not a ${kind}${field ? ` (in <${field}>)` : ''}`;
}

export function floats(ctx: DecodeContext, children: XmlNode[], names: readonly string[]): number[] {
  const texts = readFieldTexts(ctx, children, names);
  return texts.map((text, i) => float32(ctx, text, names[i]));
}
