/**
 * The DOM every other part of the service reads: an instance table.
 *
 * Instances are row numbers 0..count-1, in file order (binary: INST order, class by
 * class; XML: document order, which is pre-order). Per row the DOM keeps a handful of
 * typed-array entries and nothing else:
 *
 *   tableIds[row]       the property table holding the row's properties
 *   tableRows[row]      the row's position in that table (its column row)
 *   referents[row]      the file's referent (XML: the row itself)
 *   parents[row]        the parent row, -1 for a root
 *   firstChildren[row]  the first child row, -1 for a leaf
 *   nextSiblings[row]   the next sibling row, -1 for the last child; roots are
 *                       chained the same way from `firstRoot`
 *
 * Properties live in property tables: one per class in a binary file (its columns are
 * the PROP chunks, typed arrays or offsets into the chunk data), one per class and
 * property list in an XML file (so each instance keeps exactly its own properties, in
 * its own order). Names, like every other value, are read from their column when
 * asked; nothing per instance is allocated unless a caller asks for it (`instance(row)`
 * views, `children`, `getValue`). Walks need no recursion and no stack: `next(row, top)`
 * gives the pre-order successor inside `top`'s subtree, `after(row, top)` skips a subtree.
 *
 *   for (let row = dom.firstChild(top); row !== -1; row = dom.nextSibling(row)) ...   // children
 *   for (let row = top; row !== -1; row = dom.next(row, top)) ...                      // top's subtree, pre-order
 *   for (let row = dom.firstRoot; row !== -1; row = dom.next(row)) ...                 // every instance, pre-order
 *
 * A table's columns are resolved once and then read by `rowInTable(row)`: the fast way
 * to read one property of many instances (see report.ts, scene.ts).
 */
import type { SkippedProperty } from './skipped.js';
import type { Property, PropType, Value } from './values.js';

export interface Column {
  readonly type: PropType;
  readonly length: number;
  /** The value of one row, in the shapes of values.ts. */
  get(row: number): Value;
  /** String and Bytecode columns of binary files: a row's bytes as the file holds them, without decoding (a view, not a copy). */
  bytes?(row: number): Uint8Array;
  /**
   * The rows whose value may differ from row `reference`'s, as a bit set (bit r of
   * byte r >> 3 for row r), told in binary files from the stored bytes without
   * reading values: one pass over the column. A set bit is conservative (a value
   * stored two ways, a rotation id and its matrix, counts as different); a clear bit
   * means the value is equal. Columns without it are compared through `get`.
   */
  differing?(reference: number): Uint8Array;
  /**
   * Numeric families of binary files (Float32, Int32, Enum, BrickColor, SharedString,
   * Vector2, Vector3, Color3, Color3uint8, Vector3int16, CFrame, OptionalCFrame,
   * UniqueId): a row's numbers into `out` without allocating, in the order `get`
   * gives them (a CFrame's twelve in `GetComponents` order, a UniqueId's four 32-bit
   * words in the order its hex text prints them); returns how many (0 for an
   * OptionalCFrame row without one). Absent for other columns.
   */
  readonly numbers?: ((row: number, out: Float64Array) => number) | undefined;
}

/** Instances of one class (and, in XML, one property list) and their properties as columns. */
export interface PropertyTable {
  readonly className: string;
  /** Property name to column, in file order; column row i belongs to the table's i-th instance. */
  readonly columns: Map<string, Column>;
  /** The DOM row of each of the table's instances, ascending. */
  readonly rows: Int32Array;
}

/** Referent → row, -1 when no instance has the referent. */
export interface ReferentIndex {
  get(referent: number): number;
}

/** What a decoder or DomBuilder hands to the Dom. */
export interface DomParts {
  format: 'binary' | 'xml';
  metadata: [string, string][];
  sharedStrings: Uint8Array[];
  warnings: string[];
  /** Properties read past without a value (unknown types); none when absent. */
  skipped?: SkippedProperty[];
  xmlReferents?: string[];
  tables: PropertyTable[];
  tableIds: Uint32Array;
  tableRows: Int32Array;
  referents: Int32Array;
  parents: Int32Array;
  firstChildren: Int32Array;
  nextSiblings: Int32Array;
  firstRoot: number;
  referentIndex: ReferentIndex;
}

