/**
 * The element tree: fast-xml-parser's ordered output, read through a few helpers.
 *
 * Options chosen for speed and safety: preserveOrder (the parser builds the ordered
 * tree anyway; the object form would cost a second pass and lose property order),
 * no value parsing, no entity processing (text is decoded by text.ts only where a
 * value is used, so DOCTYPE entities are never expanded), untrimmed text (string
 * values keep their whitespace), CDATA kept apart from text (it is not entity-decoded)
 * and start/end positions (for error offsets and to see unclosed elements).
 * The elements whose text can be large are stop nodes (RAW_TEXT_TAGS).
 */
import { XMLParser } from 'fast-xml-parser';
import { DecodeError } from '../errors.js';
import type { DecodeLimits } from '../limits.js';
import { decodeEntities } from './text.js';

/** One entry of the ordered output: an element, a text run or a CDATA section. */
export type XmlNode = { [key: string]: unknown; [key: symbol]: unknown };

export const ATTRIBUTES = ':@';
export const TEXT = '#text';
export const CDATA = '#cdata';
const POSITION = XMLParser.getMetaDataSymbol() as unknown as symbol;

interface Position { startIndex?: number; endIndex?: number }

/**
 * Property types whose text can be megabytes (strings, script sources, base64) are read
 * as one raw slice (fast-xml-parser's stop nodes): the parser builds other text a
 * character at a time, a V8 rope node of about 40 bytes per character, so a 20 MB file
 * holding 15 MB of base64 took 800 MB. textOf reads the slice (rawText).
 */
const RAW_TEXT_TAGS = ['string', 'ProtectedString', 'BinaryString', 'SharedString'];

/**
 * What the parser says when a stop node runs to the end of the text: its end tag, or a
 * section inside it, was never found.
 */
const STOP_NODE_UNENDED = new RegExp(`^(?:Unexpected end of (?:${RAW_TEXT_TAGS.join('|')})|(?:${RAW_TEXT_TAGS.join('|')}) is not closed|StopNode is not closed\\.)$`);

/** A document cut short, wherever the cut fell (files are most often cut inside a large value). */
export function truncatedError(fileLength: number): DecodeError {
  return new DecodeError('the document ends before </roblox>: it is truncated', { chunk: 'xml', offset: fileLength });
}

