import { after, test } from 'node:test';
import assert from 'node:assert/strict';
// A deterministic PRNG, so a failing split can be reproduced.
import { prng as random } from './support/corpus.js';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createUploadSink, UploadSinkClosedError } from '../src/http/upload-sink.js';
import {
  createMultipartParser,
  isMultipartError,
  MultipartError,
  parseBoundary,
  type MultipartErrorCode,
  type MultipartLimits,
  type PartHeaders,
} from '../src/http/multipart.js';

interface Part {
  headers: PartHeaders;
  data: Buffer;
}

/** Serialises a FormData the way fetch would send it. */
async function encode(form: FormData): Promise<{ boundary: string; body: Uint8Array }> {
  const response = new Response(form);
  const boundary = parseBoundary(response.headers.get('content-type') ?? '');
  return { boundary, body: new Uint8Array(await response.arrayBuffer()) };
}

/**
 * Feeds `body` in the given pieces through one reused scratch buffer that is scribbled
 * over after every write, so a parser that kept views of its input would be caught.
 */
function parse(boundary: string, body: Uint8Array, sizes: Iterable<number>, limits?: Partial<MultipartLimits>): Part[] {
  const parts: Part[] = [];
  let current: { headers: PartHeaders; pieces: Buffer[] } | null = null;
  let open = false;
  const parser = createMultipartParser(
    boundary,
    {
      onPartBegin(headers) {
        assert.equal(open, false, 'part begins inside a part');
        open = true;
        current = { headers, pieces: [] };
      },
      onPartData(data) {
        assert.equal(open, true, 'data outside a part');
        assert.ok(data.length > 0, 'empty data piece');
        current!.pieces.push(Buffer.from(data));
      },
      onPartEnd() {
        assert.equal(open, true, 'part ends outside a part');
        open = false;
        parts.push({ headers: current!.headers, data: Buffer.concat(current!.pieces) });
      },
    },
    limits,
  );
  const scratch = Buffer.alloc(body.length + 1);
  let offset = 0;
  for (const size of sizes) {
    if (offset >= body.length) break;
    const end = Math.min(body.length, offset + size);
    const piece = scratch.subarray(0, end - offset);
    piece.set(body.subarray(offset, end));
    parser.write(piece);
    piece.fill(0x2d);
    offset = end;
  }
  if (offset < body.length) parser.write(body.subarray(offset));
  parser.end();
  assert.equal(open, false);
  return parts;
}

function* ones(): Iterable<number> {
  for (;;) yield 1;
}

function* randomSizes(next: () => number, max: number): Iterable<number> {
  for (;;) yield 1 + Math.floor(next() * max);
}

function whole(body: Uint8Array): number[] {
  return [body.length];
}

/** Bytes that stress a boundary search: CR, LF, dashes and pieces of the delimiter itself. */
function trickyBytes(next: () => number, boundary: string, length: number): Buffer {
  const pieces = ['\r', '\n', '\r\n', '-', '--', '\r\n--', '\r\r\n--', `\r\n--${boundary.slice(0, -1)}`, `--${boundary}`, `\r\n-${boundary}`, boundary];
  const out: Buffer[] = [];
  let size = 0;
  while (size < length) {
    const roll = next();
    const piece =
      roll < 0.5
        ? Buffer.from(pieces[Math.floor(next() * pieces.length)]!, 'latin1')
        : Buffer.from([Math.floor(next() * 256)]);
    out.push(piece);
    size += piece.length;
  }
  return Buffer.concat(out).subarray(0, length);
}

