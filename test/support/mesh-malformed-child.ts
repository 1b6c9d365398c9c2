/**
 * Runs one suite of malformed mesh inputs in its own process (started by
 * test/mesh-malformed.test.ts with a V8 heap cap and a timeout) and prints a JSON
 * summary. Every typed array the decoder allocates is counted (the constructors are
 * wrapped before the decoder is loaded), so a count that reaches an allocation
 * unchecked shows up as a huge allocation, or as a RangeError, even when the
 * decoder then fails cleanly.
 *
 * Suites: truncations (every prefix of every corpus file), counts (lying counts and
 * offsets written over header fields), flips (seeded random byte changes), draco
 * (corrupt Draco streams inside a valid 7.00 file).
 */
let largest = 0;
for (const name of ['ArrayBuffer', 'Uint8Array', 'Int8Array', 'Uint16Array', 'Int16Array', 'Uint32Array', 'Int32Array', 'Float32Array', 'Float64Array'] as const) {
  const original = globalThis[name] as unknown as new (...args: unknown[]) => object;
  const bytesEach = name === 'ArrayBuffer' ? 1 : (original as unknown as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT;
  (globalThis as Record<string, unknown>)[name] = new Proxy(original, {
    construct(target, args, newTarget) {
      if (typeof args[0] === 'number') largest = Math.max(largest, args[0] * bytesEach);
      return Reflect.construct(target, args, newTarget === globalThis[name] ? target : newTarget);
    },
  });
}

const { decodeMeshAsset, MeshDecodeError } = await import('../../src/mesh/index.js');
const { deobfuscate } = await import('../../src/mesh/csg/obfuscation.js');
const { meshCorpusFiles, readMeshFile } = await import('./mesh-corpus.js');
import type { MalformedOutcome } from './mesh-corpus.js';
const { prng } = await import('./corpus.js');
const { compress, decompress, init } = await import('@bokuweb/zstd-wasm');
await init();


const outcome: MalformedOutcome = {
  cases: 0, decoded: 0, errors: 0, successes: {}, unexpected: [],
  largest: { bytes: 0, input: 0, what: '' }, worstRatio: { ratio: 0, what: '' }, slowest: { ms: 0, what: '' },
};

function attempt(file: string, label: number | string, bytes: Uint8Array): void {
  outcome.cases++;
  largest = 0;
  const started = performance.now();
  const what = `${file} ${typeof label === 'number' ? `cut at ${label}` : label}`;
  try {
    decodeMeshAsset(bytes);
    outcome.decoded++;
    (outcome.successes[file] ??= []).push(label);
  } catch (error) {
    if (!(error instanceof MeshDecodeError)) outcome.unexpected.push(`${what}: ${(error as Error)?.stack ?? String(error)}`);
    else if (/cannot decode:/.test(error.message)) outcome.unexpected.push(`${what}: allocation failed: ${error.message}`);
    else outcome.errors++;
  }
  const ms = performance.now() - started;
  if (ms > outcome.slowest.ms) outcome.slowest = { ms, what };
  if (largest > outcome.largest.bytes) outcome.largest = { bytes: largest, input: bytes.length, what };
  const ratio = largest / (bytes.length + 65536);
  if (ratio > outcome.worstRatio.ratio) outcome.worstRatio = { ratio, what };
}

const TEXT_MESH = '158071912';

/** The first `faces` faces of the text mesh, as a complete file of their own. */
function smallTextMesh(faces: number): Uint8Array {
  const text = new TextDecoder('latin1').decode(readMeshFile(TEXT_MESH));
  const [version, , data] = text.split('\r\n');
  let end = 0;
  for (let i = 0; i < faces * 9; i++) end = data!.indexOf(']', end) + 1;
  return new TextEncoder().encode(`${version}\r\n${faces}\r\n${data!.slice(0, end)}`);
}

function truncations(): void {
  for (const file of meshCorpusFiles()) {
    const bytes = readMeshFile(file);
    if (file === TEXT_MESH) {
      // Text is read front to back: every prefix of the 320 KB file costs a parse of it.
      // Every prefix near both ends and a seeded sample between; every prefix of a small file cut from it.
      const random = prng(14);
      const points = new Set<number>();
      for (let n = 0; n < 3000; n++) { points.add(n); points.add(bytes.length - 1 - n); }
      while (points.size < 7500) points.add(Math.floor(random() * bytes.length));
      for (const n of points) attempt(file, n, bytes.subarray(0, n));
      const small = smallTextMesh(30);
      for (let n = 0; n < small.length; n++) attempt(`${file} (30 faces)`, n, small.subarray(0, n));
      continue;
    }
    for (let n = 0; n < bytes.length; n++) attempt(file, n, bytes.subarray(0, n));
  }
}

// Past every cap, past the data, and just under the default caps (4 Mi vertices and triangles).
const HUGE = [0xffffffff, 0x7fffffff, 0x10000000, 0x00ffffff, 0x003fffff, 0x000fffff, 0x0000ffff, 0x00001000];

/** Each value written as a little-endian u32 at each offset of `span`, through `rewrite` (which re-frames the result). */
function overwrite(file: string, clear: Uint8Array, span: Iterable<number>, rewrite: (clear: Uint8Array) => Uint8Array, prefix = ''): void {
  for (const at of span) {
    if (at + 4 > clear.length) continue;
    for (const value of HUGE) {
      const copy = clear.slice();
      new DataView(copy.buffer).setUint32(at, value, true);
      attempt(file, `${prefix}u32 ${value.toString(16)} at ${at}`, rewrite(copy));
    }
  }
}

const range = (from: number, to: number): number[] => Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);

