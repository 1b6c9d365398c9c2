/**
 * The DOM every other part of the service reads. Instances are plain objects; their
 * properties live in per-class column tables (binary: one table per INST class, its
 * columns typed arrays; XML: one small table per instance), so a large place does not
 * become one JS object per property value. A value is only materialised on get().
 */
import type { Property, PropType, Value } from './values.js';
import { jsonReplacer } from './values.js';

export interface Column {
  readonly type: PropType;
  readonly length: number;
  /** The value of one row, in the shapes of values.ts. */
  get(row: number): Value;
  /** String and Bytecode columns of binary files: a row's bytes as the file holds them, without decoding (a view, not a copy). */
  bytes?(row: number): Uint8Array;
}

export interface PropertyTable {
  /** Property name to column, in file order. */
  readonly columns: Map<string, Column>;
}

export interface Instance {
  /** Binary: the file's referent. XML: a sequential number (the file's referent strings are kept in Dom.xmlReferents). */
  readonly referent: number;
  readonly className: string;
  name: string;
  parent: Instance | null;
  readonly children: Instance[];
  /** The table that holds this instance's properties, and its row there. */
  readonly table: PropertyTable;
  readonly row: number;
}

export interface Dom {
  readonly format: 'binary' | 'xml';
  /** META entries (binary) or Meta elements (XML), in file order. */
  readonly metadata: [string, string][];
  /** SSTR entries / SharedStrings, indexed by SharedString property values. */
  readonly sharedStrings: Uint8Array[];
  /** Every instance, in file order (binary: INST order; XML: document order). */
  readonly instances: Instance[];
  /** Instances with no parent, in file order. */
  readonly roots: Instance[];
  readonly byReferent: Map<number, Instance>;
  /** Things skipped or repaired while decoding (unknown chunks, types, tags...). */
  readonly warnings: string[];
  /** XML only: the file's referent strings, indexed by Instance.referent. */
  readonly xmlReferents?: string[];
}

/** A table with one row, for instances whose properties are not columnar (XML). */
export function singleRowTable(properties: Map<string, Property>): PropertyTable {
  const columns = new Map<string, Column>();
  for (const [name, { type, value }] of properties) {
    columns.set(name, { type, length: 1, get: () => value });
  }
  return { columns };
}

export function getProperty(instance: Instance, name: string): Property | undefined {
  const column = instance.table.columns.get(name);
  return column ? { type: column.type, value: column.get(instance.row) } : undefined;
}

export function getValue(instance: Instance, name: string): Value | undefined {
  return instance.table.columns.get(name)?.get(instance.row);
}

/** A String property's bytes as the file holds them, when the decoder kept them (binary files); undefined otherwise. */
export function getBytes(instance: Instance, name: string): Uint8Array | undefined {
  return instance.table.columns.get(name)?.bytes?.(instance.row);
}

export function propertyNames(instance: Instance): string[] {
  return [...instance.table.columns.keys()];
}

/** Roblox's GetFullName(): names from the top ancestor down, joined by dots. */
export function fullName(instance: Instance): string {
  const names: string[] = [];
  for (let at: Instance | null = instance; at; at = at.parent) names.push(at.name);
  return names.reverse().join('.');
}

/** Depth-first, pre-order walk of a subtree (iterative: deep trees must not blow the stack). */
export function* descendants(root: Instance): Generator<Instance> {
  const stack: Instance[] = [root];
  while (stack.length) {
    const at = stack.pop()!;
    yield at;
    for (let i = at.children.length - 1; i >= 0; i--) stack.push(at.children[i]!);
  }
}

/** Links parents and children, and collects the roots, from each instance's `parent`. */
export function linkTree(instances: Instance[], roots: Instance[]): void {
  for (const instance of instances) {
    if (instance.parent) instance.parent.children.push(instance);
    else roots.push(instance);
  }
}

export interface DomDump {
  format: 'binary' | 'xml';
  instances: {
    referent: number;
    class: string;
    name: string;
    parent: number | null;
    properties: Record<string, Property>;
  }[];
}

/** The `dump` command's JSON object (see README). */
export function toDump(dom: Dom): DomDump {
  return {
    format: dom.format,
    instances: dom.instances.map((instance) => {
      const properties: Record<string, Property> = {};
      for (const [name, column] of instance.table.columns) {
        properties[name] = { type: column.type, value: column.get(instance.row) };
      }
      return {
        referent: instance.referent,
        class: instance.className,
        name: instance.name,
        parent: instance.parent ? instance.parent.referent : null,
        properties,
      };
    }),
  };
}

export function stringifyDump(value: unknown, indent?: number): string {
  return JSON.stringify(value, jsonReplacer, indent);
}
