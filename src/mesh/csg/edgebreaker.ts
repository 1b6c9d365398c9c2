/**
 * CSGPHS 8's hull connectivity: Edgebreaker CLERS codes, decoded by "wrap and zip"
 * (Rossignac). Each hull starts from one triangle with vertices 0, 1, 2 and grows a
 * triangle through a gate edge per symbol: C brings a new vertex; L, R, E and S
 * reuse one that is found later by zipping free edges shut around a vertex; S also
 * opens a second branch, E closes one. Zipping identifies vertices, kept here in a
 * union-find so no fan walk has to rewrite corner labels; vertices are numbered in
 * the order C symbols create them, which is the order the hull's points are stored.
 *
 * Corners follow the corner-table convention: face f owns corners 3f, 3f+1, 3f+2;
 * the edge "of" a corner is the one opposite it, running from the next corner's
 * vertex to the previous one's; glued edges are stored as twins.
 *
 * Symbols are read from u32 words (little-endian), most significant bit first; the
 * last word holds only the stream's remaining bits, in its low end. C is "0", the
 * others "1" and two bits: S 00, L 01, R 10, E 11.
 */

export class EdgebreakerError extends Error {}

const FREE = -1; // a border edge no zip has reached
const ZIP = -2; // an edge waiting to be zipped to the free edge next to it
const OPEN = -3; // a gate not yet crossed

const next = (c: number): number => (c % 3 === 2 ? c - 2 : c + 1);
const prev = (c: number): number => (c % 3 === 0 ? c + 2 : c - 1);

export interface DecodedHull {
  /** First face (in the whole stream) and face count. */
  firstFace: number;
  faceCount: number;
  vertexCount: number;
}

export class ClersBits {
  private pos = 0;
  /** The word holding bit `pos`, shifted so its next bit is bit 31. */
  private cache = 0;
  private readonly words: Uint32Array;

  constructor(bytes: DataView, private readonly bitCount: number) {
    if (bytes.byteLength % 4 !== 0) throw new EdgebreakerError(`the symbol buffer is ${bytes.byteLength} bytes, not whole u32 words`);
    if (bytes.byteLength * 8 < bitCount) throw new EdgebreakerError(`${bitCount} symbol bits do not fit ${bytes.byteLength} bytes`);
    this.words = new Uint32Array(bytes.byteLength / 4);
    for (let i = 0; i < this.words.length; i++) this.words[i] = bytes.getUint32(i * 4, true);
  }

  get remaining(): number {
    return this.bitCount - this.pos;
  }

  bit(): number {
    const i = this.pos;
    if (i >= this.bitCount) throw new EdgebreakerError(`the symbols end after ${this.bitCount} bits, before the hulls close`);
    if ((i & 31) === 0) {
      // The last word holds only the remaining bits, in its low end: move them to the top.
      const tail = this.bitCount - i;
      this.cache = tail < 32 ? this.words[i >>> 5]! << (32 - tail) : this.words[i >>> 5]!;
    }
    this.pos = i + 1;
    const bit = this.cache >>> 31;
    this.cache <<= 1;
    return bit;
  }
}

/**
 * Decodes `hullCount` hulls holding `faceCount` faces in all into hull-local
 * triangle indices. Throws EdgebreakerError when the codes do not describe closed
 * hulls of exactly that many faces; every walk is bounded, so it cannot hang.
 */
export function decodeEdgebreakerHulls(bits: ClersBits, hullCount: number, faceCount: number): { indices: Uint32Array; hulls: DecodedHull[] } {
  const state = new WrapAndZip(bits, hullCount, faceCount);
  const hulls: DecodedHull[] = [];
  for (let h = 0; h < hullCount; h++) hulls.push(state.hull(h));
  if (state.faces !== faceCount) throw new EdgebreakerError(`the symbols describe ${state.faces} faces, the header ${faceCount}`);
  return { indices: state.indices, hulls };
}

/** The decoder's state: corner twins and labels, the union-find over labels, counters. */
class WrapAndZip {
  readonly twin: Int32Array;
  readonly label: Int32Array;
  /** Union-find over vertex labels: each face adds at most one label, each hull three. */
  readonly parent: Int32Array;
  /** The vertex a label stands for, or -1 for one a zip must resolve. */
  readonly vertexOf: Int32Array;
  readonly indices: Uint32Array;
  labels = 0;
  faces = 0;
  /** Every rotation around a vertex costs a step; valid hulls need a few per face. */
  steps = 0;
  readonly stepBudget: number;