function assertMultipartError(action: () => unknown, code: MultipartErrorCode): MultipartError {
  let caught: unknown;
  try {
    action();
  } catch (error) {
    caught = error;
  }
  assert.ok(isMultipartError(caught), `expected MultipartError(${code}), got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  assert.ok(caught.message.length > 0);
  return caught;
}

const BOUNDARY = 'X-BOUNDARY';

function manual(...lines: string[]): Uint8Array {
  return Buffer.from(lines.join('\r\n'), 'utf8');
}

test('parseBoundary reads token and quoted boundaries', () => {
  assert.equal(parseBoundary('multipart/form-data; boundary=abc'), 'abc');
  assert.equal(parseBoundary('Multipart/Form-Data;boundary="a b:c?"; charset=utf-8'), 'a b:c?');
  assert.equal(parseBoundary('multipart/form-data; charset=utf-8; BOUNDARY=----formdata-undici-0123'), '----formdata-undici-0123');
  assert.equal(parseBoundary(`multipart/form-data; boundary=${'a'.repeat(70)}`), 'a'.repeat(70));
});

test('parseBoundary rejects missing and invalid boundaries and other types', () => {
  assertMultipartError(() => parseBoundary('application/json'), 'not_multipart');
  assertMultipartError(() => parseBoundary(''), 'not_multipart');
  assertMultipartError(() => parseBoundary('multipart/mixed; boundary=abc'), 'not_multipart');
  assertMultipartError(() => parseBoundary('multipart/form-data'), 'invalid_boundary');
  assertMultipartError(() => parseBoundary('multipart/form-data; charset=utf-8'), 'invalid_boundary');
  assertMultipartError(() => parseBoundary('multipart/form-data; boundary='), 'invalid_boundary');
  assertMultipartError(() => parseBoundary('multipart/form-data; boundary=""'), 'invalid_boundary');
  assertMultipartError(() => parseBoundary(`multipart/form-data; boundary=${'a'.repeat(71)}`), 'invalid_boundary');
  assertMultipartError(() => parseBoundary('multipart/form-data; boundary="abc "'), 'invalid_boundary');
  assertMultipartError(() => parseBoundary('multipart/form-data; boundary="a\rb"'), 'invalid_boundary');
  assertMultipartError(() => parseBoundary('multipart/form-data; boundary=a;b'), 'invalid_boundary');
  assertMultipartError(() => parseBoundary('multipart/form-data; boundary="unterminated'), 'invalid_boundary');
  assert.throws(() => createMultipartParser('bad\r\nboundary', { onPartBegin() {}, onPartData() {}, onPartEnd() {} }), MultipartError);
});

test('a FormData body with fields and a binary file, whole, byte by byte and in random splits', async () => {
  const probe = await encode(new FormData());
  const content = Buffer.concat([
    Buffer.from('<roblox!\x89\xff\r\n\x1a\n\x00\x00', 'latin1'),
    Buffer.from(`\r\n--${probe.boundary}`, 'latin1'), // another body's delimiter: plain content here
    Buffer.from('\r\n------formdata-undici-0\r\n--\r\r\n-\r\n--', 'latin1'),
    Buffer.from([0, 1, 2, 255, 13]),
  ]);
  const form = new FormData();
  form.append('title', 'Café "map"');
  form.append('file', new Blob([content]), 'my map.rbxl');
  form.append('empty', new Blob([]), 'empty.bin');
  form.append('note', '');
  const { boundary, body } = await encode(form);
  const next = random(1);
  for (const sizes of [whole(body), ones(), randomSizes(next, 7), randomSizes(next, 300), randomSizes(next, 4096)]) {
    const parts = parse(boundary, body, sizes);
    assert.deepEqual(
      parts.map((part) => part.headers),
      [
        { name: 'title', filename: null, contentType: null },
        { name: 'file', filename: 'my map.rbxl', contentType: 'application/octet-stream' },
        { name: 'empty', filename: 'empty.bin', contentType: 'application/octet-stream' },
        { name: 'note', filename: null, contentType: null },
      ],
    );
    assert.equal(parts[0]!.data.toString('utf8'), 'Café "map"');
    assert.deepEqual(parts[1]!.data, content);
    assert.equal(parts[2]!.data.length, 0);
    assert.equal(parts[3]!.data.length, 0);
  }
});

test('random FormData bodies with delimiter-like content survive random splits', async () => {
  const next = random(42);
  const probe = await encode(new FormData());
  for (let round = 0; round < 150; round++) {
    const form = new FormData();
    const expected: { name: string; filename: string | null; data: Buffer }[] = [];
    const count = 1 + Math.floor(next() * 4);
    for (let i = 0; i < count; i++) {
      const data = trickyBytes(next, probe.boundary, Math.floor(next() * 600));
      if (next() < 0.7) {
        form.append(`file${i}`, new Blob([Uint8Array.from(data)]), `f${i}.rbxl`);
        expected.push({ name: `file${i}`, filename: `f${i}.rbxl`, data });
      } else {
        // Text fields are sent as UTF-8 with line breaks normalised to CRLF.
        const text = data.toString('latin1');
        form.append(`field${i}`, text);
        expected.push({ name: `field${i}`, filename: null, data: Buffer.from(text.replace(/\r\n|\r|\n/g, '\r\n'), 'utf8') });
      }
    }
    const { boundary, body } = await encode(form);
    const sizes = round % 10 === 0 ? ones() : randomSizes(next, 1 + Math.floor(next() * 200));
    const parts = parse(boundary, body, sizes);
    assert.deepEqual(
      parts.map((part) => ({ name: part.headers.name, filename: part.headers.filename, data: part.data })),
      expected,
      `round ${round}`,
    );
  }
});

test('preamble, epilogue, transport padding, folded and extended headers', () => {
  const body = manual(
    'This is a preamble.',
    `--${BOUNDARY}   `,
    'content-disposition: form-data;',
    '  name="a\\"b"; filename*=UTF-8\'\'na%C3%AFve%20map.rbxl; filename="fallback.rbxl"',
    'Content-Type:  application/x-roblox  ',
    '',
    'one',
    `--${BOUNDARY}`,
    'Content-Disposition: form-data; name=plain; filename="C:\\maps\\x.rbxl"',
    '',
    '',
    `--${BOUNDARY}\t`,
    'Content-Disposition: form-data; name="last"',
    '',
    'two\r\n',
    `--${BOUNDARY}--`,
    'This is the epilogue, with a fake boundary:',
    `--${BOUNDARY}`,
  );
  const next = random(7);
  for (const sizes of [whole(body), ones(), randomSizes(next, 5)]) {
    const parts = parse(BOUNDARY, body, sizes);
    assert.deepEqual(
      parts.map((part) => part.headers),
      [
        { name: 'a"b', filename: 'naïve map.rbxl', contentType: 'application/x-roblox' },
        { name: 'plain', filename: 'C:\\maps\\x.rbxl', contentType: null },
        { name: 'last', filename: null, contentType: null },
      ],
    );
    assert.deepEqual(
      parts.map((part) => part.data.toString('utf8')),
      ['one', '', 'two\r\n'],
    );
  }
});

test('a body with no parts at all is complete', () => {
  assert.deepEqual(parse(BOUNDARY, manual(`--${BOUNDARY}--`), ones()), []);
  assert.deepEqual(parse(BOUNDARY, manual(`--${BOUNDARY}--`, ''), whole(new Uint8Array(1))), []);
});

test('content ending in CR, or in most of a delimiter, right before the real one', () => {
  for (const tail of ['\r', '\r\r', '\r\n', '\r\n-', `\r\n--${BOUNDARY.slice(0, -1)}`, `\r\n-${BOUNDARY}`, `\r\n--${BOUNDARY.slice(1)}`]) {
    const content = `data${tail}`;
    const body = manual(`--${BOUNDARY}`, 'Content-Disposition: form-data; name="f"; filename="f"', '', `${content}\r\n--${BOUNDARY}--`);
    for (const sizes of [whole(body), ones(), randomSizes(random(tail.length), 4)]) {
      const [part] = parse(BOUNDARY, body, sizes);
      assert.ok(part);
      assert.equal(part.data.toString('latin1'), content, JSON.stringify(tail));
    }
  }
});

test('a large file full of near-delimiters, in 64 KiB chunks', () => {
  const boundary = '----formdata-undici-012345678901';
  const unit = Buffer.from(`\r\n--${boundary.slice(0, -1)}\r\r\n-`, 'latin1');
  const content = Buffer.alloc(8 * 1024 * 1024);
  for (let offset = 0; offset < content.length; offset += unit.length) unit.copy(content, offset);
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.rbxl"\r\n\r\n`, 'latin1'),
    content,
    Buffer.from(`\r\n--${boundary}--\r\n`, 'latin1'),
  ]);
  let size = 0;
  let hashInput = Buffer.alloc(0);
  const received: Buffer[] = [];
  const parser = createMultipartParser(boundary, {
    onPartBegin() {},
    onPartData(data) {
      size += data.length;
      received.push(Buffer.from(data));
    },
    onPartEnd() {
      hashInput = Buffer.concat(received);
    },
  });
  for (let offset = 0; offset < body.length; offset += 65536) parser.write(body.subarray(offset, offset + 65536));
  parser.end();
  assert.equal(size, content.length);
  assert.ok(hashInput.equals(content));
});

