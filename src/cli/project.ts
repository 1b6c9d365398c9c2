/**
 * `rbxl-import project FILE [--scripts MODE]`: the version 2 project document the
 * service would store for FILE, written offline as a stream (nothing is downloaded:
 * every asset is marked `not_downloaded`).
 */
import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { collectAssetRefs } from '../assets/refs.js';
import type { Dom } from '../parser/dom.js';
import { projectJson } from '../project/document.js';
import { isProjectError } from '../project/errors.js';
import { parseScriptsMode, type ScriptsMode } from '../project/scripts.js';

export interface ProjectCommandOptions {
  file: string;
  scriptsMode: ScriptsMode;
}

export class ProjectUsageError extends Error {}

export function parseProjectArgs(argv: string[]): ProjectCommandOptions | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        scripts: { type: 'string', default: 'disabled' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    throw new ProjectUsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) return 'help';
  if (positionals.length !== 1) throw new ProjectUsageError('project takes exactly one FILE');
  try {
    return { file: positionals[0]!, scriptsMode: parseScriptsMode(values.scripts ?? 'disabled') };
  } catch (error) {
    if (isProjectError(error)) throw new ProjectUsageError(error.message);
    throw error;
  }
}

/** The document's JSON as UTF-8 pieces, ending with a newline. */
export function* projectPieces(dom: Dom, bytes: Uint8Array, options: ProjectCommandOptions): Generator<Buffer> {
  const assets = collectAssetRefs(dom).ids.map(({ id, kind }) => ({ id, kind, ok: false as const, reason: 'not_downloaded' as const }));
  yield* projectJson(dom, {
    title: '', owner: '', createdAt: new Date(), previewHash: createHash('sha256').update(bytes).digest('hex'),
    fileName: basename(options.file), fileSize: bytes.length, scriptsMode: options.scriptsMode, assets,
  });
  yield Buffer.from('\n');
}
