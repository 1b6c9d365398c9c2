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
  /** The properties of the class's generated instances (documents before it: each such instance's own `types`). */
  generated?: Record<string, PropType>;
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
  /** Every property the instance has, in its class table's order (generated instances: their class's `generated` order, or their own). */
  properties: Map<string, ReadProperty>;
}

/** Thrown for a document that does not follow the encoding. */
export class EncodingError extends Error {
  override name = 'EncodingError';
}

/**
 * A class entry made ready for reading its instances: each property's place in the
 * class's order, and the properties every instance has (not partial). An instance then
 * costs its own values and those properties, not the class's whole list: an XML class
 * can have thousands of partial properties, each held by one instance.
 */
interface ClassReader {
  order: Map<string, number>;
  types: PropType[];
  names: string[];
  /** Indexes (in `order`) of the properties that are not partial. */
  complete: number[];
  defaults: Record<string, unknown>;
}

/** Class readers of one reading: made as the reading meets each class, so a caller's later edits to the document are read by the next reading. */
type ClassReaders = Map<EncodedClass, ClassReader>;


function classReader(schema: EncodedClass, readers: ClassReaders): ClassReader {
  let reader = readers.get(schema);
  if (!reader) {
    const partial = new Set(schema.partial ?? []);
    const names = Object.keys(schema.properties);
    reader = {
      order: new Map(names.map((name, index) => [name, index])),
      types: names.map((name) => schema.properties[name]!),
      names,
      complete: names.flatMap((name, index) => (partial.has(name) ? [] : [index])),
      defaults: schema.defaults ?? {},
    };
    readers.set(schema, reader);
  }
  return reader;
}

/** `json` read as a `type` value of `instance`'s property `name`: a type the encoding lacks, or a value not of its type's form, is an EncodingError naming both. */
function decodeProperty(instance: EncodedInstance, name: string, type: PropType, json: unknown): DocValue {
  try {
    return decodeValue(type, json);
  } catch (error) {
    throw new EncodingError(`instance ${instance.id}: ${name}: ${(error as Error).message}`);
  }
}

/** Whether `value` is a JSON object (not null, not an array). */
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One instance's properties: its own values, then its class's defaults, then `Name` from `name`. */
export function readInstance(tree: EncodedTree, instance: EncodedInstance, readers: ClassReaders = new Map()): ReadInstance {
  if (!isObject(instance)) throw new EncodingError('an instance is not an object');
  if (!isObject(tree.classes)) throw new EncodingError('classes is not an object');
  if (typeof instance.name !== 'string') throw new EncodingError(`instance ${instance.id}: its name is not a string`);
  const properties = new Map<string, ReadProperty>();
  const values = instance.properties ?? {};
  const types = instance.types ?? {};
  // Names are read from the document's own keys only: a property or class may be called `constructor` or `__proto__`.
  const typeOf = (name: string): PropType | undefined => (Object.hasOwn(types, name) ? types[name] : undefined);
  const schema = Object.hasOwn(tree.classes, instance.class) ? tree.classes[instance.class] : undefined;
  const generated = instance.generated === true;
  if (generated && schema?.generated === undefined && instance.types) {
    // Written before classes had `generated` lists: complete properties with types of their own.
    for (const [name, json] of Object.entries(values)) {
      const type = typeOf(name);
      if (!type) throw new EncodingError(`generated instance ${instance.id}: ${name} has no type`);
      properties.set(name, { type, value: decodeProperty(instance, name, type, json) });
    }
  } else if (generated) {
    const list: unknown = schema?.generated;
    if (list === undefined || list === null) throw new EncodingError(`generated instance ${instance.id}: class ${instance.class} has no generated list in classes`);
    if (!isObject(list)) throw new EncodingError(`class ${instance.class}: its generated list is not an object`);
    if (instance.types) throw new EncodingError(`generated instance ${instance.id}: has types of its own beside its class's generated list`);
    for (const name of Object.keys(values)) {
      if (!Object.hasOwn(list, name)) throw new EncodingError(`generated instance ${instance.id}: ${name} is not in ${instance.class}'s generated list`);
    }
    for (const [name, type] of Object.entries(list as Record<string, PropType>)) {
      if (Object.hasOwn(values, name)) properties.set(name, { type, value: decodeProperty(instance, name, type, values[name]) });
      else if (name === 'Name' && type === 'String') properties.set(name, { type, value: instance.name });
      else throw new EncodingError(`generated instance ${instance.id}: ${instance.class}.${name} has no value`);
    }
  } else {
    if (!schema) throw new EncodingError(`instance ${instance.id}: class ${instance.class} has no entry in classes`);
    const { order, types: classTypes, names, complete, defaults } = classReader(schema, readers);
    // The instance's own properties and every complete one, in the class's order.
    const present = new Set(complete);
    for (const name of Object.keys(values)) {
      const index = order.get(name);
      if (index === undefined) throw new EncodingError(`instance ${instance.id}: ${name} is not a property of class ${instance.class}`);
      present.add(index);
    }
    for (const index of present.size === complete.length ? complete : [...present].sort((a, b) => a - b)) {
      const name = names[index]!;
      const type = typeOf(name) ?? classTypes[index]!;
      if (Object.hasOwn(values, name)) properties.set(name, { type, value: decodeProperty(instance, name, type, values[name]) });
      else if (Object.hasOwn(defaults, name)) properties.set(name, { type, value: decodeProperty(instance, name, type, defaults[name]) });
      else if (name === 'Name' && type === 'String') properties.set(name, { type, value: instance.name });
      else throw new EncodingError(`instance ${instance.id}: ${instance.class}.${name} has no value, no default and is not partial`);
    }
  }
  return { id: instance.id, class: instance.class, name: instance.name, parent: instance.parent, generated, properties };
}

/** Every instance, in document order (each class's entry is read once, when the reading first meets it). */
export function* readInstances(tree: EncodedTree): Generator<ReadInstance> {
  if (!Array.isArray(tree.instances)) throw new EncodingError('instances is not an array');
  const readers: ClassReaders = new Map();
  for (const instance of tree.instances) yield readInstance(tree, instance, readers);
}
