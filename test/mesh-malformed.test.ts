/**
 * Malformed meshes and union blobs give a MeshDecodeError, never a hang, a crash,
 * another exception or an allocation out of proportion to the input. The bulk
 * suites (every truncation point of every corpus file, lying counts, seeded byte
 * changes, corrupt Draco streams) run in a child process with a capped V8 heap and
 * a timeout, counting every typed array the decoder allocates
 * (support/mesh-malformed-child.ts); targeted cases below name the error they give.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { decodeMeshAsset, MeshDecodeError } from '../src/mesh/index.js';
import { deobfuscate } from '../src/mesh/csg/obfuscation.js';
import { meshCorpusFiles, readMeshFile, type MalformedOutcome } from './support/mesh-corpus.js';
import { REPO_ROOT } from './support/paths.js';
import { Bytes, cubeHull, writeCsgmdl5, writeCsgphs, writeMeshChunked, writeMeshV4, type MeshModel } from './support/mesh-writer.js';

const run = promisify(execFile);
const CHILD = join(REPO_ROOT, 'dist/test/support/mesh-malformed-child.js');


async function runSuite(suite: string): Promise<MalformedOutcome> {
  const { stdout } = await run(process.execPath, ['--max-old-space-size=192', CHILD, suite], { timeout: 600_000, maxBuffer: 64 << 20 });
  return JSON.parse(stdout) as MalformedOutcome;
}

/** No exception but MeshDecodeError, and no allocation beyond 64 bytes per input byte (plus 4 MiB). */
function assertClean(outcome: MalformedOutcome): void {
  assert.deepEqual(outcome.unexpected.slice(0, 5), [], `${outcome.unexpected.length} inputs threw something else than a MeshDecodeError`);
  assert.ok(outcome.errors > 0);
  const { bytes, input, what } = outcome.largest;
  assert.ok(bytes <= input * 64 + (4 << 20), `${what}: allocated ${bytes} bytes for a ${input}-byte input`);
}

/** Where a CSGPHS 3/5 blob's hull records end (each a valid shorter blob). */
function hullEnds(bytes: Uint8Array): number[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const ends: number[] = [];
  let at = 10;
  while (at < bytes.length) {
    at += 4 + view.getUint32(at, true);
    at += 4 + view.getUint32(at, true);
    at += 8 + 4 * view.getUint32(at, true);
    at += 4 + 4 * view.getUint32(at, true);
    ends.push(at);
  }
  return ends;
}

/** Where a 6.00/7.00 file's chunks end once COREMESH is complete (each a valid shorter file). */
function chunkEndsAfterCore(bytes: Uint8Array): number[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const ends: number[] = [];
  let core = false;
  for (let at = bytes.indexOf(0x0a) + 1; at < bytes.length;) {
    core ||= String.fromCharCode(...bytes.subarray(at, at + 8)) === 'COREMESH';
    at += 16 + view.getUint32(at + 12, true);
    if (core) ends.push(at);
  }
  return ends;
}

test('every truncation point of every corpus file is a MeshDecodeError, except cuts that leave a complete shorter file', async () => {
  const outcome = await runSuite('truncations');
  assertClean(outcome);
  const expected: Record<string, number[]> = {};
  for (const file of meshCorpusFiles()) {
    const bytes = readMeshFile(file);
    const valid = /^CSGPHS_[35]/.test(file) ? hullEnds(bytes) : file.startsWith('mesh7') ? chunkEndsAfterCore(bytes) : [];
    const cuts = valid.filter((n) => n < bytes.length);
    if (cuts.length) expected[file] = cuts;
  }
  assert.deepEqual(outcome.successes, expected);
  assert.ok(outcome.cases > 1_000_000, `${outcome.cases} truncations tried`);
});

test('lying counts and absurd offsets over every header field give MeshDecodeErrors, never a large allocation', async () => {
  const outcome = await runSuite('counts');
  assertClean(outcome);
  assert.ok(outcome.cases > 5000);
});

test('seeded random byte changes give a MeshDecodeError or a decoding, never anything else', async () => {
  const outcome = await runSuite('flips');
  assertClean(outcome);
});

