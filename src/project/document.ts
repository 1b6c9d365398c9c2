/**
 * The project document, version 2: the versioned JSON the create step stores and the
 * editor (and the runtime, which runs the map's scripts against its instance tree)
 * opens. It is written as a stream of JSON pieces (`projectJson`), never one string:
 *
 *   {"format": "rbxl-import/project", "version": 2, "title", "owner", "created_at",
 *    "source": {preview_hash, file_name, format, size}, "scripts_mode",
 *    "import": {"imported": {...}, "not_imported": [...]},      what arrives (imported.ts)
 *    "classes": {...}, "shared_strings": [base64...],             the type tables (instances.ts)
 *    "instances": [...],                                           every instance, parents first
 *    "scripts": [{"id", "name", "class", "path", "code"}],        packed scripts (scripts.ts)
 *    "scene": {...},                                               the render list (scene.ts)
 *    "assets": [...]}                                              each asset's download outcome
 *
 * Scripts stay in the tree without their `Source`, which is in their `scripts[]`
 * entry (the entry's `id` is the instance's, also in the metadata line). In `skip`
 * mode `scripts[]` is empty and script instances are left out with everything inside
 * them (named in `not_imported`), so no script source remains anywhere.
 */
import type { AssetKind } from '../assets/refs.js';
import type { AssetOutcome } from '../assets/download.js';
import { isScriptClass } from './classes.js';
import type { Dom } from '../parser/dom.js';
import type { PropType } from '../parser/values.js';
import { summariseImport, scriptSubtrees, type ImportSummary, type NotImported } from './imported.js';
import { generatedId, instanceId } from './ids.js';
import { sharedStringsJson } from './dump.js';
import { InstanceTree, instancesJson, type GeneratedInstances, type GeneratedSchema } from './instances.js';
import { JsonWriter } from './json-writer.js';
import { assemblies, searchSurfaceJoints, SURFACE_JOINT_CLASSES, type SurfaceJoints } from './joints.js';
import { readMapScripts, type MapScript } from './map-scripts.js';
import { codesOfBits, findingCodes, isScriptCodes, type ScriptCodes } from './report.js';
import { scanMapScripts } from './script-findings.js';
import { sceneJson, type Scene } from './scene.js';
import { ENCODERS } from './encoding.js';
import type { EncodedClass, EncodedInstance } from './reader.js';
import { packedHeader, packScript, parseScriptsMode, type ProjectScript, type ScriptMeta, type ScriptsMode } from './scripts.js';

export const PROJECT_FORMAT = 'rbxl-import/project';
export const PROJECT_VERSION = 2;

/**
 * One asset's outcome as the document records it: `id`, `kind`, `ok`, then whatever
 * the download (and later steps) told about it, field names in snake_case. Fields
 * added to the outcomes pass through unchanged.
 */
export interface AssetEntry {
  id: string;
  kind: AssetKind;
  ok: boolean;
  [field: string]: unknown;
}

/** An asset outcome as the downloader gives it (camelCase fields), or an asset an offline build did not download. */
export type AssetOutcomeLike = AssetOutcome | { id: string; kind: AssetKind; ok: false; reason: 'not_downloaded' };

export interface BuildProjectOptions {
  /** The requested title; blank means the file name without its extension. */
  title: string;
  owner: string;
  createdAt: Date | string;
  previewHash: string;
  fileName: string;
  /** Defaults to the DOM's own format. */
  format?: 'binary' | 'xml';
  fileSize: number;
  scriptsMode: ScriptsMode;
  /** The download outcome of each of the map's assets. */
  assets: readonly AssetOutcomeLike[];
  /**
   * The analysis's `scriptCodes` for this file. Used when the same scanner
   * found them and they fit the map (one entry per script); otherwise, as for
   * a preview stored before they were kept, every script is scanned again.
   */
  scriptCodes?: ScriptCodes;
}

/** The parsed document (for tests and tools; the service streams `projectJson`). */
export interface ProjectDocument {
  format: typeof PROJECT_FORMAT;
  version: typeof PROJECT_VERSION;
  title: string;
  owner: string;
  created_at: string;
  source: { preview_hash: string; file_name: string; format: 'binary' | 'xml'; size: number };
  scripts_mode: ScriptsMode;
  import: ImportSummary;
  classes: Record<string, EncodedClass>;
  shared_strings: string[];
  instances: DocumentInstance[];
  scripts: ProjectScript[];
  scene: Scene;
  assets: AssetEntry[];
}

/** An instance as the document writes it (reader.ts reads it back); `generated` only on the joints the import adds. */
export interface DocumentInstance extends EncodedInstance {
  generated?: true;
}

