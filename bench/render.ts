/**
 * `npm run bench:render`: the preview picture's cost beside the analysis it joins,
 * measured side by side in one run per place: decode + analyzeDom (today's analysis),
 * the adapter from that DOM to the renderer's input (to be replaced by the scene
 * assembly), and renderPicture (terrain heightfield, parts, PNG encoding). For places
 * with terrain also the SmoothGrid read and the full terrain mesh (glb path) with its
 * triangle count.
 */
import { Bench } from 'tinybench';
import { decode } from '../src/parser/index.js';
import { analyzeDom } from '../src/project/report.js';
import { renderPicture } from '../src/render/index.js';
import { meshTerrain, readSmoothGrid, terrainStats } from '../src/terrain/index.js';
import { renderSceneOf, terrainOf } from './dom-adapter.js';
import { fmt, generatedInput, machine, placeInputs, table, type Input } from './support.js';

function mean(bench: Bench, name: string): number {
  const task = bench.tasks.find((t) => t.name === name)!;
  return (task.result as { latency: { mean: number } }).latency.mean;
}

async function main(): Promise<void> {
  const sizes = (process.env.BENCH_PARTS ?? '200000').split(',').map(Number).filter((n) => n > 0);
  const inputs: Input[] = [...placeInputs(), ...sizes.map((parts) => generatedInput(parts))];
  const rows: (string | number)[][] = [];
  const terrainRows: (string | number)[][] = [];
  for (const input of inputs) {
    const dom = decode(input.bytes);
    const scene = renderSceneOf(dom);
    const big = input.bytes.length > 5e6;
    const bench = new Bench({ time: big ? 3000 : 1500, iterations: big ? 3 : 10, warmupIterations: big ? 1 : 3 });
    // Interleaved in one run, so machine noise hits both sides alike.
    bench.add('analysis', () => { analyzeDom(decode(input.bytes), { fileName: input.name, fileSize: input.bytes.length }); });
    bench.add('adapter', () => { renderSceneOf(dom); });
    bench.add('render', () => { renderPicture(scene); });
    await bench.run();
    const analysis = mean(bench, 'analysis'), adapter = mean(bench, 'adapter'), render = mean(bench, 'render');
    const picture = renderPicture(scene);
    rows.push([
      input.name, scene.parts.count.toLocaleString('en-US'), fmt(analysis, 2), fmt(render, 2), `${fmt(render / analysis, 2)}×`,
      fmt(adapter, 2), `${picture.width}×${picture.height}`, fmt(picture.png.length / 1024, 0),
    ]);
    process.stderr.write(`${input.name}: analysis ${fmt(analysis, 2)} ms, render ${fmt(render, 2)} ms\n`);

    const terrain = terrainOf(dom);
    if (terrain && terrain.smoothGrid.length > 2) {
      const grid = readSmoothGrid(terrain.smoothGrid);
      const tb = new Bench({ time: 1000, iterations: 3, warmupIterations: 1 });
      tb.add('read', () => { readSmoothGrid(terrain.smoothGrid); });
      tb.add('stats', () => { terrainStats(grid); });
      await tb.run();
      const started = performance.now();
      const mesh = meshTerrain(grid);
      const meshMs = performance.now() - started;
      terrainRows.push([
        input.name, grid.count.toLocaleString('en-US'), fmt(terrain.smoothGrid.length / 1e6, 2), fmt(mean(tb, 'read'), 2),
        fmt(mean(tb, 'stats'), 2), fmt(meshMs, 0), mesh.step, mesh.triangles.solid.toLocaleString('en-US'),
        mesh.triangles.water.toLocaleString('en-US'),
      ]);
    }
  }
  process.stdout.write(`\nRender benchmark on ${machine()}\n\n`);
  process.stdout.write(table(['place', 'parts', 'decode+analysis ms', 'render ms', 'render / analysis', 'adapter ms', 'picture', 'PNG KiB'], rows) + '\n');
  if (terrainRows.length) {
    process.stdout.write('\n' + table(['place', 'chunks', 'SmoothGrid MB', 'read ms', 'stats ms', 'mesh ms (once)', 'mesh step', 'solid triangles', 'water triangles'], terrainRows) + '\n');
  }
}

await main();