function counts(): void {
  for (const file of meshCorpusFiles()) {
    const bytes = readMeshFile(file);
    const text = String.fromCharCode(...bytes.subarray(0, 12));
    if (text.startsWith('version 1')) {
      for (const count of ['0', '1387', '1389', '1398101', '99999999', '4294967295', '-1', '1e3', ' ']) {
        const body = new TextDecoder('latin1').decode(bytes).replace(/\r\n\d+\r\n/, `\r\n${count}\r\n`);
        attempt(file, `face count ${count}`, new TextEncoder().encode(body));
      }
    } else if (text.startsWith('version 6') || text.startsWith('version 7')) {
      // Chunk headers and the first bytes of each chunk.
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      for (let at = 13; at + 16 <= bytes.length; at += 16 + view.getUint32(at + 12, true)) overwrite(file, bytes, range(at + 8, at + 40), (b) => b);
    } else if (text.startsWith('version')) {
      overwrite(file, bytes, range(13, 13 + 40), (b) => b);
    } else if (text.startsWith('CSGPHS') && bytes[6] === 8) {
      // The compressed payload's header: decompress, lie, compress again.
      const payload = decompress(bytes.subarray(12));
      overwrite(file, payload, range(0, 64), (p) => Uint8Array.from([...bytes.subarray(0, 12), ...compress(p, 3)]), 'payload ');
      overwrite(file, bytes, range(12, 24), (b) => b);
    } else if (text.startsWith('CSGPHS')) {
      overwrite(file, bytes, range(6, 6 + 80), (b) => b);
    } else if (text.startsWith('CSGK')) {
      overwrite(file, bytes, range(0, 36), (b) => b);
    } else {
      // CSGMDL: lie in clear, obfuscate again.
      const clear = deobfuscate(bytes);
      const v5 = clear[6] === 5;
      overwrite(file, clear, v5 ? range(6, 40) : range(6, 60), v5 ? (c) => Uint8Array.from([...bytes.subarray(0, 10), ...c.subarray(10)]) : deobfuscate);
      if (!v5) {
        // The index count after the vertices, and version 4's trailing list count.
        const view = new DataView(clear.buffer);
        const indexAt = 50 + view.getUint32(42, true) * 84;
        overwrite(file, clear, [indexAt, clear.length - 4 - 4 * view.getUint32(clear.length - 4, true), clear.length - 4], deobfuscate, 'tail ');
      } else {
        // Sections after the positions: counts and sizes, the index header and the markers.
        const random = prng(21);
        overwrite(file, clear, Array.from({ length: 60 }, () => 10 + Math.floor(random() * (clear.length - 14))), (c) => Uint8Array.from([...bytes.subarray(0, 10), ...c.subarray(10)]), 'body ');
      }
    }
  }
}

