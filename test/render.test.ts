import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decode } from '../src/parser/index.js';
import { DomBuilder } from '../src/parser/dom-build.js';
import { arrayColumn } from '../src/parser/columns/column.js';
import { encode } from '../src/parser/writer/index.js';
import runTask from '../src/workers/tasks.js';
import type { Matrix3, Vec3 } from '../src/parser/values.js';
import { meshObjectShape, partShape } from '../src/geometry/shapes.js';
import { addPart, createRenderScene, renderPicture, type RenderScene } from '../src/render/index.js';
import { PIXEL_BUDGET } from '../src/render/picture.js';
import { readSmoothGrid, terrainPalette } from '../src/terrain/index.js';
import { assembleScene, PICTURE_DETAIL, renderInput } from '../src/scene/index.js';

const renderSceneOf = (dom: ReturnType<typeof decode>) => renderInput(assembleScene(dom, { detail: PICTURE_DETAIL }));
import { makeChunk, writeSmoothGrid } from './support/smooth-grid.js';
import { pixel, readPng, type Image } from './support/png.js';
import { PLACES_DIR } from './support/paths.js';

const IDENTITY: Matrix3 = [[1, 0, 0], [0, 1, 0], [0, 0, 1]];
/** The camera looks from +X +Z down 35°: this is its forward direction. */
const PITCH = (35 * Math.PI) / 180;
const FORWARD: Vec3 = [-Math.cos(PITCH) * Math.SQRT1_2, -Math.sin(PITCH), -Math.cos(PITCH) * Math.SQRT1_2];

function box(scene: RenderScene, at: Vec3, size: Vec3, color: [number, number, number], transparency = 0): void {
  addPart(scene, partShape('Block', size), at, IDENTITY, color, transparency);
}

/** Pixels close to a colour, as a share of the image. */
function share(image: Image, test: (r: number, g: number, b: number) => boolean): number {
  let count = 0;
  for (let i = 0; i < image.rgb.length; i += 3) if (test(image.rgb[i]!, image.rgb[i + 1]!, image.rgb[i + 2]!)) count++;
  return count / (image.width * image.height);
}

const reddish = (r: number, g: number, b: number): boolean => r > 90 && g < 40 && b < 40;
const bluish = (r: number, g: number, b: number): boolean => b > 90 && r < 40 && g < 40;

test('picture: a 1024-px-wide PNG that decodes, with a sky and the parts on it', () => {
  const scene = createRenderScene();
  box(scene, [0, 2, 0], [8, 4, 8], [200, 30, 30]);
  box(scene, [20, 1, 0], [8, 2, 8], [30, 30, 200]);
  const picture = renderPicture(scene);
  const image = readPng(picture.png);
  assert.equal(image.width, 1024);
  assert.equal(image.height, picture.height);
  assert.ok(picture.height >= 500 && picture.height <= 800);
  // Not blank: both parts cover a real share of it, and the sky is a gradient.
  assert.ok(share(image, reddish) > 0.02, 'red part visible');
  assert.ok(share(image, bluish) > 0.02, 'blue part visible');
  const top = pixel(image, 2, 1), bottom = pixel(image, 2, image.height - 2);
  assert.notDeepEqual(top, bottom);
  assert.ok(top[2] > top[0] && top[2] > 150, 'sky at the top');
  // Lit faces differ: the top of the red box is brighter than its darkest side.
  const reds = new Set<number>();
  for (let i = 0; i < image.rgb.length; i += 3) if (reddish(image.rgb[i]!, image.rgb[i + 1]!, image.rgb[i + 2]!)) reds.add(image.rgb[i]!);
  assert.ok(reds.size >= 2, 'shaded faces');
});

test('picture: a red block in front of a blue one hides it where they overlap', () => {
  const scene = createRenderScene();
  // Blue further along the view direction than red, both straddling the picture's centre line.
  const back: Vec3 = [FORWARD[0] * 30, 2 + FORWARD[1] * 30, FORWARD[2] * 30];
  box(scene, back, [10, 10, 10], [30, 30, 220]);
  box(scene, [0, 2, 0], [4, 4, 4], [220, 30, 30]);
  const picture = renderPicture(scene);
  const image = readPng(picture.png);
  // The red block projects to a smaller area inside the blue one's outline.
  const red = share(image, reddish), blue = share(image, bluish);
  assert.ok(red > 0.005 && blue > red, `red ${red}, blue ${blue}`);
  // The centroid of the red pixels is red (not blue) although blue lies behind it.
  let sx = 0, sy = 0, n = 0;
  for (let y = 0; y < image.height; y++) for (let x = 0; x < image.width; x++) {
    const [r, g, b] = pixel(image, x, y);
    if (reddish(r, g, b)) { sx += x; sy += y; n++; }
  }
  assert.ok(reddish(...pixel(image, sx / n, sy / n)));
  // Swap the depths: now blue is in front and the red block is hidden entirely.
  const swapped = createRenderScene();
  box(swapped, [0, 2, 0], [10, 10, 10], [30, 30, 220]);
  box(swapped, back, [4, 4, 4], [220, 30, 30]);
  assert.equal(share(readPng(renderPicture(swapped).png), reddish), 0);
});

