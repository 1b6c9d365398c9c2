/** `rbxl-import mesh FILE [--json]`: every position as stored, the counts, and one clean line (exit 2) for bad input. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from './support/cli.js';
import { MESHES_DIR, readMeshFile, snapshotPath } from './support/mesh-corpus.js';
import { field, inner, numbers, readSnapshot, type RustValue } from './support/rust-debug.js';

const cli = runCli;

async function meshJson(file: string): Promise<Record<string, unknown> & { positions: number[][]; text: string }> {
  const { code, stdout, stderr } = await cli('mesh', join(MESHES_DIR, file), '--json');
  assert.equal(code, 0, stderr);
  return { ...JSON.parse(stdout), text: stdout };
}

/** Positions printed in shortest form read back as exactly the float32 values of the reference. */
function assertSamePositions(printed: number[][], expected: number[]): void {
  assert.equal(printed.length * 3, expected.length);
  printed.forEach((p, i) => {
    for (let k = 0; k < 3; k++) assert.equal(Math.fround(p[k]!), Math.fround(expected[i * 3 + k]!), `position ${i}`);
  });
}

test('mesh --json prints every vertex position as stored, LOD 0 faces and the format\'s counts', async () => {
  const torso = await meshJson('torso.mesh');
  const snapshot = readSnapshot(snapshotPath('mesh__mesh_200'));
  assertSamePositions(torso.positions, (inner(field(snapshot, 'vertices')) as RustValue[]).flatMap((v) => numbers(field(v, 'pos'))));
  assert.deepEqual([torso.kind, torso.version, torso.faces, torso.lods], ['mesh', '2.00', 44, 1]);
  // Floats print in their shortest float32 form.
  assert.ok(torso.text.startsWith('{"kind":"mesh","version":"2.00","positions":[[-0.935,0.93499994,0.5],'), torso.text.slice(0, 80));

  const skinned = await meshJson('13674780763');
  assert.deepEqual([skinned.version, skinned.faces, skinned.facesStored, skinned.lods, skinned.bones, skinned.subsets], ['5.00', 1731, 2854, 3, 38, 6]);
  assert.equal((skinned.boneNames as string[]).length, 38);

  const draco = await meshJson('mesh7_127279296594138.bin');
  assert.deepEqual([draco.version, draco.positions.length, draco.faces, draco.draco], ['7.00', 408, 268, true]);

  const model = await meshJson('13626979828.meshdata5');
  assertSamePositions(model.positions, (field(readSnapshot(snapshotPath('union_graphics__meshdata_13626979828_5')), 'positions') as RustValue[]).flatMap(numbers));
  assert.deepEqual([model.kind, model.version, model.faces], ['union_graphics', '5', 1342]);

  const hulls = await meshJson('CSGPHS_8_00.data');
  const expected = numbers(field(field(field(readSnapshot(snapshotPath('union_physics__csgphs_8')), 'mesh'), 'hulls'), 'positions'));
  assertSamePositions(hulls.positions, expected);
  assert.deepEqual([hulls.kind, hulls.version, hulls.hulls, hulls.faces], ['union_physics', '8', 42, 1744]);

  const { text: _text, ...key } = await meshJson('CSGK.data');
  assert.deepEqual(key, { kind: 'union_key', version: 'CSGK', positions: [], faces: 0, vertices: 0, key: '039c79a787bce5e0a0576d6a374a0d1f' });
});

test('mesh without --json prints a one-line summary', async () => {
  const { code, stdout } = await cli('mesh', join(MESHES_DIR, 'sphere.mesh'));
  assert.equal(code, 0);
  assert.match(stdout, /^mesh 4\.01: 6144 vertices, 3072 faces, facesStored 5532, lods 5, .*\n$/);
});

test('bad mesh input: exit code 2 and one line naming the format, what and where', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rbxl-mesh-cli-'));
  try {
    const cases: Array<[string, Uint8Array, RegExp]> = [
      ['truncated.mesh', readMeshFile('sphere.mesh').subarray(0, 100), /^rbxl-import: mesh 4\.01: the header declares \d+ bytes of records .*\(byte offset 37\)$/],
      ['empty', new Uint8Array(0), /^rbxl-import: unknown: not a Roblox mesh or union blob: the input is empty \(byte offset 0\)$/],
      ['junk', new TextEncoder().encode('PK\x03\x04 not a mesh'), /^rbxl-import: unknown: not a Roblox mesh or union blob/],
      ['hull', readMeshFile('CSGPHS_8_00.data').subarray(0, 200), /^rbxl-import: CSGPHS 8: corrupt ZSTD data/],
    ];
    for (const [name, bytes, message] of cases) {
      const path = join(dir, name);
      writeFileSync(path, bytes);
      for (const args of [[path, '--json'], [path]]) {
        const { code, stdout, stderr } = await cli('mesh', ...args);
        assert.equal(code, 2, name);
        assert.equal(stdout, '');
        const lines = stderr.trimEnd().split('\n');
        assert.equal(lines.length, 1, `${name}: ${stderr}`);
        assert.match(lines[0]!, message);
      }
    }
    const usage = await cli('mesh', '--gltf', 'out.glb');
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /mesh takes exactly one FILE/);
    const unknown = await cli('mesh', join(dir, 'junk'), '--frob');
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown option --frob/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
