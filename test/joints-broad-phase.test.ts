// The surface-joint search's broad phase (src/project/joints.ts): every pair of boxes
// that come within NEAR of each other is visited exactly once, whatever their sizes and
// spread, against an all-pairs check.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mulberry32 } from '../bench/generate.js';
import { forEachNearPair, NEAR, SEARCH_BOUNDS } from '../src/project/joints.js';

interface Box { id: number; min: number[]; max: number[] }

function boxes(seed: number, count: number, spread: number, farAway: boolean): Box[] {
  const next = mulberry32(seed);
  const out: Box[] = [];
  for (let id = 0; id < count; id++) {
    // Mostly bricks, on a 0.5 grid (faces that touch exactly) or off it by less than NEAR,
    // a few baseplates and poles, and (farAway) parts 1e5 studs off, which widen the grid's cells.
    const kind = next();
    const size = kind < 0.03 ? [400, 1, 400] : kind < 0.06 ? [0.2, 50, 0.2] : [1 + Math.floor(next() * 8) / 2, 0.5 + Math.floor(next() * 4) / 2, 1 + Math.floor(next() * 8) / 2];
    const far = farAway && next() < 0.02 ? 1e5 : 0;
    const gap = next() < 0.3 ? 0.03 : 0;
    const centre = [0, 1, 2].map((k) => far + gap + Math.round((next() - 0.5) * spread * 2) / 2 + (k === 1 ? size[1]! / 2 : 0));
    out.push({ id, min: centre.map((c, k) => c - size[k]! / 2), max: centre.map((c, k) => c + size[k]! / 2) });
  }
  return out;
}

function allPairs(list: Box[]): Set<string> {
  const pairs = new Set<string>();
  for (let i = 0; i < list.length; i++) {
    for (let j = i + 1; j < list.length; j++) {
      const a = list[i]!, b = list[j]!;
      if ([0, 1, 2].every((k) => b.min[k]! <= a.max[k]! + NEAR && a.min[k]! <= b.max[k]! + NEAR)) pairs.add(`${a.id},${b.id}`);
    }
  }
  return pairs;
}

test('the joint broad phase visits every pair of boxes within NEAR exactly once', () => {
  for (const [seed, count, spread, farAway] of [[1, 400, 20, false], [2, 1500, 60, false], [3, 300, 4, false], [7, 800, 40, true], [4, 2, 1, false], [5, 1, 1, false], [6, 0, 1, false]] as const) {
    const list = boxes(seed, count, spread, farAway);
    const expected = allPairs(list);
    const seen = new Set<string>();
    const flat = Float64Array.from(list.flatMap((box) => [...box.min, ...box.max]));
    forEachNearPair(flat, list.length, (i, j) => {
      const a = list[i]!, b = list[j]!;
      const key = a.id < b.id ? `${a.id},${b.id}` : `${b.id},${a.id}`;
      assert.ok(!seen.has(key), `seed ${seed}: pair ${key} visited twice`);
      seen.add(key);
    });
    assert.deepEqual([...seen].sort(), [...expected].sort(), `seed ${seed}: ${count} boxes`);
    if (count > 100) assert.ok(expected.size > count / 4, `seed ${seed}: the boxes touch (${expected.size} pairs)`);
  }
});

test('the broad phase stops at its bounds: cells filled and pairs looked at, and pairs handed on', () => {
  const flat = (list: Box[]) => Float64Array.from(list.flatMap((box) => [...box.min, ...box.max]));
  // 300 boxes in one spot: 44,850 near pairs, every one in the same cell.
  const piled = flat(Array.from({ length: 300 }, (_, id) => ({ id, min: [0, 0, 0], max: [4, 4, 4] })));
  let visits = 0;
  assert.equal(forEachNearPair(piled, 300, () => { visits++; }), true, 'within the default bounds');
  assert.equal(visits, 44_850);
  visits = 0;
  assert.equal(forEachNearPair(piled, 300, () => { visits++; }, { ...SEARCH_BOUNDS, steps: 1e9, nearPairs: 1_000 }), false);
  assert.equal(visits, 1_000, 'no pair past the bound is handed on');
  assert.equal(forEachNearPair(piled, 300, () => {}, { ...SEARCH_BOUNDS, steps: 10_000, nearPairs: 1e9 }), false, 'pairs looked at');
  // Small boxes apart from one another set the cells' size (2 studs): 300 cells filled, no pair to look at.
  const small = Array.from({ length: 300 }, (_, id) => ({ id, min: [10 * id, 1_000, 0], max: [10 * id + 1, 1_001, 1] }));
  // A few huge boxes (each past MAX_CELLS cells) are tested against every other box: 305 steps each.
  const huge = flat([...small, ...Array.from({ length: 5 }, (_, i) => ({ id: 300 + i, min: [0, 0, 10 * i], max: [2_000, 1, 10 * i + 1] }))]);
  assert.equal(forEachNearPair(huge, 305, () => {}, { ...SEARCH_BOUNDS, steps: 1_000, nearPairs: 1e9 }), false, 'large boxes');
  assert.equal(forEachNearPair(huge, 305, () => {}), true);
  // Boxes spanning many cells (up to MAX_CELLS) fill each of them: 20 boxes of 20 x 20 cells, apart from one another.
  const wide = flat([...small, ...Array.from({ length: 20 }, (_, i) => ({ id: 300 + i, min: [0, 0, 10 * i], max: [39, 39, 10 * i + 1] }))]);
  assert.equal(forEachNearPair(wide, 320, () => {}, { ...SEARCH_BOUNDS, steps: 1_000, nearPairs: 1e9 }), false, 'cells filled');
  assert.equal(forEachNearPair(wide, 320, () => {}, { ...SEARCH_BOUNDS, steps: 20_000, nearPairs: 1e9 }), true);
  // The grid's memory has a bound of its own (the place is wide: its cells are about 2.9 studs, and these fill 6,094), whatever the steps allow.
  assert.equal(forEachNearPair(wide, 320, () => {}, { steps: 1e9, nearPairs: 1e9, cells: 6_093 }), false, 'grid cells past their own bound');
  assert.equal(forEachNearPair(wide, 320, () => {}, { steps: 1e9, nearPairs: 1e9, cells: 6_094 }), true);
});
