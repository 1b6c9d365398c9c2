/**
 * Binary (.rbxl/.rbxm) decoding: header, then chunks in order. Each chunk kind has
 * one reader here; property values go to per-class column tables (columns/).
 * Two outputs share the readers: the DOM (decodeBinary) and the chunk view
 * (decodeBinaryChunks, the shape of ../shared/conformance).
 */
import { Buffer } from 'node:buffer';
import { frameChunks, readChunk, type RawChunk } from './chunk.js';
import { readColumn } from './columns/index.js';
import { Dom, type Column, type PropertyTable, type ReferentIndex } from './dom.js';
import { indexReferents, TreeLinks } from './dom-build.js';
import { DecodeError, type DecodeErrorContext } from './errors.js';
import { readHeader, type FileHeader } from './header.js';
import { readReferents } from './interleave.js';
import { resolveLimits, type DecodeLimits } from './limits.js';
import { checkCount, cursor, readBytes, readText, readU32, readU8, type Cursor } from './reader.js';
import { typeName } from './types.js';
import { warn, warningLines, type WarningLog } from './warnings.js';
import { SkipLog } from './skipped.js';
import type { PropType, Value } from './values.js';

export interface MetaChunk { kind: 'META'; entries: [string, string][] }
export interface SstrChunk { kind: 'SSTR'; version: number; entries: Uint8Array[] }
export interface InstChunk { kind: 'INST'; classId: number; className: string; objectFormat: number; referents: Int32Array }
export interface PropChunk { kind: 'PROP'; classId: number; name: string; typeId: number; type?: PropType; column?: Column }
export interface PrntChunk { kind: 'PRNT'; version: number; children: Int32Array; parents: Int32Array }
export interface EndChunk { kind: 'END' }
export interface UnknownChunk { kind: 'unknown'; name: string; length: number }
export type DecodedChunk = MetaChunk | SstrChunk | InstChunk | PropChunk | PrntChunk | EndChunk | UnknownChunk;

function readMeta(c: Cursor, limits: DecodeLimits): MetaChunk {
  const count = readU32(c);
  checkCount(c, count, 8, 'META entry');
  const entries: [string, string][] = [];
  for (let i = 0; i < count; i++) {
    entries.push([readText(c, limits.maxStringBytes, 'META key'), readText(c, limits.maxStringBytes, 'META value')]);
  }
  return { kind: 'META', entries };
}

function readSstr(c: Cursor, limits: DecodeLimits): SstrChunk {
  const version = readU32(c);
  const count = readU32(c);
  checkCount(c, count, 20, 'SSTR entry');
  const entries: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    c.pos += 16; // MD5 of the string: unused by Studio, not checked
    if (c.pos > c.end) throw new DecodeError('unexpected end of data reading a shared string hash');
    entries.push(readBytes(c, limits.maxStringBytes, 'shared string'));
  }
  return { kind: 'SSTR', version, entries };
}

function readInst(c: Cursor, limits: DecodeLimits): InstChunk {
  const classId = readU32(c);
  const className = readText(c, limits.maxStringBytes, 'class name');
  const objectFormat = readU8(c);
  const count = readU32(c);
  checkCount(c, count, 4, 'INST instance', limits.maxInstances, 'maxInstances');
  const referents = readReferents(c, count, 'INST referents');
  // object_format 1 is followed by one service marker byte per instance; nothing else reads them.
  return { kind: 'INST', classId, className, objectFormat, referents };
}

function readProp(c: Cursor, { limits, classCounts, warnings, names }: WalkState): PropChunk {
  const classId = readU32(c);
  const read = readText(c, limits.maxStringBytes, 'property name');
  let name = names.get(read);
  if (name === undefined) names.set(read, (name = read));
  const typeId = readU8(c);
  const type = typeName(typeId);
  const count = classCounts.get(classId);
  if (type === undefined) {
    warn(warnings, 'skipped property of unknown type', `${name} of class id ${classId}: type id 0x${typeId.toString(16).padStart(2, '0')}`);
    return { kind: 'PROP', classId, name, typeId };
  }
  if (count === undefined) {
    warn(warnings, 'skipped property of a class with no INST chunk before it', `${name} of class id ${classId}`);
    return { kind: 'PROP', classId, name, typeId, type };
  }
  const column = readColumn(type, c, { count, maxStringBytes: limits.maxStringBytes, maxSequenceLength: limits.maxSequenceLength });
  return { kind: 'PROP', classId, name, typeId, type, column };
}

