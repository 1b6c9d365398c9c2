/**
 * The instance table holds the tree the previous, object-per-instance decoder built,
 * whatever the referents and the file's order: places made with the project's writer
 * (and chunk by chunk with its framing, for link orders the writer never produces)
 * and XML text, with sparse, negative, shuffled and string referents, deep and wide
 * trees, and instances listed before their parents. The expected tree is worked out
 * here, independently: for binary files from the raw INST/PRNT/PROP chunk view
 * (`decodeChunks`) with the previous decoder's rules (rows in INST order; PRNT links
 * in order, the first link of a child wins; unknown parents make roots; unlinked
 * instances are roots after those); for XML from the tree the text was made from.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decode, decodeChunks } from '../src/parser/index.js';
import { decodeXml } from '../src/parser/xml/index.js';
import { children, findService, fullName, getValue, preorder, roots, type Column, type Dom, propertyNames } from '../src/parser/dom.js';
import { DomBuilder } from '../src/parser/dom-build.js';
import { dumpJson } from '../src/project/dump.js';
import { readInstances, type EncodedTree } from '../src/project/reader.js';
import { arrayColumn, diffPlanes, ViewColumn } from '../src/parser/columns/column.js';
import { ByteWriter } from '../src/parser/writer/bytes.js';
import { concat, fileHeader, frameChunk } from '../src/parser/writer/chunks.js';
import { writeReferents } from '../src/parser/writer/interleave.js';
import { encode } from '../src/parser/writer/index.js';
import { valuesEqual, type Value } from '../src/parser/values.js';
import { DecodeError } from '../src/parser/errors.js';
import { readChunks } from '../src/parser/chunk.js';
import { DEFAULT_LIMITS } from '../src/parser/limits.js';
import { analyzeDom } from '../src/project/report.js';
import { buildScene } from '../src/project/scene.js';
import { prng } from './support/corpus.js';
import { PLACES_DIR } from './support/paths.js';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// ---------------------------------------------------------------------------
// The expected tree

interface TreeRow { referent: number; className: string; name: string; parent: number | null; children: number[] }
interface Tree { rows: TreeRow[]; roots: number[] }

/** The tree by the previous decoder's rules, from the chunk view alone. Parents and children are referents. */
function treeFromChunks(bytes: Uint8Array): Tree {
  const view = decodeChunks(bytes);
  const rows: TreeRow[] = [];
  const byReferent = new Map<number, TreeRow>();
  const classOf = new Map<number, string>();
  const namesOf = new Map<number, Value[]>();
  const links: [number, number][] = [];
  for (const chunk of view.chunks as Record<string, Record<string, unknown>>[]) {
    if (chunk.Inst) classOf.set(chunk.Inst.type_id as number, chunk.Inst.type_name as string);
    if (chunk.Prop && chunk.Prop.prop_name === 'Name') namesOf.set(chunk.Prop.type_id as number, chunk.Prop.values as Value[]);
    if (chunk.Prnt) links.push(...(chunk.Prnt.links as [number, number][]));
  }
  for (const chunk of view.chunks as Record<string, Record<string, unknown>>[]) {
    if (!chunk.Inst) continue;
    const classId = chunk.Inst.type_id as number;
    (chunk.Inst.referents as number[]).forEach((referent, i) => {
      const name = namesOf.get(classId)?.[i];
      const row: TreeRow = { referent, className: classOf.get(classId)!, name: typeof name === 'string' ? name : '', parent: null, children: [] };
      rows.push(row);
      byReferent.set(referent, row);
    });
  }
  const linked = new Set<number>();
  const treeRoots: number[] = [];
  for (const [child, parent] of links) {
    if (!byReferent.has(child) || linked.has(child)) continue;
    linked.add(child);
    const parentRow = parent === -1 ? undefined : byReferent.get(parent);
    if (parentRow) {
      byReferent.get(child)!.parent = parent;
      parentRow.children.push(child);
    } else {
      treeRoots.push(child);
    }
  }
  for (const row of rows) if (!linked.has(row.referent)) treeRoots.push(row.referent);
  return { rows, roots: treeRoots };
}

/** The same tree read from the table (parents and children as referents). */
function treeOfDom(dom: Dom): Tree {
  const rows: TreeRow[] = [];
  for (let row = 0; row < dom.count; row++) {
    const parent = dom.parent(row);
    rows.push({
      referent: dom.referent(row),
      className: dom.className(row),
      name: dom.name(row),
      parent: parent === -1 ? null : dom.referent(parent),
      children: children(dom, row).map((child) => dom.referent(child)),
    });
  }
  return { rows, roots: roots(dom).map((root) => dom.referent(root)) };
}

