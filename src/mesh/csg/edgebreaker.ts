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
  constructor(private readonly words: DataView, private readonly bitCount: number) {
    if (words.byteLength % 4 !== 0) throw new EdgebreakerError(`the symbol buffer is ${words.byteLength} bytes, not whole u32 words`);
    if (words.byteLength * 8 < bitCount) throw new EdgebreakerError(`${bitCount} symbol bits do not fit ${words.byteLength} bytes`);
  }

  get remaining(): number {
    return this.bitCount - this.pos;
  }

  bit(): number {
    if (this.pos >= this.bitCount) throw new EdgebreakerError(`the symbols end after ${this.bitCount} bits, before the hulls close`);
    const i = this.pos++;
    const word = i >>> 5;
    const tail = this.bitCount - word * 32;
    const width = tail < 32 ? tail : 32;
    return (this.words.getUint32(word * 4, true) >>> (width - 1 - (i & 31))) & 1;
  }
}

/**
 * Decodes `hullCount` hulls holding `faceCount` faces in all into hull-local
 * triangle indices. Throws EdgebreakerError when the codes do not describe closed
 * hulls of exactly that many faces; every walk is bounded, so it cannot hang.
 */
export function decodeEdgebreakerHulls(bits: ClersBits, hullCount: number, faceCount: number): { indices: Uint32Array; hulls: DecodedHull[] } {
  const corners = faceCount * 3;
  const twin = new Int32Array(corners);
  const label = new Int32Array(corners);
  // Union-find over vertex labels: each face adds at most one label, each hull three.
  const labelCapacity = faceCount + 3 * hullCount + 3;
  const parent = new Int32Array(labelCapacity);
  const vertexOf = new Int32Array(labelCapacity);
  let labels = 0;
  let faces = 0;
  // Every rotation around a vertex costs a step; valid hulls need a few per face.
  let steps = 0;
  const stepBudget = 64 * corners + 1024;
  const indices = new Uint32Array(corners);
  const hulls: DecodedHull[] = [];

  const newLabel = (vertex: number): number => {
    parent[labels] = labels;
    vertexOf[labels] = vertex;
    return labels++;
  };
  const find = (a: number): number => {
    let root = a;
    while (parent[root] !== root) root = parent[root]!;
    while (parent[a] !== root) { const up = parent[a]!; parent[a] = root; a = up; }
    return root;
  };
  const join = (a: number, b: number): void => {
    const ra = find(a), rb = find(b);
    if (ra === rb) return;
    if (vertexOf[ra]! >= 0 && vertexOf[rb]! >= 0) throw new EdgebreakerError('zipping joins two distinct vertices');
    if (vertexOf[ra]! >= 0) parent[rb] = ra;
    else parent[ra] = rb;
  };
  const newFace = (): number => {
    if (faces >= faceCount) throw new EdgebreakerError(`the symbols describe more than the ${faceCount} faces declared`);
    return 3 * faces++;
  };
  const step = (): void => {
    if (++steps > stepBudget) throw new EdgebreakerError('the symbols do not describe closed hulls (zipping does not finish)');
  };

  /** Zips `e`, and the edges it leads to, to the free edges beside them. */
  const zip = (start: number): void => {
    let e = start;
    while (twin[e] === ZIP) {
      // Rotate around the vertex at prev(e) to the first edge not glued yet.
      let c = next(e);
      while (twin[c]! >= 0) { step(); c = next(twin[c]!); }
      if (twin[c] !== FREE) return;
      twin[e] = c;
      twin[c] = e;
      join(label[next(e)]!, label[prev(c)]!);
      join(label[prev(e)]!, label[next(c)]!);
      // Carry on around the vertex the two edges now share, past glued edges.
      e = prev(e);
      while (twin[e]! >= 0 && e !== c) { step(); e = prev(twin[e]!); }
    }
  };

  for (let h = 0; h < hullCount; h++) {
    const firstFace = faces;
    const base = newFace();
    const v0 = newLabel(0), v1 = newLabel(1), v2 = newLabel(2);
    label[base] = v0; label[base + 1] = v1; label[base + 2] = v2;
    twin[base] = FREE; twin[base + 1] = OPEN; twin[base + 2] = FREE;
    let vertices = 3;
    const pending: number[] = [];
    let gate = base + 1;
    for (;;) {
      if (twin[gate] !== OPEN) throw new EdgebreakerError('a gate edge was glued before it was crossed');
      const t = newFace(), l = t + 1, r = t + 2;
      twin[t] = gate; twin[gate] = t;
      twin[l] = OPEN; twin[r] = OPEN;
      label[l] = label[prev(gate)]!;
      label[r] = label[next(gate)]!;
      if (bits.bit() === 0) { // C
        label[t] = newLabel(vertices++);
        twin[r] = FREE;
        gate = l;
        continue;
      }
      label[t] = newLabel(-1);
      const code = (bits.bit() << 1) | bits.bit();
      if (code === 0) { // S: the l branch now, the r branch after it closes
        pending.push(r);
        gate = l;
      } else if (code === 1) { // L
        twin[l] = ZIP;
        gate = r;
      } else if (code === 2) { // R
        twin[r] = ZIP;
        zip(r);
        gate = l;
      } else { // E
        twin[l] = ZIP;
        twin[r] = ZIP;
        zip(r);
        const resume = pending.pop();
        if (resume === undefined) break;
        gate = resume;
      }
    }
    for (let c = firstFace * 3; c < faces * 3; c++) {
      const vertex = vertexOf[find(label[c]!)]!;
      if (vertex < 0) throw new EdgebreakerError(`hull ${h} leaves a vertex that no zip resolves`);
      indices[c] = vertex;
    }
    hulls.push({ firstFace, faceCount: faces - firstFace, vertexCount: vertices });
  }
  if (faces !== faceCount) throw new EdgebreakerError(`the symbols describe ${faces} faces, the header ${faceCount}`);
  return { indices, hulls };
}