function readPrnt(c: Cursor, limits: DecodeLimits): PrntChunk {
  const version = readU8(c);
  if (version !== 0) throw new DecodeError(`unsupported PRNT version ${version}`);
  const count = readU32(c);
  checkCount(c, count, 8, 'PRNT link', limits.maxInstances, 'maxInstances');
  const children = readReferents(c, count, 'PRNT children');
  const parents = readReferents(c, count, 'PRNT parents');
  return { kind: 'PRNT', version, children, parents };
}

/** What the chunk readers share while a file is walked. */
interface WalkState {
  readonly limits: DecodeLimits;
  readonly warnings: WarningLog;
  /** INST instance count and class name by class id. */
  readonly classCounts: Map<number, number>;
  readonly classNames: Map<number, string>;
  /** Property names, one string each: the same few hundred names recur in every class. */
  readonly names: Map<string, string>;
}

/**
 * Decodes one chunk from `c` (its data). Errors gain the chunk's name and file offset
 * (and the property being read), and anything that is not a DecodeError becomes one.
 */
function decodeChunk(raw: RawChunk, c: Cursor, state: WalkState): DecodedChunk {
  const { limits, classCounts, classNames, warnings } = state;
  const context: DecodeErrorContext = { chunk: raw.name, offset: raw.offset };
  try {
    switch (raw.name) {
      case 'META': return readMeta(c, limits);
      case 'SSTR': return readSstr(c, limits);
      case 'INST': {
        const inst = readInst(c, limits);
        if (classCounts.has(inst.classId)) throw new DecodeError(`duplicate INST chunk for class id ${inst.classId}`);
        classCounts.set(inst.classId, inst.referents.length);
        classNames.set(inst.classId, inst.className);
        return inst;
      }
      case 'PROP': {
        // Peek the property name first so a failure inside the column can name it.
        const peek = cursor(c.bytes, c.pos, c.end);
        try {
          const classId = readU32(peek);
          context.property = `${classNames.get(classId) ?? `class#${classId}`}.${readText(peek, limits.maxStringBytes, 'property name')}`;
        } catch { /* readProp reports it */ }
        return readProp(c, state);
      }
      case 'PRNT': return readPrnt(c, limits);
      case 'END': return { kind: 'END' };
      default:
        warn(warnings, 'skipped unknown chunk', `${JSON.stringify(raw.name)} at byte offset ${raw.offset}`);
        return { kind: 'unknown', name: raw.name, length: raw.data.length };
    }
  } catch (error) {
    if (error instanceof DecodeError) throw error.withContext(context);
    throw new DecodeError(`malformed data: ${(error as Error)?.message ?? String(error)}`, context);
  }
}

/** Chunks at least this large keep their own buffer; smaller ones share one (see walkChunks). */
const SHARED_BUFFER_CHUNK = 64 * 1024;

/**
 * Runs the framing and per-chunk readers; `visit` sees each decoded chunk in order.
 * Columns view the chunk data they were read from, so a decoded file keeps it. A
 * place has hundreds of small PROP chunks, and a buffer object of its own for each
 * would cost more than many of them hold: small chunks are decompressed into one
 * shared buffer, sized from the chunk headers that framing has already held to the
 * limits; large ones keep the buffer they were decompressed into (no copy).
 */
function walkChunks(bytes: Uint8Array, limits: DecodeLimits, warnings: WarningLog, visit: (chunk: DecodedChunk, raw: RawChunk) => void): FileHeader {
  const header = readHeader(bytes, limits);
  const frames = frameChunks(bytes, limits);
  let small = 0;
  for (const frame of frames) if (frame.uncompressedLength < SHARED_BUFFER_CHUNK) small += frame.uncompressedLength;
  // Buffers, not plain arrays: string columns turn byte ranges into text natively (reader.ts).
  const shared = Buffer.alloc(small);
  const state: WalkState = { limits, warnings, classCounts: new Map(), classNames: new Map(), names: new Map() };
  let instances = 0;
  let at = 0;
  for (const frame of frames) {
    const raw = readChunk(bytes, frame);
    let c: Cursor;
    if (raw.data.length < SHARED_BUFFER_CHUNK) {
      shared.set(raw.data, at);
      c = cursor(shared, at, at + raw.data.length);
      at += raw.data.length;
    } else {
      c = cursor(Buffer.isBuffer(raw.data) ? raw.data : Buffer.from(raw.data.buffer, raw.data.byteOffset, raw.data.length));
    }
    const chunk = decodeChunk(raw, c, state);
    if (chunk.kind === 'INST') {
      instances += chunk.referents.length;
      if (instances > limits.maxInstances) {
        throw new DecodeError(`more than ${limits.maxInstances} instances`, { chunk: raw.name, offset: raw.offset, limit: 'maxInstances' });
      }
    }
    visit(chunk, raw);
  }
  if (state.classCounts.size !== header.classCount) warn(warnings, 'header class count differs', `header ${header.classCount}, file ${state.classCounts.size}`);
  if (instances !== header.instanceCount) warn(warnings, 'header instance count differs', `header ${header.instanceCount}, file ${instances}`);
  return header;
}