/** Pre-order of a tree (an explicit stack: the trees here are deeper than the call stack). */
function preorderOf(tree: Tree): number[] {
  const byReferent = new Map(tree.rows.map((row) => [row.referent, row]));
  const out: number[] = [];
  const stack = [...tree.roots].reverse();
  while (stack.length) {
    const at = stack.pop()!;
    out.push(at);
    const kids = byReferent.get(at)!.children;
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]!);
  }
  return out;
}

/** The table holds `expected`, and its walks, lookups and names agree with it. */
function assertTable(dom: Dom, expected: Tree, where: string): void {
  const actual = treeOfDom(dom);
  assert.equal(dom.count, expected.rows.length, `${where}: instance count`);
  for (let row = 0; row < expected.rows.length; row++) {
    assert.deepEqual(actual.rows[row], expected.rows[row], `${where}: row ${row}`);
  }
  assert.deepEqual(actual.roots, expected.roots, `${where}: roots in order`);
  for (let row = 0; row < dom.count; row++) assert.equal(dom.rowOf(dom.referent(row)), row, `${where}: rowOf(referent of row ${row})`);
  const referents = new Set(expected.rows.map((row) => row.referent));
  for (const absent of [-1, 2147483647, -2147483648, 12345678, ...expected.rows.slice(0, 50).map((row) => row.referent + 1)]) {
    if (!referents.has(absent)) assert.equal(dom.rowOf(absent), -1, `${where}: rowOf(${absent}) of no instance`);
  }
  // Walks without recursion: the whole DOM, then each of a few subtrees, with and without skipping.
  const order = preorderOf(expected);
  assert.deepEqual([...preorder(dom)].map((row) => dom.referent(row)), order, `${where}: pre-order`);
  const byReferent = new Map(expected.rows.map((row) => [row.referent, row]));
  const subtree = (top: number): number[] => preorderOf({ rows: expected.rows, roots: [top] });
  for (const top of [order[0]!, order[Math.floor(order.length / 3)]!, order.at(-1)!]) {
    const row = dom.rowOf(top);
    assert.deepEqual([...preorder(dom, row)].map((r) => dom.referent(r)), subtree(top), `${where}: pre-order under ${top}`);
    // Skipping the subtree of top's first child leaves the rest of top's subtree.
    const first = dom.firstChild(row);
    if (first !== -1) {
      const skipped = new Set(subtree(dom.referent(first)));
      const walked: number[] = [row];
      for (let at = dom.next(row, row); at !== -1; at = at === first ? dom.after(at, row) : dom.next(at, row)) walked.push(at);
      assert.deepEqual(walked.map((r) => dom.referent(r)), subtree(top).filter((referent) => referent === dom.referent(first) || !skipped.has(referent)), `${where}: after() under ${top}`);
    }
  }
  // Full names follow the parents to the top.
  const deepest = order.reduce((best, referent) => (depthOf(byReferent, referent) > depthOf(byReferent, best) ? referent : best), order[0]!);
  const names: string[] = [];
  for (let at: number | null = deepest; at !== null; at = byReferent.get(at)!.parent) names.unshift(byReferent.get(at)!.name);
  assert.equal(fullName(dom, dom.rowOf(deepest)), names.join('.'), `${where}: full name of the deepest instance`);
}

const depthCache = new WeakMap<Map<number, TreeRow>, Map<number, number>>();
function depthOf(byReferent: Map<number, TreeRow>, referent: number): number {
  let cache = depthCache.get(byReferent);
  if (!cache) depthCache.set(byReferent, (cache = new Map()));
  const chain: number[] = [];
  let at: number | null = referent;
  let depth = 0;
  while (at !== null) {
    const known = cache.get(at);
    if (known !== undefined) { depth = known; break; }
    chain.push(at);
    at = byReferent.get(at)!.parent;
  }
  for (let i = chain.length - 1; i >= 0; i--) cache.set(chain[i]!, ++depth);
  return cache.get(referent)!;
}

// ---------------------------------------------------------------------------
// Places made with the writer

/** A random tree of `count` instances: parents are earlier rows, so classes by depth put children's INST chunks first. */
interface Shape { parents: number[]; referents: number[]; classOf: (row: number, depth: number) => string }

