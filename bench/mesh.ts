/**
 * `npm run bench:mesh`: decode and conversion (to the glTF mesh create stores, see
 * src/scene/convert.ts) throughput (MB/s, triangles/s) of every mesh and union format,
 * side by side in one run: each corpus file of ../shared/corpus/meshes, and
 * larger generated inputs (a ~100k-triangle sphere written in each mesh and union
 * format by test/support/mesh-writer, collision blobs of many hulls, and hulls stored
 * as points only, whose triangles the decoder computes).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Bench } from 'tinybench';
import { decodeMeshAsset } from '../src/mesh/index.js';
import { convertMeshAsset } from '../src/scene/convert.js';
import {
  cubeHull, encodeDraco, writeCsgmdl, writeCsgmdl5, writeCsgphs, writeMeshChunked, writeMeshText, writeMeshV2, writeMeshV4,
  type HullModel, type MeshModel,
} from '../test/support/mesh-writer.js';
import { fmt, machine, SHARED, table, type Input } from './support.js';

const MESHES = join(SHARED, 'corpus', 'meshes');

function corpusMeshes(): Input[] {
  return readdirSync(MESHES)
    .filter((name) => name !== 'expected' && name !== 'README.md' && !name.startsWith('LICENSE'))
    .sort()
    .map((name) => ({ name, bytes: new Uint8Array(readFileSync(join(MESHES, name))) }));
}

/** A UV sphere of `rings` × `segments` quads (two triangles each), with normals, uvs and colours. */
function sphere(rings: number, segments: number): MeshModel {
  const count = (rings + 1) * (segments + 1);
  const positions = new Float32Array(count * 3), normals = new Float32Array(count * 3), uvs = new Float32Array(count * 2);
  const colors = new Uint8Array(count * 4).fill(255);
  for (let r = 0, v = 0; r <= rings; r++) {
    const theta = (r / rings) * Math.PI;
    for (let s = 0; s <= segments; s++, v++) {
      const phi = (s / segments) * Math.PI * 2;
      const n = [Math.sin(theta) * Math.cos(phi), Math.cos(theta), Math.sin(theta) * Math.sin(phi)];
      normals.set(n, v * 3);
      positions.set(n.map((x) => x * 4), v * 3);
      uvs.set([s / segments, r / rings], v * 2);
    }
  }
  const faces: number[] = [];
  for (let r = 0; r < rings; r++) {
    for (let s = 0; s < segments; s++) {
      const a = r * (segments + 1) + s, b = a + segments + 1;
      faces.push(a, b, a + 1, a + 1, b, b + 1);
    }
  }
  const triangles = faces.length / 3;
  return { positions, normals, uvs, colors, faces: Uint32Array.from(faces), lodOffsets: [0, triangles] };
}

/** Hulls of `points` random points each around `count` centres, stored as points only. */
function pointHulls(count: number, points: number): HullModel[] {
  let seed = 1;
  const random = (): number => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  return Array.from({ length: count }, (_, h) => {
    const positions = new Float32Array(points * 3);
    for (let i = 0; i < positions.length; i++) positions[i] = (random() - 0.5) * 2 + (i % 3 === 0 ? h * 3 : 0);
    return { positions, indices: new Uint32Array(0) };
  });
}

async function generated(): Promise<Input[]> {
  const big = sphere(224, 224);
  const triangles = big.faces.length / 3;
  const k = `${Math.round(triangles / 1000)}k`;
  const facs = { ...big, facs: new Uint8Array(64 << 10) };
  const union = { ...big, faces: big.faces.slice(0, Math.floor(big.faces.length / 3) * 3) };
  const small = sphere(40, 40);
  return [
    { name: `sphere ${k} tris, text 1.01`, bytes: writeMeshText(big, '1.01') },
    { name: `sphere ${k} tris, 2.00`, bytes: writeMeshV2(big, '2.00', 40) },
    { name: `sphere ${k} tris, 3.00`, bytes: writeMeshV2(big, '3.00', 40) },
    { name: `sphere ${k} tris, 4.01`, bytes: writeMeshV4(big, '4.01') },
    { name: `sphere ${k} tris, 5.00 (64 KB FACS)`, bytes: writeMeshV4(facs, '5.00') },
    { name: `sphere ${k} tris, 6.00`, bytes: writeMeshChunked(big, '6.00') },
    { name: `sphere ${k} tris, 7.00 Draco (raw floats)`, bytes: writeMeshChunked(big, '7.00', await encodeDraco(big)) },
    { name: `sphere ${k} tris, 7.00 Draco (14-bit positions)`, bytes: writeMeshChunked(big, '7.00', await encodeDraco(big, 14)) },
    { name: `sphere ${k} tris, CSGMDL 2`, bytes: writeCsgmdl(union, 2) },
    { name: `sphere 3k tris, CSGMDL 5`, bytes: writeCsgmdl5(small) },
    { name: 'CSGPHS 3, 2,000 cube hulls', bytes: writeCsgphs(Array.from({ length: 2000 }, (_, i) => cubeHull(1, [i * 3, 0, 0])), 3) },
    { name: 'CSGPHS 3, 200 hulls of 64 points only', bytes: writeCsgphs(pointHulls(200, 64), 3) },
  ];
}

function format(bytes: Uint8Array): string {
  const asset = decodeMeshAsset(bytes);
  return asset.kind === 'mesh' ? `mesh ${asset.version}${asset.header.draco ? ' Draco' : ''}`
    : asset.kind === 'union_graphics' ? `CSGMDL ${asset.version}`
      : asset.kind === 'union_physics' ? `CSGPHS ${asset.version}` : 'CSGK';
}

async function main(): Promise<void> {
  const inputs = [...corpusMeshes(), ...await generated()];
  const rows: (string | number)[][] = [];
  for (const input of inputs) {
    const asset = decodeMeshAsset(input.bytes);
    const triangles = (asset.geometry?.indices.length ?? 0) / 3;
    const big = input.bytes.length > 1e6;
    const bench = new Bench({ time: big ? 1500 : 500, iterations: big ? 5 : 20, warmupIterations: big ? 2 : 10 });
    bench.add('decode', () => { decodeMeshAsset(input.bytes); });
    const converts = convertMeshAsset(input.bytes).ok;
    if (converts) bench.add('convert', () => { convertMeshAsset(input.bytes); });
    await bench.run();
    const ms = (bench.tasks[0]!.result as { latency: { mean: number } }).latency.mean;
    const convertMs = converts ? (bench.tasks[1]!.result as { latency: { mean: number } }).latency.mean : NaN;
    rows.push([
      input.name,
      format(input.bytes),
      fmt(input.bytes.length / 1024, 1),
      triangles.toLocaleString('en-US'),
      fmt(ms, 3),
      fmt(input.bytes.length / 1e6 / (ms / 1000), 1),
      Math.round(triangles / (ms / 1000)).toLocaleString('en-US'),
      converts ? fmt(convertMs, 3) : 'not converted',
      converts ? fmt(input.bytes.length / 1e6 / (convertMs / 1000), 1) : '',
      converts ? Math.round(triangles / (convertMs / 1000)).toLocaleString('en-US') : '',
    ]);
    process.stderr.write(`${input.name}: ${fmt(ms, 3)} ms\n`);
  }
  process.stdout.write(`\nMesh decoder benchmark on ${machine()}\n\n`);
  process.stdout.write(table(['input', 'format', 'KB', 'triangles', 'decode ms', 'MB/s', 'triangles/s', 'convert ms', 'convert MB/s', 'convert triangles/s'], rows) + '\n');
}

await main();
