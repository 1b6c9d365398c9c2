/**
 * convexHull (for CSGPHS hulls stored as points only): on random, lattice, duplicated,
 * flat and degenerate point sets the result is a closed surface whose every face is
 * a supporting plane facing outwards with every point on its inner side: the convex
 * hull, within the tolerance.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { convexHull } from '../src/mesh/index.js';
import { prng } from './support/corpus.js';

interface Check { faces: number; vertices: Set<number> }

/** Closed (every directed edge once, with its reverse), outward, supporting: returns the faces and the vertices used. */
function assertConvexHull(points: Float32Array, indices: Uint32Array, what: string, tolerance = 1e-5): Check {
  assert.equal(indices.length % 3, 0);
  const n = points.length / 3;
  const edges = new Set<string>();
  const vertices = new Set<number>();
  for (let t = 0; t < indices.length; t += 3) {
    for (let k = 0; k < 3; k++) {
      const a = indices[t + k]!, b = indices[t + (k + 1) % 3]!;
      assert.ok(a < n && a !== b, `${what}: face ${t / 3} is degenerate or out of range`);
      const key = `${a}>${b}`;
      assert.ok(!edges.has(key), `${what}: edge ${key} used twice`);
      edges.add(key);
      vertices.add(a);
    }
  }
  for (const key of edges) {
    const [a, b] = key.split('>');
    assert.ok(edges.has(`${b}>${a}`), `${what}: edge ${key} has no twin: the surface is not closed`);
  }
  // Euler: a closed surface of genus 0.
  assert.equal(vertices.size - edges.size / 2 + indices.length / 3, 2, `${what}: Euler characteristic`);
  let scale = 0;
  for (const v of points) scale = Math.max(scale, Math.abs(v));
  for (let t = 0; t < indices.length; t += 3) {
    const [a, b, c] = [indices[t]!, indices[t + 1]!, indices[t + 2]!];
    const p = (i: number, k: number): number => points[i * 3 + k]!;
    const u = [0, 1, 2].map((k) => p(b, k) - p(a, k)), v = [0, 1, 2].map((k) => p(c, k) - p(a, k));
    const normal = [u[1]! * v[2]! - u[2]! * v[1]!, u[2]! * v[0]! - u[0]! * v[2]!, u[0]! * v[1]! - u[1]! * v[0]!];
    const length = Math.hypot(...normal);
    assert.ok(length > 0, `${what}: face ${t / 3} has no area`);
    for (let i = 0; i < n; i++) {
      const d = (normal[0]! * (p(i, 0) - p(a, 0)) + normal[1]! * (p(i, 1) - p(a, 1)) + normal[2]! * (p(i, 2) - p(a, 2))) / length;
      assert.ok(d <= tolerance * Math.max(1, scale), `${what}: point ${i} is ${d} outside face ${t / 3}`);
    }
  }
  return { faces: indices.length / 3, vertices };
}

function randomPoints(count: number, seed: number, shape: 'ball' | 'cube'): Float32Array {
  const random = prng(seed);
  const out = new Float32Array(count * 3);
  for (let i = 0; i < count; i++) {
    let x, y, z;
    do { x = random() * 2 - 1; y = random() * 2 - 1; z = random() * 2 - 1; } while (shape === 'ball' && x * x + y * y + z * z > 1);
    out.set([x * 10, y * 3, z * 7 + 100], i * 3);
  }
  return out;
}

test('random points in a ball and in a box: a closed, outward, supporting hull', () => {
  for (const [count, seed, shape] of [[4, 1, 'ball'], [30, 2, 'ball'], [500, 3, 'ball'], [2000, 4, 'cube']] as const) {
    const points = randomPoints(count, seed, shape);
    const check = assertConvexHull(points, convexHull(points), `${shape} of ${count}`);
    assert.ok(check.vertices.size >= 4);
  }
});

test('points on a sphere (all on the hull) and the same points shuffled give hulls over every point', () => {
  const random = prng(7);
  const count = 300;
  const points = new Float32Array(count * 3);
  for (let i = 0; i < count; i++) {
    const z = random() * 2 - 1, a = random() * Math.PI * 2, r = Math.sqrt(1 - z * z);
    points.set([r * Math.cos(a), r * Math.sin(a), z], i * 3);
  }
  const check = assertConvexHull(points, convexHull(points), 'sphere');
  assert.equal(check.vertices.size, count);
  assert.equal(check.faces, 2 * count - 4);
});

test('a 5×5×5 lattice (coplanar and collinear points everywhere) gives the 8 corners and 12 triangles', () => {
  const points: number[] = [];
  for (let x = 0; x < 5; x++) for (let y = 0; y < 5; y++) for (let z = 0; z < 5; z++) points.push(x, y, z);
  const positions = Float32Array.from(points);
  const check = assertConvexHull(positions, convexHull(positions), 'lattice');
  assert.equal(check.faces, 12);
  const corners = [...check.vertices].map((i) => points.slice(i * 3, i * 3 + 3).join(',')).sort();
  assert.deepEqual(corners, ['0,0,0', '0,0,4', '0,4,0', '0,4,4', '4,0,0', '4,0,4', '4,4,0', '4,4,4']);
});

test('duplicated points and points within float noise of the surface do not break the surface', () => {
  const base = randomPoints(200, 11, 'ball');
  const tripled = Float32Array.from([...base, ...base, ...base]);
  assertConvexHull(tripled, convexHull(tripled), 'tripled');
  const random = prng(12);
  const noisy = new Float32Array(base.length * 2);
  noisy.set(base);
  for (let i = 0; i < base.length; i++) noisy[base.length + i] = base[i]! * (1 + (random() - 0.5) * 1e-7);
  assertConvexHull(noisy, convexHull(noisy), 'noisy');
});

test('flat point sets give their polygon once, fanned; collinear, single and non-finite sets give no triangles', () => {
  const square: number[] = [];
  for (let x = 0; x < 4; x++) for (let z = 0; z < 4; z++) square.push(x, 2, z);
  const flat = convexHull(Float32Array.from(square));
  assert.equal(flat.length / 3, 2, 'a square is two triangles');
  const used = new Set(flat);
  assert.deepEqual([...used].map((i) => `${square[i * 3]},${square[i * 3 + 2]}`).sort(), ['0,0', '0,3', '3,0', '3,3']);
  assert.equal(convexHull(Float32Array.of(0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3)).length, 0);
  assert.equal(convexHull(Float32Array.of(1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3)).length, 0);
  assert.equal(convexHull(Float32Array.of(0, 0, 0, 1, 0, 0)).length, 0);
  assert.equal(convexHull(Float32Array.of(0, 0, 0, 1, 0, 0, 0, 1, 0, NaN, 0, 1)).length, 0);
});