test('a body cut short anywhere is truncated', () => {
  const body = manual(
    `--${BOUNDARY}`,
    'Content-Disposition: form-data; name="file"; filename="a.rbxl"',
    '',
    'some\r\ncontent',
    `--${BOUNDARY}--`,
  );
  for (let length = 0; length < body.length; length++) {
    const prefix = body.subarray(0, length);
    assertMultipartError(() => parse(BOUNDARY, prefix, whole(prefix)), 'truncated');
  }
  assert.equal(parse(BOUNDARY, body, whole(body)).length, 1);
});

test('malformed bodies raise MultipartError', () => {
  const cases: [string, Uint8Array, MultipartErrorCode][] = [
    ['no Content-Disposition', manual(`--${BOUNDARY}`, 'Content-Type: text/plain', '', 'x', `--${BOUNDARY}--`), 'malformed_multipart'],
    ['no headers at all', manual(`--${BOUNDARY}`, '', 'x', `--${BOUNDARY}--`), 'malformed_multipart'],
    ['no name', manual(`--${BOUNDARY}`, 'Content-Disposition: form-data; filename="a"', '', 'x', `--${BOUNDARY}--`), 'malformed_multipart'],
    ['not form-data', manual(`--${BOUNDARY}`, 'Content-Disposition: attachment; name="a"', '', 'x', `--${BOUNDARY}--`), 'malformed_multipart'],
    ['header line without colon', manual(`--${BOUNDARY}`, 'Content-Disposition: form-data; name="a"', 'garbage', '', 'x', `--${BOUNDARY}--`), 'malformed_multipart'],
    ['unterminated quote', manual(`--${BOUNDARY}`, 'Content-Disposition: form-data; name="a', '', 'x', `--${BOUNDARY}--`), 'malformed_multipart'],
    ['junk after the delimiter', manual(`--${BOUNDARY}junk`, 'Content-Disposition: form-data; name="a"', '', 'x', `--${BOUNDARY}--`), 'malformed_multipart'],
    ['CR without LF after the delimiter', Buffer.from(`--${BOUNDARY}\rX`, 'latin1'), 'malformed_multipart'],
    ['a single dash closing', manual(`--${BOUNDARY}`, 'Content-Disposition: form-data; name="a"', '', 'x', `--${BOUNDARY}-x`), 'malformed_multipart'],
    ['no opening boundary in 20 KiB', Buffer.alloc(20 * 1024, 'garbage '), 'malformed_multipart'],
    ['header too large', manual(`--${BOUNDARY}`, `Content-Disposition: form-data; name="${'a'.repeat(17 * 1024)}"`, '', 'x', `--${BOUNDARY}--`), 'header_too_large'],
    ['unending header', manual(`--${BOUNDARY}`, 'X: '.padEnd(40 * 1024, 'y')), 'header_too_large'],
    ['garbage that never ends', Buffer.from('short garbage'), 'truncated'],
  ];
  const next = random(3);
  for (const [label, body, code] of cases) {
    for (const sizes of [whole(body), ones(), randomSizes(next, 100)]) {
      assertMultipartError(() => parse(BOUNDARY, body, sizes), code);
    }
    assert.ok(label);
  }
  // Random bytes: a MultipartError whatever the split.
  for (let round = 0; round < 20; round++) {
    const garbage = Buffer.from(Array.from({ length: 1 + Math.floor(next() * 30000) }, () => Math.floor(next() * 256)));
    assert.throws(() => parse(BOUNDARY, garbage, randomSizes(next, 1000)), MultipartError);
  }
  // Delimiter-heavy garbage may even be well formed by chance; it must never fail any other way.
  for (let round = 0; round < 200; round++) {
    const garbage = trickyBytes(next, BOUNDARY, 1 + Math.floor(next() * 3000));
    try {
      parse(BOUNDARY, garbage, randomSizes(next, 50));
    } catch (error) {
      assert.ok(isMultipartError(error), String(error));
    }
  }
});

