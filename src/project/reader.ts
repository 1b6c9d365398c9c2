/**
 * The one reader of the instance encoding (instances.ts, encoding.ts): a version 2
 * project document's (or a dump's) instances with every property back in the
 * decoder's value shapes, references as instance ids. Tests compare documents with
 * the DOM through it; tools may use it to open documents.
 */
import type { PropType } from '../parser/values.js';
import { decodeValue, type DocValue } from './encoding.js';

export interface EncodedClass {
  properties: Record<string, PropType>;
  defaults?: Record<string, unknown>;
  partial?: string[];
}

export interface EncodedInstance {
  id: string;
  class: string;
  name: string;
  parent: string | null;
  properties: Record<string, unknown>;
  types?: Record<string, PropType>;
  generated?: boolean;
}

/** What the reader needs of a document or dump. */
export interface EncodedTree {
  classes: Record<string, EncodedClass>;
  instances: EncodedInstance[];
}

export interface ReadProperty {
  type: PropType;
  value: DocValue;
}

export interface ReadInstance {
  id: string;
  class: string;
  name: string;
  parent: string | null;
  generated: boolean;
  /** Every property the instance has, in its class table's order (generated instances: their own order). */
  properties: Map<string, ReadProperty>;
}

/** Thrown for a document that does not follow the encoding. */
export class EncodingError extends Error {
  override name = 'EncodingError';
}

/** One instance's properties: its own values, then its class's defaults, then `Name` from `name`. */
export function readInstance(tree: EncodedTree, instance: EncodedInstance): ReadInstance {
  const properties = new Map<string, ReadProperty>();
  const own = instance.properties ?? {};
  const types = instance.types ?? {};
  if (instance.generated) {
    for (const [name, json] of Object.entries(own)) {
      const type = types[name];
      if (!type) throw new EncodingError(`generated instance ${instance.id}: ${name} has no type`);
      properties.set(name, { type, value: decodeValue(type, json) });
    }
  } else {
    const schema = tree.classes[instance.class];
    if (!schema) throw new EncodingError(`instance ${instance.id}: class ${instance.class} has no entry in classes`);
    const partial = new Set(schema.partial ?? []);
    const defaults = schema.defaults ?? {};
    for (const name of Object.keys(own)) {
      if (!(name in schema.properties)) throw new EncodingError(`instance ${instance.id}: ${name} is not a property of class ${instance.class}`);
    }
    for (const [name, classType] of Object.entries(schema.properties)) {
      const type = types[name] ?? classType;
      if (Object.prototype.hasOwnProperty.call(own, name)) properties.set(name, { type, value: decodeValue(type, own[name]) });
      else if (partial.has(name)) continue;
      else if (Object.prototype.hasOwnProperty.call(defaults, name)) properties.set(name, { type, value: decodeValue(type, defaults[name]) });
      else if (name === 'Name' && type === 'String') properties.set(name, { type, value: instance.name });
      else throw new EncodingError(`instance ${instance.id}: ${instance.class}.${name} has no value, no default and is not partial`);
    }
  }
  return { id: instance.id, class: instance.class, name: instance.name, parent: instance.parent, generated: instance.generated === true, properties };
}

/** Every instance, in document order. */
export function* readInstances(tree: EncodedTree): Generator<ReadInstance> {
  for (const instance of tree.instances) yield readInstance(tree, instance);
}