/** Parses the document into its top-level nodes, counting Items against maxInstances as they open. */
export function parseTree(text: string, limits: DecodeLimits, byteOffset: (charIndex: number) => number, fileLength: number): XmlNode[] {
  let items = 0;
  const parser = new XMLParser({
    preserveOrder: true,
    ignoreAttributes: false,
    attributeNamePrefix: '',
    parseTagValue: false,
    parseAttributeValue: false,
    processEntities: false,
    htmlEntities: false,
    trimValues: false,
    cdataPropName: CDATA,
    commentPropName: false,
    captureMetaData: true,
    maxNestedTags: limits.maxXmlDepth,
    jPath: false,
    stopNodes: RAW_TEXT_TAGS.map((tag) => `..${tag}`),
    updateTag(tagName) {
      if (tagName === 'Item' && ++items > limits.maxInstances) {
        throw new DecodeError(`more than ${limits.maxInstances} Item elements (maxInstances)`, { chunk: 'xml', limit: 'maxInstances' });
      }
      return tagName;
    },
  });
  try {
    return parser.parse(text) as XmlNode[];
  } catch (error) {
    if (error instanceof DecodeError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    if (message.includes('Maximum nested tags')) {
      throw new DecodeError(`elements nest deeper than ${limits.maxXmlDepth} levels (maxXmlDepth)`, { chunk: 'xml', limit: 'maxXmlDepth' });
    }
    // A cut inside a stop node is the parser's error, not an unclosed element findRoot sees: said the same way.
    if (STOP_NODE_UNENDED.test(message) && !text.trimEnd().endsWith('</roblox>')) throw truncatedError(fileLength);
    throw parserError(message, text, byteOffset);
  }
}

/** fast-xml-parser's messages, made one line, with a byte offset when they give a position. */
function parserError(message: string, text: string, byteOffset: (charIndex: number) => number): DecodeError {
  const position = /at position (\d+)/.exec(message);
  const offset = position ? byteOffset(originalIndex(text, Number(position[1]))) : undefined;
  const what = message.startsWith('readTagExp returned undefined')
    ? 'a tag is not closed'
    : message.split('\n')[0]!.replace(/\s*Context:.*$/, '').slice(0, 200);
  return new DecodeError(`malformed XML: ${what}`, { chunk: 'xml', offset });
}

/** The index in `text` of an index in the parser's copy, where each CRLF became LF. */
function originalIndex(text: string, normalized: number): number {
  let seen = 0;
  for (let cr = text.indexOf('\r'); cr !== -1; cr = text.indexOf('\r', cr + 1)) {
    if (cr - seen >= normalized) break;
    if (text.charCodeAt(cr + 1) === 10) seen++;
  }
  return Math.min(normalized + seen, text.length);
}

/** The element's tag name, or undefined for text and CDATA entries. */
export function tagOf(node: XmlNode): string | undefined {
  for (const key in node) {
    if (key === ATTRIBUTES) continue;
    return key === TEXT || key === CDATA ? undefined : key;
  }
  return undefined;
}

export function childrenOf(node: XmlNode, tag: string): XmlNode[] {
  const children = node[tag];
  return Array.isArray(children) ? (children as XmlNode[]) : [];
}

export function attributeOf(node: XmlNode, name: string): string | undefined {
  const attributes = node[ATTRIBUTES] as Record<string, unknown> | undefined;
  const value = attributes?.[name];
  return typeof value === 'string' ? decodeEntities(value) : undefined;
}

/** The character data of an element: its text runs (entity-decoded) and CDATA sections, in order. */
export function textOf(children: XmlNode[]): string {
  if (children.length === 1) {
    const only = children[0]!;
    const text = only[TEXT];
    if (typeof text === 'string') return characterData(text);
  }
  let out = '';
  for (const child of children) {
    const text = child[TEXT];
    if (typeof text === 'string') out += characterData(text);
    else if (CDATA in child) out += cdataOf(child);
  }
  return out;
}

/** The parser ends a text run at every '<', so a text with one is a stop node's raw slice. */
const characterData = (text: string): string => (text.indexOf('<') === -1 ? decodeEntities(text) : rawText(text));

/**
 * A stop node's content read as the parser reads an element's: CDATA verbatim, text
 * entity-decoded (a comment is dropped and the text around it is one run, a processing
 * instruction ends a run). An element inside a text value is not something Roblox writes,
 * and the reference decoder refuses it too. The parser has checked that each section closes.
 */
function rawText(raw: string): string {
  let out = '';
  let run = '';
  let at = 0;
  for (let lt = raw.indexOf('<'); lt !== -1; lt = raw.indexOf('<', at)) {
    run += raw.slice(at, lt);
    if (raw.startsWith('<!--', lt)) {
      at = sectionEnd(raw, '-->', lt + 4);
      continue;
    }
    out += decodeEntities(run);
    run = '';
    if (raw.startsWith('<![CDATA[', lt)) {
      at = sectionEnd(raw, ']]>', lt + 9);
      out += raw.slice(lt + 9, at - 3);
    } else if (raw.startsWith('<?', lt)) {
      at = sectionEnd(raw, '?>', lt + 2);
    } else {
      throw new DecodeError('malformed XML: a text value holds an element', { chunk: 'xml' });
    }
  }
  return out + decodeEntities(run + raw.slice(at));
}

/** The index after `close`, searched from `from`. */
function sectionEnd(raw: string, close: string, from: number): number {
  const end = raw.indexOf(close, from);
  if (end === -1) throw new DecodeError('malformed XML: a section is not closed', { chunk: 'xml' });
  return end + close.length;
}

function cdataOf(node: XmlNode): string {
  const parts = node[CDATA] as XmlNode[];
  let out = '';
  for (const part of parts) {
    const text = part[TEXT];
    if (typeof text === 'string') out += text;
  }
  return out;
}

/** The first child element with this tag. */
export function findChild(children: XmlNode[], tag: string): XmlNode | undefined {
  for (const child of children) if (tag in child) return child;
  return undefined;
}

/** The first child element, whatever its tag. */
export function firstElement(children: XmlNode[]): XmlNode | undefined {
  for (const child of children) if (!(TEXT in child) && !(CDATA in child)) return child;
  return undefined;
}

export function startIndexOf(node: XmlNode): number | undefined {
  return (node[POSITION] as Position | undefined)?.startIndex;
}

/** False when the document ended before this element's end tag. */
export function isClosed(node: XmlNode): boolean {
  return (node[POSITION] as Position | undefined)?.endIndex !== undefined;
}
