/**
 * The `dump` command's JSON (see README):
 * {"format", "instances": [{"referent", "class", "name", "parent", "properties"}]},
 * instances in row order, each property as {"type", "value"}. It is written as a
 * stream of pieces, one instance at a time, so a large place never becomes one
 * object or one string; the pieces concatenate to exactly what JSON.stringify of
 * the whole object would give.
 */
import type { Dom } from './dom.js';
import { jsonReplacer, type Property } from './values.js';

export interface DumpInstance {
  referent: number;
  class: string;
  name: string;
  parent: number | null;
  properties: Record<string, Property>;
}

export function dumpInstance(dom: Dom, row: number): DumpInstance {
  const properties: Record<string, Property> = {};
  const at = dom.rowInTable(row);
  for (const [name, column] of dom.table(dom.tableOf(row)).columns) properties[name] = { type: column.type, value: column.get(at) };
  const parent = dom.parent(row);
  return { referent: dom.referent(row), class: dom.className(row), name: dom.name(row), parent: parent === -1 ? null : dom.referent(parent), properties };
}

/** The dump's JSON text, in pieces of about `pieceBytes` characters (the last one ends with a newline). */
export function* dumpJson(dom: Dom, pieceBytes = 1 << 20): Generator<string> {
  let piece = `{"format":${JSON.stringify(dom.format)},"instances":[`;
  for (let row = 0; row < dom.count; row++) {
    if (row > 0) piece += ',';
    piece += JSON.stringify(dumpInstance(dom, row), jsonReplacer);
    if (piece.length >= pieceBytes) {
      yield piece;
      piece = '';
    }
  }
  yield piece + ']}\n';
}

export function stringifyDump(value: unknown, indent?: number): string {
  return JSON.stringify(value, jsonReplacer, indent);
}
