/**
 * The instance tree of a document (and of `rbxl-import dump`) as JSON pieces: every
 * instance in parent-before-child order, its properties in the typed encoding of
 * encoding.ts, with a type table per class so values need no type beside them.
 *
 *   "classes": {"Part": {"properties": {"Anchored": "Bool", ...},
 *                        "defaults": {"Anchored": true, ...},     (optional)
 *                        "partial": ["Foo"]},                     (optional, XML files)
 *               ...},
 *   "instances": [{"id": "7", "class": "Part", "name": "Door", "parent": "3",
 *                  "properties": {"CFrame": [...], "size": [4, 7, 1]}}, ...]
 *
 * An instance's properties are, for each name of its class's `properties`: its own
 * value when `properties` has it, else the class's default, else (for `Name`) its
 * `name`. `defaults` hold, per property every instance of the class has, a value at
 * least two of them share (found on a sample of rows); instances leave such values
 * out, which is what keeps a 200k-part place small. `partial` names properties only
 * some instances of the class have (XML items each keep their own list): those are
 * never defaulted and are absent where an instance leaves them out. An instance whose
 * property has another type than its class's entry (XML only) says so in its own
 * `types`. Instances the import adds (`generated: true`) follow their class's
 * `generated` list instead (`{"Part0": "Ref", ...}`, written once however many there
 * are): every property in it is in their `properties`, except `Name`, which is their
 * `name`; `properties` and `defaults` are the map's instances' only. A class only the
 * import adds has empty `properties`.
 *
 * Everything is written in one pass over the DOM's columns: a default is compared
 * with `Column.same` (the stored bytes, in binary files), so only values that differ
 * from their class default are read and encoded.
 */
import { Buffer } from 'node:buffer';
import type { Column, Dom, PropertyTable } from '../parser/dom.js';
import { StringColumn } from '../parser/columns/strings.js';
import type { PropType } from '../parser/values.js';
import { ENCODERS, encodeValueWithin, type EncodeContext, type Encoder } from './encoding.js';
import { writeId } from './ids.js';
import { JsonCapError, JsonWriter } from './json-writer.js';
import { byteNameColumn, rowWriter, writeName, type RowWriter } from './row-writers.js';

/** One class's entry of `classes`. */
export interface ClassSchema {
  properties: Record<string, PropType>;
  /** Property name → the default's JSON text. */
  defaults: Map<string, string>;
  partial: Set<string>;
}

export interface InstanceTreeOptions {
  /** Rows left out of the document, with their subtrees (1 = left out). */
  excluded?: Uint8Array;
  /** Properties not written as properties (script sources, PhysicsGrid): class, name and type. */
  omit?: (className: string, property: string, type: PropType) => boolean;
}

/**
 * The properties of an instance the import adds, names and types in order: one list
 * shared by every instance of a kind (every generated Snap), so its text is encoded
 * once.
 */
export type GeneratedSchema = readonly (readonly [name: string, type: PropType])[];

/**
 * Instances the import adds (joints computed from surface types), read one at a time
 * from where they are kept: a place can add hundreds of thousands, so they are never
 * an object each.
 */
export interface GeneratedInstances {
  readonly count: number;
  /** Every one's properties, in order. */
  readonly schema: GeneratedSchema;
  id(index: number): string;
  className(index: number): string;
  name(index: number): string;
  /** The parent's DOM row. */
  parent(index: number): number;
  /** Writes property `k` of `schema` of instance `index`, in its type's encoding. */
  writeValue(w: JsonWriter, index: number, k: number, ctx: EncodeContext): void;
}

/** A generated schema's fixed text: the key of each property written (`,"C0":` after the first; `Name` is the instance's `name`), by its index in the schema. */
interface GeneratedText {
  keys: Uint8Array[];
  indexes: number[];
}

/** Fixed text of every instance, encoded once. */
const ID_KEY = Buffer.from('{"id":', 'latin1');
const PARENT_KEY = Buffer.from(',"parent":', 'latin1');
const PROPERTIES_KEY = Buffer.from(',"properties":{', 'latin1');
const NO_PARENT = Buffer.from(',"parent":null,"properties":{', 'latin1');
const GENERATED_PROPERTIES = Buffer.from(',"generated":true,"properties":{', 'latin1');

