/**
 * Compares two DOMs (e.g. the binary and XML copies of one file) as trees: roots and
 * children in order must have the same class, name and shape, and every property
 * both instances carry must have the same type and value. Ref values (and Content
 * objects) compare by the position of the instance they point to in the tree walk,
 * SharedString values by the bytes they index, floats with NaN equal to NaN.
 */
import { children, roots, type Dom } from '../../src/parser/dom.js';
import type { Property, PropType, Value } from '../../src/parser/values.js';

/** Decides whether a row (with its subtree) is left out of the walk. */
export type Skip = (dom: Dom, row: number) => boolean;

export interface CompareOptions {
  /** Instances (with their subtrees) left out of the walk on either side. */
  skip?: Skip;
  /**
   * Decides a property both sides carry before the normal comparison: true = equal
   * (an allowed difference), false = different, undefined = compare normally.
   */
  allow?: (className: string, propertyName: string, a: Property, b: Property) => boolean | undefined;
}

/** Pre-order walk of every root, in order, leaving out skipped subtrees: rows. */
export function walk(dom: Dom, skip: Skip = () => false): number[] {
  const out: number[] = [];
  for (let row = dom.firstRoot; row !== -1;) {
    if (skip(dom, row)) { row = dom.after(row); continue; }
    out.push(row);
    row = dom.next(row);
  }
  return out;
}

/** Every difference found, as readable lines (empty when the DOMs match). */
export function compareDoms(a: Dom, b: Dom, options: CompareOptions = {}): string[] {
  const differences: string[] = [];
  const skip = options.skip ?? (() => false);
  const walkA = walk(a, skip);
  const walkB = walk(b, skip);
  const rootsA = roots(a).filter((root) => !skip(a, root)).length;
  const rootsB = roots(b).filter((root) => !skip(b, root)).length;
  if (rootsA !== rootsB) differences.push(`root count ${rootsA} != ${rootsB}`);
  if (walkA.length !== walkB.length) {
    differences.push(`instance count ${walkA.length} != ${walkB.length}`);
    return differences;
  }
  const positionA = new Map(walkA.map((row, i) => [row, i]));
  const positionB = new Map(walkB.map((row, i) => [row, i]));
  const refPosition = (dom: Dom, positions: Map<number, number>, referent: number): number => {
    if (referent === -1) return -1;
    const target = dom.rowOf(referent);
    return target === -1 ? -2 : positions.get(target) ?? -2;
  };

  for (let i = 0; i < walkA.length; i++) {
    const x = walkA[i]!;
    const y = walkB[i]!;
    const where = `#${i} ${a.className(x)} ${JSON.stringify(a.name(x))}`;
    if (a.className(x) !== b.className(y) || a.name(x) !== b.name(y)) {
      differences.push(`${where}: is ${b.className(y)} ${JSON.stringify(b.name(y))} on the other side`);
      continue;
    }
    const childrenA = children(a, x).filter((child) => !skip(a, child)).length;
    const childrenB = children(b, y).filter((child) => !skip(b, child)).length;
    if (childrenA !== childrenB) differences.push(`${where}: ${childrenA} != ${childrenB} children`);
    const parentA = a.parent(x) === -1 ? -1 : positionA.get(a.parent(x));
    const parentB = b.parent(y) === -1 ? -1 : positionB.get(b.parent(y));
    if (parentA !== parentB) differences.push(`${where}: parent #${parentA} != #${parentB}`);

    const columnsB = b.table(b.tableOf(y)).columns;
    for (const [name, columnA] of a.table(a.tableOf(x)).columns) {
      const columnB = columnsB.get(name);
      if (!columnB) continue;
      const pa: Property = { type: columnA.type, value: columnA.get(a.rowInTable(x)) };
      const pb: Property = { type: columnB.type, value: columnB.get(b.rowInTable(y)) };
      const allowed = options.allow?.(a.className(x), name, pa, pb);
      if (allowed === true) continue;
      if (allowed === undefined && pa.type === pb.type) {
        const normalize = (dom: Dom, positions: Map<number, number>, p: Property): unknown =>
          normalizeValue(p.type, p.value, (referent) => refPosition(dom, positions, referent), dom.sharedStrings);
        if (valuesEqual(normalize(a, positionA, pa), normalize(b, positionB, pb))) continue;
      }
      differences.push(`${where}.${name}: ${show(pa)} != ${show(pb)}`);
    }
  }
  return differences;
}

/** Replaces what is file-specific (referents, shared string indices) with comparable values. */
function normalizeValue(type: PropType, value: Value, position: (referent: number) => number, shared: Uint8Array[]): unknown {
  if (type === 'Ref') return { position: position(value as number) };
  if (type === 'SharedString') {
    const bytes = shared[value as number];
    return { bytes: bytes ? Buffer.from(bytes).toString('base64') : `missing #${value as number}` };
  }
  if (type === 'Content' && typeof value === 'object' && value !== null && 'Object' in value) {
    return { Object: position(value.Object) };
  }
  return value;
}

/** Deep equality; numbers by Object.is except that NaN equals NaN. */
export function valuesEqual(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, i) => valuesEqual(item, other[i]));
  }
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  if (keysA.length !== keysB.length) return false;
  return keysA.every((key) => Object.hasOwn(b, key) && valuesEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}

function show(property: Property): string {
  const text = JSON.stringify(property, (_key, value: unknown) =>
    typeof value === 'number' && !Number.isFinite(value) ? String(value) : value);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
