/**
 * XML (.rbxlx/.rbxmx) decoding into the DOM: the element tree (tree.ts), then the
 * <roblox> element's Meta, SharedStrings and Items. Items are numbered 0, 1, 2... in
 * document order before any property is read, so Ref values can point forward; that
 * number is the Item's row in the instance table and its referent.
 */
import type { Column, Dom } from '../dom.js';
import { DomBuilder } from '../dom-build.js';
import { arrayColumn } from '../columns/column.js';
import { DecodeError } from '../errors.js';
import { resolveLimits, type DecodeLimits } from '../limits.js';
import { SkipLog } from '../skipped.js';
import type { Property, Value } from '../values.js';
import { fail, warn, warningLines, type DecodeContext, type WarningLog } from './context.js';
import { decodeProperties } from './properties.js';
import { readSharedStrings } from './references.js';
import { stringText } from './scalars.js';
import { attributeOf, childrenOf, isClosed, parseTree, startIndexOf, tagOf, truncatedError, type XmlNode } from './tree.js';

/** The DOM of an XML file; `xmlReferents[referent]` is the Item's referent attribute ('' when it had none). */
export type XmlDom = Dom & { readonly xmlReferents: string[] };

export function decodeXml(bytes: Uint8Array, limits?: Partial<DecodeLimits>): XmlDom {
  try {
    return decodeDocument(bytes, resolveLimits(limits));
  } catch (error) {
    if (error instanceof DecodeError) throw error;
    // Anything else is a bug or an exhausted resource; callers still get the one error type.
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    throw new DecodeError(`could not decode the XML document (${message})`, { chunk: 'xml' });
  }
}

/** V8's longest string; the whole document must fit in one. */
const MAX_TEXT_LENGTH = (1 << 29) - 24;

function decodeDocument(bytes: Uint8Array, limits: DecodeLimits): XmlDom {
  if (bytes.length > limits.maxTotalBytes || bytes.length > MAX_TEXT_LENGTH) {
    throw new DecodeError(`XML document of ${bytes.length} bytes is larger than ${Math.min(limits.maxTotalBytes, MAX_TEXT_LENGTH)} bytes`, { chunk: 'xml', offset: 0, limit: 'maxTotalBytes' });
  }
  const log: WarningLog = new Map();
  const { text, bomBytes } = decodeUtf8(bytes, log);
  const byteOffset = (charIndex: number): number => bomBytes + Buffer.byteLength(text.slice(0, charIndex), 'utf8');
  const root = findRoot(parseTree(text, limits, byteOffset, bytes.length), bytes.length, byteOffset);

  const ctx: DecodeContext = {
    limits, referents: new Map(), sharedStringKeys: new Map(), warnings: log, skipped: new SkipLog(), byteOffset,
    className: 'roblox', propertyName: '', element: root,
  };
  const version = attributeOf(root, 'version');
  if (version !== '4') warn(log, '<roblox> is not version 4; read as version 4', `version=${JSON.stringify(version ?? null)}`);

  const metadata: [string, string][] = [];
  const sharedStringTables: XmlNode[] = [];
  const topItems: XmlNode[] = [];
  for (const child of childrenOf(root, 'roblox')) {
    const tag = tagOf(child);
    if (tag === 'Item') topItems.push(child);
    else if (tag === 'Meta') readMeta(ctx, child, metadata);
    else if (tag === 'SharedStrings') sharedStringTables.push(child);
    else if (tag !== undefined && tag !== 'External') warn(log, 'unknown element under <roblox> ignored', `<${tag}>`);
  }

  ctx.className = 'SharedStrings';
  const shared = readSharedStrings(ctx, sharedStringTables, log);
  for (const [key, index] of shared.keys) ctx.sharedStringKeys.set(key, index);

  const items = numberItems(ctx, topItems);
  // Rows are Items in document order; an Item's parent is an earlier row.
  const builder = new DomBuilder('xml');
  const tables = new Map<string, { table: number; values: Value[][] }>();
  for (let row = 0; row < items.length; row++) {
    const { element, parent } = items[row]!;
    const { className, properties } = readItem(ctx, element);
    const key = shapeKey(className, properties);
    let shape = tables.get(key);
    if (!shape) {
      const columns = new Map<string, Column>();
      const values: Value[][] = [];
      for (const [name, { type }] of properties) {
        const column: Value[] = [];
        values.push(column);
        columns.set(name, arrayColumn(type, column));
      }
      shape = { table: builder.addTable(className, columns), values };
      tables.set(key, shape);
    }
    let i = 0;
    for (const { value } of properties.values()) shape.values[i++]!.push(value);
    builder.add(shape.table, parent);
  }

  return builder.build({
    metadata,
    sharedStrings: shared.strings,
    warnings: warningLines(log),
    skipped: ctx.skipped.list(),
    xmlReferents: items.map((item) => item.referent ?? ''),
  }) as XmlDom;
}

