/** The mesh and union corpus (../shared/corpus/meshes) and helpers to compare decodings with its reference snapshots. */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CORPUS_DIR } from './paths.js';

export const MESHES_DIR = join(CORPUS_DIR, 'meshes');
export const MESH_EXPECTED_DIR = join(MESHES_DIR, 'expected');

/** Every mesh, union and key file of the corpus (not its README, licence or snapshots). */
export function meshCorpusFiles(): string[] {
  return readdirSync(MESHES_DIR)
    .filter((name) => name !== 'expected' && name !== 'README.md' && !name.startsWith('LICENSE'))
    .sort();
}

export function readMeshFile(name: string): Uint8Array {
  return new Uint8Array(readFileSync(join(MESHES_DIR, name)));
}

export function snapshotPath(name: string): string {
  return join(MESH_EXPECTED_DIR, `rbx_mesh__test__${name}.snap`);
}

/** Asserts `actual` matches `expected` value by value within `tolerance` (relative above 1), naming the first difference. */
export function assertClose(actual: ArrayLike<number> | undefined, expected: ArrayLike<number>, tolerance: number, what: string): void {
  assert.ok(actual, `${what}: missing`);
  assert.equal(actual.length, expected.length, `${what}: ${actual.length} values, expected ${expected.length}`);
  for (let i = 0; i < expected.length; i++) {
    const a: number = actual[i]!, e: number = expected[i]!;
    if (!(Math.abs(a - e) <= tolerance * Math.max(1, Math.abs(e)))) {
      assert.fail(`${what}[${i}] is ${a}, expected ${e} (within ${tolerance})`);
    }
  }
}

/** What a malformed-input suite (support/mesh-malformed-child.ts) reports. */
export interface MalformedOutcome {
  cases: number;
  decoded: number;
  errors: number;
  /** Prefix lengths (truncations) or case names that decoded without error, per file. */
  successes: Record<string, Array<number | string>>;
  /** Anything thrown that is not a MeshDecodeError, or a MeshDecodeError made from a RangeError. */
  unexpected: string[];
  /** The largest allocation of any case, and the largest relative to its input. */
  largest: { bytes: number; input: number; what: string };
  worstRatio: { ratio: number; what: string };
  slowest: { ms: number; what: string };
}