test('picture: framing holds the parts and ignores a far outlier', () => {
  const scene = createRenderScene();
  for (let i = 0; i < 200; i++) box(scene, [(i % 20) * 6 - 60, 1, Math.floor(i / 20) * 6 - 30], [4, 2, 4], [40, 160, 40]);
  box(scene, [5000, 0, 5000], [4, 4, 4], [220, 30, 30]);
  const picture = renderPicture(scene);
  const [x0, , z0, x1, , z1] = picture.frame;
  assert.ok(x0! <= -60 && x1! >= 54 && z0! <= -30 && z1! >= 24, `frame ${picture.frame.join(',')}`);
  assert.ok(x1! < 1000 && z1! < 1000, 'the outlier at 5000 is not framed');
  const image = readPng(picture.png);
  // The town fills a good part of the picture, its edges not cut: no green on the border rows.
  assert.ok(share(image, (r, g, b) => g > 90 && r < 60 && b < 60) > 0.1);
  for (let x = 0; x < image.width; x++) {
    for (const y of [0, image.height - 1]) {
      const [r, g, b] = pixel(image, x, y);
      assert.ok(!(g > 90 && r < 60 && b < 60), `green at the border (${x}, ${y})`);
    }
  }
  assert.equal(picture.parts.culled, 1);
});

test('picture: translucent parts blend, invisible ones are not drawn, shapes and tiny parts draw', () => {
  const scene = createRenderScene();
  box(scene, [0, 0, 0], [40, 1, 40], [240, 240, 240]);
  box(scene, [0, 3, 0], [10, 4, 10], [220, 30, 30], 0.5);
  box(scene, [14, 3, 0], [6, 6, 6], [30, 30, 220], 1);
  addPart(scene, partShape('Ball', [6, 6, 6]), [-14, 3, 0], IDENTITY, [30, 200, 30]);
  addPart(scene, meshObjectShape('SpecialMesh', 'Wedge', [6, 6, 6])!, [0, 3, -14], IDENTITY, [200, 200, 30]);
  for (let i = 0; i < 50; i++) box(scene, [-19 + i * 0.8, 0.6, 19], [0.05, 0.05, 0.05], [10, 10, 10]);
  const picture = renderPicture(scene);
  const image = readPng(picture.png);
  assert.equal(share(image, bluish), 0, 'Transparency 1 is not drawn');
  // Half-transparent red over white: pink (red well above green and blue, which stay
  // alike), neither pure red nor white; a grey of the shaded ground is not pink.
  assert.ok(share(image, (r, g, b) => r > 150 && r > g + 40 && g > 60 && g < 200 && Math.abs(g - b) < 30) > 0.005, 'the translucent block blends');
  assert.equal(share(image, reddish), 0);
  assert.ok(share(image, (r, g, b) => g > 90 && r < 60 && b < 60) > 0.003, 'the ball');
  assert.ok(share(image, (r, g, b) => r > 90 && g > 90 && b < 40) > 0.003, 'the wedge');
  assert.equal(picture.parts.points, 50, 'sub-pixel parts are single pixels');
  assert.ok(share(image, (r, g, b) => r < 20 && g < 20 && b < 20) * image.width * image.height >= 30, 'and they are drawn');
});

test('picture: terrain shows its materials and translucent water; booga renders with its terrain', () => {
  const GRASS = 2, ROCK = 8, WATER = 1;
  const grid = readSmoothGrid(writeSmoothGrid([
    makeChunk([0, 0, 0], (x, y) => (y < 4 + (x >> 2) ? [x < 16 ? GRASS : ROCK, 255] : y < 8 ? [WATER, 255] : [0, 0])),
  ]));
  const scene = createRenderScene();
  scene.terrain = { grid, palette: terrainPalette(null, [0, 0, 1]), waterTransparency: 0.5 };
  const picture = renderPicture(scene);
  assert.ok(picture.terrainCells > 500);
  const image = readPng(picture.png);
  // Grass under water reads blue-green; the rock above the water stays grey.
  // (the sky is bluish too, but far lighter)
  assert.ok(share(image, (r, g, b) => b > g + 20 && b > r + 30 && g < 120) > 0.02, 'water over grass');
  assert.ok(share(image, (r, g, b) => Math.abs(r - g) < 12 && Math.abs(g - b) < 12 && r > 30 && r < 120) > 0.02, 'grey rock');

  const booga = renderPicture(renderSceneOf(decode(readFileSync(join(PLACES_DIR, 'booga.rbxl')))));
  assert.ok(booga.terrainCells > 50_000);
  assert.ok(booga.parts.shaded + booga.parts.points > 3000);
  const boogaImage = readPng(booga.png);
  assert.equal(boogaImage.width, 1024);
  // Mostly map, not sky.
  assert.ok(share(boogaImage, (r, g, b) => !(b > r + 40 && b > g + 20)) > 0.5);
});

