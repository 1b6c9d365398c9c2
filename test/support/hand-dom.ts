/**
 * Small DOMs built by hand for unit tests: a tree of {class, name, props, children}
 * becomes a Dom with one single-row property table per instance (the XML layout).
 */
import { linkTree, singleRowTable, type Dom, type Instance } from '../../src/parser/dom.js';
import type { Property, PropType, Value } from '../../src/parser/values.js';

export interface HandNode {
  class: string;
  name?: string;
  props?: Record<string, [PropType, Value]>;
  children?: HandNode[];
}

export function handDom(nodes: HandNode[], format: 'binary' | 'xml' = 'binary', warnings: string[] = []): Dom {
  const instances: Instance[] = [];
  const add = (node: HandNode, parent: Instance | null): void => {
    const name = node.name ?? node.class;
    const properties = new Map<string, Property>([['Name', { type: 'String', value: name }]]);
    for (const [key, [type, value]] of Object.entries(node.props ?? {})) properties.set(key, { type, value });
    const instance: Instance = {
      referent: instances.length,
      className: node.class,
      name,
      parent,
      children: [],
      table: singleRowTable(properties),
      row: 0,
    };
    instances.push(instance);
    for (const child of node.children ?? []) add(child, instance);
  };
  for (const node of nodes) add(node, null);
  const roots: Instance[] = [];
  linkTree(instances, roots);
  return {
    format,
    metadata: [],
    sharedStrings: [],
    instances,
    roots,
    byReferent: new Map(instances.map((instance) => [instance.referent, instance])),
    warnings,
  };
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
