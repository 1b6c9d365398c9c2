/**
 * The project summary: what the project page shows about a project without reading its
 * document (which can be hundreds of megabytes): its title and mode, the analysis of the
 * map it came from, and every asset's outcome. Written once at create, beside the
 * document, and served to the owner as `GET /api-rbxl/projects/{id}/summary`.
 */
import type { AssetOutcome } from '../assets/download.js';
import type { AssetConversion } from '../assets/converted.js';
import type { Report } from '../project/report.js';
import type { ScriptsMode } from '../project/scripts.js';

export const SUMMARY_FORMAT = 'rbxl-import/project-summary';
export const SUMMARY_VERSION = 1;

export interface SummaryAsset {
  id: string;
  kind: string;
  ok: boolean;
  /** Downloaded (or found in the store): the bytes' SHA-256 (served at /projects/{id}/assets/{sha256}) and size. */
  sha256?: string;
  size?: number;
  /** A downloaded mesh or union model: whether it was converted to glTF for scene.glb, and why not. */
  conversion?: AssetConversion;
  /** Failed: why (the create answer's `asset_failures` reasons), and the upstream status when there was one. */
  reason?: string;
  status?: number;
}

export interface ProjectSummary {
  format: typeof SUMMARY_FORMAT;
  version: typeof SUMMARY_VERSION;
  project_id: string;
  title: string;
  created_at: string;
  scripts_mode: ScriptsMode;
  file_name: string;
  file_size: number;
  /** Bytes of the document as stored (compressed with `document_encoding` when that is present). */
  document_bytes: number;
  /** Bytes of the document's JSON text, and how it is stored ('br'); absent in summaries written before. */
  document_json_bytes?: number;
  document_encoding?: 'br';
  assets_downloaded: number;
  assets_failed: number;
  /** Every asset of the map, in the order the map first uses them. */
  assets: SummaryAsset[];
  /** The analysis of the map the project was created from (its `file_name` the creator's own). */
  report: Report;
}

export interface SummaryInput {
  projectId: string;
  title: string;
  createdAt: string;
  scriptsMode: ScriptsMode;
  fileName: string;
  fileSize: number;
  documentBytes: number;
  documentJsonBytes?: number;
  documentEncoding?: 'br';
  outcomes: readonly AssetOutcome[];
  report: Report;
}

export function projectSummary(input: SummaryInput): ProjectSummary {
  const assets = input.outcomes.map((outcome): SummaryAsset => outcome.ok
    ? { id: outcome.id, kind: outcome.kind, ok: true, sha256: outcome.sha256, size: outcome.size, ...(outcome.conversion ? { conversion: outcome.conversion } : {}) }
    : { id: outcome.id, kind: outcome.kind, ok: false, reason: outcome.reason, ...(outcome.status !== undefined ? { status: outcome.status } : {}) });
  const failed = assets.filter((asset) => !asset.ok).length;
  return {
    format: SUMMARY_FORMAT,
    version: SUMMARY_VERSION,
    project_id: input.projectId,
    title: input.title,
    created_at: input.createdAt,
    scripts_mode: input.scriptsMode,
    file_name: input.fileName,
    file_size: input.fileSize,
    document_bytes: input.documentBytes,
    ...(input.documentJsonBytes !== undefined ? { document_json_bytes: input.documentJsonBytes } : {}),
    ...(input.documentEncoding !== undefined ? { document_encoding: input.documentEncoding } : {}),
    assets_downloaded: assets.length - failed,
    assets_failed: failed,
    assets,
    report: { ...input.report, file_name: input.fileName },
  };
}
