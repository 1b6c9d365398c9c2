/**
 * The preview picture of an assembled map: the assembly's parts and terrain handed to
 * the software renderer (src/render) as its typed arrays, then drawn.
 */
import type { Dom } from '../parser/dom.js';
import { createRenderScene, EMISSIVE, renderPicture, type Picture, type PictureOptions, type RenderScene } from '../render/index.js';
import { assembleScene, NEON, type AssembleOptions, type HullBudget, type ModelBudget, type SceneAssembly } from './assemble.js';

/** Curved shapes in the picture: a ball is a few pixels across at most, so a coarse one looks the same. */
export const PICTURE_DETAIL = { segments: 12, rings: 6 } as const;

export function renderInput(assembly: SceneAssembly): RenderScene {
  const { parts, shapes } = assembly;
  const scene = createRenderScene(Math.max(1, parts.count));
  // Render geometries by shape; boxes and placeholders share the renderer's box path.
  const geometryOf = new Int32Array(shapes.length).fill(-1);
  const boxKey = 'box';
  shapes.forEach((shape, index) => {
    const key = shape.box ? boxKey : shape.key;
    let geometry = scene.geometryKeys.get(key);
    if (geometry === undefined) {
      geometry = scene.geometries.push(shape.geometry) - 1;
      scene.geometryKeys.set(key, geometry);
    }
    geometryOf[index] = geometry;
  });
  const out = scene.parts;
  const t = parts.transforms, o = parts.offsets;
  for (let i = 0; i < parts.count; i++) {
    const m = i * 12;
    const ox = o[i * 3]!, oy = o[i * 3 + 1]!, oz = o[i * 3 + 2]!;
    // The offset is in part space: rotate it into the world.
    out.transforms[m] = t[m]! + t[m + 3]! * ox + t[m + 4]! * oy + t[m + 5]! * oz;
    out.transforms[m + 1] = t[m + 1]! + t[m + 6]! * ox + t[m + 7]! * oy + t[m + 8]! * oz;
    out.transforms[m + 2] = t[m + 2]! + t[m + 9]! * ox + t[m + 10]! * oy + t[m + 11]! * oz;
    for (let k = 3; k < 12; k++) out.transforms[m + k] = t[m + k]!;
    out.geometry[i] = geometryOf[parts.shapes[i]!]!;
    out.flags[i] = parts.flags[i]! & NEON ? EMISSIVE : 0;
  }
  out.scales.set(parts.scales);
  out.colors.set(parts.colors);
  out.count = parts.count;
  if (assembly.terrain) {
    const { grid, palette, waterTransparency } = assembly.terrain;
    scene.terrain = { grid, palette, waterTransparency };
  }
  return scene;
}

/**
 * The analysis's picture of a decoded map (nothing downloaded: meshes are their boxes);
 * `terrain` is the grid the report already read, `limits` what union data is decoded
 * under (the place-wide caps included). `hullBudget` says what the unions' hulls
 * cost and how many were drawn as boxes past the caps, `modelBudget` the same of their
 * models (MeshData).
 */
export function mapPicture(dom: Dom, options: PictureOptions & Pick<AssembleOptions, 'terrain' | 'limits'> = {}): Picture & { hullBudget: HullBudget; modelBudget: ModelBudget } {
  const { terrain, limits, ...picture } = options;
  const assembly = assembleScene(dom, { detail: PICTURE_DETAIL, terrain, ...(limits ? { limits } : {}) });
  return { ...renderPicture(renderInput(assembly), picture), hullBudget: assembly.hullBudget, modelBudget: assembly.modelBudget };
}