test('picture: terrain on slopes has no holes (no sky between ground above and below it)', () => {
  const GRASS = 2, ROCK = 8;
  const chunks = [];
  for (const [cx, cz] of [[0, 0], [0, 1], [1, 0], [1, 1]] as const) {
    chunks.push(makeChunk([cx, 0, cz], (x, y, z) => {
      const wx = cx * 32 + x, wz = cz * 32 + z;
      const ground = 6 + Math.round(5 * Math.sin(wx / 5) + 4 * Math.cos(wz / 7));
      return y < ground ? [(wx + wz) % 3 === 0 ? ROCK : GRASS, 255] : [0, 0];
    }));
  }
  const scene = createRenderScene();
  scene.terrain = { grid: readSmoothGrid(writeSmoothGrid(chunks)), palette: terrainPalette(null, null), waterTransparency: 0.5 };
  const picture = renderPicture(scene);
  const image = readPng(picture.png);
  const sky = (x: number, y: number): boolean => {
    const [r, g, b] = pixel(image, x, y);
    return b > r + 15 && b >= g && r > 100;
  };
  let ground = 0, holes = 0;
  for (let y = 1; y + 1 < image.height; y++) {
    for (let x = 0; x < image.width; x++) {
      if (!sky(x, y)) { ground++; continue; }
      if (!sky(x, y - 1) && !sky(x, y + 1)) holes++;
    }
  }
  assert.ok(ground > image.width * image.height * 0.1, `${ground} ground pixels`);
  assert.ok(holes < 20, `${holes} sky pixels with ground just above and below`);
});

test('picture: parts stacked towards the eye stop at the drawing budget and are counted; real places stay well inside it', () => {
  // Screen-sized flat parts, each a little nearer than the last: none hides the next, so
  // each is drawn whole. 60,000 of them held a worker for 35 s.
  const scene = createRenderScene();
  const count = 3 * PIXEL_BUDGET;
  for (let k = 0; k < count; k++) box(scene, [-FORWARD[0] * k * 0.001, -FORWARD[1] * k * 0.001, -FORWARD[2] * k * 0.001], [2048, 0.05, 2048], [200, 30, 30]);
  const picture = renderPicture(scene);
  assert.ok(picture.parts.unfinished > 0, JSON.stringify(picture.parts));
  assert.ok(picture.parts.shaded <= PIXEL_BUDGET + 1, JSON.stringify(picture.parts));
  assert.equal(picture.parts.shaded + picture.parts.unfinished + picture.parts.hidden + picture.parts.culled + picture.parts.points, count);
  assert.ok(share(readPng(picture.png), reddish) > 0.5, 'what was drawn shows');
  for (const name of ['rocket-arena-2006.rbxl', 'booga.rbxl']) {
    const dom = decode(readFileSync(join(PLACES_DIR, name)));
    const real = renderPicture(renderInput(assembleScene(dom, { detail: PICTURE_DETAIL })));
    assert.equal(real.parts.unfinished, 0, name);
  }
});

test('picture: the analysis names the parts its picture left out', async () => {
  const builder = new DomBuilder('binary');
  const workspace = builder.addTable('Workspace');
  builder.columns(workspace).set('Name', arrayColumn('String', ['Workspace']));
  const parts = builder.addTable('Part');
  const count = 3 * PIXEL_BUDGET;
  // Screen-sized flat parts, each nearer the eye (+X +Y +Z) than the last.
  builder.columns(parts).set('Name', arrayColumn('String', Array<string>(count).fill('P')));
  builder.columns(parts).set('CFrame', arrayColumn('CFrame', Array.from({ length: count }, (_, k) => ({ position: [k * 0.001, k * 0.001, k * 0.001] as Vec3, orientation: IDENTITY }))));
  builder.columns(parts).set('size', arrayColumn('Vector3', Array.from({ length: count }, (): Vec3 => [2048, 0.05, 2048])));
  const root = builder.add(workspace, -1);
  for (let k = 0; k < count; k++) builder.add(parts, root);
  const dir = mkdtempSync(join(tmpdir(), 'rbxl-picture-'));
  try {
    const path = join(dir, 'stacked.rbxl');
    const bytes = encode(builder.build());
    writeFileSync(path, bytes);
    const result = await runTask({ kind: 'analyze', path, fileName: 'stacked.rbxl', fileSize: bytes.length, limits: { maxFileBytes: 64 << 20, decode: {}, maxDocumentBytes: 256 << 20 } });
    assert.ok(result.ok && 'report' in result, JSON.stringify(result).slice(0, 300));
    const warning = (result.report.warnings).find((text) => text.startsWith('picture:'));
    assert.match(warning ?? '', /^picture: \d+ parts not drawn \(the picture's drawing budget was spent; the import is not affected\)$/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
