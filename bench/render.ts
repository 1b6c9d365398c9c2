/**
 * `npm run bench:render`: the preview picture's cost beside the analysis it joins,
 * measured side by side in one run per place: decode + analyzeDom (the analysis), and
 * the picture from the same decoded DOM (scene assembly, then renderPicture: terrain
 * heightfield, parts, PNG), and an empty picture (the fixed cost of any picture). Then scene.glb per place (assembly with full detail,
 * terrain mesh, GLB bytes) and, for places with terrain, the SmoothGrid read, the
 * statistics and the terrain mesh.
 *
 * BENCH_PARTS=200000,10000 adds generated places of that many parts (default 200000;
 * 0 for none). BENCH_GLB=0 skips the glb table. BENCH_PLACES=booga,rocket keeps only the
 * corpus places whose names contain one of these.
 */
import { Bench } from 'tinybench';
import { decode } from '../src/parser/index.js';
import { analyzeDom } from '../src/project/report.js';
import { createRenderScene, renderPicture } from '../src/render/index.js';
import { assembleScene, PICTURE_DETAIL, readTerrainGrid, renderInput, sceneGlb, terrainBlobs, terrainRow } from '../src/scene/index.js';
import { meshTerrain, readSmoothGrid, terrainStats } from '../src/terrain/index.js';
import { fmt, generatedInput, machine, placeInputs, table, type Input } from './support.js';

/**
 * Mean ms per task, the tasks taking turns in short rounds (tinybench inside each) and
 * the median round kept: on a shared machine load comes and goes, and this way it
 * falls on every task alike.
 */
export async function measure(tasks: Record<string, () => void>, rounds: number, roundMs: number): Promise<Record<string, number>> {
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
  const only = process.env.BENCH_PLACES?.split(',').filter(Boolean);
  const places = placeInputs().filter((input) => !only || only.some((name) => input.name.includes(name)));
  const inputs: Input[] = [...places, ...sizes.map((parts) => generatedInput(parts))];
  const rows: (string | number)[][] = [];
  const glbRows: (string | number)[][] = [];
  const terrainRows: (string | number)[][] = [];
  // What any picture costs before it draws anything: clearing the 1024 × 576 canvas, the palette, the PNG.
  const empty = createRenderScene();
  for (const input of inputs) {
    const dom = decode(input.bytes);
    const big = input.bytes.length > 5e6;
    // The worker reads the SmoothGrid once, in the analysis (the report's terrain statistics), and draws from that read.
    const row = terrainRow(dom);
    const terrain = row === -1 ? undefined : readTerrainGrid(dom, row);
    const { analysis, picture, assembly, floor } = await measure({
      analysis: () => { analyzeDom(decode(input.bytes), { fileName: input.name, fileSize: input.bytes.length }); },
      picture: () => { renderPicture(renderInput(assembleScene(dom, { detail: PICTURE_DETAIL, terrain }))); },
      assembly: () => { assembleScene(dom, { detail: PICTURE_DETAIL, terrain }); },
      floor: () => { renderPicture(empty); },
    }, big ? 3 : 9, big ? 1000 : 200) as { analysis: number; picture: number; assembly: number; floor: number };
    const assembled = assembleScene(dom, { detail: PICTURE_DETAIL, terrain });
    const drawn = renderPicture(renderInput(assembled));
    rows.push([
      input.name, assembled.parts.count.toLocaleString('en-US'), fmt(analysis, 2), fmt(picture, 2), `${fmt(picture / analysis, 2)}×`,
      fmt(assembly, 2), fmt(floor, 2), `${drawn.parts.shaded + drawn.parts.points} / ${drawn.parts.hidden}`, drawn.colors, fmt(drawn.png.length / 1024, 0),
    ]);
    process.stderr.write(`${input.name}: analysis ${fmt(analysis, 2)} ms, picture ${fmt(picture, 2)} ms\n`);

    if (process.env.BENCH_GLB !== '0') {
      const started = performance.now();
      const glb = sceneGlb(assembleScene(dom));
      const glbMs = performance.now() - started;
      glbRows.push([
        input.name, glb.stats.parts.toLocaleString('en-US'), glb.stats.nodes.toLocaleString('en-US'), glb.stats.meshes.toLocaleString('en-US'),
        glb.stats.terrain ? `${glb.stats.terrain.solid.toLocaleString('en-US')} + ${glb.stats.terrain.water.toLocaleString('en-US')} (step ${glb.stats.terrain.step})` : '',
        fmt(glbMs, 0), fmt(glb.byteLength / 2 ** 20, 2),
      ]);
    }

    const blobs = terrainBlobs(dom);
    if (blobs && blobs.smoothGrid.length > 2) {
      const grid = readSmoothGrid(blobs.smoothGrid);
      const times = await measure({
        read: () => { readSmoothGrid(blobs.smoothGrid); },
        stats: () => { terrainStats(grid); },
      }, 3, 300);
      const started = performance.now();
      const mesh = meshTerrain(grid);
      const meshMs = performance.now() - started;
      const fullStarted = performance.now();
      const full = meshTerrain(grid, { step: 1 });
      const fullMs = performance.now() - fullStarted;
      terrainRows.push([
        input.name, grid.count.toLocaleString('en-US'), fmt(blobs.smoothGrid.length / 1e6, 2), fmt(times.read!, 2),
        fmt(times.stats!, 2), fmt(meshMs, 0), mesh.step, mesh.triangles.solid.toLocaleString('en-US'),
        mesh.triangles.water.toLocaleString('en-US'), fmt(fullMs, 0), full.triangles.total.toLocaleString('en-US'),
      ]);
    }
  }
  process.stdout.write(`\nRender benchmark on ${machine()}\n\n`);
  process.stdout.write(table(['place', 'parts', 'decode+analysis ms', 'picture ms', 'picture / analysis', 'of which assembly ms', 'empty picture ms', 'parts drawn / hidden', 'colours', 'PNG KiB'], rows) + '\n');
  if (glbRows.length) {
    process.stdout.write('\nscene.glb (assembly with full detail, terrain mesh, GLB pieces; once)\n\n');
    process.stdout.write(table(['place', 'parts', 'nodes', 'meshes', 'terrain triangles', 'build ms', 'GLB MiB'], glbRows) + '\n');
  }
  if (terrainRows.length) {
    process.stdout.write('\n' + table(['place', 'chunks', 'SmoothGrid MB', 'read ms', 'stats ms', 'mesh ms (default budget, once)', 'step', 'solid triangles', 'water triangles', 'full-resolution mesh ms', 'full-resolution triangles'], terrainRows) + '\n');
  }
}

await main();