function buildPlace({ parents, referents, classOf }: Shape): Dom {
  const builder = new DomBuilder();
  const tables = new Map<string, { table: number; names: string[]; tags: Value[] }>();
  const depth: number[] = [];
  parents.forEach((parent, row) => {
    depth[row] = parent === -1 ? 0 : depth[parent]! + 1;
    const className = classOf(row, depth[row]);
    let entry = tables.get(className);
    if (!entry) {
      const names: string[] = [];
      const tags: Value[] = [];
      const columns = new Map<string, Column>([['Name', arrayColumn('String', names)], ['Tags', arrayColumn('String', tags)]]);
      entry = { table: builder.addTable(className, columns), names, tags };
      tables.set(className, entry);
    }
    entry.names.push(`i${row}`);
    entry.tags.push(`depth ${depth[row]}`);
    builder.add(entry.table, parent, referents[row]);
  });
  return builder.build();
}

/** Distinct referents: `sparse` spreads them over the whole i32 range (negative ones too). */
function referentsFor(count: number, kind: 'sparse' | 'shuffled' | 'gaps', seed: number): number[] {
  const random = prng(seed);
  if (kind === 'sparse') {
    const seen = new Set<number>([-1]);
    const out: number[] = [];
    while (out.length < count) {
      const referent = (Math.floor(random() * 2 ** 32) | 0);
      if (!seen.has(referent)) { seen.add(referent); out.push(referent); }
    }
    return out;
  }
  const out = Array.from({ length: count }, (_, i) => (kind === 'gaps' ? i * 2 + 1 : i));
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function randomParents(count: number, seed: number, wide = 0.3): number[] {
  const random = prng(seed);
  return Array.from({ length: count }, (_, row) => (row === 0 ? -1 : random() < 0.02 ? -1 : random() < wide ? 0 : Math.floor(random() * row)));
}

/** Deeper instances get class names that sort first, so the writer puts them in INST chunks before their parents'. */
const byDepth = (_row: number, depth: number) => `Level${String(999 - Math.min(depth, 999)).padStart(3, '0')}`;

describe('binary places made with the writer', () => {
  const cases: [string, Shape][] = [
    ['sparse i32 referents, random tree', { parents: randomParents(3000, 1), referents: referentsFor(3000, 'sparse', 2), classOf: byDepth }],
    ['shuffled 0..n-1 referents, random tree', { parents: randomParents(3000, 3), referents: referentsFor(3000, 'shuffled', 4), classOf: byDepth }],
    ['odd referents with gaps, random tree', { parents: randomParents(3000, 5), referents: referentsFor(3000, 'gaps', 6), classOf: byDepth }],
    ['a chain 30,000 deep, two classes alternating', {
      parents: Array.from({ length: 30_000 }, (_, row) => row - 1),
      referents: referentsFor(30_000, 'sparse', 7),
      classOf: (_row, depth) => (depth % 2 ? 'A' : 'B'),
    }],
    ['one parent with 20,000 children, listed after them', {
      parents: Array.from({ length: 20_001 }, (_, row) => (row === 0 ? -1 : 0)),
      referents: referentsFor(20_001, 'shuffled', 8),
      classOf: (row) => (row === 0 ? 'Workspace' : 'Part'),
    }],
  ];

  for (const [name, shape] of cases) {
    test(name, () => {
      const built = buildPlace(shape);
      for (const compress of [true, false]) {
        const bytes = encode(built, { compress });
        const dom = decode(bytes);
        const expected = treeFromChunks(bytes);
        assertTable(dom, expected, `${name} (${compress ? 'LZ4' : 'raw'})`);
        // The writer kept what was built: same referents, parents and child order.
        assert.deepEqual(
          [...treeOfDom(dom).rows].sort((a, b) => a.referent - b.referent),
          [...treeOfDom(built).rows].sort((a, b) => a.referent - b.referent),
          `${name}: decoded tree is the tree that was written`,
        );
        assert.deepEqual(dom.warnings, []);
      }
    });
  }

  test('instances really are listed before their parents in these files', () => {
    const bytes = encode(buildPlace(cases[0]![1]));
    const dom = decode(bytes);
    let before = 0;
    for (let row = 0; row < dom.count; row++) if (dom.parent(row) > row) before++;
    assert.ok(before > 1000, `${before} instances come before their parent`);
  });
});

// ---------------------------------------------------------------------------
// Files made chunk by chunk: link orders and faults the writer never produces

interface RawClass { className: string; referents: number[] }

/** A binary file of the given classes (INST and a Name PROP each) and PRNT links, in the given order. */
/** A binary place written chunk by chunk: INST and a Name PROP per class, what `more` frames (other PROP, SSTR...), PRNT and END. */
function rawPlace(
  classes: RawClass[], links: [child: number, parent: number][], compress = true, more?: (frame: (name: string, w: ByteWriter) => void) => void,
): Uint8Array {
  const parts: Uint8Array[] = [fileHeader(classes.length, classes.reduce((sum, { referents }) => sum + referents.length, 0))];
  const frame = (name: string, w: ByteWriter) => parts.push(...frameChunk(name, w.finish(), compress));
  classes.forEach(({ className, referents }, classId) => {
    const inst = new ByteWriter();
    inst.u32(classId);
    inst.text(className);
    inst.u8(0);
    inst.u32(referents.length);
    writeReferents(inst, referents);
    frame('INST', inst);
  });
  classes.forEach(({ referents }, classId) => {
    const prop = new ByteWriter();
    prop.u32(classId);
    prop.text('Name');
    prop.u8(0x01);
    for (const referent of referents) prop.text(`n${referent}`);
    frame('PROP', prop);
  });
  more?.(frame);
  const prnt = new ByteWriter();
  prnt.u8(0);
  prnt.u32(links.length);
  writeReferents(prnt, links.map(([child]) => child));
  writeReferents(prnt, links.map(([, parent]) => parent));
  frame('PRNT', prnt);
  parts.push(...frameChunk('END', new TextEncoder().encode('</roblox>'), false));
  return concat(parts);
}

describe('binary files made chunk by chunk', () => {
  test('links in random order, children before parents, unknown and repeated links', () => {
    const random = prng(11);
    const referents = referentsFor(4000, 'sparse', 12);
    const classes: RawClass[] = [
      { className: 'Leaf', referents: referents.slice(0, 2500) },
      { className: 'Branch', referents: referents.slice(2500, 3900) },
      { className: 'Trunk', referents: referents.slice(3900) },
    ];
    const links: [number, number][] = [];
    // Leaves under branches, branches under trunks, trunks roots; every link in random order.
    for (const leaf of classes[0]!.referents) links.push([leaf, classes[1]!.referents[Math.floor(random() * 1400)]!]);
    for (const branch of classes[1]!.referents) links.push([branch, classes[2]!.referents[Math.floor(random() * 100)]!]);
    for (const trunk of classes[2]!.referents.slice(0, 90)) links.push([trunk, -1]); // ten trunks are in no link
    for (let i = links.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [links[i], links[j]] = [links[j]!, links[i]!];
    }
    links.push([classes[0]!.referents[0]!, classes[2]!.referents[0]!]); // linked twice: the first link wins
    links.push([classes[0]!.referents[1]!, 424242]); // already linked: ignored too
    links.push([777777, classes[2]!.referents[0]!]); // no such child
    links.unshift([classes[1]!.referents[5]!, 999999]); // an unknown parent, before its real link: kept as a root
    for (const compress of [true, false]) {
      const bytes = rawPlace(classes, links, compress);
      const dom = decode(bytes);
      assertTable(dom, treeFromChunks(bytes), `random links (${compress ? 'LZ4' : 'raw'})`);
      assert.equal(dom.parent(dom.rowOf(classes[1]!.referents[5]!)), -1, 'the child of an unknown parent is a root');
      const warnings = dom.warnings.join('\n');
      assert.match(warnings, /PRNT names an unknown parent, child kept as a root/);
      assert.match(warnings, /PRNT links a child twice, the first link wins: 3 times/);
      assert.match(warnings, /PRNT names an unknown child: referent 777777/);
    }
  });

  test('dense referents with holes use the same lookup as sparse ones', () => {
    const classes: RawClass[] = [{ className: 'Part', referents: [9, 3, 7] }, { className: 'Model', referents: [1, 5] }];
    const bytes = rawPlace(classes, [[9, 1], [3, 1], [7, 5], [1, -1], [5, -1]]);
    const dom = decode(bytes);
    assertTable(dom, treeFromChunks(bytes), 'holes');
    assert.deepEqual(children(dom, dom.rowOf(1)).map((row) => dom.name(row)), ['n9', 'n3']);
    for (const absent of [0, 2, 4, 6, 8, 10, -1]) assert.equal(dom.rowOf(absent), -1);
  });

  test('a referent used twice is one DecodeError naming the INST chunk', () => {
    for (const classes of [
      [{ className: 'A', referents: [1, 2] }, { className: 'B', referents: [3, 2] }],
      [{ className: 'A', referents: [5, -7, 5] }],
      [{ className: 'A', referents: [2_000_000_000] }, { className: 'B', referents: [-5, 2_000_000_000] }],
    ]) {
      const bytes = rawPlace(classes, []);
      assert.throws(() => decode(bytes), (error: unknown) => {
        assert.ok(error instanceof DecodeError);
        assert.match(error.message, /is used by two instances/);
        assert.equal(error.chunk, 'INST');
        assert.ok(typeof error.offset === 'number' && error.offset >= 32);
        return true;
      });
    }
  });

  test('a SharedString index past the SSTR table is one DecodeError naming the PROP chunk and property', () => {
    // One UnionOperation whose PhysicalConfigData names SSTR entry `index`, in a file with `entries` of them (none: no SSTR chunk).
    const file = (index: number, entries: number): Uint8Array => rawPlace([{ className: 'UnionOperation', referents: [1] }], [[1, -1]], false, (frame) => {
      const prop = new ByteWriter();
      prop.u32(0);
      prop.text('PhysicalConfigData');
      prop.u8(0x1c);
      prop.u8(index >>> 24); prop.u8((index >>> 16) & 255); prop.u8((index >>> 8) & 255); prop.u8(index & 255); // one big-endian u32
      frame('PROP', prop);
      if (entries === 0) return;
      const sstr = new ByteWriter();
      sstr.u32(0);
      sstr.u32(entries);
      for (let i = 0; i < entries; i++) {
        for (let k = 0; k < 16; k++) sstr.u8(0); // the entry's MD5, unused
        sstr.u32(1);
        sstr.u8(i);
      }
      frame('SSTR', sstr);
    });
    assert.deepEqual(getValue(decode(file(1, 2)), 0, 'PhysicalConfigData'), 1);
    for (const [index, entries] of [[2, 2], [0, 0], [4294967295, 1]] as const) {
      assert.throws(() => decode(file(index, entries)), (error: unknown) => {
        assert.ok(error instanceof DecodeError, String(error));
        assert.match(error.message, new RegExp(`SharedString index ${index} is outside the file's ${entries} SharedStrings`));
        assert.equal(error.chunk, 'PROP');
        assert.equal(error.property, 'UnionOperation.PhysicalConfigData');
        return true;
      });
    }
  });

  test('a parent cycle deep inside a large tree is an error', () => {
    const referents = Array.from({ length: 50_000 }, (_, i) => i * 3);
    const links: [number, number][] = referents.map((referent, i) => [referent, i === 0 ? -1 : referents[i - 1]!]);
    links[40_000] = [referents[40_000]!, referents[45_000]!]; // 40,000..45,000 now hang from their own descendant
    assert.throws(() => decode(rawPlace([{ className: 'Folder', referents }], links)), (error: unknown) =>
      error instanceof DecodeError && /cycle/.test(error.message) && error.chunk === 'PRNT');
  });
});

// ---------------------------------------------------------------------------
// XML text

interface XmlNode { className: string; name: string; referent: string | null; children: XmlNode[]; refTo: XmlNode | null; extra: boolean }

/** A random Item tree: a deep chain, a wide fan and a random part; string referents, some absent. */
function xmlTree(seed: number): XmlNode[] {
  const random = prng(seed);
  const nodes: XmlNode[] = [];
  const make = (className: string): XmlNode => {
    const node: XmlNode = {
      className, name: `x${nodes.length}`, referent: random() < 0.1 ? null : `RBX${Math.floor(random() * 1e9).toString(36)}_${nodes.length}`,
      children: [], refTo: null, extra: random() < 0.3,
    };
    nodes.push(node);
    return node;
  };
  const top = [make('Workspace'), make('ReplicatedStorage'), make('Folder')];
  let chain = top[0]!;
  for (let i = 0; i < 1500; i++) { const next = make(i % 2 ? 'Model' : 'Folder'); chain.children.push(next); chain = next; }
  for (let i = 0; i < 3000; i++) top[1]!.children.push(make('Part'));
  const pool = [top[2]!];
  for (let i = 0; i < 2000; i++) {
    const node = make(['Part', 'Model', 'ObjectValue'][i % 3]!);
    pool[Math.floor(random() * pool.length)]!.children.push(node);
    pool.push(node);
  }
  for (const node of nodes) if (node.className === 'ObjectValue' || random() < 0.05) node.refTo = random() < 0.2 ? null : nodes[Math.floor(random() * nodes.length)]!;
  return top;
}

function xmlText(top: XmlNode[]): string {
  const out: string[] = ['<roblox version="4">'];
  // Items nest 1,500 deep: written with an explicit stack.
  const stack: (XmlNode | 'close')[] = [...top].reverse();
  while (stack.length) {
    const node = stack.pop()!;
    if (node === 'close') { out.push('</Item>'); continue; }
    out.push(`<Item class="${node.className}"${node.referent === null ? '' : ` referent="${node.referent}"`}><Properties>`);
    // Items of one class carry different property lists, in different orders.
    if (node.extra) out.push(`<int name="Extra">${node.name.length}</int>`);
    out.push(`<string name="Name">${node.name}</string>`);
    if (node.refTo !== undefined && (node.className === 'ObjectValue' || node.refTo)) {
      out.push(`<Ref name="Value">${node.refTo === null || node.refTo.referent === null ? 'null' : node.refTo.referent}</Ref>`);
    }
    out.push('</Properties>');
    stack.push('close');
    for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
  }
  out.push('</roblox>');
  return out.join('');
}

describe('XML text', () => {
  const top = xmlTree(21);
  const dom = decodeXml(new TextEncoder().encode(xmlText(top)));

  test('rows are Items in document order; parents, children, roots and names as written', () => {
    const order: XmlNode[] = [];
    const stack = [...top].reverse();
    while (stack.length) {
      const node = stack.pop()!;
      order.push(node);
      for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
    }
    const rowOf = new Map(order.map((node, row) => [node, row]));
    const parentOf = new Map<XmlNode, XmlNode>();
    for (const node of order) for (const child of node.children) parentOf.set(child, node);
    const expected: Tree = {
      rows: order.map((node, row) => ({
        referent: row, className: node.className, name: node.name,
        parent: parentOf.has(node) ? rowOf.get(parentOf.get(node)!)! : null,
        children: node.children.map((child) => rowOf.get(child)!),
      })),
      roots: top.map((node) => rowOf.get(node)!),
    };
    assertTable(dom, expected, 'XML');
    assert.deepEqual(dom.xmlReferents, order.map((node) => node.referent ?? ''));
    assert.equal(findService(dom, 'ReplicatedStorage'), rowOf.get(top[1]!));
    // Ref values are rows, forward and backward; "null" and Items without a referent read as none.
    for (const node of order) {
      const value = getValue(dom, rowOf.get(node)!, 'Value');
      if (node.refTo === null) {
        if (node.className === 'ObjectValue') assert.equal(value, -1);
      } else {
        assert.equal(value, node.refTo.referent === null ? -1 : rowOf.get(node.refTo), `${node.name}.Value`);
      }
    }
  });

  test('each Item keeps exactly its own properties, in file order', () => {
    for (let row = 0; row < dom.count; row++) {
      const names = dom.instance(row).propertyNames();
      const extra = getValue(dom, row, 'Extra');
      assert.equal(names[0], extra === undefined ? 'Name' : 'Extra', `row ${row}`);
      if (extra !== undefined) assert.equal(extra, dom.name(row).length);
    }
    const shapes = new Set(dom.tables.map((table) => `${table.className}:${[...table.columns.keys()].join(',')}`));
    assert.equal(shapes.size, dom.tables.length, 'one table per class and property list');
    assert.ok(dom.tables.filter((table) => table.className === 'Part').length > 1, 'Parts of two property lists');
  });
});

// ---------------------------------------------------------------------------
// The dump, written instance by instance

describe('dump', () => {
  test('the streamed chunks are bounded and read back as the DOM: ids, parents in order, names, properties', () => {
    const dom = decode(encode(buildPlace({ parents: randomParents(2000, 31), referents: referentsFor(2000, 'sparse', 32), classOf: byDepth })));
    const chunks = [...dumpJson(dom, 4096)];
    assert.ok(chunks.length > 10, `${chunks.length} chunks`);
    for (const chunk of chunks.slice(0, -1)) assert.ok(chunk.length <= 4096, `chunk of ${chunk.length}`);
    const text = Buffer.concat(chunks).toString('utf8');
    assert.ok(text.endsWith('}\n'));
    const parsed = JSON.parse(text) as EncodedTree & { format: string };
    assert.equal(parsed.format, 'binary');
    const seen = new Set<string>();
    const read = [...readInstances(parsed)];
    assert.equal(read.length, dom.count);
    for (const instance of read) {
      const row = Number(instance.id);
      if (instance.parent !== null) assert.ok(seen.has(instance.parent), `parent of ${instance.id} comes first`);
      seen.add(instance.id);
      assert.equal(instance.parent, dom.parent(row) === -1 ? null : String(dom.parent(row)));
      assert.equal(instance.name, dom.name(row));
      assert.deepEqual([...instance.properties.keys()], propertyNames(dom, row));
      assert.equal(instance.properties.get('Tags')?.value, getValue(dom, row, 'Tags'));
    }
  });
});

// ---------------------------------------------------------------------------
// Values are read after decoding: whatever decodes must read whole

describe('flipped bytes inside property data', () => {
  /** The file again with every chunk stored raw and `flips` random bytes of its PROP chunks' data changed. */
  function flipped(bytes: Uint8Array, random: () => number, flips: number): Uint8Array {
    const chunks = [...readChunks(bytes, DEFAULT_LIMITS)].map((chunk) => ({ name: chunk.name, data: Uint8Array.from(chunk.data) }));
    const props = chunks.filter((chunk) => chunk.name === 'PROP' && chunk.data.length > 0);
    for (let i = 0; i < flips; i++) {
      const chunk = props[Math.floor(random() * props.length)]!;
      chunk.data[Math.floor(random() * chunk.data.length)] = Math.floor(random() * 256);
    }
    return concat([bytes.subarray(0, 32), ...chunks.flatMap(({ name, data }) => frameChunk(name, data, false))]);
  }

  for (const name of ['rocket-arena-2006.rbxl', 'slime-defense.rbxl', 'roblox-statemachine-demo.rbxl']) {
    test(`${name}: a DecodeError, or a DOM whose every value, report and scene read`, { timeout: 120_000 }, () => {
      const original = readFileSync(join(PLACES_DIR, name));
      const random = prng(0xbeef ^ original.length);
      let read = 0;
      for (let round = 0; round < 60; round++) {
        const bytes = flipped(original, random, 1 + Math.floor(random() * 4));
        let dom: Dom;
        try {
          dom = decode(bytes);
        } catch (error) {
          assert.ok(error instanceof DecodeError, `${name} round ${round}: ${String(error)}`);
          continue;
        }
        read++;
        for (const { columns } of dom.tables) for (const column of columns.values()) for (let row = 0; row < column.length; row++) column.get(row);
        analyzeDom(dom, { fileName: name, fileSize: bytes.length });
        buildScene(dom);
      }
      assert.ok(read >= 10, `only ${read} of 60 damaged files decoded`);
    });
  }
});

describe('every column is checked when the file is decoded, not when it is read', () => {
  /**
   * Non-empty PROP chunks of a file, up to six of each property type: where the
   * column data starts (after class id, name and type) and the type id.
   */
  function propChunks(bytes: Uint8Array): { index: number; name: string; typeId: number; dataAt: number; data: Uint8Array }[] {
    const perType = new Map<number, number>();
    return [...readChunks(bytes, DEFAULT_LIMITS)].flatMap((chunk, index) => {
      if (chunk.name !== 'PROP') return [];
      const view = new DataView(chunk.data.buffer, chunk.data.byteOffset, chunk.data.byteLength);
      const nameLength = view.getUint32(4, true);
      const name = Buffer.from(chunk.data.subarray(8, 8 + nameLength)).toString();
      const typeId = chunk.data[8 + nameLength]!;
      const dataAt = 9 + nameLength;
      if (chunk.data.length === dataAt || (perType.get(typeId) ?? 0) >= 6) return [];
      perType.set(typeId, (perType.get(typeId) ?? 0) + 1);
      return [{ index, name, typeId, dataAt, data: chunk.data }];
    });
  }

  /** The file with chunk `index` replaced by `data`, every chunk stored raw. */
  function withChunk(bytes: Uint8Array, index: number, data: Uint8Array): Uint8Array {
    const chunks = [...readChunks(bytes, DEFAULT_LIMITS)];
    return concat([bytes.subarray(0, 32), ...chunks.flatMap((chunk, i) => frameChunk(chunk.name, i === index ? data : chunk.data, false))]);
  }

  /** Asserts that decoding fails with a DecodeError at the property's PROP chunk, and returns it. */
  const assertDecodeError = (bytes: Uint8Array, what: string, property: string): DecodeError => {
    try {
      decode(bytes);
    } catch (error) {
      assert.ok(error instanceof DecodeError, `${what}: ${String(error)}`);
      assert.equal(error.chunk, 'PROP', what);
      assert.ok(error.property?.endsWith(`.${property}`), `${what}: property ${error.property}`);
      return error;
    }
    assert.fail(`${what}: decoded`);
  };

  /** The cap each damage below passes (undefined: the damage makes the file malformed). */
  const LIMIT_OF_DAMAGE: Record<number, string | undefined> = { 0x01: 'maxStringBytes', 0x15: 'maxSequenceLength', 0x16: 'maxSequenceLength' };

  for (const name of ['rocket-arena-2006.rbxl', 'slime-defense.rbxl', 'roblox-statemachine-demo.rbxl', 'grow-a-slime.rbxl']) {
    test(`${name}: a PROP chunk of each property type one byte short fails at decode`, () => {
      const bytes = readFileSync(join(PLACES_DIR, name));
      for (const prop of propChunks(bytes)) {
        const error = assertDecodeError(withChunk(bytes, prop.index, prop.data.subarray(0, prop.data.length - 1)), `${prop.name} cut by one byte`, prop.name);
        assert.equal(error.limit, undefined, `${prop.name} cut by one byte is malformed, not past a cap`);
      }
    });
  }

  test('bad rotation ids, keypoint counts, string lengths and physical flags fail at decode', () => {
    const corrupt: Record<number, (data: Uint8Array, at: number) => void> = {
      0x01: (data, at) => new DataView(data.buffer, data.byteOffset).setUint32(at, 0x7fffffff, true), // String length
      0x10: (data, at) => { data[at] = 0xff; }, // CFrame rotation id
      0x1e: (data, at) => { data[at + 1] = 0x30; }, // OptionalCFrame rotation id
      0x15: (data, at) => new DataView(data.buffer, data.byteOffset).setUint32(at, 0xffffffff, true), // NumberSequence keypoints
      0x16: (data, at) => new DataView(data.buffer, data.byteOffset).setUint32(at, 0x0fffffff, true), // ColorSequence keypoints
      0x19: (data) => { data[data.length - 1] = 3; }, // PhysicalProperties: a last row claiming 24 more bytes
    };
    const seen = new Set<number>();
    for (const name of ['slime-defense.rbxl', 'grow-a-slime.rbxl', 'roblox-statemachine-demo.rbxl']) {
      const bytes = readFileSync(join(PLACES_DIR, name));
      for (const prop of propChunks(bytes)) {
        const damage = corrupt[prop.typeId];
        if (!damage) continue;
        // The last PhysicalProperties row must be a default one for its flag byte to be the chunk's last byte.
        if (prop.typeId === 0x19 && prop.data[prop.data.length - 1] !== 0) continue;
        const data = Uint8Array.from(prop.data);
        damage(data, prop.dataAt);
        const what = `${name} ${prop.name} (type 0x${prop.typeId.toString(16)})`;
        const error = assertDecodeError(withChunk(bytes, prop.index, data), what, prop.name);
        // A length or count past a cap names it (the service answers 413); a bad value does not (422).
        assert.equal(error.limit, LIMIT_OF_DAMAGE[prop.typeId], what);
        seen.add(prop.typeId);
      }
    }
    assert.deepEqual([...seen].sort((a, b) => a - b), Object.keys(corrupt).map(Number).sort((a, b) => a - b), 'every damage was tried');
  });
});

// ---------------------------------------------------------------------------
// Column.differing over byte planes

test('differing over byte planes sets exactly the rows whose bytes differ, at any length and offset', () => {
  const random = prng(7);
  for (const width of [1, 4, 12, 16]) {
    for (const length of [0, 1, 7, 8, 9, 15, 16, 17, 31, 40, 1003]) {
      // Planes placed after some bytes, with more after them: the pass must stay inside its column.
      const at = 5;
      const data = new Uint8Array(at + width * length + 9).fill(0xee);
      // Two byte values only, so most rows equal the reference in most planes.
      for (let i = at; i < at + width * length; i++) data[i] = random() < 0.8 ? 1 : 2;
      const rowBytes = (row: number): number[] => Array.from({ length: width }, (_, k) => data[at + k * length + row]!);
      const column = new ViewColumn('Int32', length, data, at, at + width * length, () => 0, diffPlanes(width));
      for (const reference of length ? [0, length >> 1, length - 1] : []) {
        const bits = column.differing(reference);
        assert.equal(bits.length, (length + 7) >> 3);
        const expected = rowBytes(reference).join();
        for (let row = 0; row < bits.length * 8; row++) {
          const set = (bits[row >> 3]! >> (row & 7)) & 1;
          const differs = row < length && rowBytes(row).join() !== expected ? 1 : 0;
          assert.equal(set, differs, `width ${width}, ${length} rows, reference ${reference}, row ${row}`);
        }
      }
    }
  }
});

test('differing on the String and CFrame columns of real places sets exactly the rows whose value differs', () => {
  const types = new Set<string>();
  for (const name of readdirSync(PLACES_DIR).filter((file) => /\.rbx[lm]$/.test(file))) {
    const dom = decode(readFileSync(join(PLACES_DIR, name)));
    for (const { className, columns } of dom.tables) {
      for (const [property, column] of columns) {
        if (!['String', 'CFrame', 'OptionalCFrame'].includes(column.type) || !column.differing || column.length === 0) continue;
        types.add(column.type);
        for (const reference of [0, column.length >> 1, column.length - 1]) {
          const bits: Uint8Array = column.differing(reference);
          const expected = column.get(reference);
          for (let row = 0; row < column.length; row++) {
            const set: number = (bits[row >> 3]! >> (row & 7)) & 1;
            assert.equal(set, valuesEqual(column.get(row), expected) ? 0 : 1, `${name} ${className}.${property} row ${row}, reference ${reference}`);
          }
        }
      }
    }
  }
  assert.deepEqual([...types].sort(), ['CFrame', 'OptionalCFrame', 'String']);
});