interface ClassChunk { className: string; referents: Int32Array; columns: Map<string, Column>; offset: number }

/**
 * Every SharedString value names an SSTR entry: an index past the table (a file whose
 * SSTR chunk is missing or short) is malformed, as the reference decoder has it, rather
 * than a dangling number in the document.
 */
function checkSharedStringIndices(classes: readonly ClassChunk[], where: ReadonlyMap<Column, { offset: number; property: string }>, entries: number): void {
  if (where.size === 0) return;
  for (const { columns } of classes) {
    for (const column of columns.values()) {
      const at = where.get(column);
      if (at === undefined) continue;
      for (let row = 0; row < column.length; row++) {
        const index = column.get(row) as number;
        if (index >= entries) throw new DecodeError(`SharedString index ${index} is outside the file's ${entries} SharedStrings`, { chunk: 'PROP', offset: at.offset, property: at.property });
      }
    }
  }
}

export function decodeBinary(bytes: Uint8Array, options?: Partial<DecodeLimits>): Dom {
  const limits = resolveLimits(options);
  const warnings: WarningLog = new Map();
  const metadata: [string, string][] = [];
  let sharedStrings: Uint8Array[] = [];
  // One table per INST chunk, in file order; the file's class ids map to them.
  const classes: ClassChunk[] = [];
  const byClassId = new Map<number, ClassChunk>();
  const links: { children: Int32Array; parents: Int32Array; offset: number }[] = [];
  const skipped = new SkipLog();
  // SharedString columns and where their PROP chunk starts: checked against SSTR once every chunk is read.
  const sharedStringColumns = new Map<Column, { offset: number; property: string }>();

  walkChunks(bytes, limits, warnings, (chunk, raw) => {
    switch (chunk.kind) {
      case 'META': metadata.push(...chunk.entries); break;
      case 'SSTR': sharedStrings = chunk.entries; break;
      case 'INST': {
        const entry: ClassChunk = { className: chunk.className, referents: chunk.referents, columns: new Map(), offset: raw.offset };
        classes.push(entry);
        byClassId.set(chunk.classId, entry);
        break;
      }
      case 'PROP': {
        const owner = byClassId.get(chunk.classId);
        if (owner && !chunk.type) {
          skipped.add(owner.className, chunk.name, `a property type the decoder does not know (type id 0x${chunk.typeId.toString(16).padStart(2, '0')})`, owner.referents.length);
        }
        if (!owner || !chunk.column) break;
        if (owner.columns.has(chunk.name)) warn(warnings, 'property appears twice, the last one wins', `${owner.className}.${chunk.name}`);
        owner.columns.set(chunk.name, chunk.column);
        if (chunk.type === 'SharedString') sharedStringColumns.set(chunk.column, { offset: raw.offset, property: `${owner.className}.${chunk.name}` });
        break;
      }
      case 'PRNT': links.push({ children: chunk.children, parents: chunk.parents, offset: raw.offset }); break;
      default: break;
    }
  });

  checkSharedStringIndices(classes, sharedStringColumns, sharedStrings.length);

  // Rows are instances in INST order; walkChunks has kept their sum under maxInstances.
  let count = 0;
  for (const { referents } of classes) count += referents.length;
  const tableIds = new Uint32Array(count);
  const tableRows = new Int32Array(count);
  const referents = new Int32Array(count);
  const tables: PropertyTable[] = [];
  let row = 0;
  for (let id = 0; id < classes.length; id++) {
    const { className, referents: members, columns } = classes[id]!;
    const rows = new Int32Array(members.length);
    referents.set(members, row);
    tableIds.fill(id, row, row + members.length);
    for (let i = 0; i < members.length; i++) {
      tableRows[row] = i;
      rows[i] = row++;
    }
    tables.push({ className, columns, rows });
  }
  const { index, duplicate } = indexReferents(referents);
  if (duplicate !== -1) {
    const owner = classes[tableIds[duplicate]!]!;
    throw new DecodeError(`referent ${referents[duplicate]} is used by two instances`, { chunk: 'INST', offset: owner.offset });
  }

  const tree = linkParents(referents, links, index, warnings);
  return new Dom({
    format: 'binary', metadata, sharedStrings, warnings: warningLines(warnings), skipped: skipped.list(),
    tables, tableIds, tableRows, referents,
    parents: tree.parents, firstChildren: tree.firstChildren, nextSiblings: tree.nextSiblings, firstRoot: tree.firstRoot,
    referentIndex: index,
  });
}