/**
 * Items share a table when they have the same class and the same properties, of the
 * same types, in the same order: each keeps exactly its own properties. The key is
 * unambiguous (lengths before names; type names are fixed words).
 */
function shapeKey(className: string, properties: Map<string, Property>): string {
  let key = `${className.length}:${className}`;
  for (const [name, { type }] of properties) key += `|${name.length}:${name}:${type}`;
  return key;
}

/** Strict UTF-8 first; a file with invalid bytes is still read, with U+FFFD for them and a warning. */
function decodeUtf8(bytes: Uint8Array, log: WarningLog): { text: string; bomBytes: number } {
  const bomBytes = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), bomBytes };
  } catch {
    warn(log, 'document is not valid UTF-8', 'invalid bytes read as U+FFFD');
    return { text: new TextDecoder('utf-8').decode(bytes), bomBytes };
  }
}

/** The one <roblox> element, closed (a document cut short never reaches </roblox>). */
function findRoot(nodes: XmlNode[], fileLength: number, byteOffset: (charIndex: number) => number): XmlNode {
  let root: XmlNode | undefined;
  for (const node of nodes) {
    const tag = tagOf(node);
    if (tag === undefined || tag.startsWith('?')) continue; // text, the XML declaration, processing instructions
    const start = startIndexOf(node);
    const offset = start === undefined ? undefined : byteOffset(start);
    if (tag !== 'roblox') throw new DecodeError(`the root element is <${tag}>, not <roblox>`, { chunk: 'xml', offset });
    if (root) throw new DecodeError('the document has more than one root element', { chunk: 'xml', offset });
    root = node;
  }
  if (!root) throw new DecodeError('the document has no <roblox> element', { chunk: 'xml', offset: 0 });
  if (!isClosed(root)) throw truncatedError(fileLength);
  return root;
}

function readMeta(ctx: DecodeContext, element: XmlNode, metadata: [string, string][]): void {
  const name = attributeOf(element, 'name');
  if (name === undefined) {
    warn(ctx.warnings, '<Meta> without a name attribute ignored', '<Meta>');
    return;
  }
  ctx.className = 'Meta';
  ctx.propertyName = name;
  ctx.element = element;
  metadata.push([name, stringText(ctx, childrenOf(element, 'Meta'))]);
}

interface NumberedItem { element: XmlNode; parent: number; referent: string | undefined }

/** Every Item in document order (pre-order), with its parent's number; fills ctx.referents. */
function numberItems(ctx: DecodeContext, topItems: XmlNode[]): NumberedItem[] {
  const items: NumberedItem[] = [];
  const stack: { element: XmlNode; parent: number }[] = [];
  for (let i = topItems.length - 1; i >= 0; i--) stack.push({ element: topItems[i]!, parent: -1 });
  while (stack.length) {
    const { element, parent } = stack.pop()!;
    const number = items.length;
    const referent = attributeOf(element, 'referent');
    if (referent !== undefined) {
      if (ctx.referents.has(referent)) {
        ctx.className = attributeOf(element, 'class') ?? 'Item';
        ctx.propertyName = 'referent';
        ctx.element = element;
        fail(ctx, `referent ${JSON.stringify(referent.slice(0, 60))} is used by two Items`);
      }
      ctx.referents.set(referent, number);
    }
    items.push({ element, parent, referent });
    const children = childrenOf(element, 'Item');
    for (let i = children.length - 1; i >= 0; i--) {
      if (tagOf(children[i]!) === 'Item') stack.push({ element: children[i]!, parent: number });
    }
  }
  return items;
}

function readItem(ctx: DecodeContext, element: XmlNode): { className: string; properties: Map<string, Property> } {
  const className = attributeOf(element, 'class');
  ctx.element = element;
  ctx.className = 'Item';
  ctx.propertyName = 'class';
  if (className === undefined || className === '') fail(ctx, '<Item> has no class attribute');
  ctx.className = className;

  const propertiesElements: XmlNode[] = [];
  for (const child of childrenOf(element, 'Item')) {
    const tag = tagOf(child);
    if (tag === 'Properties') propertiesElements.push(child);
    else if (tag !== undefined && tag !== 'Item') warn(ctx.warnings, 'unknown element under <Item> ignored', `${className} <${tag}>`);
  }
  const properties = new Map<string, Property>();
  decodeProperties(propertiesElements, ctx, properties);
  return { className, properties };
}
