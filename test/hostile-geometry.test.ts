// Valid files with absurd sizes, found by fuzzing: the picture and scene.glb finish,
// bounded, and a part that cannot stand in a glTF scene is left out with a note.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { sceneGlb, mapPicture, assembleScene } from '../src/scene/index.js';
import { handDom, part } from './support/hand-dom.js';

// Each would hang or exhaust the heap before the fix; the timeout turns a hang into a failure.
const BOUNDED = { timeout: 30_000 };

/**
 * Draws the picture of one part of `size` in a worker, given `ms` to finish: a hang in
 * synchronous code cannot be timed out on the test's own thread.
 */
function pictureWithin(size: number[], ms: number): Promise<{ shaded: number }> {
  const scene = new URL('../src/scene/index.js', import.meta.url).href;
  const hand = new URL('./support/hand-dom.js', import.meta.url).href;
  const source = `
    import { parentPort } from 'node:worker_threads';
    const { mapPicture } = await import(${JSON.stringify(scene)});
    const { handDom, part } = await import(${JSON.stringify(hand)});
    const dom = handDom([{ class: 'Workspace', children: [part('Huge', [0, 0, 0], ${JSON.stringify(size)})] }]);
    parentPort.postMessage(mapPicture(dom).parts);`;
  const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(source)}`));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { void worker.terminate(); reject(new Error(`the picture took more than ${ms} ms`)); }, ms);
    worker.once('message', (parts: { shaded: number }) => { clearTimeout(timer); void worker.terminate(); resolve(parts); });
    worker.once('error', (error) => { clearTimeout(timer); reject(error); });
  });
}

test('a part of 1e9 studs is drawn without its pixel coordinates wrapping past 2^31', async () => {
  assert.equal((await pictureWithin([1e9, 1e9, 37], 20_000)).shaded, 1);
});

test('a truss of 1e38 studs is built with a bounded number of rungs', BOUNDED, () => {
  for (const length of [2e5, 1e38, Infinity]) {
    const dom = handDom([{ class: 'Workspace', children: [part('Truss', [0, 0, 0], [length, 2, 2], {}, 'TrussPart')] }]);
    mapPicture(dom, { width: 64 });
    const { shapes } = assembleScene(dom);
    const triangles = shapes.reduce((sum, shape) => sum + (shape.geometry.indices?.length ?? 0) / 3, 0);
    assert.ok(triangles < 100_000, `${length}: ${triangles} triangles`);
  }
});

test('a mesh scale that overflows float32 leaves its part out of scene.glb with a note, not a failed build', () => {
  const dom = handDom([{
    class: 'Workspace',
    children: [
      { ...part('Crate', [0, 2, 0], [4, 4, 4]), children: [{ class: 'BlockMesh', props: { Scale: ['Vector3', [1, 3.4e38, 1]] } }] },
      part('Floor', [0, 0, 0], [16, 1, 16]),
    ],
  }]);
  const { stats } = sceneGlb(assembleScene(dom));
  assert.equal(stats.nodes, 1, 'the floor stands');
  assert.ok(stats.notes.some((note) => /Part \d+ left out: its place, size or scale is not a finite number/.test(note)), stats.notes.join('; '));
});