test('corrupt Draco streams (cut, bytes changed, absurd counts, zeros, a point cloud, an unknown version) give MeshDecodeErrors', async () => {
  const outcome = await runSuite('draco');
  assertClean(outcome);
  const decoded = (outcome.successes['mesh7_127279296594138.bin'] ?? []).map(String);
  const mustFail = decoded.filter((label) => /^Draco (counts|stream of zeros|point cloud|version)|^Draco stream cut/.test(label));
  assert.deepEqual(mustFail, []);
  assert.ok(outcome.cases >= 900);
});

function rejects(bytes: Uint8Array, format: string, message: RegExp): void {
  assert.throws(() => decodeMeshAsset(bytes), (error: unknown) => {
    assert.ok(error instanceof MeshDecodeError, String(error));
    assert.equal(error.format, format);
    assert.match(error.what, message);
    assert.ok(Number.isInteger(error.offset) && error.offset >= 0 && error.offset <= bytes.length, `offset ${error.offset}`);
    return true;
  });
}

/** A 4-vertex, 2-face model with one bone and one subset. */
function tinyModel(): MeshModel {
  return {
    positions: Float32Array.of(0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0),
    normals: Float32Array.of(0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1),
    uvs: new Float32Array(8),
    faces: Uint32Array.of(0, 1, 2, 2, 1, 3),
    lodOffsets: [0, 2],
    skin: {
      envelopes: Uint8Array.from({ length: 32 }, (_, i) => (i % 8 === 4 ? 255 : 0)),
      bones: [{ name: 'Root', parent: -1, rotation: [1, 0, 0, 0, 1, 0, 0, 0, 1], position: [0, 0, 0] }],
      subsets: [{ faceStart: 0, faceCount: 2, vertexStart: 0, vertexCount: 4, bones: [0] }],
    },
  };
}

