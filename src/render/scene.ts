/**
 * What the picture renderer draws, as typed arrays: parts (any shape from a small
 * table of unit geometries, scaled, rotated and placed), and terrain (its SmoothGrid
 * and palette). The scene assembly fills it with `addPart`; nothing per part is an
 * object, so a 200k-part map is a few megabytes of arrays.
 */
import type { MeshGeometry } from '../geometry/mesh.js';
import type { PartShape } from '../geometry/shapes.js';
import type { Matrix3, Vec3 } from '../parser/values.js';
import type { SmoothGrid } from '../terrain/smooth-grid.js';

export interface RenderParts {
  count: number;
  /** 12 per part: position x, y, z, then the rotation's rows (Roblox CFrame order). */
  transforms: Float32Array;
  /** 3 per part: the unit geometry's scale in part space. */
  scales: Float32Array;
  /** 4 per part: sRGB colour and opacity (255 − Transparency·255). */
  colors: Uint8Array;
  /** Index into `geometries`. */
  geometry: Uint32Array;
  /** Bit 0: emissive (Neon), drawn unshaded. */
  flags: Uint8Array;
}

export interface RenderTerrain {
  grid: SmoothGrid;
  /** terrainPalette(): RGB per terrain material index. */
  palette: Uint8Array;
  /** Terrain.WaterTransparency, 0..1. */
  waterTransparency: number;
}

export interface RenderScene {
  /** Unit geometries parts refer to; the one keyed "box" is drawn by a faster path. */
  geometries: MeshGeometry[];
  geometryKeys: Map<string, number>;
  parts: RenderParts;
  terrain: RenderTerrain | null;
}

export const EMISSIVE = 1;

export function createRenderScene(capacity = 1024): RenderScene {
  return { geometries: [], geometryKeys: new Map(), parts: newParts(Math.max(1, capacity)), terrain: null };
}

function newParts(capacity: number): RenderParts {
  return {
    count: 0,
    transforms: new Float32Array(capacity * 12),
    scales: new Float32Array(capacity * 3),
    colors: new Uint8Array(capacity * 4),
    geometry: new Uint32Array(capacity),
    flags: new Uint8Array(capacity),
  };
}

function grow(parts: RenderParts): RenderParts {
  const bigger = newParts(parts.transforms.length / 6);
  bigger.count = parts.count;
  bigger.transforms.set(parts.transforms);
  bigger.scales.set(parts.scales);
  bigger.colors.set(parts.colors);
  bigger.geometry.set(parts.geometry);
  bigger.flags.set(parts.flags);
  return bigger;
}

/**
 * Adds a part drawn as `shape` (shapes.ts: its unit geometry, scale and offset) at a
 * CFrame. `color` is sRGB bytes; `transparency` Roblox's (1 = invisible, not drawn).
 */
export function addPart(
  scene: RenderScene, shape: PartShape, position: Vec3, rotation: Matrix3,
  color: readonly [number, number, number], transparency = 0, emissive = false,
): void {
  if (!(transparency < 1)) return;
  let geometry = scene.geometryKeys.get(shape.key);
  if (geometry === undefined) {
    geometry = scene.geometries.push(shape.geometry) - 1;
    scene.geometryKeys.set(shape.key, geometry);
  }
  if (scene.parts.count * 12 >= scene.parts.transforms.length) scene.parts = grow(scene.parts);
  const parts = scene.parts;
  const i = parts.count++;
  const [ox, oy, oz] = shape.offset;
  const t = parts.transforms;
  // The offset is in part space: rotate it into the world.
  t[i * 12] = position[0] + rotation[0][0] * ox + rotation[0][1] * oy + rotation[0][2] * oz;
  t[i * 12 + 1] = position[1] + rotation[1][0] * ox + rotation[1][1] * oy + rotation[1][2] * oz;
  t[i * 12 + 2] = position[2] + rotation[2][0] * ox + rotation[2][1] * oy + rotation[2][2] * oz;
  for (let r = 0; r < 3; r++) for (let c = 0; c < 3; c++) t[i * 12 + 3 + r * 3 + c] = rotation[r]![c]!;
  parts.scales.set(shape.scale, i * 3);
  parts.colors[i * 4] = color[0];
  parts.colors[i * 4 + 1] = color[1];
  parts.colors[i * 4 + 2] = color[2];
  parts.colors[i * 4 + 3] = Math.round(255 * (1 - Math.max(0, transparency)));
  parts.geometry[i] = geometry;
  parts.flags[i] = emissive ? EMISSIVE : 0;
}
