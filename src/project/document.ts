/**
 * The project document: the versioned JSON the create step stores and the editor
 * opens. Plain data only, so `JSON.stringify` writes it as it is.
 */
import type { AssetKind } from '../assets/refs.js';
import type { AssetOutcome } from '../assets/download.js';
import type { AssetConversion } from '../assets/converted.js';
import type { AssetFailureReason } from '../assets/errors.js';
import type { Dom } from '../parser/dom.js';
import { readMapScripts, type MapScript } from './map-scripts.js';
import { codesOfBits, findingCodes, isScriptCodes, type ScriptCodes } from './report.js';
import { scanMapScripts } from './script-findings.js';
import { buildScene, type Scene } from './scene.js';
import { applyScriptsMode, packScript, type ProjectScript, type ScriptsMode } from './scripts.js';

export const PROJECT_FORMAT = 'rbxl-import/project';
export const PROJECT_VERSION = 1;

export type ProjectAsset =
  /** `conversion`: for meshes and union models, whether create converted them to glTF for scene.glb, and why not. */
  | { id: string; kind: AssetKind; ok: true; sha256: string; size: number; content_type: string; conversion?: AssetConversion }
  | { id: string; kind: AssetKind; ok: false; reason: AssetFailureReason; status?: number };

export interface ProjectDocument {
  format: typeof PROJECT_FORMAT;
  version: typeof PROJECT_VERSION;
  title: string;
  owner: string;
  /** ISO 8601, UTC. */
  created_at: string;
  source: { preview_hash: string; file_name: string; format: 'binary' | 'xml'; size: number };
  /** The mode the scripts were imported with. */
  scripts_mode: ScriptsMode;
  scene: Scene;
  /** Every asset of the map: downloaded (sha256, size, content type) or failed (reason). */
  assets: ProjectAsset[];
  scripts: ProjectScript[];
}

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
  assets: readonly AssetOutcome[];
  /**
   * The analysis's `scriptCodes` for this file. Used when the same scanner
   * found them and they fit the map (one entry per script); otherwise, as for
   * a preview stored before they were kept, every script is scanned again.
   */
  scriptCodes?: ScriptCodes;
}

export function buildProject(dom: Dom, options: BuildProjectOptions): ProjectDocument {
  return {
    format: PROJECT_FORMAT,
    version: PROJECT_VERSION,
    title: projectTitle(options.title, options.fileName),
    owner: options.owner,
    created_at: typeof options.createdAt === 'string' ? options.createdAt : options.createdAt.toISOString(),
    source: {
      preview_hash: options.previewHash,
      file_name: options.fileName,
      format: options.format ?? dom.format,
      size: options.fileSize,
    },
    scripts_mode: options.scriptsMode,
    scene: buildScene(dom),
    assets: options.assets.map(projectAsset),
    // `skip` imports none: no need to scan or pack them.
    scripts: options.scriptsMode === 'skip' ? [] : applyScriptsMode(packMapScripts(dom, options.scriptCodes), options.scriptsMode),
  };
}

/**
 * Every script of the map packed as the map has it (its own enabled state), with
 * its finding codes in the metadata line.
 */
export function packMapScripts(dom: Dom, scriptCodes?: ScriptCodes): ProjectScript[] {
  const scripts = readMapScripts(dom);
  const codesOf = isScriptCodes(scriptCodes, scripts.length)
    ? (index: number) => codesOfBits(scriptCodes.bits[index]!)
    : scannedCodes(scripts);
  return scripts.map((script, index) => ({
    name: script.name,
    class: script.className,
    path: script.path,
    code: packScript(
      {
        name: script.name,
        class: script.className,
        path: script.path,
        run_context: script.runContext,
        enabled: script.enabled,
        linked: script.linked,
        findings: codesOf(index),
      },
      script.source,
    ),
  }));
}

function scannedCodes(scripts: readonly MapScript[]): (index: number) => string[] {
  const findingsByScript = scanMapScripts(scripts);
  return (index) => findingCodes(findingsByScript[index]!);
}

/** A blank title becomes the file name without its directory and extension ("Untitled" when nothing is left). */
export function projectTitle(title: string, fileName: string): string {
  const trimmed = title.trim();
  if (trimmed) return trimmed;
  const base = fileName.slice(Math.max(fileName.lastIndexOf('/'), fileName.lastIndexOf('\\')) + 1);
  const dot = base.lastIndexOf('.');
  const stem = (dot > 0 ? base.slice(0, dot) : base).trim();
  return stem || 'Untitled';
}

function projectAsset(outcome: AssetOutcome): ProjectAsset {
  if (outcome.ok) {
    const asset: ProjectAsset = { id: outcome.id, kind: outcome.kind, ok: true, sha256: outcome.sha256, size: outcome.size, content_type: outcome.contentType };
    if (outcome.conversion) asset.conversion = outcome.conversion;
    return asset;
  }
  const failed: ProjectAsset = { id: outcome.id, kind: outcome.kind, ok: false, reason: outcome.reason };
  if (outcome.status !== undefined) failed.status = outcome.status;
  return failed;
}
