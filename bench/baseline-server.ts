/**
 * The comparison server for `npm run bench:http`: plain node:http + busboy doing the
 * same analyze work as the real service (stream the file to a temp file while
 * hashing, then the same worker pool, decoder, analysis and preview store), so the
 * benchmark isolates what uWebSockets.js and our multipart parser change.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import busboy from 'busboy';
import type { Config } from '../src/config.js';
import { toHttpError } from '../src/http/errors.js';
import { createService } from '../src/service/index.js';

export async function startBaselineServer(config: Config): Promise<{ url: string; close(): Promise<void> }> {
  const service = await createService(config);
  const answer = (res: ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
  };

  async function analyze(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const user = req.headers['x-user-id'];
    if (typeof user !== 'string' || user === '') return answer(res, 401, { error: { code: 'unauthorized', message: 'no user' } });
    const path = join(service.uploadDir, `baseline-${randomUUID()}`);
    const hash = createHash('sha256');
    let size = 0;
    let fileName = 'upload.rbxl';
    const written = new Promise<boolean>((resolve, reject) => {
      const parser = busboy({ headers: req.headers, limits: { fileSize: config.maxUploadBytes, files: 1 } });
      let sawFile = false;
      parser.on('file', (name, stream, info) => {
        if (name !== 'file' || sawFile) { stream.resume(); return; }
        sawFile = true;
        fileName = info.filename || fileName;
        const out = createWriteStream(path);
        stream.on('data', (chunk: Buffer) => { hash.update(chunk); size += chunk.length; });
        stream.pipe(out);
        out.on('error', reject);
        out.on('finish', () => resolve(true));
      });
      parser.on('error', reject);
      parser.on('close', () => { if (!sawFile) resolve(false); });
      req.pipe(parser);
    });
    try {
      if (!(await written)) return answer(res, 400, { error: { code: 'missing_file', message: 'no file part' } });
      const preview = await service.analyses.analyze({ path, sha256: hash.digest('hex'), size, fileName, user });
      answer(res, 200, { preview_hash: preview.hash, report: preview.report });
    } catch (error) {
      const mapped = toHttpError(error);
      if (mapped) answer(res, mapped.status, { error: { code: mapped.code, message: mapped.message } });
      else answer(res, 500, { error: { code: 'internal', message: 'internal error' } });
    } finally {
      await rm(path, { force: true });
    }
  }

  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/api-rbxl/health') return answer(res, 200, { status: 'ok' });
    if (req.method === 'POST' && req.url === '/api-rbxl/import/rbxl/analyze') {
      void analyze(req, res).catch(() => answer(res, 500, { error: { code: 'internal', message: 'internal error' } }));
      return;
    }
    answer(res, 404, { error: { code: 'not_found', message: 'route not found' } });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await service.close();
    },
  };
}
