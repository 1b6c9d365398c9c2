/**
 * The scene assembly and its two outputs: a decoded map's Workspace parts (real
 * shapes, unions, meshes), images and terrain (`assembleScene`), written as scene.glb
 * (`sceneGlb`, `writeSceneGlbFile`) or drawn as the preview picture (`mapPicture`).
 */
export {
  assembleScene, NEON, DOUBLE_SIDED, VERTEX_COLORS, HULLS_OVER_BUDGET, MODELS_OVER_BUDGET, UNREADABLE_NOTES,
  type SceneAssembly, type HullBudget, type ModelBudget, type SceneAssets, type SceneParts, type SceneDecal, type SceneSurface, type PartLook, type MeshLookup, type AssembleOptions,
} from './assemble.js';
export type { SceneShape, ShapeKind } from './shapes.js';
export { terrainBlobs, terrainRow, readTerrainGrid, readSceneTerrain, type TerrainBlobs, type SceneTerrain } from './terrain.js';
export { sceneDocument, sceneGlb, writeSceneGlbFile, GlbTooLargeError, mergeChunks, decalQuad, type SceneImages, type SceneGlbOptions, type SceneGlbStats } from './glb.js';
export { renderInput, mapPicture, PICTURE_DETAIL } from './picture.js';
export { convertMeshAsset, usedVertices, CONVERTER_VERSION, type Conversion, type ConversionFailure, type ConversionInfo } from './convert.js';
export { storedAssets, type StoredAssetsOptions } from './stored-assets.js';