/**
 * The longest JSON text a value may have to be a class default: a longer one (a string of
 * megabytes, a sequence of a million keypoints) is written with its instances. Sampling
 * made each sampled value's whole text to compare them: a 95 MB string of control
 * characters (from a 745 KB file) passed the longest string V8 makes, and 32 sampled
 * megabyte strings held six times their size at once.
 */
export const MAX_DEFAULT_TEXT_BYTES = 8 << 20;
const SCRATCH = new JsonWriter(4096, MAX_DEFAULT_TEXT_BYTES);

/** Rows of a table read at most this often to find each column's default. */
const SAMPLE_ROWS = 32;

/** Rows read to tell whether a column's first row may hold most rows' value (see #leadingFirstRow). */
const PROBE_ROWS = 8;

/** How writeInstance treats a plan's rows. */
const enum PlanKind {
  /** Written with its row writer (its bit set, or its want of a default, says the row differs). */
  Write,
  /** Without a bit set: the value's text is compared with the default's (XML files, other columns). */
  CompareText,
  /** Name, left to the instance's `name` whenever it is text. */
  Name,
}

interface Plan {
  /** `"Name":` as UTF-8. */
  key: Uint8Array;
  /** `,"Name":`: the key of every property but an instance's first. */
  commaKey: Uint8Array;
  kind: PlanKind;
  name: string;
  column: Column;
  encode: Encoder;
  /** Writes a row's value straight from the column (row-writers.ts). */
  write: RowWriter;
  /** The class default's text, when the property has one. */
  defaultText: string | undefined;
  /** Rows that may differ from the default (Column.differing; for Name, rows whose name may not be text), null when unknown: then every row is looked at. */
  differs: Uint8Array | null;
  /** `"Name":"Type"` when this table's type differs from the class's. */
  typeOverride: string;
  /** Written even when equal to the default (the property is partial in its class). */
  noDefault: boolean;
}

/**
 * A table's plans and, per row, which of them to write: the plans whose bit is set for
 * the row (or that have no bit set), in plan order, as rows of a compressed index
 * (`plans` of row r are `order[starts[r]]` up to `order[starts[r + 1]]`). A part
 * differs from its class defaults in a handful of its fifty-odd properties; the index
 * costs one pass over each bit set instead of a test per property per row.
 */
interface TablePlans {
  /** `,"class":"Part","name":` as UTF-8: what follows every id of the table. */
  head: Uint8Array;
  /** The table's Name column when its names can be copied from their bytes (byteNameColumn). */
  nameColumn: StringColumn | null;
  plans: Plan[];
  starts: Uint32Array;
  order: Uint16Array | Uint32Array;
}

function indexRows(table: PropertyTable, plans: Plan[]): TablePlans {
  const rows = table.rows.length;
  const starts = new Uint32Array(rows + 1);
  // Two passes over each bit set (count, then fill), written out: a visitor per row cost as much as the rest.
  for (const plan of plans) {
    const bits = plan.differs;
    if (bits === null) { for (let r = 1; r <= rows; r++) starts[r]!++; continue; }
    for (let byte = 0; byte < bits.length; byte++) {
      for (let set = bits[byte]!; set !== 0; set &= set - 1) {
        const row = (byte << 3) + 31 - Math.clz32(set & -set);
        if (row < rows) starts[row + 1]!++;
      }
    }
  }
  for (let r = 0; r < rows; r++) starts[r + 1]! += starts[r]!;
  const order = plans.length < 0x10000 ? new Uint16Array(starts[rows]!) : new Uint32Array(starts[rows]!);
  const next = starts.slice(0, rows);
  for (let index = 0; index < plans.length; index++) {
    const bits = plans[index]!.differs;
    if (bits === null) { for (let r = 0; r < rows; r++) order[next[r]!++] = index; continue; }
    for (let byte = 0; byte < bits.length; byte++) {
      for (let set = bits[byte]!; set !== 0; set &= set - 1) {
        const row = (byte << 3) + 31 - Math.clz32(set & -set);
        if (row < rows) order[next[row]!++] = index;
      }
    }
  }
  return {
    head: Buffer.from(`,"class":${JSON.stringify(table.className)},"name":`, 'utf8'),
    nameColumn: byteNameColumn(table.columns),
    plans,
    starts,
    order,
  };
}