test('targeted lies in meshes name what is wrong: counts, indices, LOD tables, bones, subsets, chunks', () => {
  const base = writeMeshV4(tinyModel(), '4.00');
  const patch = (bytes: Uint8Array, at: number, value: number, size: 2 | 4 = 4): Uint8Array => {
    const copy = bytes.slice();
    const view = new DataView(copy.buffer);
    if (size === 2) view.setUint16(at, value, true); else view.setUint32(at, value, true);
    return copy;
  };
  const body = 13; // after "version 4.00\n"
  rejects(patch(base, body + 4, 5), 'mesh 4.00', /header declares \d+ bytes of records/);
  rejects(patch(base, body + 4, 0xffffffff), 'mesh 4.00', /vertex count 4294967295 exceeds the limit/);
  const facesAt = body + 24 + 4 * 40 + 4 * 8;
  rejects(patch(base, facesAt + 4, 4), 'mesh 4.00', /face 0 names vertex 4, but there are 4/);
  const withLods = writeMeshV4({ ...tinyModel(), lodOffsets: [0, 2, 1] }, '4.00');
  rejects(withLods, 'mesh 4.00', /LOD table entry 2 \(1\) is out of order/);
  const bonesAt = facesAt + 24 + 2 * 4;
  rejects(patch(base, bonesAt + 4, 3, 2), 'mesh 4.00', /bone 0's parent 3 is past the 1 bones/);
  rejects(patch(base, bonesAt + 4, 0, 2), 'mesh 4.00', /bone 0's parents form a cycle/);
  rejects(patch(base, bonesAt, 99), 'mesh 4.00', /name offset 99 is past the 5-byte name table/);
  const subsetAt = bonesAt + 60 + 5;
  rejects(patch(base, subsetAt + 12, 9), 'mesh 4.00', /subset 0 .* runs past the mesh/);
  rejects(patch(base, subsetAt + 16, 0), 'mesh 4.00', /weights bone slot 0 of a subset with 0 bones/);

  const chunked = writeMeshChunked(tinyModel(), '6.00');
  rejects(patch(chunked, 13 + 12, 1 << 20), 'mesh 6.00', /COREMESH chunk of 1048576 bytes: need 1048576 bytes/);
  const chunkAt = (type: string): number => Buffer.from(chunked).toString('latin1').indexOf(type);
  // Fewer envelopes than vertices: the chunk frames, its count disagrees with COREMESH.
  const model = tinyModel();
  const fewer = writeMeshChunked({ ...model, skin: { ...model.skin!, envelopes: model.skin!.envelopes.subarray(0, 24) } }, '6.00');
  rejects(fewer, 'mesh 6.00', /SKINNING has 3 envelopes for 4 vertices/);
  const twoCores = new Bytes().bytes(chunked).bytes(chunked.subarray(chunkAt('COREMESH'), chunkAt('LODS'))).done();
  rejects(twoCores, 'mesh 6.00', /a second COREMESH chunk/);
  // A Draco stream cut in half, its chunk and stream sizes made to agree: Draco itself refuses it.
  const v7 = readMeshFile('mesh7_127279296594138.bin');
  const v7view = new DataView(v7.buffer, v7.byteOffset);
  const half = v7view.getUint32(13 + 16, true) >> 1;
  const cut = new Bytes().bytes(v7.subarray(0, 13)).text('COREMESH').u32(2).u32(half + 4).u32(half).bytes(v7.subarray(33, 33 + half)).done();
  rejects(cut, 'mesh 7.00', /corrupt Draco stream/);
  rejects(new TextEncoder().encode('version 6.00\nLODS\0\0\0\0\x01\0\0\0\x07\0\0\0\0\0\0\0\0\0\0'), 'mesh 6.00', /no COREMESH chunk/);
  rejects(new TextEncoder().encode('version 1.00\r\n2\r\n[1,2,3][0,0,1][0,0,0]'), 'mesh 1.00', /face count 2 needs at least/);
  rejects(new TextEncoder().encode('version 1.01\r\n1\r\n[1,2,3][0,0,1][0,0,0][1,2,3][0,0,1][0,0,0][1,2,3][0,0,1][0,x,0]'), 'mesh 1.01', /expected a number|is not a number/);
});

test('targeted lies in union blobs name what is wrong', () => {
  const box = tinyModel();
  // CSGMDL 5: an index past the positions (the delta code reaches 9), and range markers out of order.
  rejects(writeCsgmdl5({ ...box, faces: Uint32Array.of(0, 1, 9) }), 'CSGMDL 5', /names vertex 9, but there are 4/);
  const v5 = writeCsgmdl5(box);
  const markers = v5.slice();
  new DataView(markers.buffer).setUint32(markers.length - 4, 99, true);
  rejects(markers, 'CSGMDL 5', /range marker 1 \(99\) is out of order or past the 6 indices/);
  // CSGMDL 2: a vertex size that is not 84, written in clear and obfuscated again.
  const clear = deobfuscate(deobfuscate(new Bytes().text('CSGMDL').u32(2).bytes(new Uint8Array(32)).u32(1).u32(80).bytes(new Uint8Array(80)).u32(0).done()));
  rejects(deobfuscate(clear), 'CSGMDL 2', /vertex size 80 is not 84/);
  // CSGPHS: indices past the hull's points, a float count that is not whole points, a stray byte after version 6's hulls.
  rejects(writeCsgphs([{ positions: cubeHull().positions, indices: Uint32Array.of(0, 1, 8) }], 3), 'CSGPHS 3', /hull 0 triangle 0 names vertex 8, but there are 8/);
  rejects(writeCsgphs([{ positions: new Float32Array(4), indices: new Uint32Array(0) }], 5), 'CSGPHS 5', /hull 0 has 4 floats, not whole points/);
  rejects(new Bytes().bytes(writeCsgphs([cubeHull()], 6)).u8(0).done(), 'CSGPHS 6', /hull 1's first block size/);
  rejects(new TextEncoder().encode('CSGPHS\0\0\0\0BLOCKS'), 'CSGPHS 0', /holds only the text "BLOCK"/);
  rejects(new TextEncoder().encode('CSGPHS\x03\0\0\0'), 'CSGPHS 3', /no hulls/);
  rejects(new TextEncoder().encode('CSGK039c79a787bce5e0a0576d6a374a0d1g'), 'CSGK', /key byte 31 is not a hexadecimal digit/);
  // CSGPHS 8: a frame that is not ZSTD, and one that declares more than its expansion cap.
  rejects(new TextEncoder().encode('CSGPHS\x08\0\0\0\0\0notzstd!'), 'CSGPHS 8', /not a ZSTD frame/);
  const frame = readMeshFile('CSGPHS_8_05.data').slice();
  frame[16] = 0x80 | (frame[16]! & 0x3f); // frame header descriptor: 4-byte content size…
  new DataView(frame.buffer).setUint32(17, 0x7fffffff, true); // …of 2 GiB
  rejects(frame, 'CSGPHS 8', /declares 2147483647 bytes/);
});