  constructor(private readonly bits: ClersBits, hullCount: number, private readonly faceCount: number) {
    const corners = faceCount * 3;
    this.twin = new Int32Array(corners);
    this.label = new Int32Array(corners);
    this.indices = new Uint32Array(corners);
    this.parent = new Int32Array(faceCount + 3 * hullCount + 3);
    this.vertexOf = new Int32Array(faceCount + 3 * hullCount + 3);
    this.stepBudget = 64 * corners + 1024;
  }

  newLabel(vertex: number): number {
    const label = this.labels++;
    this.parent[label] = label;
    this.vertexOf[label] = vertex;
    return label;
  }

  find(a: number): number {
    const parent = this.parent;
    let root = a;
    while (parent[root] !== root) root = parent[root]!;
    while (parent[a] !== root) { const up = parent[a]!; parent[a] = root; a = up; }
    return root;
  }

  /** Identifies two vertices; a label that stands for a vertex wins over one that does not. */
  join(a: number, b: number): void {
    const ra = this.find(a), rb = this.find(b);
    if (ra === rb) return;
    const va = this.vertexOf[ra]!, vb = this.vertexOf[rb]!;
    if (va >= 0 && vb >= 0) throw new EdgebreakerError('zipping joins two distinct vertices');
    if (va >= 0) this.parent[rb] = ra;
    else this.parent[ra] = rb;
  }

  newFace(): number {
    if (this.faces >= this.faceCount) throw new EdgebreakerError(`the symbols describe more than the ${this.faceCount} faces declared`);
    return 3 * this.faces++;
  }

  step(): void {
    if (++this.steps > this.stepBudget) throw new EdgebreakerError('the symbols do not describe closed hulls (zipping does not finish)');
  }

  /** Zips `e`, and the edges it leads to, to the free edges beside them. */
  zip(e: number): void {
    const twin = this.twin, label = this.label;
    while (twin[e] === ZIP) {
      // Rotate around the vertex at prev(e) to the first edge not glued yet.
      let c = next(e);
      while (twin[c]! >= 0) { this.step(); c = next(twin[c]!); }
      if (twin[c] !== FREE) return;
      twin[e] = c;
      twin[c] = e;
      // The two edges share the vertex at prev(e) = next(c); e's other end is c's other end.
      this.join(label[next(e)]!, label[prev(c)]!);
      // Carry on around the vertex the two edges now share, past glued edges.
      e = prev(e);
      while (twin[e]! >= 0 && e !== c) { this.step(); e = prev(twin[e]!); }
    }
  }

  /** Decodes hull `h`: grows it from its first triangle until every branch has closed, then resolves its corners. */
  hull(h: number): DecodedHull {
    const { twin, label, bits } = this;
    const firstFace = this.faces;
    const base = this.newFace();
    label[base] = this.newLabel(0); label[base + 1] = this.newLabel(1); label[base + 2] = this.newLabel(2);
    twin[base] = FREE; twin[base + 1] = OPEN; twin[base + 2] = FREE;
    let vertices = 3;
    const pending: number[] = [];
    let gate = base + 1;
    for (;;) {
      if (twin[gate] !== OPEN) throw new EdgebreakerError('a gate edge was glued before it was crossed');
      const t = this.newFace(), l = t + 1, r = t + 2;
      twin[t] = gate; twin[gate] = t;
      twin[l] = OPEN; twin[r] = OPEN;
      label[l] = label[prev(gate)]!;
      label[r] = label[next(gate)]!;
      if (bits.bit() === 0) { // C
        label[t] = this.newLabel(vertices++);
        twin[r] = FREE;
        gate = l;
        continue;
      }
      label[t] = this.newLabel(-1);
      const code = (bits.bit() << 1) | bits.bit();
      if (code === 0) { // S: the l branch now, the r branch after it closes
        pending.push(r);
        gate = l;
      } else if (code === 1) { // L
        twin[l] = ZIP;
        gate = r;
      } else if (code === 2) { // R
        twin[r] = ZIP;
        this.zip(r);
        gate = l;
      } else { // E
        twin[l] = ZIP;
        twin[r] = ZIP;
        this.zip(r);
        const resume = pending.pop();
        if (resume === undefined) break;
        gate = resume;
      }
    }
    for (let c = firstFace * 3; c < this.faces * 3; c++) {
      const vertex = this.vertexOf[this.find(label[c]!)]!;
      if (vertex < 0) throw new EdgebreakerError(`hull ${h} leaves a vertex that no zip resolves`);
      this.indices[c] = vertex;
    }
    return { firstFace, faceCount: this.faces - firstFace, vertexCount: vertices };
  }
}
