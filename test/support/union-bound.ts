/**
 * One place of unions through the three assemblies that must stop at the same place-wide
 * bound: the service's analysis (its picture's warnings), its scene.glb build, and the
 * CLI's `gltf` (under the CLI's default limits, so it is given a heavier place).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import runTask from '../../src/workers/tasks.js';
import type { MeshLimits } from '../../src/mesh/index.js';
import { runCli } from './cli.js';

export interface BoundRun {
  /** The analysis's warnings. */
  warnings: string[];
  /** scene.glb's placeholders by reason. */
  placeholders: Record<string, number>;
  /** The CLI's exit code, stdout and stderr on `cliBytes`. */
  cli: { code: number; stdout: string; stderr: string };
}

export async function atTheSameBound(bytes: Uint8Array, mesh: Partial<MeshLimits>, cliBytes: Uint8Array): Promise<BoundRun> {
  const dir = mkdtempSync(join(tmpdir(), 'union-bound-'));
  try {
    const path = join(dir, 'unions.rbxl');
    writeFileSync(path, bytes);
    const limits = { maxFileBytes: 64 << 20, decode: {}, maxDocumentBytes: 256 << 20, mesh };
    const analysis = await runTask({ kind: 'analyze', path, fileName: 'unions.rbxl', fileSize: bytes.length, limits });
    if (!(analysis.ok && 'report' in analysis)) throw new Error(`the analysis failed: ${JSON.stringify(analysis)}`);
    const scene = await runTask({ kind: 'scene', path, dataDir: dir, assets: [], glbPath: join(dir, 'scene.glb'), maxBytes: 256 << 20, limits });
    if (!(scene.ok && 'placeholders' in scene)) throw new Error(`the scene build failed: ${JSON.stringify(scene)}`);
    writeFileSync(path, cliBytes);
    const cli = await runCli('gltf', path, join(dir, 'cli.glb'));
    return { warnings: analysis.report.warnings, placeholders: scene.placeholders, cli };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
