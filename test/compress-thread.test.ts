/**
 * The document compressor's own thread (src/project/compress-thread.ts): the bytes are
 * Brotli's at the stored quality, byte for byte; documents compressed at once keep
 * apart; a stream given up or a thread that ends fails what is open and never hangs; a
 * process that compressed a document still ends on its own.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { brotliDecompressSync } from 'node:zlib';
import { decode } from '../src/parser/index.js';
import { projectJson } from '../src/project/document.js';
import { pumpChunks } from '../src/project/json-stream.js';
import { COMPRESSOR_BUFFER_BYTES, documentCompressor } from '../src/project/compression.js';
import { endCompressorThread, threadCompressor } from '../src/project/compress-thread.js';
import { PLACES_DIR, REPO_ROOT } from './support/paths.js';

const run = promisify(execFile);

function documentOf(name: string): { json: Buffer[]; fileBytes: number } {
  const bytes = readFileSync(join(PLACES_DIR, name));
  const json = [...projectJson(decode(bytes), {
    title: 't', owner: 'o', createdAt: '2026-01-01T00:00:00.000Z', previewHash: '0'.repeat(64), fileName: name, fileSize: bytes.length, scriptsMode: 'disabled', assets: [],
  })].map((chunk) => Buffer.from(chunk));
  return { json, fileBytes: bytes.length };
}

async function compressed(json: Buffer[], encode: ReturnType<typeof threadCompressor>): Promise<Buffer> {
  const out: Buffer[] = [];
  await pumpChunks(json.map((chunk) => Buffer.from(chunk)), encode, async (source) => { for await (const piece of source) out.push(Buffer.from(piece)); });
  return Buffer.concat(out);
}

test('the thread\'s bytes are Brotli\'s at the stored quality, byte for byte, and read back as the document (small maps at quality 5, large at 1)', async () => {
  for (const name of ['rocket-arena-2006.rbxl', 'slime-defense.rbxl', 'booga.rbxl']) {
    const { json, fileBytes } = documentOf(name);
    const expected = await compressed(json, documentCompressor(fileBytes));
    const got = await compressed(json, threadCompressor(fileBytes));
    assert.ok(got.equals(expected), `${name}: ${got.length} bytes, ${expected.length} from zlib's stream`);
    assert.ok(brotliDecompressSync(got).equals(Buffer.concat(json)), name);
  }
});

test('documents compressed at once on the one thread keep apart', async () => {
  const documents = ['rocket-arena-2006.rbxl', 'grow-a-slime.rbxl', 'slime-defense.rbxl', 'rocket-arena-2006.rbxl'].map(documentOf);
  const results = await Promise.all(documents.map(({ json, fileBytes }) => compressed(json, threadCompressor(fileBytes))));
  results.forEach((bytes, index) => assert.ok(brotliDecompressSync(bytes).equals(Buffer.concat(documents[index]!.json)), `document ${index}`));
});

test('a stream given up part-way frees its place, and the next document compresses whole', async () => {
  const { json, fileBytes } = documentOf('slime-defense.rbxl');
  const failing = pumpChunks(json, threadCompressor(fileBytes), async (source) => {
    for await (const piece of source) { void piece; throw new Error('the disk went away'); }
  });
  await assert.rejects(failing, /the disk went away/);
  assert.ok(brotliDecompressSync(await compressed(json, threadCompressor(fileBytes))).equals(Buffer.concat(json)));
});

test('the thread ending fails the documents open on it (never a create that waits for ever); the next starts a new thread', { timeout: 30_000 }, async () => {
  const { json, fileBytes } = documentOf('booga.rbxl');
  const stream = threadCompressor(fileBytes);
  const pending = pumpChunks((function* () {
    yield json[0]!;
    yield json[1]!;
    // The writer is still writing when the thread goes.
    void endCompressorThread();
    for (const chunk of json.slice(2)) yield chunk;
  })(), stream, async (source) => { for await (const piece of source) void piece; });
  await assert.rejects(pending, /compressor's thread ended/);
  assert.ok(brotliDecompressSync(await compressed(json, threadCompressor(fileBytes))).equals(Buffer.concat(json)));
});

test('a process that compressed a document ends on its own: the idle thread keeps nothing alive', async () => {
  const module = join(REPO_ROOT, 'dist/src/project/compress-thread.js');
  const script = `
    import { threadCompressor } from ${JSON.stringify(module)};
    const stream = threadCompressor(1 << 20);
    let bytes = 0;
    stream.on('data', (piece) => { bytes += piece.length; });
    stream.on('end', () => console.log('compressed', bytes));
    stream.end(Buffer.from('{"a":1}'.repeat(1000)));
  `;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { timeout: 20_000 });
  assert.match(stdout, /^compressed \d+\n$/);
});

test('a reader that falls behind holds the writer back: compressed bytes waiting stay bounded, as with zlib\'s stream', { timeout: 60_000 }, async () => {
  // 64 MB of JSON that hardly compresses, read at 20 MB/s (a busy disk). Each read takes
  // whatever waits, so the largest piece read is the most that waited at once.
  const json = Array.from({ length: 256 }, () => Buffer.from(JSON.stringify(randomBytes(190 << 10).toString('base64'))));
  const stream = threadCompressor(1 << 20);
  let waited = 0;
  const out: Buffer[] = [];
  await pumpChunks(json, stream, async (source) => {
    for await (const piece of source) {
      waited = Math.max(waited, piece.length);
      out.push(Buffer.from(piece));
      await sleep(piece.length / 20_000);
    }
  });
  assert.ok(brotliDecompressSync(Buffer.concat(out)).equals(Buffer.concat(json)));
  // The readable side's mark, plus what the JSON in flight becomes (it went on piling up to tens of MB).
  assert.ok(waited <= 3 * COMPRESSOR_BUFFER_BYTES, `${(waited / 2 ** 20).toFixed(1)} MiB of compressed bytes waited for the reader at once`);
});