/** Rows of a String column whose bytes are not all ASCII (those whose Name may not be text): bit r for row r. */
function nonAsciiRows(column: StringColumn): Uint8Array {
  const bits = new Uint8Array((column.length + 7) >> 3);
  const data = column.data;
  // Most columns have no such byte at all (nor a length of 128 or more): one pass over the column's bytes says so.
  let any = false;
  for (let i = column.at; i < column.end; i++) if (data[i]! > 0x7f) { any = true; break; }
  if (!any) return bits;
  for (let row = 0; row < column.length; row++) {
    for (let i = column.byteStart(row), end = column.byteEnd(row); i < end; i++) {
      if (data[i]! > 0x7f) { bits[row >> 3]! |= 1 << (row & 7); break; }
    }
  }
  return bits;
}

/** Set bits in `bits`. */
function popcount(bits: Uint8Array): number {
  let count = 0;
  for (let i = 0; i < bits.length; i++) {
    let b = bits[i]!;
    b -= (b >> 1) & 0x55;
    b = (b & 0x33) + ((b >> 2) & 0x33);
    count += (b + (b >> 4)) & 0x0f;
  }
  return count;
}

/** Class schemas and per-table write plans for the rows a document keeps. */
export class InstanceTree {
  readonly dom: Dom;
  readonly excluded: Uint8Array | undefined;
  readonly schemas = new Map<string, ClassSchema>();
  readonly #tables: (TablePlans | null)[];
  readonly #ctx: EncodeContext;
  readonly #generatedHeads = new Map<string, Map<string, Uint8Array>>();
  readonly #generatedTexts = new Map<GeneratedSchema, GeneratedText>();
  /** Row writers of the columns sampled for defaults. */
  readonly #writers = new Map<Column, RowWriter>();
  /** Per table, per property: each sampled value's text and the first row holding it. */
  readonly #samples = new Map<number, Map<string, Map<string, number>>>();
  /** Columns whose rows were compared with their first row while choosing defaults: the bit set (Column.differing(0)). */
  readonly #firstRowBits = new Map<Column, Uint8Array>();

