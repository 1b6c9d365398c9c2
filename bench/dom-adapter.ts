/**
 * The one place that reads today's DOM for the geometry modules (terrain, shapes,
 * renderer), for benchmarks and tests only: the DOM is being rewritten (issue 11),
 * and the scene assembly that replaces this file will read the new instance table.
 */
import { getBytes, getValue, type Dom } from '../src/parser/dom.js';
import { buildScene, type SceneNode, type ScenePart } from '../src/project/scene.js';
import { meshObjectShape, partShape, placeholder, type PartShape } from '../src/geometry/shapes.js';
import { addPart, createRenderScene, type RenderScene } from '../src/render/scene.js';
import { readSmoothGrid } from '../src/terrain/smooth-grid.js';
import { terrainPalette } from '../src/terrain/materials.js';

export interface TerrainBlobs {
  smoothGrid: Uint8Array;
  materialColors: Uint8Array | null;
  waterColor: number[] | null;
  waterTransparency: number;
}

/** The first Terrain's SmoothGrid and colour properties; null without a Terrain or a SmoothGrid. */
export function terrainOf(dom: Dom): TerrainBlobs | null {
  let terrain = -1;
  for (let row = 0; row < dom.count; row++) if (dom.className(row) === 'Terrain') { terrain = row; break; }
  if (terrain < 0) return null;
  const smoothGrid = stringBytes(dom, terrain, 'SmoothGrid');
  if (!smoothGrid) return null;
  const water = getValue(dom, terrain, 'WaterColor');
  const transparency = getValue(dom, terrain, 'WaterTransparency');
  return {
    smoothGrid,
    materialColors: stringBytes(dom, terrain, 'MaterialColors'),
    waterColor: Array.isArray(water) && water.length === 3 ? (water as number[]) : null,
    waterTransparency: typeof transparency === 'number' ? transparency : 0.3,
  };
}

/** A String property's bytes: as stored (binary files) or from its text/base64 value (XML). */
function stringBytes(dom: Dom, row: number, name: string): Uint8Array | null {
  const raw = getBytes(dom, row, name);
  if (raw) return raw;
  const value = getValue(dom, row, name);
  if (typeof value === 'string') return Buffer.from(value, 'latin1');
  if (value && typeof value === 'object' && 'base64' in value) return Buffer.from(value.base64, 'base64');
  return null;
}

/** The picture's input: every Workspace part with its shape (placeholders for meshes and unions), and the terrain. */
export function renderSceneOf(dom: Dom): RenderScene {
  const scene = buildScene(dom);
  const render = createRenderScene(Math.max(16, scene.parts));
  const stack: SceneNode[] = [...scene.children];
  while (stack.length) {
    const node = stack.pop()!;
    if (node.children) stack.push(...node.children);
    if (node.type !== 'part' || !node.size) continue;
    addPart(render, shapeOf(node), node.position, node.rotation, node.color, node.transparency, node.material.name === 'Neon');
  }
  const terrain = terrainOf(dom);
  if (terrain) {
    render.terrain = {
      grid: readSmoothGrid(terrain.smoothGrid),
      palette: terrainPalette(terrain.materialColors, terrain.waterColor),
      waterTransparency: terrain.waterTransparency,
    };
  }
  return render;
}

function shapeOf(part: ScenePart): PartShape {
  const size = part.size!;
  if (part.mesh?.mesh_type !== undefined) {
    return meshObjectShape('SpecialMesh', part.mesh.mesh_type, size, part.mesh.scale, part.mesh.offset, { segments: 12, rings: 6 }) ?? placeholder(size);
  }
  return partShape(part.shape, size, { segments: 12, rings: 6 });
}
