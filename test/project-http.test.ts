/**
 * GET /api-rbxl/projects/{id} against the real service on loopback: version 2 documents
 * are stored Brotli-compressed (the sidecar says `encoding: "br"`) and go out with
 * `Content-Encoding: br` to clients that accept it, decompressed (chunked) to those that
 * do not; a version 1 document stored by the service before (plain JSON, a sidecar
 * without `encoding`) is still served as it is, with its summary and page.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { once } from 'node:events';
import { documentDecompressor } from '../src/project/compression.js';
import { sendStream, type Exchange } from '../src/http/exchange.js';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { PLACES_DIR } from './support/paths.js';
import { analyze, as, create, rawRequest, startService, type Service } from './support/service.js';

const PLACE = join(PLACES_DIR, 'rocket-arena-2006.rbxl');

describe('the project document over HTTP', () => {
  let service: Service;
  let projectId = '';
  before(async () => {
    service = await startService();
    const bytes = await readFile(PLACE);
    const { preview_hash: previewHash } = await analyze(service, bytes, 'rocket-arena-2006.rbxl', as('doc-owner'));
    projectId = (await create(service, { preview_hash: previewHash, title: 'Arena', scripts_mode: 'enabled' }, as('doc-owner'))).project_id;
  });
  after(() => service.close());

  // The disk object store's layout (DATA_DIR/objects/projects/<id>/…).
  const projectDir = (id = projectId) => join(service.dataDir, 'objects', 'projects', id);
  const documentPath = () => join(projectDir(), 'document.json');
  const get = (headers: Record<string, string | string[]>, id = projectId) =>
    rawRequest(service, { method: 'GET', path: `/api-rbxl/projects/${id}`, headers: { ...as('doc-owner'), ...headers } })
      .then((answer) => ({ ...answer, body: answer.body! }));

  test('the worker stores the version 2 document Brotli-compressed, and the sidecar says so', async () => {
    const stored = await readFile(documentPath());
    const meta = JSON.parse(await readFile(join(projectDir(), 'meta.json'), 'utf8'));
    assert.equal(meta.encoding, 'br');
    assert.equal(meta.owner, 'doc-owner');
    assert.notEqual(stored[0], 0x7b, 'not plain JSON on disk');
    const document = JSON.parse(brotliDecompressSync(stored).toString('utf8'));
    assert.equal(document.version, 2);
    assert.equal(document.title, 'Arena');
    assert.ok(stored.length <= 3 * (await readFile(PLACE)).length, `${stored.length} bytes stored for a ${(await readFile(PLACE)).length}-byte upload`);
  });

  test('Accept-Encoding: br gets the stored bytes with Content-Encoding: br; they decompress to the version 2 document', async () => {
    const stored = await readFile(documentPath());
    for (const accept of ['br', 'gzip, deflate, br', 'br;q=0.5, gzip', '*']) {
      const answer = await get({ 'Accept-Encoding': accept });
      assert.equal(answer.status, 200, accept);
      assert.equal(answer.headers['content-encoding'], 'br', accept);
      assert.equal(answer.headers['vary'], 'Accept-Encoding');
      assert.match(answer.headers['content-type'] ?? '', /^application\/json/);
      assert.ok(answer.body.equals(stored), `${accept}: the stored bytes`);
      const document = JSON.parse(brotliDecompressSync(answer.body).toString('utf8'));
      assert.equal(document.version, 2);
      assert.equal(document.instances.length > 1993, true, 'every instance and the generated joints');
      assert.ok(document.scripts.every((script: { id: string }) => typeof script.id === 'string'));
    }
  });

  test('without br accepted the body is the same JSON, uncompressed', async () => {
    const json = brotliDecompressSync(await readFile(documentPath()));
    for (const headers of [{}, { 'Accept-Encoding': 'gzip, deflate' }, { 'Accept-Encoding': 'br;q=0, gzip' }, { 'Accept-Encoding': 'identity' }] as Record<string, string>[]) {
      const answer = await get(headers);
      assert.equal(answer.status, 200, JSON.stringify(headers));
      assert.equal(answer.headers['content-encoding'], undefined, JSON.stringify(headers));
      assert.equal(answer.headers['vary'], 'Accept-Encoding');
      assert.ok(answer.body.equals(json), `${JSON.stringify(headers)}: the same JSON text (${answer.body.length} of ${json.length} bytes)`);
    }
    // fetch (undici) negotiates and decodes by itself.
    const viaFetch = await fetch(`${service.url}/api-rbxl/projects/${projectId}`, { headers: as('doc-owner') });
    assert.equal((await viaFetch.json() as { version: number }).version, 2);
  });

  test('Accept-Encoding sent on several lines is read as one list (RFC 9110 5.3), and `q = 0` refuses', async () => {
    const stored = await readFile(documentPath());
    const json = brotliDecompressSync(stored);
    // getHeader read the first line only: `*` then `br;q=0` was answered with Content-Encoding: br.
    for (const accept of [['*', 'br;q=0'], ['gzip', 'br;q=0', '*'], ['br;q = 0'], ['br; q =0, *']]) {
      const answer = await get({ 'Accept-Encoding': accept });
      assert.equal(answer.status, 200, JSON.stringify(accept));
      assert.equal(answer.headers['content-encoding'], undefined, JSON.stringify(accept));
      assert.ok(answer.body.equals(json), `${JSON.stringify(accept)}: the JSON, decompressed`);
    }
    for (const accept of [['gzip', 'br'], ['identity', '*']]) {
      const answer = await get({ 'Accept-Encoding': accept });
      assert.equal(answer.headers['content-encoding'], 'br', JSON.stringify(accept));
      assert.ok(answer.body.equals(stored), `${JSON.stringify(accept)}: the stored bytes`);
    }
  });

  test('the summary records the stored size, the JSON size and the encoding', async () => {
    const summary = JSON.parse((await rawRequest(service, { method: 'GET', path: `/api-rbxl/projects/${projectId}/summary`, headers: as('doc-owner') })).text);
    const stored = await readFile(documentPath());
    assert.equal(summary.document_bytes, stored.length);
    assert.equal(summary.document_json_bytes, brotliDecompressSync(stored).length);
    assert.equal(summary.document_encoding, 'br');
  });

  test('a stranger gets 404 whatever it accepts', async () => {
    for (const accept of ['br', '']) {
      const answer = await rawRequest(service, { method: 'GET', path: `/api-rbxl/projects/${projectId}`, headers: { ...as('someone-else'), 'Accept-Encoding': accept } });
      assert.equal(answer.status, 404);
      assert.equal(answer.headers['content-encoding'], undefined);
    }
  });

  test('a version 1 document stored before (plain JSON, sidecar without encoding) is still served, with its summary and page', async () => {
    // What the service wrote before version 2: the document plain, a sidecar {owner, assets, bytes, createdAt} without encoding.
    const id = 'p_aaaaaaaaaaaaaaaaaaaa';
    const v1 = {
      format: 'rbxl-import/project', version: 1, title: 'Old arena', owner: 'doc-owner', created_at: '2026-10-01T12:00:00.000Z',
      source: { preview_hash: 'a'.repeat(64), file_name: 'old.rbxl', format: 'binary', size: 23839 },
      scripts_mode: 'disabled',
      scene: { nodes: [{ kind: 'part', name: 'Baseplate', class: 'Part', shape: 'block', size: [512, 20, 512], cframe: [0, -10, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1], color: [0.39, 0.37, 0.36], anchored: true, children: [] }] },
      assets: [],
      scripts: [{ name: 'Script', class: 'Script', path: 'Workspace.Script', disabled: true, source: 'print("hi")' }],
    };
    const text = JSON.stringify(v1);
    await mkdir(projectDir(id), { recursive: true });
    await writeFile(join(projectDir(id), 'document.json'), text);
    await writeFile(join(projectDir(id), 'meta.json'), JSON.stringify({ owner: 'doc-owner', assets: [], bytes: text.length, createdAt: Date.parse(v1.created_at) }));

    for (const accept of ['br', 'gzip, deflate, br', '']) {
      const answer = await get(accept ? { 'Accept-Encoding': accept } : {}, id);
      assert.equal(answer.status, 200, accept);
      assert.equal(answer.headers['content-encoding'], undefined, `${accept}: served as stored, never labelled br`);
      assert.equal(answer.text, text);
    }
    const summary = JSON.parse((await rawRequest(service, { method: 'GET', path: `/api-rbxl/projects/${id}/summary`, headers: as('doc-owner') })).text);
    assert.equal(summary.project_id, id);
    assert.equal(summary.document_bytes, text.length);
    assert.equal(summary.created_at, v1.created_at);
    const page = await rawRequest(service, { method: 'GET', path: `/api-rbxl/projects/${id}/page`, headers: {} });
    assert.equal(page.status, 200);
    assert.match(page.headers['content-type'] ?? '', /^text\/html/);
  });

  test('an answer decompressed on the way to a client that left before it started closes the document file', async () => {
    // The route's wiring: the stored file through the decompressor, the decompressor to sendStream.
    const body = createReadStream(documentPath());
    const inflate = documentDecompressor();
    inflate.on('close', () => body.destroy());
    const gone = { finished: true, aborted: true } as unknown as Exchange; // the client left while the document was opened
    await sendStream(gone, body.pipe(inflate), {});
    const closed = body.closed || await Promise.race([once(body, 'close').then(() => true), new Promise<false>((resolve) => setTimeout(resolve, 2_000, false))]);
    assert.equal(inflate.destroyed, true);
    assert.equal(closed, true, 'the file is closed');
  });
});