  constructor(dom: Dom, ctx: EncodeContext, options: InstanceTreeOptions = {}) {
    this.dom = dom;
    this.excluded = options.excluded;
    this.#ctx = ctx;
    const omit = options.omit ?? (() => false);
    const kept = this.#keptRowsPerTable();

    // Class schemas: names and types over every table of a class that has kept rows.
    const counts = new Map<string, { rows: number; presence: Map<string, number> }>();
    for (let t = 0; t < dom.tables.length; t++) {
      const rows = kept[t]!;
      if (rows === 0) continue;
      const { className, columns } = dom.tables[t]!;
      let schema = this.schemas.get(className);
      let count = counts.get(className);
      if (!schema || !count) {
        // Without a prototype: a property named `constructor` or `__proto__` is a name like any other.
        schema = { properties: Object.create(null) as Record<string, PropType>, defaults: new Map(), partial: new Set() };
        count = { rows: 0, presence: new Map() };
        this.schemas.set(className, schema);
        counts.set(className, count);
      }
      count.rows += rows;
      for (const [name, column] of columns) {
        if (omit(className, name, column.type)) continue;
        schema.properties[name] ??= column.type;
        count.presence.set(name, (count.presence.get(name) ?? 0) + rows);
      }
    }
    for (const [className, { rows, presence }] of counts) {
      const schema = this.schemas.get(className)!;
      for (const [name, present] of presence) if (present < rows) schema.partial.add(name);
    }
    this.#chooseDefaults(kept, counts, omit);

    this.#tables = dom.tables.map((table, t) => {
      if (kept[t] === 0) return null;
      const schema = this.schemas.get(table.className)!;
      const plans: Plan[] = [];
      for (const [name, column] of table.columns) {
        if (omit(table.className, name, column.type)) continue;
        const classType = schema.properties[name];
        const defaultText = classType === column.type ? schema.defaults.get(name) : undefined;
        const defaultRow = defaultText === undefined || !column.differing ? -1 : this.#findRow(t, name, defaultText);
        const key = JSON.stringify(name) + ':';
        let differs = defaultRow === -1 ? null : defaultRow === 0 ? this.#firstRowBits.get(column) ?? column.differing!(0) : column.differing!(defaultRow);
        // Only where the class says Name is text can a row's Name be left to its `name`.
        const isName = name === 'Name' && column.type === 'String' && classType === 'String' && !schema.partial.has(name);
        // An ASCII name is text: only the other rows need a look (Name has no default).
        if (isName && column instanceof StringColumn) differs = nonAsciiRows(column);
        plans.push({
          key: Buffer.from(key, 'utf8'),
          commaKey: Buffer.from(',' + key, 'utf8'),
          kind: isName ? PlanKind.Name : differs === null && defaultText !== undefined ? PlanKind.CompareText : PlanKind.Write,
          name,
          column,
          encode: ENCODERS[column.type],
          write: this.#writers.get(column) ?? rowWriter(column, ctx),
          defaultText,
          differs,
          typeOverride: classType === column.type ? '' : `${JSON.stringify(name)}:${JSON.stringify(column.type)}`,
          noDefault: schema.partial.has(name),
        });
      }
      return indexRows(table, plans);
    });
    this.#samples.clear();
    this.#writers.clear();
    this.#firstRowBits.clear();
  }

  /** Kept rows per table. */
  #keptRowsPerTable(): number[] {
    const { dom, excluded } = this;
    if (!excluded) return dom.tables.map((table) => table.rows.length);
    const kept = new Array<number>(dom.tables.length).fill(0);
    for (let row = 0; row < dom.count; row++) if (!excluded[row]) kept[dom.tableOf(row)]!++;
    return kept;
  }

  /**
   * For each property every kept instance of a class has (Name aside: it is the
   * instance's `name`), the value most common among up to SAMPLE_ROWS rows spread
   * over the class's tables, if at least two share it.
   */
  #chooseDefaults(kept: number[], counts: Map<string, { rows: number }>, omit: (className: string, property: string, type: PropType) => boolean): void {
    const { dom } = this;
    const samples = new Map<string, Map<string, Map<string, number>>>();
    for (let t = 0; t < dom.tables.length; t++) {
      if (kept[t] === 0) continue;
      const { className, columns, rows } = dom.tables[t]!;
      if ((counts.get(className)?.rows ?? 0) < 2) continue;
      const schema = this.schemas.get(className)!;
      let byName = samples.get(className);
      if (!byName) samples.set(className, (byName = new Map<string, Map<string, number>>()));
      const step = Math.max(1, Math.floor(rows.length / SAMPLE_ROWS));
      // A class in one table, every row of it kept (binary files): when the first
      // row's value is that of more than half the rows (so no other can be as common),
      // its bit set, needed anyway to write the rows, says so exactly, and the rest of
      // the sample is not read. A few rows are probed first, so that a column with no
      // such value (positions, ids) is not passed over in full for nothing.
      // Every row kept: rows a document leaves out (a skipped script's subtree) must not
      // lend the class a default, and the class's count alone can match this table's
      // size while other tables hold its kept rows.
      const whole = kept[t] === rows.length && (counts.get(className)?.rows ?? 0) === rows.length;
      for (const [name, column] of columns) {
        if (name === 'Name' || schema.partial.has(name) || schema.properties[name] !== column.type || omit(className, name, column.type)) continue;
        let tally = byName.get(name);
        if (!tally) byName.set(name, (tally = new Map<string, number>()));
        let tableSamples = this.#samples.get(t);
        if (!tableSamples) this.#samples.set(t, (tableSamples = new Map<string, Map<string, number>>()));
        const firstRows = new Map<string, number>();
        tableSamples.set(name, firstRows);
        const first = whole && column.differing ? this.#leadingFirstRow(column, rows.length) : undefined;
        if (first !== undefined) {
          const bits = column.differing!(0);
          const same = rows.length - popcount(bits);
          if (same * 2 > rows.length && same >= 2) {
            this.#firstRowBits.set(column, bits);
            tally.set(first, rows.length);
            firstRows.set(first, 0);
            continue;
          }
        }
        for (let at = 0; at < rows.length; at += step) {
          if (this.excluded?.[rows[at]!]) continue;
          const text = this.#encode(column, at);
          if (text === undefined) continue;
          tally.set(text, (tally.get(text) ?? 0) + 1);
          if (!firstRows.has(text)) firstRows.set(text, at);
        }
      }
    }
    for (const [className, byName] of samples) {
      const schema = this.schemas.get(className)!;
      for (const [name, tally] of byName) {
        let best: string | undefined;
        let bestCount = 1;
        for (const [text, count] of tally) if (count > bestCount) { best = text; bestCount = count; }
        if (best !== undefined) schema.defaults.set(name, best);
      }
    }
  }

  /** The first row's text when more than half of up to PROBE_ROWS rows spread over the column hold the same; undefined otherwise. */
  #leadingFirstRow(column: Column, rows: number): string | undefined {
    const first = this.#encode(column, 0);
    if (first === undefined) return undefined;
    const step = Math.max(1, Math.floor(rows / PROBE_ROWS));
    let probed = 0;
    let agree = 0;
    for (let at = step; at < rows && probed < PROBE_ROWS; at += step, probed++) if (this.#encode(column, at) === first) agree++;
    return agree * 2 > probed ? first : undefined;
  }

  /** A sampled row of table `t` whose property `name` encodes to `text`, -1 when none. */
  #findRow(t: number, name: string, text: string): number {
    return this.#samples.get(t)?.get(name)?.get(text) ?? -1;
  }

  /** A row's JSON text, written by the column's row writer (kept for the plans). */
  /** A row's text, undefined past MAX_DEFAULT_TEXT_BYTES (such a value is never a default). */
  #encode(column: Column, at: number): string | undefined {
    let write = this.#writers.get(column);
    if (!write) this.#writers.set(column, (write = rowWriter(column, this.#ctx)));
    try {
      write(SCRATCH, at);
    } catch (error) {
      if (!(error instanceof JsonCapError)) throw error;
      SCRATCH.discard();
      return undefined;
    }
    return SCRATCH.takeText();
  }

  /**
   * The `classes` object's JSON text (only the classes in `only`, when given), with the
   * `generated` list of each class in `generated` (the classes of the instances the import adds).
   */
  classesJson(only?: ReadonlySet<string>, generated?: ReadonlyMap<string, GeneratedSchema>): string {
    let out = '{';
    let first = true;
    for (const [className, schema] of this.schemas) {
      if (only && !only.has(className)) continue;
      out += `${first ? '' : ','}${JSON.stringify(className)}:{"properties":${JSON.stringify(schema.properties)}`;
      first = false;
      if (schema.defaults.size) {
        let defaults = '';
        for (const [name, text] of schema.defaults) defaults += `${defaults ? ',' : ''}${JSON.stringify(name)}:${text}`;
        out += `,"defaults":{${defaults}}`;
      }
      if (schema.partial.size) out += `,"partial":${JSON.stringify([...schema.partial])}`;
      const own = generated?.get(className);
      if (own) out += `,"generated":${generatedTypesJson(own)}`;
      out += '}';
    }
    for (const [className, own] of generated ?? []) {
      if (this.schemas.has(className) || (only && !only.has(className))) continue;
      out += `${first ? '' : ','}${JSON.stringify(className)}:{"properties":{},"generated":${generatedTypesJson(own)}}`;
      first = false;
    }
    return out + '}';
  }

  /** Writes one instance's JSON. */
  writeInstance(w: JsonWriter, row: number): void {
    const { dom } = this;
    const { head, nameColumn, plans, starts, order } = this.#tables[dom.tableOf(row)]!;
    const at = dom.rowInTable(row);
    w.bytes(ID_KEY);
    writeId(w, row);
    w.bytes(head);
    writeName(w, dom, row, nameColumn);
    const parent = dom.parent(row);
    if (parent === -1) w.bytes(NO_PARENT);
    else { w.bytes(PARENT_KEY); writeId(w, parent); w.bytes(PROPERTIES_KEY); }
    let first = true;
    let types = '';
    for (let i = starts[at]!, end = starts[at + 1]!; i < end; i++) {
      const plan = plans[order[i]!]!;
      const kind = plan.kind;
      if (kind === PlanKind.Write) {
        w.bytes(first ? plan.key : plan.commaKey);
        plan.write(w, at);
      } else if (kind === PlanKind.Name) {
        // Name is the instance's `name` (dom.name reads this column) whenever it is text.
        if (typeof plan.column.get(at) === 'string') continue;
        w.bytes(first ? plan.key : plan.commaKey);
        plan.write(w, at);
      } else {
        const value = plan.column.get(at);
        // A text past the cap cannot be the default's: it is written as the value, not made whole.
        const text = encodeValueWithin(plan.column.type, value, this.#ctx, MAX_DEFAULT_TEXT_BYTES);
        if (text === plan.defaultText) continue;
        w.bytes(first ? plan.key : plan.commaKey);
        if (text === undefined) plan.encode(w, value, this.#ctx);
        else w.text(text);
      }
      first = false;
      if (plan.typeOverride) types += (types ? ',' : '') + plan.typeOverride;
    }
    w.byte(0x7d);
    if (types) w.text(`,"types":{${types}}`);
    w.byte(0x7d);
  }

  /** Writes generated instance `index`: every property of its schema but `Name` (its `name`; the types are its class's `generated`). */
  writeGenerated(w: JsonWriter, generated: GeneratedInstances, index: number): void {
    w.bytes(ID_KEY);
    w.string(generated.id(index));
    w.bytes(this.#generatedHead(generated.className(index), generated.name(index)));
    writeId(w, generated.parent(index));
    w.bytes(GENERATED_PROPERTIES);
    const { keys, indexes } = this.#generatedText(generated.schema);
    for (let k = 0; k < keys.length; k++) {
      w.bytes(keys[k]!);
      generated.writeValue(w, index, indexes[k]!, this.#ctx);
    }
    w.byte(0x7d);
    w.byte(0x7d);
  }

  /** `,"class":…,"name":…,"parent":` of a generated instance, encoded once per class and name. */
  #generatedHead(className: string, name: string): Uint8Array {
    let byName = this.#generatedHeads.get(className);
    if (!byName) this.#generatedHeads.set(className, (byName = new Map<string, Uint8Array>()));
    let head = byName.get(name);
    if (!head) byName.set(name, (head = Buffer.from(`,"class":${JSON.stringify(className)},"name":${JSON.stringify(name)},"parent":`, 'utf8')));
    return head;
  }

  #generatedText(schema: GeneratedSchema): GeneratedText {
    let text = this.#generatedTexts.get(schema);
    if (!text) {
      const indexes = schema.flatMap(([name], k) => (name === 'Name' ? [] : [k]));
      const keys = indexes.map((k, i) => Buffer.from(`${i ? ',' : ''}${JSON.stringify(schema[k]![0])}:`, 'utf8'));
      text = { keys, indexes };
      this.#generatedTexts.set(schema, text);
    }
    return text;
  }

  /** Kept rows in parent-before-child order (pre-order, roots in order), skipping excluded subtrees. */
  *rows(): Generator<number> {
    const { dom, excluded } = this;
    let row = dom.firstRoot;
    while (row !== -1) {
      if (excluded?.[row]) { row = dom.after(row); continue; }
      yield row;
      row = dom.next(row);
    }
  }
}

/** A generated schema as a class's `generated` list: `{"Name": "String", "Part0": "Ref", ...}`. */
function generatedTypesJson(schema: GeneratedSchema): string {
  return `{${schema.map(([name, type]) => `${JSON.stringify(name)}:${JSON.stringify(type)}`).join(',')}}`;
}

/**
 * Writes the `instances` array: the map's instances in pre-order, then the generated
 * ones. Yields the writer's full chunks as they fill; the caller flushes the rest.
 */
export function* instancesJson(w: JsonWriter, tree: InstanceTree, generated?: GeneratedInstances): Generator<Buffer> {
  w.byte(0x5b);
  let first = true;
  // tree.rows(), walked here: a generator step per instance is not free on a 200k-part place.
  const { dom, excluded } = tree;
  let row = dom.firstRoot;
  while (row !== -1) {
    if (excluded?.[row]) { row = dom.after(row); continue; }
    if (!first) w.byte(0x2c);
    first = false;
    tree.writeInstance(w, row);
    if (w.ready) yield* w.take();
    row = dom.next(row);
  }
  for (let index = 0; index < (generated?.count ?? 0); index++) {
    if (!first) w.byte(0x2c);
    first = false;
    tree.writeGenerated(w, generated!, index);
    if (w.ready) yield* w.take();
  }
  w.byte(0x5d);
}