test('limits on parts, header bytes, field bytes and file bytes', () => {
  const fields = (count: number): Uint8Array =>
    manual(
      ...Array.from({ length: count }, (_, i) => [`--${BOUNDARY}`, `Content-Disposition: form-data; name="f${i}"`, '', `value${i}`]).flat(),
      `--${BOUNDARY}--`,
    );
  assert.equal(parse(BOUNDARY, fields(20), ones()).length, 20);
  assertMultipartError(() => parse(BOUNDARY, fields(21), ones()), 'too_many_parts');
  assertMultipartError(() => parse(BOUNDARY, fields(3), ones(), { maxParts: 2 }), 'too_many_parts');
  // A limit given as undefined (from an absent setting) keeps its default.
  assertMultipartError(() => parse(BOUNDARY, fields(21), ones(), { maxParts: undefined }), 'too_many_parts');

  const header = manual(`--${BOUNDARY}`, 'Content-Disposition: form-data; name="a"', '', 'x', `--${BOUNDARY}--`);
  const headerBytes = 'Content-Disposition: form-data; name="a"\r\n\r\n'.length;
  assert.equal(parse(BOUNDARY, header, ones(), { maxHeaderBytes: headerBytes }).length, 1);
  assertMultipartError(() => parse(BOUNDARY, header, ones(), { maxHeaderBytes: headerBytes - 1 }), 'header_too_large');

  const mixed = manual(
    `--${BOUNDARY}`,
    'Content-Disposition: form-data; name="a"',
    '',
    '12345',
    `--${BOUNDARY}`,
    'Content-Disposition: form-data; name="b"',
    '',
    '67890',
    `--${BOUNDARY}`,
    'Content-Disposition: form-data; name="file"; filename="f"',
    '',
    'x'.repeat(1000),
    `--${BOUNDARY}--`,
  );
  assert.equal(parse(BOUNDARY, mixed, ones(), { maxFieldBytes: 10, maxFileBytes: 1000 }).length, 3);
  assertMultipartError(() => parse(BOUNDARY, mixed, ones(), { maxFieldBytes: 9 }), 'field_too_large');
  assertMultipartError(() => parse(BOUNDARY, mixed, ones(), { maxFileBytes: 999 }), 'file_too_large');
});

