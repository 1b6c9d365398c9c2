/**
 * Building an instance table: the tree links both decoders fill, the referent index,
 * and DomBuilder, which makes a Dom row by row (the XML decoder, the place generator,
 * tests).
 */
import { Dom, type Column, type PropertyTable, type ReferentIndex } from './dom.js';
import type { SkippedProperty } from './skipped.js';

/** First-child / next-sibling lists filled by appending, children and roots in the order they come. */
export class TreeLinks {
  readonly parents: Int32Array;
  readonly firstChildren: Int32Array;
  readonly nextSiblings: Int32Array;
  /** Only while building: where the next child of a row goes. */
  readonly #lastChildren: Int32Array;
  firstRoot = -1;
  #lastRoot = -1;

  constructor(count: number) {
    this.parents = new Int32Array(count).fill(-1);
    this.firstChildren = new Int32Array(count).fill(-1);
    this.nextSiblings = new Int32Array(count).fill(-1);
    this.#lastChildren = new Int32Array(count).fill(-1);
  }

  appendChild(child: number, parent: number): void {
    this.parents[child] = parent;
    const last = this.#lastChildren[parent]!;
    if (last === -1) this.firstChildren[parent] = child;
    else this.nextSiblings[last] = child;
    this.#lastChildren[parent] = child;
  }

  appendRoot(row: number): void {
    if (this.#lastRoot === -1) this.firstRoot = row;
    else this.nextSiblings[this.#lastRoot] = row;
    this.#lastRoot = row;
  }
}

/**
 * Referent → row. Studio numbers referents 0..n-1, which an array indexes; XML rows
 * are their own referents; anything else (other writers, sparse or negative
 * referents) goes to an open-addressing hash in typed arrays. `duplicate` is the
 * first row whose referent an earlier row already has (-1 when none); the index
 * keeps the earlier one.
 */
export function indexReferents(referents: Int32Array): { index: ReferentIndex; duplicate: number } {
  const count = referents.length;
  let identity = true;
  let min = 0;
  let max = -1;
  for (let row = 0; row < count; row++) {
    const referent = referents[row]!;
    if (referent !== row) identity = false;
    if (referent < min) min = referent;
    if (referent > max) max = referent;
  }
  if (identity) return { index: { get: (referent) => (referent >= 0 && referent < count ? referent : -1) }, duplicate: -1 };
  let duplicate = -1;
  if (min >= 0 && max < count * 2) {
    const rows = new Int32Array(max + 1).fill(-1);
    for (let row = 0; row < count; row++) {
      const referent = referents[row]!;
      if (rows[referent] !== -1) { if (duplicate === -1) duplicate = row; continue; }
      rows[referent] = row;
    }
    return { index: { get: (referent) => (referent >= 0 && referent <= max ? rows[referent]! : -1) }, duplicate };
  }
  let bits = 1;
  while (1 << bits < count * 2) bits++;
  const mask = (1 << bits) - 1;
  const shift = 32 - bits;
  const keys = new Int32Array(mask + 1);
  const rows = new Int32Array(mask + 1).fill(-1);
  const slot = (referent: number): number => {
    let at = Math.imul(referent, 0x9e3779b1) >>> shift;
    while (rows[at] !== -1 && keys[at] !== referent) at = (at + 1) & mask;
    return at;
  };
  for (let row = 0; row < count; row++) {
    const referent = referents[row]!;
    const at = slot(referent);
    if (rows[at] !== -1) { if (duplicate === -1) duplicate = row; continue; }
    keys[at] = referent;
    rows[at] = row;
  }
  return { index: { get: (referent) => rows[slot(referent)]! }, duplicate };
}

export interface DomExtras {
  metadata?: [string, string][];
  sharedStrings?: Uint8Array[];
  warnings?: string[];
  skipped?: SkippedProperty[];
  xmlReferents?: string[];
}

/**
 * Makes a Dom row by row. Tables first (a class and its columns, which may be set
 * or replaced until `build`), then instances: each under an earlier row or as a
 * root, so the tree can have no cycle. Children and roots keep the order they were
 * added in; referents default to the row.
 */
export class DomBuilder {
  readonly #tables: { className: string; columns: Map<string, Column>; rows: number[] }[] = [];
  readonly #tableIds: number[] = [];
  readonly #tableRows: number[] = [];
  readonly #parents: number[] = [];
  readonly #referents: number[] = [];

  constructor(readonly format: 'binary' | 'xml' = 'binary') {}

  get count(): number {
    return this.#tableIds.length;
  }

  /** A new, empty table; returns its id. */
  addTable(className: string, columns: Map<string, Column> = new Map()): number {
    return this.#tables.push({ className, columns, rows: [] }) - 1;
  }

  /** A table's columns, to fill before `build`: each must have one value per row of the table. */
  columns(table: number): Map<string, Column> {
    return this.#tables[table]!.columns;
  }

  /** Rows added to the table so far. */
  tableLength(table: number): number {
    return this.#tables[table]!.rows.length;
  }

  /** Adds an instance whose properties are the table's next column row; returns its row. */
  add(table: number, parent = -1, referent = this.count): number {
    const row = this.count;
    const entry = this.#tables[table];
    if (!entry) throw new RangeError(`DomBuilder: no table ${table}`);
    if (!Number.isInteger(parent) || parent < -1 || parent >= row) throw new RangeError(`DomBuilder: parent ${parent} of row ${row} is not an earlier row`);
    this.#tableIds.push(table);
    this.#tableRows.push(entry.rows.length);
    entry.rows.push(row);
    this.#parents.push(parent);
    this.#referents.push(referent);
    return row;
  }

  build(extras: DomExtras = {}): Dom {
    const count = this.count;
    const tables: PropertyTable[] = this.#tables.map(({ className, columns, rows }) => {
      for (const [name, column] of columns) {
        if (column.length !== rows.length) throw new RangeError(`DomBuilder: ${className}.${name} has ${column.length} values for ${rows.length} rows`);
      }
      return { className, columns, rows: Int32Array.from(rows) };
    });
    const links = new TreeLinks(count);
    for (let row = 0; row < count; row++) {
      const parent = this.#parents[row]!;
      if (parent === -1) links.appendRoot(row);
      else links.appendChild(row, parent);
    }
    const referents = Int32Array.from(this.#referents);
    return new Dom({
      format: this.format,
      metadata: extras.metadata ?? [],
      sharedStrings: extras.sharedStrings ?? [],
      warnings: extras.warnings ?? [],
      ...(extras.skipped ? { skipped: extras.skipped } : {}),
      ...(extras.xmlReferents ? { xmlReferents: extras.xmlReferents } : {}),
      tables,
      tableIds: Uint32Array.from(this.#tableIds),
      tableRows: Int32Array.from(this.#tableRows),
      referents,
      parents: links.parents,
      firstChildren: links.firstChildren,
      nextSiblings: links.nextSiblings,
      firstRoot: links.firstRoot,
      referentIndex: indexReferents(referents).index,
    });
  }
}
