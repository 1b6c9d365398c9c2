/** The package's main entry: decoding, the DOM helpers, the writer and the script scanner. */
export { decode, decodeChunks, sniffFormat, type ChunkView } from './parser/index.js';
export { decodeBinary } from './parser/binary.js';
export { DecodeError, isDecodeError } from './parser/errors.js';
export { DEFAULT_LIMITS, type DecodeLimits } from './parser/limits.js';
export { Dom, InstanceView, type Column, type PropertyTable, type ReferentIndex } from './parser/dom.js';
export { getProperty, getValue, getBytes, propertyNames, fullName, children, roots, preorder, findService, columnOf, instances } from './parser/dom.js';
export { DomBuilder } from './parser/dom-build.js';
export { dumpInstance, dumpJson, stringifyDump, type DumpInstance } from './parser/dump.js';
export type * from './parser/values.js';
export { scanScript, scanScriptBytes, FINDING_CODES, isHangRisk, type Finding, type FindingCode, type ScanOptions } from './scan/index.js';
export { encode, EncodeError, type EncodeOptions } from './parser/writer/index.js';