test('after an error the parser stays failed, and handler errors propagate', () => {
  const body = manual(`--${BOUNDARY}`, 'Content-Disposition: form-data; name="a"', '', 'xyz', `--${BOUNDARY}--`);
  const parser = createMultipartParser(BOUNDARY, { onPartBegin() {}, onPartData() {}, onPartEnd() {} }, { maxFieldBytes: 1 });
  const first = assertMultipartError(() => parser.write(body), 'field_too_large');
  assert.throws(() => parser.write(body), (error) => error === first);
  assert.throws(() => parser.end(), (error) => error === first);

  const boom = new Error('disk full');
  const failing = createMultipartParser(BOUNDARY, {
    onPartBegin() {},
    onPartData() {
      throw boom;
    },
    onPartEnd() {},
  });
  assert.throws(() => failing.write(body), (error) => error === boom);
  assert.throws(() => failing.write(new Uint8Array(1)), (error) => error === boom);

  const ended = createMultipartParser(BOUNDARY, { onPartBegin() {}, onPartData() {}, onPartEnd() {} });
  ended.write(body);
  ended.end();
  assert.throws(() => ended.write(body), MultipartError);
});

// ---- upload sink ----

const sinkRoot = await mkdtemp(join(tmpdir(), 'rbxl-upload-sink-'));
after(() => rm(sinkRoot, { recursive: true, force: true }));

