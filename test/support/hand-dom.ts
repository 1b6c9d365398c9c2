/**
 * Small DOMs built by hand for unit tests: a tree of {class, name, props, children}
 * becomes a Dom with one single-row property table per instance (as an XML file
 * whose Items all differ would).
 */
import type { Dom } from '../../src/parser/dom.js';
import { DomBuilder } from '../../src/parser/dom-build.js';
import { arrayColumn } from '../../src/parser/columns/column.js';
import type { PropType, Value } from '../../src/parser/values.js';

export interface HandNode {
  class: string;
  name?: string;
  props?: Record<string, [PropType, Value]>;
  children?: HandNode[];
}

export function handDom(nodes: HandNode[], format: 'binary' | 'xml' = 'binary', warnings: string[] = []): Dom {
  const builder = new DomBuilder(format);
  const add = (node: HandNode, parent: number): void => {
    const name = node.name ?? node.class;
    const table = builder.addTable(node.class);
    const columns = builder.columns(table);
    columns.set('Name', arrayColumn('String', [name]));
    for (const [key, [type, value]] of Object.entries(node.props ?? {})) columns.set(key, arrayColumn(type, [value]));
    const row = builder.add(table, parent);
    for (const child of node.children ?? []) add(child, row);
  };
  for (const node of nodes) add(node, -1);
  return builder.build({ warnings });
}

/** A part node with a CFrame (identity rotation unless given) and a size. */
export function part(
  name: string,
  position: [number, number, number],
  size: [number, number, number],
  extra: Record<string, [PropType, Value]> = {},
  className = 'Part',
  orientation: [[number, number, number], [number, number, number], [number, number, number]] = [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
): HandNode {
  return {
    class: className,
    name,
    props: { CFrame: ['CFrame', { position, orientation }], size: ['Vector3', size], ...extra },
  };
}