export class Dom {
  readonly format: 'binary' | 'xml';
  /** META entries (binary) or Meta elements (XML), in file order. */
  readonly metadata: [string, string][];
  /** SSTR entries / SharedStrings, indexed by SharedString property values. */
  readonly sharedStrings: Uint8Array[];
  /** Things skipped or repaired while decoding (unknown chunks, types, tags...). */
  readonly warnings: string[];
  /** Properties the decoder read past without a value, per class, property and reason (unknown types). */
  readonly skipped: readonly SkippedProperty[];
  /** XML only: the file's referent attribute of each row ('' when the Item had none). */
  readonly xmlReferents?: string[];
  readonly count: number;
  /** The first root; the others follow through `nextSibling`. -1 when the DOM is empty. */
  readonly firstRoot: number;
  readonly tables: readonly PropertyTable[];
  // Per-row arrays (see the comment at the top). Read them through the methods below;
  // they are public for code that hands them on whole (the writer).
  readonly tableIds: Uint32Array;
  readonly tableRows: Int32Array;
  readonly referents: Int32Array;
  readonly parents: Int32Array;
  readonly firstChildren: Int32Array;
  readonly nextSiblings: Int32Array;
  readonly #referentIndex: ReferentIndex;
  /** Each table's Name column, looked up on first use (null: the table has none). */
  readonly #nameColumns: (Column | null | undefined)[];

  constructor(parts: DomParts) {
    this.format = parts.format;
    this.metadata = parts.metadata;
    this.sharedStrings = parts.sharedStrings;
    this.warnings = parts.warnings;
    this.skipped = parts.skipped ?? [];
    if (parts.xmlReferents) this.xmlReferents = parts.xmlReferents;
    this.count = parts.tableIds.length;
    this.firstRoot = parts.firstRoot;
    this.tables = parts.tables;
    this.tableIds = parts.tableIds;
    this.tableRows = parts.tableRows;
    this.referents = parts.referents;
    this.parents = parts.parents;
    this.firstChildren = parts.firstChildren;
    this.nextSiblings = parts.nextSiblings;
    this.#referentIndex = parts.referentIndex;
    this.#nameColumns = new Array<Column | null | undefined>(parts.tables.length);
  }

  /** The id of the table holding the row's properties (an index into `tables`). */
  tableOf(row: number): number {
    return this.tableIds[row]!;
  }

  table(id: number): PropertyTable {
    return this.tables[id]!;
  }

  /** The row's position in its table: the row to read its columns at. */
  rowInTable(row: number): number {
    return this.tableRows[row]!;
  }

  className(row: number): string {
    return this.tables[this.tableIds[row]!]!.className;
  }

  /** The file's referent of the row (XML: the row). */
  referent(row: number): number {
    return this.referents[row]!;
  }

  /** The row of a referent (a Ref value), -1 when no instance has it. */
  rowOf(referent: number): number {
    return this.#referentIndex.get(referent);
  }

  /** The parent row, -1 for a root. */
  parent(row: number): number {
    return this.parents[row]!;
  }

  /** The first child row, -1 when the row has no children. */
  firstChild(row: number): number {
    return this.firstChildren[row]!;
  }

  /** The next row with the same parent (for a root: the next root), -1 after the last. */
  nextSibling(row: number): number {
    return this.nextSiblings[row]!;
  }

  /** The Name property as text: '' when absent or not valid UTF-8 (as Roblox shows it). */
  name(row: number): string {
    const id = this.tableIds[row]!;
    let column = this.#nameColumns[id];
    if (column === undefined) {
      const found = this.tables[id]!.columns.get('Name');
      column = this.#nameColumns[id] = found?.type === 'String' ? found : null;
    }
    if (column === null) return '';
    const value = column.get(this.tableRows[row]!);
    return typeof value === 'string' ? value : '';
  }

  /**
   * The row after `row` in a pre-order walk of `top`'s subtree (of the whole DOM,
   * roots in order, when `top` is -1); -1 when the walk is over.
   */
  next(row: number, top = -1): number {
    const first = this.firstChildren[row]!;
    return first !== -1 ? first : this.after(row, top);
  }

