/**
 * `npm run bench:convert`: what converting downloaded meshes costs a create. A generated
 * place with 500 distinct meshes (real corpus mesh and union files, each made distinct
 * in a way its format passes over: an unknown chunk for chunked meshes, trailing white
 * space for text meshes, a few trailing bytes otherwise) is created through the
 * real service from a loopback asset server; side by side, the same 500 files are
 * converted in this process. The conversion's share is its time over the create's.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { collectAssetRefs } from '../src/assets/refs.js';
import { startServer } from '../src/http/server.js';
import { decode } from '../src/parser/index.js';
import { encode } from '../src/parser/writer/index.js';
import { convertMeshAsset } from '../src/scene/convert.js';
import { startAssetServer } from '../test/support/asset-server.js';
import { generatePlace } from './generate.js';
import { fmt, machine, SHARED, table } from './support.js';

const FILES = ['sphere.mesh', 'torso.mesh', '5115672913', '158071912', '13674780763', '14818281896', 'mesh7_127279296594138.bin', '5648093777'];

/** `file` made distinct by `id` without changing its geometry. */
function distinct(file: Buffer, id: string): Buffer {
  const head = file.subarray(0, 12).toString('latin1');
  if (/^version [67]\./.test(head)) {
    // Chunked (v6, v7): an extra chunk of a type the decoder skips.
    const payload = Buffer.from(id);
    const header = Buffer.alloc(16);
    header.write('BENCHID\0', 0, 'latin1');
    header.writeUInt32LE(1, 8);
    header.writeUInt32LE(payload.length, 12);
    return Buffer.concat([file, header, payload]);
  }
  // Text (v1): the id's digits as runs of spaces, which end the file as white space.
  if (/^version 1\./.test(head)) return Buffer.concat([file, Buffer.from([...id].map((d) => ' '.repeat(Number(d) + 1)).join('\t'))]);
  return Buffer.concat([file, Buffer.from(`\n${id}`)]);
}

async function main(): Promise<void> {
  const target = Number(process.env.BENCH_MESHES ?? 500);
  // About 0.3 of parts are MeshParts, each naming a new mesh id while ids last.
  const place = encode(generatePlace({ parts: Math.ceil(target / 0.3) + 200, scripts: 4, uniqueAssets: target * 3, seed: 3 }));
  const refs = collectAssetRefs(decode(place));
  const meshIds = refs.ids.filter((ref) => ref.kind === 'mesh').map((ref) => ref.id);
  const scripts: Record<string, { type: 'bytes'; body: Uint8Array }> = {};
  const bodies: Uint8Array[] = [];
  meshIds.forEach((id, i) => {
    const file = readFileSync(join(SHARED, 'corpus', 'meshes', FILES[i % FILES.length]!));
    const body = distinct(file, id);
    bodies.push(body);
    scripts[id] = { type: 'bytes', body };
  });
  for (const ref of refs.ids) scripts[ref.id] ??= { type: 'bytes', body: Buffer.from(`${ref.kind} ${ref.id}`) };
  const assets = await startAssetServer({ assets: scripts });
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-convert-'));
  const server = await startServer({ host: '127.0.0.1', port: 0, dataDir, log: false, assetUrlTemplate: assets.templateUrl, assetRetries: 0, assetApiKey: null });
  try {
    const headers = { 'X-User-Id': 'bench' };
    const form = new FormData();
    form.append('file', new Blob([place as Uint8Array<ArrayBuffer>]), 'generated.rbxl');
    const analysis = await (await fetch(`${server.url}/api-rbxl/import/rbxl/analyze`, { method: 'POST', body: form, headers })).json() as { preview_hash: string };
    const started = performance.now();
    const response = await fetch(`${server.url}/api-rbxl/import/rbxl/create`, {
      method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body: JSON.stringify({ preview_hash: analysis.preview_hash }),
    });
    const created = await response.json() as { assets_downloaded: number; assets_not_converted: unknown[] };
    const createMs = performance.now() - started;

    // Side by side: the same files converted here, twice (the second run is the one kept).
    let convertMs = 0, triangles = 0, megabytes = 0;
    for (let round = 0; round < 2; round++) {
      triangles = 0; megabytes = 0;
      const t0 = performance.now();
      for (const body of bodies) {
        const result = convertMeshAsset(body);
        if (result.ok) triangles += result.info.triangles;
        megabytes += body.length / 1e6;
      }
      convertMs = performance.now() - t0;
    }
    process.stdout.write(`\nConversion's share of create on ${machine()}\n\n`);
    process.stdout.write(table(['distinct meshes', 'MB', 'triangles', 'create ms (download, convert, document)', 'conversion ms', 'conversion MB/s', 'conversion triangles/s', 'share of create', 'not converted'], [[
      meshIds.length.toLocaleString('en-US'), fmt(megabytes, 1), triangles.toLocaleString('en-US'), fmt(createMs, 0), fmt(convertMs, 0),
      fmt(megabytes / (convertMs / 1000), 1), Math.round(triangles / (convertMs / 1000)).toLocaleString('en-US'),
      `${fmt((100 * convertMs) / createMs, 0)}%`, created.assets_not_converted.length,
    ]]) + '\n');
  } finally {
    await server.close(1000);
    await assets.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
