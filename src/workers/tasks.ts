/**
 * The worker side of the pool: everything CPU-bound (decoding, analysis, building
 * and serialising the project document, patching script metadata) runs here, so
 * the main thread only moves bytes. Files are read here too: no upload crosses
 * the thread boundary. Malformed input comes back as a value, not a throw, so the
 * main thread can tell "not a place" (422) from a bug (500).
 */
import { readFileSync } from 'node:fs';
import { decode } from '../parser/index.js';
import { DecodeError } from '../parser/errors.js';
import { analyzeDom, type Analysis } from '../project/report.js';
import { buildProject, type BuildProjectOptions } from '../project/document.js';

export interface AnalyzeTask {
  kind: 'analyze';
  path: string;
  fileName: string;
  fileSize: number;
}

export type AnalyzeResult =
  | ({ ok: true; format: 'binary' | 'xml' } & Analysis)
  | { ok: false; message: string };

export interface BuildTask extends Omit<BuildProjectOptions, 'createdAt'> {
  kind: 'build';
  path: string;
  createdAt: string;
}

export type BuildResult =
  | { ok: true; json: string; assetHashes: string[] }
  | { ok: false; message: string; missing?: boolean };

export type Task = AnalyzeTask | BuildTask;

export default function runTask(task: Task): AnalyzeResult | BuildResult {
  try {
    const dom = decode(readFileSync(task.path));
    if (task.kind === 'analyze') {
      const analysis = analyzeDom(dom, { fileName: task.fileName, fileSize: task.fileSize });
      return { ok: true, format: dom.format, ...analysis };
    }
    const { kind: _kind, path: _path, ...options } = task;
    const document = buildProject(dom, options);
    const assetHashes = [...new Set(task.assets.flatMap((asset) => (asset.ok ? [asset.sha256] : [])))];
    return { ok: true, json: JSON.stringify(document), assetHashes };
  } catch (error) {
    if (error instanceof DecodeError) return { ok: false, message: error.message };
    // The preview expired and was swept between the create's check and this read.
    if ((error as NodeJS.ErrnoException)?.code === 'ENOENT') return { ok: false, message: 'preview file is gone', missing: true };
    throw error;
  }
}
