/**
 * The package's main entry: decoding, the DOM helpers, the writer, the script scanner and
 * the mesh decoders. Geometry has entries of its own (package.json `exports`):
 * `rbxl-import/terrain`, `/geometry`, `/gltf`, `/render`, `/scene`.
 */
export { decode, decodeChunks, sniffFormat, type ChunkView } from './parser/index.js';
export { decodeBinary } from './parser/binary.js';
export { DecodeError, isDecodeError } from './parser/errors.js';
export { DEFAULT_LIMITS, type DecodeLimits } from './parser/limits.js';
export { Dom, InstanceView, type Column, type PropertyTable, type ReferentIndex } from './parser/dom.js';
export { getProperty, getValue, getBytes, propertyNames, fullName, children, roots, preorder, findService, columnOf, instances } from './parser/dom.js';
export { DomBuilder } from './parser/dom-build.js';
export { stringifyDump } from './parser/dump.js';
export { dumpJson } from './project/dump.js';
export { BASE_PART_CLASSES } from './project/classes.js';
export { projectJson, buildProject, readInstances, decodeValue, type ProjectDocument, type BuildProjectOptions, type ReadInstance } from './project/index.js';
export type * from './parser/values.js';
export { scanScript, scanScriptBytes, FINDING_CODES, isHangRisk, type Finding, type FindingCode, type ScanOptions } from './scan/index.js';
export { encode, EncodeError, type EncodeOptions } from './parser/writer/index.js';
export {
  decodeMeshAsset, MeshDecodeError, isMeshDecodeError, DEFAULT_MESH_LIMITS, convexHull, type MeshLimits, type MeshAsset,
  type MeshAssetKind, type FileMeshAsset, type FileMeshHeader, type UnionGraphicsAsset, type UnionPhysicsAsset, type UnionKeyAsset,
  type HullGeometry,
} from './mesh/index.js';
export { summarizeMeshAsset, type MeshAssetSummary } from './mesh/summary.js';