function flips(): void {
  const random = prng(99);
  for (const file of meshCorpusFiles()) {
    const bytes = readMeshFile(file);
    const rounds = bytes.length > 100_000 ? 60 : 300;
    for (let round = 0; round < rounds; round++) {
      const copy = bytes.slice();
      const changes = 1 + Math.floor(random() * 8);
      // Half the rounds aim at the first 256 bytes, where headers and counts are.
      const span = round % 2 ? copy.length : Math.min(copy.length, 256);
      for (let k = 0; k < changes; k++) copy[Math.floor(random() * span)] = Math.floor(random() * 256);
      attempt(file, `flips round ${round}`, copy);
    }
  }
}

function draco(): void {
  const file = 'mesh7_127279296594138.bin';
  const bytes = readMeshFile(file);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const chunkAt = 13;
  const size = view.getUint32(chunkAt + 12, true);
  const streamAt = chunkAt + 20;
  const streamLength = view.getUint32(chunkAt + 16, true);
  const rest = bytes.subarray(chunkAt + 16 + size);
  const random = prng(7);
  /** The file with the Draco stream replaced (chunk and stream sizes kept consistent). */
  const withStream = (stream: Uint8Array): Uint8Array => {
    const out = new Uint8Array(streamAt + stream.length + rest.length);
    out.set(bytes.subarray(0, streamAt));
    new DataView(out.buffer).setUint32(chunkAt + 12, stream.length + 4, true);
    new DataView(out.buffer).setUint32(chunkAt + 16, stream.length, true);
    out.set(stream, streamAt);
    out.set(rest, streamAt + stream.length);
    return out;
  };
  const stream = bytes.slice(streamAt, streamAt + streamLength);
  for (let n = 0; n < stream.length; n += n < 64 ? 1 : 37) attempt(file, `Draco stream cut at ${n}`, withStream(stream.subarray(0, n)));
  for (let at = 0; at < 64; at++) {
    for (const value of [0x00, 0xff, 0x80, 0x7f]) {
      const copy = stream.slice();
      copy[at] = value;
      attempt(file, `Draco byte ${at} = ${value}`, withStream(copy));
    }
  }
  for (let round = 0; round < 300; round++) {
    const copy = stream.slice();
    for (let k = 0; k < 1 + Math.floor(random() * 6); k++) copy[Math.floor(random() * copy.length)] = Math.floor(random() * 256);
    attempt(file, `Draco flips round ${round}`, withStream(copy));
  }
  // Absurd declared counts: the face and point varints (after the 11-byte header) set to 2^32 - 1 and to 2^22.
  for (const [faces, points] of [[[0xff, 0xff, 0xff, 0xff, 0x0f], [0x98, 0x03]], [[0x8c, 0x02], [0xff, 0xff, 0xff, 0xff, 0x0f]], [[0x80, 0x80, 0x80, 0x02], [0x80, 0x80, 0x80, 0x02]]]) {
    const copy = Uint8Array.from([...stream.subarray(0, 11), ...faces!, ...points!, ...stream.subarray(15)]);
    attempt(file, `Draco counts ${faces!.join('.')} / ${points!.join('.')}`, withStream(copy));
  }
  attempt(file, 'Draco stream of zeros', withStream(new Uint8Array(stream.length)));
  attempt(file, 'Draco point cloud', withStream(Uint8Array.from([...stream.subarray(0, 7), 0, ...stream.subarray(8)])));
  attempt(file, 'Draco version 3.0', withStream(Uint8Array.from([...stream.subarray(0, 5), 3, 0, ...stream.subarray(7)])));
}

const suites: Record<string, () => void> = { truncations, counts, flips, draco };
const suite = process.argv[2] ?? '';
if (!suites[suite]) throw new Error(`unknown suite ${suite}`);
suites[suite]();
process.stdout.write(JSON.stringify(outcome) + '\n');