/**
 * The tree from the PRNT links, in their order. A child is linked once (the first
 * link wins); a child whose parent is unknown is kept as a root; instances no link
 * names become roots after those, in row order. Every instance must then hang under
 * a root, or it sits on a parent cycle.
 */
function linkParents(referents: Int32Array, links: { children: Int32Array; parents: Int32Array; offset: number }[], index: ReferentIndex, warnings: WarningLog): TreeLinks {
  const count = referents.length;
  const tree = new TreeLinks(count);
  const linked = new Uint8Array(count);
  for (const { children, parents } of links) {
    for (let i = 0; i < children.length; i++) {
      const child = index.get(children[i]!);
      if (child === -1) { warn(warnings, 'PRNT names an unknown child', `referent ${children[i]}`); continue; }
      if (linked[child]) { warn(warnings, 'PRNT links a child twice, the first link wins', `referent ${children[i]}`); continue; }
      linked[child] = 1;
      const parentRef = parents[i]!;
      const parent = parentRef === -1 ? -1 : index.get(parentRef);
      if (parent !== -1) tree.appendChild(child, parent);
      else {
        if (parentRef !== -1) warn(warnings, 'PRNT names an unknown parent, child kept as a root', `referent ${children[i]}, parent ${parentRef}`);
        tree.appendRoot(child);
      }
    }
  }
  for (let row = 0; row < count; row++) if (!linked[row]) tree.appendRoot(row);
  checkAcyclic(tree, referents, links[0]?.offset);
  return tree;
}

/** Walks the tree from its roots (no stack: the links are enough); an instance not reached sits on a parent cycle. */
function checkAcyclic(tree: TreeLinks, referents: Int32Array, offset?: number): void {
  const count = referents.length;
  const { parents, firstChildren, nextSiblings } = tree;
  let reached = 0;
  const visit = (onRow?: (row: number) => void): void => {
    for (let row = tree.firstRoot; row !== -1;) {
      reached++;
      onRow?.(row);
      let next = firstChildren[row]!;
      for (let at = row; next === -1 && at !== -1; at = parents[at]!) next = nextSiblings[at]!;
      row = next;
    }
  };
  visit();
  if (reached === count) return;
  // Only a broken file pays for finding which instance is stuck.
  const seen = new Uint8Array(count);
  visit((row) => { seen[row] = 1; });
  const stuck = seen.indexOf(0);
  throw new DecodeError(`PRNT links form a cycle (referent ${referents[stuck]})`, { chunk: 'PRNT', offset });
}

/** The chunk view of ../shared/conformance/README.md (without its `file` member). */
export interface ChunkView {
  num_types: number;
  num_instances: number;
  chunks: unknown[];
  warnings: string[];
}

export function decodeBinaryChunks(bytes: Uint8Array, options?: Partial<DecodeLimits>): ChunkView {
  const limits = resolveLimits(options);
  const warnings: WarningLog = new Map();
  const chunks: unknown[] = [];
  const header = walkChunks(bytes, limits, warnings, (chunk) => {
    switch (chunk.kind) {
      case 'META': chunks.push({ Meta: { entries: chunk.entries } }); break;
      case 'SSTR': chunks.push({ Sstr: { version: chunk.version, entries: chunk.entries.map((e) => ({ len: e.length })) } }); break;
      case 'INST':
        chunks.push({ Inst: { type_id: chunk.classId, type_name: chunk.className, object_format: chunk.objectFormat, referents: [...chunk.referents] } });
        break;
      case 'PROP': {
        const prop: Record<string, unknown> = { type_id: chunk.classId, prop_name: chunk.name, prop_type: chunk.type ?? chunk.typeId };
        if (chunk.column) {
          const values: Value[] = new Array<Value>(chunk.column.length);
          for (let i = 0; i < values.length; i++) values[i] = chunk.column.get(i);
          prop.values = values;
        }
        chunks.push({ Prop: prop });
        break;
      }
      case 'PRNT':
        chunks.push({ Prnt: { version: chunk.version, links: [...chunk.children].map((child, i) => [child, chunk.parents[i]]) } });
        break;
      case 'END': chunks.push('End'); break;
      case 'unknown': chunks.push({ [chunk.name]: { len: chunk.length } }); break;
    }
  });
  return { num_types: header.classCount, num_instances: header.instanceCount, chunks, warnings: warningLines(warnings) };
}
