/**
 * Reads Rust `{:#?}` debug notation, as insta snapshots store it (rbx_mesh's
 * expected decodings in ../shared/corpus/meshes/expected): structs `Name { field:
 * value, … }`, tuple structs `Name(value, …)`, unit variants `Name`, arrays
 * `[value, …]`, numbers (with `inf`/`NaN`), strings and `true`/`false`.
 */
import { readFileSync } from 'node:fs';

export type RustValue = number | string | boolean | RustValue[] | RustStruct;
export interface RustStruct {
  /** The type or variant name. */
  $: string;
  /** Tuple-struct fields, when it is one. */
  items?: RustValue[];
  [field: string]: RustValue | RustValue[] | string | undefined;
}

/** The snapshot's value: the text after its `---` front matter. */
export function readSnapshot(path: string): RustValue {
  const text = readFileSync(path, 'utf8');
  const body = text.startsWith('---') ? text.slice(text.indexOf('\n---', 3) + 4) : text;
  return parseRustDebug(body);
}

export function parseRustDebug(text: string): RustValue {
  let pos = 0;
  const isSpace = (c: number): boolean => c === 32 || c === 10 || c === 13 || c === 9;
  const skip = (): void => { while (pos < text.length && isSpace(text.charCodeAt(pos))) pos++; };
  const error = (what: string): never => { throw new Error(`Rust debug notation: ${what} at offset ${pos}: ${JSON.stringify(text.slice(pos, pos + 30))}`); };
  const eat = (char: string): boolean => {
    skip();
    if (text[pos] === char) { pos++; return true; }
    return false;
  };
  const expect = (char: string): void => { if (!eat(char)) error(`expected ${char}`); };
  const word = (): string => {
    skip();
    const start = pos;
    while (pos < text.length && /[A-Za-z0-9_]/.test(text[pos]!)) pos++;
    return text.slice(start, pos);
  };
  const list = (close: string): RustValue[] => {
    const items: RustValue[] = [];
    while (!eat(close)) {
      items.push(value());
      if (!eat(',')) { expect(close); break; }
    }
    return items;
  };
  const value = (): RustValue => {
    skip();
    const c = text[pos];
    if (c === '[') { pos++; return list(']'); }
    if (c === '"') {
      const start = pos++;
      while (pos < text.length && text[pos] !== '"') pos += text[pos] === '\\' ? 2 : 1;
      pos++;
      return JSON.parse(text.slice(start, pos)) as string;
    }
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) {
      const start = pos++;
      while (pos < text.length && /[0-9.eE+\-a-zA-Z]/.test(text[pos]!)) pos++;
      const raw = text.slice(start, pos);
      const number = raw === '-inf' ? -Infinity : Number(raw);
      if (Number.isNaN(number)) error(`bad number ${raw}`);
      return number;
    }
    const name = word();
    if (!name) error('expected a value');
    if (name === 'true' || name === 'false') return name === 'true';
    if (name === 'inf') return Infinity;
    if (name === 'NaN') return NaN;
    if (eat('(')) return { $: name, items: list(')') };
    if (eat('{')) {
      const struct: RustStruct = { $: name };
      while (!eat('}')) {
        const field = word();
        expect(':');
        struct[field] = value();
        if (!eat(',')) { expect('}'); break; }
      }
      return struct;
    }
    return { $: name };
  };
  const result = value();
  skip();
  if (pos !== text.length) error('text after the value');
  return result;
}

/** Field access that fails loudly on a shape the test did not expect. */
export function field(value: RustValue | undefined, name: string): RustValue {
  if (!value || typeof value !== 'object' || Array.isArray(value) || !(name in value)) {
    throw new Error(`snapshot value has no field ${name}`);
  }
  return value[name] as RustValue;
}

/** A tuple struct's single item (`Lod3(5)` → 5). */
export function inner(value: RustValue | undefined): RustValue {
  const items = (value as RustStruct | undefined)?.items;
  if (!items || items.length !== 1) throw new Error('snapshot value is not a one-item tuple struct');
  return items[0]!;
}

export function numbers(value: RustValue): number[] {
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'number')) throw new Error('snapshot value is not a list of numbers');
  return value;
}