/** What a document leaves out of its instances' properties: script sources (in scripts[]), PhysicsGrid, and in skip mode any code at all. */
function omitted(skip: boolean): (className: string, property: string, type?: PropType) => boolean {
  return (className, property, type) =>
    (property === 'Source' && (skip || isScriptClass(className)))
    || (className === 'Terrain' && property === 'PhysicsGrid')
    || (skip && type === 'Bytecode');
}

/**
 * The project document's JSON as UTF-8 chunks of about `chunkBytes` bytes (the last
 * may be shorter): written section by section, one instance, script or scene node at
 * a time. 256 KiB pieces keep the compressor's thread busy with few hand-overs.
 */
export function* projectJson(dom: Dom, options: BuildProjectOptions, chunkBytes = 1 << 18): Generator<Buffer> {
  const mode = parseScriptsMode(options.scriptsMode);
  const skip = mode === 'skip';
  const excluded = skip ? scriptSubtrees(dom) : undefined;
  const { joints, unsearchedParts } = searchSurfaceJoints(dom, excluded);
  const mapScripts = skip ? [] : readMapScripts(dom);
  const nonUtf8 = new Map<string, number>();
  for (const script of mapScripts) if (script.nonUtf8) nonUtf8.set(script.className, (nonUtf8.get(script.className) ?? 0) + 1);
  const summary = summariseImport(dom, {
    ...(excluded ? { excluded } : {}),
    scriptsSkipped: skip,
    joints,
    unsearchedParts,
    assemblies: assemblies(dom, joints, excluded),
    nonUtf8Scripts: nonUtf8,
  });
  const omit = omitted(skip);
  summary.not_imported.push(...otherOmissions(dom, omit, excluded));

  const tree = new InstanceTree(dom, {
    refId: (referent) => {
      const row = dom.rowOf(referent);
      return row === -1 || excluded?.[row] ? null : instanceId(row);
    },
  }, { ...(excluded ? { excluded } : {}), omit });

  const head = {
    format: PROJECT_FORMAT,
    version: PROJECT_VERSION,
    title: projectTitle(options.title, options.fileName),
    owner: options.owner,
    created_at: typeof options.createdAt === 'string' ? options.createdAt : options.createdAt.toISOString(),
    source: { preview_hash: options.previewHash, file_name: options.fileName, format: options.format ?? dom.format, size: options.fileSize },
    scripts_mode: mode,
    import: summary,
  };
  const generated = generatedJoints(dom, joints);
  const w = new JsonWriter(chunkBytes);
  w.text(`${JSON.stringify(head).slice(0, -1)},"classes":${tree.classesJson(undefined, generatedClasses(joints))},"shared_strings":`);
  yield* sharedStringsJson(w, dom);
  w.ascii(',"instances":');
  yield* instancesJson(w, tree, generated);
  w.ascii(',"scripts":');
  yield* scriptsJson(w, mapScripts, mode, options.scriptCodes);
  w.ascii(',"scene":');
  yield* sceneJson(w, dom, excluded);
  w.text(`,"assets":${JSON.stringify(options.assets.map(assetEntry))}}`);
  yield* w.flush();
}

/** The whole document as an object: `projectJson` parsed (for tests and tools; the service never holds it whole). */
export function buildProject(dom: Dom, options: BuildProjectOptions): ProjectDocument {
  return JSON.parse(Buffer.concat([...projectJson(dom, options)]).toString('utf8')) as ProjectDocument;
}

/** Properties left out that nothing else names: code of other classes in skip mode. */
function otherOmissions(dom: Dom, omit: ReturnType<typeof omitted>, excluded: Uint8Array | undefined): NotImported[] {
  const out: NotImported[] = [];
  for (const { className, columns, rows } of dom.tables) {
    if (isScriptClass(className) || className === 'Terrain') continue;
    let kept = 0;
    for (let i = 0; i < rows.length; i++) if (!excluded?.[rows[i]!]) kept++;
    if (kept === 0) continue;
    for (const [name, column] of columns) {
      if (omit(className, name, column.type)) out.push({ class: className, property: name, count: kept, reason: 'scripts_mode skip: code is not imported' });
    }
  }
  return out;
}

/** What a generated joint holds (its other properties keep the engine's defaults). */
const JOINT_SCHEMA: GeneratedSchema = [['Name', 'String'], ['Part0', 'Ref'], ['Part1', 'Ref'], ['C0', 'CFrame'], ['C1', 'CFrame']];

/** The classes of the generated joints, in SURFACE_JOINT_CLASSES's order, each with the joints' property list. */
function generatedClasses(joints: SurfaceJoints): Map<string, GeneratedSchema> {
  const seen = new Uint8Array(SURFACE_JOINT_CLASSES.length);
  for (let i = 0; i < joints.count; i++) seen[joints.kinds[i]!] = 1;
  const classes = new Map<string, GeneratedSchema>();
  SURFACE_JOINT_CLASSES.forEach((className, kind) => { if (seen[kind]) classes.set(className, JOINT_SCHEMA); });
  return classes;
}

