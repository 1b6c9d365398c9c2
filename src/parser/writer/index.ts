/**
 * Binary (.rbxl/.rbxm) encoder: the inverse of decodeBinary. Writes the header,
 * META, SSTR, one INST chunk per class (class ids in class-name order), one PROP
 * chunk per (class, property), PRNT in depth-first post-order, and END.
 *
 * Referents are kept as they are in the DOM, so Ref values need no remapping.
 *
 * The format needs every instance of a class to carry the same properties. A DOM
 * decoded from a binary file always does; one decoded from XML may not, and then a
 * missing (or differently typed) property is written with its type's default value
 * (DEFAULT_VALUES). That is the one lossy case: decoding gives those instances the
 * default where the source had nothing.
 */
import { createHash } from 'node:crypto';
import type { Column, Dom } from '../dom.js';
import { TYPE_IDS } from '../types.js';
import type { PropType, Value } from '../values.js';
import { ByteWriter, utf8 } from './bytes.js';
import { concat, fileHeader, frameChunk } from './chunks.js';
import { DEFAULT_VALUES, ENCODERS } from './columns.js';
import { EncodeError, ValueShapeError } from './errors.js';
import { writeReferents } from './interleave.js';
import { checkReferents, groupByClass, parentLinks, serviceMarkers, type ClassGroup } from './tree.js';

export { EncodeError } from './errors.js';
export { DEFAULT_VALUES } from './columns.js';
export { SERVICE_CLASSES } from './tree.js';

export interface EncodeOptions {
  /** LZ4-compress every chunk but END (default true); false writes raw chunks (compressed length 0). */
  compress?: boolean;
}

const END_MAGIC = utf8('</roblox>');

export function encode(dom: Dom, options: EncodeOptions = {}): Uint8Array {
  const compress = options.compress ?? true;
  checkReferents(dom);
  const classes = groupByClass(dom);
  const sharedStrings = [...dom.sharedStrings];

  // Chunks are framed (compressed) as soon as they are built, so only one chunk's
  // raw data is alive at a time. PROP chunks are built before SSTR is written: a
  // filled-in SharedString value adds an entry to it.
  const frame = (name: string, data: Uint8Array, compressed = compress) => frameChunk(name, data, compressed);
  const markersOf = serviceMarkers(dom);
  const insts = classes.flatMap((group, classId) => frame('INST', instChunk(dom, group, classId, markersOf(group))));
  const props: Uint8Array[] = [];
  classes.forEach((group, classId) => {
    for (const [name, type] of classProperties(dom, group)) props.push(...frame('PROP', propChunk(dom, group, classId, name, type, sharedStrings)));
  });

  const head: Uint8Array[] = [fileHeader(classes.length, dom.count)];
  if (dom.metadata.length) head.push(...frame('META', metaChunk(dom.metadata)));
  if (sharedStrings.length) head.push(...frame('SSTR', sstrChunk(sharedStrings)));
  const tail = [...frame('PRNT', prntChunk(dom)), ...frame('END', END_MAGIC, false)];
  // concat, not push(...): a place can have more chunks than a call takes arguments.
  return concat(head.concat(insts, props, tail));
}

function metaChunk(entries: readonly [string, string][]): Uint8Array {
  const w = new ByteWriter();
  w.u32(entries.length);
  for (const [key, value] of entries) {
    w.text(key);
    w.text(value);
  }
  return w.finish();
}

/** Version 0, then per string its MD5 (Studio ignores it, but writes it) and its bytes. */
function sstrChunk(strings: readonly Uint8Array[]): Uint8Array {
  const w = new ByteWriter();
  w.u32(0);
  w.u32(strings.length);
  for (const data of strings) {
    w.raw(createHash('md5').update(data).digest());
    w.string(data);
  }
  return w.finish();
}

/** Class id, name, object format (1 when `markers` are given: a service), referents, then the markers. */
function instChunk(dom: Dom, { className, rows }: ClassGroup, classId: number, markers: Uint8Array | null): Uint8Array {
  const w = new ByteWriter(64 + rows.length * 5);
  w.u32(classId);
  w.text(className);
  w.u8(markers ? 1 : 0);
  w.u32(rows.length);
  writeReferents(w, Array.from(rows, (row) => dom.referent(row)));
  if (markers) w.raw(markers);
  return w.finish();
}

/**
 * The class's properties: the union of its tables' columns in first-seen order
 * (first type seen wins), with Name always present.
 */
function classProperties(dom: Dom, { rows }: ClassGroup): Map<string, PropType> {
  const properties = new Map<string, PropType>();
  const tables = new Set(Array.from(rows, (row) => dom.tableOf(row)));
  for (const table of tables) {
    for (const [name, column] of dom.table(table).columns) if (!properties.has(name)) properties.set(name, column.type);
  }
  if (properties.get('Name') !== 'String') {
    properties.delete('Name');
    return new Map([['Name', 'String'], ...properties]);
  }
  return properties;
}

/** Each row's value of the property; a row whose table lacks it (or has another type) gets `fill()`. */
function columnValues(dom: Dom, rows: Int32Array, name: string, type: PropType, fill: () => Value): Value[] {
  const values: Value[] = new Array<Value>(rows.length);
  let lastTable = -1;
  let column: Column | undefined;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    const table = dom.tableOf(row);
    if (table !== lastTable) {
      lastTable = table;
      const found = dom.table(table).columns.get(name);
      column = found?.type === type ? found : undefined;
    }
    values[i] = column ? column.get(dom.rowInTable(row)) : fill();
  }
  return values;
}

function propChunk(dom: Dom, group: ClassGroup, classId: number, name: string, type: PropType, sharedStrings: Uint8Array[]): Uint8Array {
  const { className, rows } = group;
  // Name is always written, as '' where a table has no String Name column.
  const fill = name === 'Name' ? () => ''
    : type === 'SharedString' ? () => emptySharedString(sharedStrings) : () => DEFAULT_VALUES[type];
  const values = columnValues(dom, rows, name, type, fill);
  const w = new ByteWriter(64 + rows.length * 8);
  w.u32(classId);
  w.text(name);
  w.u8(TYPE_IDS[type]);
  try {
    ENCODERS[type](w, values, { sharedStringCount: sharedStrings.length });
  } catch (error) {
    if (error instanceof ValueShapeError) {
      const row = rows[error.row];
      throw new EncodeError(`${type} value: ${error.message}`, { className, property: name, referent: row === undefined ? undefined : dom.referent(row) });
    }
    throw error;
  }
  return w.finish();
}

const EMPTY = new Uint8Array(0);

/** Index of an empty shared string, appended the first time one is needed. */
function emptySharedString(sharedStrings: Uint8Array[]): number {
  const at = sharedStrings.indexOf(EMPTY);
  if (at >= 0) return at;
  sharedStrings.push(EMPTY);
  return sharedStrings.length - 1;
}

function prntChunk(dom: Dom): Uint8Array {
  const { children, parents } = parentLinks(dom);
  const w = new ByteWriter(16 + children.length * 8);
  w.u8(0); // version
  w.u32(children.length);
  writeReferents(w, children);
  writeReferents(w, parents);
  return w.finish();
}
