/**
 * Property values written straight from a binary file's columns: the same JSON text
 * as `ENCODERS[type](w, column.get(row), ctx)`, without the value in between. A
 * 200k-part place has millions of values, and reading each as an object (a CFrame is
 * five arrays) before formatting it cost as much as the formatting: float families
 * hand their float32 bit patterns to a scratch array (ViewColumn.floatBits: the
 * writer keeps float text by bit pattern, so a repeated value needs no float at all),
 * other numeric families their numbers (Column.numbers), ASCII strings are copied
 * from the chunk's bytes. Anything else (XML columns, non-ASCII text, the rarer types)
 * goes through `get` and the encoder.
 */
import type { Column, Dom } from '../parser/dom.js';
import { ViewColumn } from '../parser/columns/column.js';
import { StringColumn } from '../parser/columns/strings.js';
import type { PropType } from '../parser/values.js';
import { ENCODERS, type EncodeContext } from './encoding.js';
import type { JsonWriter } from './json-writer.js';

/** Writes one row's value. */
export type RowWriter = (w: JsonWriter, row: number) => void;

/** How the numbers of each numeric type are written: one float32, one integer, an array of either, or a UniqueId's hex. */
const NUMBER_FORMS: Partial<Record<PropType, 'float' | 'int' | 'floats' | 'ints' | 'hex'>> = {
  UniqueId: 'hex',
  Float32: 'float',
  Int32: 'int', Enum: 'int', BrickColor: 'int', SharedString: 'int',
  Vector2: 'floats', Vector3: 'floats', Color3: 'floats', CFrame: 'floats', OptionalCFrame: 'floats',
  Color3uint8: 'ints', Vector3int16: 'ints',
};

/** Scratch for a row's numbers (a CFrame's twelve at most). */
const scratch = new Float64Array(12);
/** The same for float bit patterns (ViewColumn.floatBits). */
const bitsScratch = new Uint32Array(12);

/** The writer of `column`'s rows. */
export function rowWriter(column: Column, ctx: EncodeContext): RowWriter {
  const encode = ENCODERS[column.type];
  const numbers = column.numbers;
  const form = NUMBER_FORMS[column.type];
  const floatBits = column instanceof ViewColumn ? column.floatBits : undefined;
  if (floatBits && form === 'float') return (w, row) => { floatBits(row, bitsScratch); w.float32Bits(bitsScratch[0]!); };
  if (floatBits && form === 'floats') {
    return (w, row) => {
      const count = floatBits(row, bitsScratch);
      if (count === 0) { w.ascii('null'); return; } // an OptionalCFrame without one
      w.float32BitsArray(bitsScratch, 0, count);
    };
  }
  if (numbers && form) {
    switch (form) {
      case 'float': return (w, row) => { numbers(row, scratch); w.float32(scratch[0]!); };
      case 'int': return (w, row) => { numbers(row, scratch); w.int(scratch[0]!); };
      case 'floats': return (w, row) => {
        const count = numbers(row, scratch);
        if (count === 0) { w.ascii('null'); return; } // an OptionalCFrame without one
        w.float32Array(scratch, 0, count);
      };
      case 'hex': return (w, row) => { numbers(row, scratch); w.hexWords(scratch); };
      case 'ints': return (w, row) => { w.intArray(scratch, 0, numbers(row, scratch)); };
    }
  }
  if (column instanceof StringColumn && (column.type === 'String' || column.type === 'Bytecode')) {
    return (w, row) => {
      if (!w.asciiString(column.data, column.byteStart(row), column.byteEnd(row))) encode(w, column.get(row), ctx);
    };
  }
  // Bools (a part's Anchored, CanCollide, ...): ENCODERS.Bool without the call through the encoder.
  if (column.type === 'Bool') return (w, row) => w.bool(column.get(row) === true);
  return (w, row) => encode(w, column.get(row), ctx);
}

/**
 * Writes an instance's name (`dom.name`) as a JSON string, ASCII names straight from
 * their Name column's bytes. One per DOM: it keeps each table's Name column.
 */
export function nameWriter(dom: Dom): RowWriter {
  const columns: (StringColumn | null | undefined)[] = [];
  return (w, row) => {
    const table = dom.tableOf(row);
    let column = columns[table];
    if (column === undefined) columns[table] = column = byteNameColumn(dom.table(table).columns);
    writeName(w, dom, row, column);
  };
}

/** A table's Name column when its names can be copied from their bytes (a binary file's String column), else null. */
export function byteNameColumn(columns: ReadonlyMap<string, Column>): StringColumn | null {
  const found = columns.get('Name');
  return found instanceof StringColumn && found.type === 'String' ? found : null;
}

/** Writes `dom.name(row)` as a JSON string: from `column`'s bytes (the row's table's byteNameColumn) when they are ASCII. */
export function writeName(w: JsonWriter, dom: Dom, row: number, column: StringColumn | null): void {
  if (column !== null) {
    const at = dom.rowInTable(row);
    if (w.asciiString(column.data, column.byteStart(at), column.byteEnd(at))) return;
  }
  w.string(dom.name(row));
}
