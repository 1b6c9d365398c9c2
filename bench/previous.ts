/**
 * The decoder as it was before the instance table (commit PREVIOUS_COMMIT, one object
 * per instance), for the side-by-side "previous" columns of `bench:parser`. Its
 * src/parser is taken from git into bench/out/ (ignored by git) and compiled there
 * with the project's TypeScript once; it resolves its dependencies from the
 * project's node_modules.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from './support.js';

/** The last commit whose decoder built an object per instance (main before issue 11). */
export const PREVIOUS_COMMIT = process.env.PREVIOUS_DECODER_COMMIT ?? 'ce6358b';

/** The parts of the previous DOM the benchmark reads. */
export interface PreviousDom {
  instances: { table: { columns: Map<string, { length: number; get(row: number): unknown }> } }[];
}

export interface PreviousDecoder {
  commit: string;
  decode(bytes: Uint8Array): PreviousDom;
}

/** Builds (once) and loads the previous decoder; null, with the reason on stderr, when it cannot be built here. */
export async function loadPreviousDecoder(): Promise<PreviousDecoder | null> {
  const dir = join(REPO_ROOT, 'bench', 'out', `previous-${PREVIOUS_COMMIT}`);
  const entry = join(dir, 'dist', 'src', 'parser', 'index.js');
  try {
    if (!existsSync(entry)) {
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      const archive = execFileSync('git', ['-C', REPO_ROOT, 'archive', '--format=tar', PREVIOUS_COMMIT, 'src/parser'], { maxBuffer: 64 << 20 });
      execFileSync('tar', ['-x', '-C', dir], { input: archive });
      execFileSync(process.execPath, [
        join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
        '--outDir', join(dir, 'dist'), '--rootDir', dir, '--module', 'nodenext', '--moduleResolution', 'nodenext',
        '--target', 'es2022', '--types', 'node', '--skipLibCheck', '--strict', join(dir, 'src', 'parser', 'index.ts'),
      ], { cwd: REPO_ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
    }
    const module = (await import(pathToFileURL(entry).href)) as { decode(bytes: Uint8Array): PreviousDom };
    return { commit: PREVIOUS_COMMIT, decode: module.decode };
  } catch (error) {
    process.stderr.write(`previous decoder (${PREVIOUS_COMMIT}) not available: ${(error as Error).message.split('\n')[0]}\n`);
    return null;
  }
}