  /** Like `next`, but skipping `row`'s descendants. */
  after(row: number, top = -1): number {
    for (let at = row; at !== top && at !== -1; at = this.parents[at]!) {
      const sibling = this.nextSiblings[at]!;
      if (sibling !== -1) return sibling;
    }
    return -1;
  }

  /** An object view of one instance, for callers that want one (made on each call). */
  instance(row: number): InstanceView {
    return new InstanceView(this, row);
  }
}

/** One instance as an object: convenient, but made per call; hot loops read the Dom directly. */
export class InstanceView {
  constructor(readonly dom: Dom, readonly row: number) {}
  get referent(): number { return this.dom.referent(this.row); }
  get className(): string { return this.dom.className(this.row); }
  get name(): string { return this.dom.name(this.row); }
  get parent(): InstanceView | null {
    const parent = this.dom.parent(this.row);
    return parent === -1 ? null : new InstanceView(this.dom, parent);
  }
  get children(): InstanceView[] { return children(this.dom, this.row).map((row) => new InstanceView(this.dom, row)); }
  get(name: string): Value | undefined { return getValue(this.dom, this.row, name); }
  property(name: string): Property | undefined { return getProperty(this.dom, this.row, name); }
  propertyNames(): string[] { return propertyNames(this.dom, this.row); }
}

/** The column of a row's property, undefined when its table has none. */
export function columnOf(dom: Dom, row: number, name: string): Column | undefined {
  return dom.tables[dom.tableIds[row]!]!.columns.get(name);
}

export function getValue(dom: Dom, row: number, name: string): Value | undefined {
  return columnOf(dom, row, name)?.get(dom.tableRows[row]!);
}

export function getProperty(dom: Dom, row: number, name: string): Property | undefined {
  const column = columnOf(dom, row, name);
  return column ? { type: column.type, value: column.get(dom.tableRows[row]!) } : undefined;
}

/** A String property's bytes as the file holds them, when the decoder kept them (binary files); undefined otherwise. */
export function getBytes(dom: Dom, row: number, name: string): Uint8Array | undefined {
  return columnOf(dom, row, name)?.bytes?.(dom.tableRows[row]!);
}

/** The row's property names, in file order. */
export function propertyNames(dom: Dom, row: number): string[] {
  return [...dom.tables[dom.tableIds[row]!]!.columns.keys()];
}

/** Roblox's GetFullName(): names from the top ancestor down, joined by dots. */
export function fullName(dom: Dom, row: number): string {
  const names: string[] = [];
  for (let at = row; at !== -1; at = dom.parents[at]!) names.push(dom.name(at));
  return names.reverse().join('.');
}

/** The row's children, in order (an array made per call; loop over firstChild/nextSibling to avoid it). */
export function children(dom: Dom, row: number): number[] {
  const out: number[] = [];
  for (let child = dom.firstChildren[row]!; child !== -1; child = dom.nextSiblings[child]!) out.push(child);
  return out;
}

/** The root rows, in order. */
export function roots(dom: Dom): number[] {
  const out: number[] = [];
  for (let root = dom.firstRoot; root !== -1; root = dom.nextSiblings[root]!) out.push(root);
  return out;
}

/** Rows of `top`'s subtree (every row when `top` is -1) in pre-order, parents before children. */
export function* preorder(dom: Dom, top = -1): Generator<number> {
  for (let row = top === -1 ? dom.firstRoot : top; row !== -1; row = dom.next(row, top)) yield row;
}

/** The first root of this class (a place's services are roots), -1 when there is none. */
export function findService(dom: Dom, className: string): number {
  for (let root = dom.firstRoot; root !== -1; root = dom.nextSiblings[root]!) {
    if (dom.className(root) === className) return root;
  }
  return -1;
}

/** Every instance as an object view, in row order (one object per instance: for tools and tests, not hot paths). */
export function* instances(dom: Dom): Generator<InstanceView> {
  for (let row = 0; row < dom.count; row++) yield new InstanceView(dom, row);
}
