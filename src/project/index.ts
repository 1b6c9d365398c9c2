/** From a decoded DOM to the analyze report and the project document. */
export {
  analyzeDom, codeBits, codesOfBits, findingCodes, isScriptCodes, orderFindings, scanMapScript, scanMapScripts,
  MAX_SCRIPTS_AT_RISK, MAX_WARNINGS,
  type Analysis, type AnalysisAsset, type ScriptCodes, type AnalyzeOptions, type Report, type ScriptAtRisk, type TerrainSummary,
  type RunContextCounts,
} from './report.js';
export {
  buildProject, packMapScripts, projectTitle, PROJECT_FORMAT, PROJECT_VERSION,
  type BuildProjectOptions, type ProjectAsset, type ProjectDocument,
} from './document.js';
export {
  buildScene, linkOf,
  type AssetLink, type Scene, type SceneGroup, type SceneMesh, type SceneNode, type ScenePart, type SceneTexture,
} from './scene.js';
export {
  applyScriptsMode, packScript, packedSource, parseScriptsMode, patchScriptEnabled, readScriptMeta,
  DEFAULT_SCRIPTS_MODE, SCRIPTS_MODES,
  type ProjectScript, type RunContextName, type ScriptMeta, type ScriptsMode,
} from './scripts.js';
export { readMapScripts, type MapScript } from './map-scripts.js';
export { ProjectError, isProjectError, type ProjectErrorCode } from './errors.js';
export type { Bounds } from './geometry.js';
