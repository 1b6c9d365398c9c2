/** From a decoded DOM to the analyze report and the project document. */
export {
  analyzeDom, codeBits, codesOfBits, findingCodes, isScriptCodes, orderFindings, scanMapScript, scanMapScripts,
  MAX_SCRIPTS_AT_RISK, MAX_WARNINGS,
  type Analysis, type AnalysisAsset, type ScriptCodes, type AnalyzeOptions, type Report, type ScriptAtRisk, type TerrainSummary,
  type RunContextCounts,
} from './report.js';
export {
  assetEntry, buildProject, packMapScripts, projectJson, projectTitle, PROJECT_FORMAT, PROJECT_VERSION,
  type AssetEntry, type AssetOutcomeLike, type BuildProjectOptions, type DocumentInstance, type ProjectDocument,
} from './document.js';
export { decodeValue, encodeValue, float32Text, ENCODERS, type DocValue, type EncodeContext } from './encoding.js';
export { JsonWriter } from './json-writer.js';
export { readInstance, readInstances, EncodingError, type ReadInstance, type ReadProperty, type EncodedTree } from './reader.js';
export { acceptsDocumentEncoding, documentCompressor, documentDecompressor, DOCUMENT_ENCODING } from './compression.js';
export { InstanceTree, instancesJson, type ClassSchema, type GeneratedInstances, type GeneratedSchema, type InstanceTreeOptions } from './instances.js';
export {
  assemblies, jointLinks, reliesOnSurfaceJoints, searchSurfaceJoints, surfaceJointAt, surfaceJoints, JOINT_OVERLAP_MIN, SURFACE_JOINT_CLASSES,
  type Assemblies, type SurfaceJoint, type SurfaceJointClass, type SurfaceJoints,
} from './joints.js';
export { scriptSubtrees, summariseImport, type ImportSummary, type Imported, type NotImported } from './imported.js';
export { instanceId, generatedId, rowOfId } from './ids.js';
export {
  buildScene, linkOf, sceneJson,
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
