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

/**
 * Mean ms per task, the tasks taking turns in short rounds (tinybench inside each) and
 * the median round kept: on a shared machine load comes and goes, and this way it
 * falls on every task alike.
 */
async function measure(tasks: Record<string, () => void>, rounds: number, roundMs: number): Promise<Record<string, number>> {
  const samples: Record<string, number[]> = {};
  for (let round = 0; round < rounds; round++) {
    for (const [name, fn] of Object.entries(tasks)) {
      const bench = new Bench({ time: roundMs, iterations: 1, warmupIterations: round === 0 ? 2 : 0, warmupTime: 0 });
      bench.add(name, fn);
      await bench.run();
      (samples[name] ??= []).push((bench.tasks[0]!.result as { latency: { mean: number } }).latency.mean);
    }
  }
  const medians: Record<string, number> = {};
  for (const [name, values] of Object.entries(samples)) {
    values.sort((a, b) => a - b);
    medians[name] = values[Math.floor(values.length / 2)]!;
  }
  return medians;
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
    const { analysis, adapter, render } = await measure({
      analysis: () => { analyzeDom(decode(input.bytes), { fileName: input.name, fileSize: input.bytes.length }); },
      adapter: () => { renderSceneOf(dom); },
      render: () => { renderPicture(scene); },
    }, big ? 3 : 7, big ? 1000 : 250) as { analysis: number; adapter: number; render: number };
    const picture = renderPicture(scene);
    rows.push([
      input.name, scene.parts.count.toLocaleString('en-US'), fmt(analysis, 2), fmt(render, 2), `${fmt(render / analysis, 2)}×`,
      fmt(adapter, 2), `${picture.width}×${picture.height}`, fmt(picture.png.length / 1024, 0),
    ]);
    process.stderr.write(`${input.name}: analysis ${fmt(analysis, 2)} ms, render ${fmt(render, 2)} ms\n`);

    const terrain = terrainOf(dom);
    if (terrain && terrain.smoothGrid.length > 2) {
      const grid = readSmoothGrid(terrain.smoothGrid);
      const times = await measure({
        read: () => { readSmoothGrid(terrain.smoothGrid); },
        stats: () => { terrainStats(grid); },
      }, 3, 300);
      const started = performance.now();
      const mesh = meshTerrain(grid);
      const meshMs = performance.now() - started;
      terrainRows.push([
        input.name, grid.count.toLocaleString('en-US'), fmt(terrain.smoothGrid.length / 1e6, 2), fmt(times.read!, 2),
        fmt(times.stats!, 2), fmt(meshMs, 0), mesh.step, mesh.triangles.solid.toLocaleString('en-US'),
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