test('upload sink: file and SHA-256 match the content, chunks are copied before queueing', async () => {
  const dir = join(sinkRoot, 'nested', 'uploads'); // created on demand
  const sink = createUploadSink(dir);
  const content = randomBytes(3 * 1024 * 1024 + 17);
  // One scratch buffer reused for every chunk and scribbled over at once, as uWS does.
  const scratch = new Uint8Array(65536);
  for (let offset = 0; offset < content.length; offset += scratch.length) {
    const piece = content.subarray(offset, offset + scratch.length);
    scratch.set(piece);
    sink.write(scratch.subarray(0, piece.length));
    scratch.fill(0xaa);
  }
  const result = await sink.finish();
  assert.equal(result.path, sink.path);
  assert.equal(result.size, content.length);
  assert.equal(result.sha256, createHash('sha256').update(content).digest('hex'));
  assert.ok((await readFile(result.path)).equals(content));
  assert.throws(() => sink.write(new Uint8Array(1)), UploadSinkClosedError);
  assert.equal(await sink.finish(), result, 'finish is idempotent');
  await sink.abort(); // after finish: the file was not moved away, so it goes
  await sink.abort();
  assert.deepEqual(await readdir(dir), []);
});

test('upload sink: an empty upload hashes the empty string', async () => {
  const sink = createUploadSink(sinkRoot);
  const result = await sink.finish();
  assert.equal(result.size, 0);
  assert.equal(result.sha256, createHash('sha256').digest('hex'));
  await sink.abort();
});

test('upload sink: back-pressure pauses the writer until drain', async () => {
  const sink = createUploadSink(sinkRoot, { highWaterMark: 64 * 1024 });
  const content = randomBytes(2 * 1024 * 1024);
  let paused = 0;
  // A source that honours back-pressure, like a paused uWS response.
  await new Promise<void>((resolve, reject) => {
    let offset = 0;
    const pump = (): void => {
      try {
        while (offset < content.length) {
          const chunk = content.subarray(offset, offset + 16 * 1024);
          offset += chunk.length;
          if (!sink.write(chunk)) {
            paused++;
            return; // resumed by onDrain
          }
        }
        resolve();
      } catch (error) {
        reject(error);
      }
    };
    sink.onDrain(pump);
    pump();
  });
  const result = await sink.finish();
  assert.ok(paused > 0, 'the sink never asked to pause');
  assert.equal(result.sha256, createHash('sha256').update(content).digest('hex'));
  await sink.abort();
});

test('upload sink: abort mid-upload removes the temp file, twice is safe, later writes throw', async () => {
  const sink = createUploadSink(sinkRoot, { highWaterMark: 1024 });
  for (let i = 0; i < 100; i++) sink.write(randomBytes(4096));
  await sink.abort();
  await sink.abort();
  assert.deepEqual((await readdir(sinkRoot)).filter((name) => sink.path.endsWith(name)), []);
  assert.throws(() => sink.write(new Uint8Array(1)), UploadSinkClosedError);
  await assert.rejects(sink.finish(), UploadSinkClosedError);
});

test('upload sink: abort during finish leaves nothing behind', async () => {
  const sink = createUploadSink(sinkRoot);
  sink.write(randomBytes(1024 * 1024));
  const finishing = sink.finish();
  const aborting = sink.abort();
  await assert.rejects(finishing, UploadSinkClosedError);
  await aborting;
  assert.deepEqual((await readdir(sinkRoot)).filter((name) => sink.path.endsWith(name)), []);
});

test('upload sink: a write failure wakes a paused writer and rejects finish', async () => {
  const blocker = join(sinkRoot, 'not-a-directory');
  await writeFile(blocker, 'x');
  const sink = createUploadSink(join(blocker, 'uploads'), { highWaterMark: 16 });
  const woke = new Promise<void>((resolve) => sink.onDrain(resolve));
  assert.equal(sink.write(new Uint8Array(32)), false);
  await woke;
  assert.throws(() => sink.write(new Uint8Array(1)), (error: NodeJS.ErrnoException) => error.code === 'ENOTDIR');
  await assert.rejects(sink.finish(), (error: NodeJS.ErrnoException) => error.code === 'ENOTDIR');
  await sink.abort();
});