/** The generated joints as instances: ids g0, g1, ..., under Part0, their frames written from the joints' columns. */
function generatedJoints(dom: Dom, joints: SurfaceJoints): GeneratedInstances {
  const className = (index: number): string => SURFACE_JOINT_CLASSES[joints.kinds[index]!]!;
  return {
    count: joints.count,
    schema: JOINT_SCHEMA,
    id: generatedId,
    className,
    name: className,
    parent: (index) => joints.part0[index]!,
    writeValue: (w, index, k, ctx) => {
      switch (k) {
        case 0: w.string(className(index)); break;
        case 1: ENCODERS.Ref(w, dom.referent(joints.part0[index]!), ctx); break;
        case 2: ENCODERS.Ref(w, dom.referent(joints.part1[index]!), ctx); break;
        default: w.float32Array(joints.frames, 24 * index + (k === 3 ? 0 : 12), 12);
      }
    },
  };
}

/** scripts[]: each map script packed (one at a time), with the mode applied; `skip` writes none. */
function* scriptsJson(w: JsonWriter, scripts: readonly MapScript[], mode: ScriptsMode, scriptCodes: ScriptCodes | undefined): Generator<Buffer> {
  w.byte(0x5b);
  if (mode !== 'skip' && scripts.length > 0) {
    const codesOf = scriptCodesOf(scripts, scriptCodes);
    for (let index = 0; index < scripts.length; index++) {
      if (index) w.byte(0x2c);
      // Field by field, as JSON.stringify would write the entry: its code (the source) can be
      // long enough that the entry's text as one string passes what V8 can make.
      const script = scripts[index]!;
      const meta = mapScriptMeta(script, codesOf(index), mode === 'disabled' ? false : undefined);
      w.ascii('{"id":'); w.string(meta.id!);
      w.ascii(',"name":'); w.string(meta.name);
      w.ascii(',"class":'); w.string(meta.class);
      w.ascii(',"path":'); w.string(meta.path);
      w.ascii(',"code":');
      // A binary file's valid UTF-8 source is escaped from its bytes, never decoded to text (packScript's code, the same JSON).
      if (script.bytes !== undefined && !script.nonUtf8) w.utf8String(packedHeader(meta), script.bytes);
      else w.string(packScript(meta, script.source));
      w.byte(0x7d);
      if (w.ready) yield* w.take();
    }
  }
  w.byte(0x5d);
}

/**
 * Every script of the map packed as the map has it (its own enabled state), with
 * its id and finding codes in the metadata line.
 */
export function packMapScripts(dom: Dom, scriptCodes?: ScriptCodes): ProjectScript[] {
  const scripts = readMapScripts(dom);
  const codesOf = scriptCodesOf(scripts, scriptCodes);
  return scripts.map((script, index) => packMapScript(script, codesOf(index)));
}

function packMapScript(script: MapScript, findings: string[], enabled?: boolean): ProjectScript {
  const meta = mapScriptMeta(script, findings, enabled);
  return { id: meta.id!, name: meta.name, class: meta.class, path: meta.path, code: packScript(meta, script.source) };
}

/** A map script's metadata line: `enabled` when given, else the map's own state. */
function mapScriptMeta(script: MapScript, findings: string[], enabled?: boolean): ScriptMeta {
  return {
    id: instanceId(script.row),
    name: script.name,
    class: script.className,
    path: script.path,
    run_context: script.runContext,
    enabled: enabled ?? script.enabled,
    linked: script.linked,
    findings,
  };
}

function scriptCodesOf(scripts: readonly MapScript[], scriptCodes: ScriptCodes | undefined): (index: number) => string[] {
  if (isScriptCodes(scriptCodes, scripts.length)) return (index) => codesOfBits(scriptCodes.bits[index]!);
  const findingsByScript = scanMapScripts(scripts);
  return (index) => findingCodes(findingsByScript[index]!);
}

/** A blank title becomes the file name without its directory and extension ("Untitled" when nothing is left). */
export function projectTitle(title: string, fileName: string): string {
  const trimmed = title.trim();
  if (trimmed) return trimmed;
  const base = fileName.slice(Math.max(fileName.lastIndexOf('/'), fileName.lastIndexOf('\\')) + 1);
  const dot = base.lastIndexOf('.');
  // A map's name always ends in its extension: `.rbxl` alone leaves nothing.
  const stem = (dot >= 0 ? base.slice(0, dot) : base).trim();
  return stem || 'Untitled';
}

/** An outcome as the document records it: every field but `cached` (a fact about this server's store), in snake_case. */
export function assetEntry(outcome: AssetOutcomeLike): AssetEntry {
  const entry: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(outcome)) {
    if (key === 'cached' || value === undefined) continue;
    entry[key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = value;
  }
  return entry as AssetEntry;
}
