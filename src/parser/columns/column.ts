import type { Column } from '../dom.js';
import type { PropType, Value } from '../values.js';

/** What every column decoder receives: the class's instance count and the limits it must respect. */
export interface ColumnContext {
  count: number;
  maxStringBytes: number;
  maxSequenceLength: number;
}

export function column(type: PropType, length: number, get: (row: number) => Value): Column {
  return { type, length, get };
}

/**
 * A column over values already materialised (small or variable-length families, XML
 * properties). Its length follows the array, so a decoder may still append rows.
 */
export function arrayColumn(type: PropType, values: Value[]): Column {
  return { type, get length() { return values.length; }, get: (row) => values[row]! };
}
