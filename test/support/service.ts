/**
 * The real service on a free loopback port with a throw-away DATA_DIR, and the small
 * HTTP helpers the server-*.test.ts files share: uploads through fetch + FormData,
 * raw requests through node:http (for bodies fetch will not send: chunked, truncated,
 * aborted), and checks of the error body every failure must carry.
 */
import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../../src/config.js';
import { startServer, type RunningServer } from '../../src/http/server.js';

export const ANALYZE = '/api-rbxl/import/rbxl/analyze';
export const CREATE = '/api-rbxl/import/rbxl/create';
export const HEALTH = '/api-rbxl/health';

export interface Service {
  /** http://127.0.0.1:PORT */
  url: string;
  port: number;
  dataDir: string;
  server: RunningServer;
  /** Closes the server (idempotent) and removes DATA_DIR. */
  close(): Promise<void>;
}

/** A server the test started itself (over a data directory it keeps, e.g. to restart on it), seen as a Service; its `close` leaves both to the test. */
export function serviceOf(server: RunningServer, dataDir: string): Service {
  return { url: server.url, port: server.port, dataDir, server, close: async () => {} };
}

export async function startService(overrides: Partial<Config> = {}): Promise<Service> {
  const dataDir = await mkdtemp(join(tmpdir(), 'rbxl-server-test-'));
  try {
    const server = await startServer({
      host: '127.0.0.1',
      port: 0,
      dataDir,
      log: false,
      workers: 2,
      // Nothing may leave the machine: without a key or template every asset fails fast.
      assetApiKey: null,
      assetUrlTemplate: null,
      assetDeliveryUrl: 'http://127.0.0.1:9/v1/assetId/{id}',
      ...overrides,
    });
    return {
      url: server.url,
      port: server.port,
      dataDir,
      server,
      async close() {
        try {
          await server.close(5_000);
        } finally {
          await rm(dataDir, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}

export const as = (user: string): Record<string, string> => ({ 'X-User-Id': user });

/** POSTs `bytes` as the multipart `file` part, the way the client does. */
export function upload(service: Service, bytes: Uint8Array, fileName: string, headers: Record<string, string>): Promise<Response> {
  const form = new FormData();
  form.append('file', new Blob([bytes as Uint8Array<ArrayBuffer>]), fileName);
  return fetch(service.url + ANALYZE, { method: 'POST', body: form, headers });
}

export interface Analysis {
  preview_hash: string;
  report: Record<string, unknown> & { scripts_total: number; assets_total: number };
}

/** Uploads and expects success. */
export async function analyze(service: Service, bytes: Uint8Array, fileName: string, headers: Record<string, string>): Promise<Analysis> {
  const response = await upload(service, bytes, fileName, headers);
  const text = await response.text();
  assert.equal(response.status, 200, `analyze answered ${response.status}: ${text}`);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  return JSON.parse(text) as Analysis;
}

export function postJson(service: Service, path: string, body: unknown, headers: Record<string, string>): Promise<Response> {
  return fetch(service.url + path, {
    method: 'POST',
    body: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'Content-Type': 'application/json', ...headers },
  });
}

export interface Created {
  project_id: string;
  redirect: string;
  assets_downloaded: number;
  assets_failed: number;
  asset_failures?: { id: string; reason: string }[];
}

export async function create(service: Service, body: unknown, headers: Record<string, string>): Promise<Created> {
  const response = await postJson(service, CREATE, body, headers);
  const text = await response.text();
  assert.equal(response.status, 200, `create answered ${response.status}: ${text}`);
  return JSON.parse(text) as Created;
}

export async function getJson(service: Service, path: string, headers: Record<string, string>): Promise<{ status: number; body: any; text: string }> {
  const response = await fetch(service.url + path, { headers });
  const text = await response.text();
  let body: unknown = undefined;
  try {
    body = JSON.parse(text);
  } catch { /* left undefined: the caller's assertions say what was expected */ }
  return { status: response.status, body, text };
}

/**
 * Asserts the status and that the body is exactly {"error": {"code", "message"}} with a
 * non-empty message; returns the error for further checks.
 */
export function assertErrorBody(status: number, text: string, expectedStatus: number, expectedCode?: string): { code: string; message: string } {
  assert.equal(status, expectedStatus, `expected ${expectedStatus}, got ${status}: ${text}`);
  const body = JSON.parse(text) as { error: { code: string; message: string } };
  assert.deepEqual(Object.keys(body), ['error']);
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message']);
  assert.equal(typeof body.error.code, 'string');
  assert.equal(typeof body.error.message, 'string');
  assert.ok(body.error.message.length > 0, 'the message is empty');
  if (expectedCode !== undefined) assert.equal(body.error.code, expectedCode);
  return body.error;
}

export async function expectError(response: Response, status: number, code?: string): Promise<{ code: string; message: string; text: string }> {
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  const text = await response.text();
  return { ...assertErrorBody(response.status, text, status, code), text };
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body's bytes as they came (no Content-Encoding undone). */
  body?: Buffer;
}

export interface RawRequestOptions {
  method?: string;
  path: string;
  headers?: OutgoingHttpHeaders;
  /** Pieces of the body written in order; absent means no body. */
  body?: (Uint8Array | string)[];
}

/**
 * A request through node:http, which sends exactly the headers given (so a missing
 * Content-Length means chunked transfer). Resolves with the answer even if the server
 * answers before the body is all written; write errors after that are ignored.
 */
export function rawRequest(service: Service, options: RawRequestOptions): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({
      host: '127.0.0.1',
      port: service.port,
      method: options.method ?? 'POST',
      path: options.path,
      headers: options.headers,
      agent: false,
    });
    let answered = false;
    request.on('response', (response) => {
      answered = true;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({ status: response.statusCode ?? 0, headers: response.headers, text: body.toString('utf8'), body });
      });
      response.on('error', reject);
    });
    request.on('error', (error) => {
      if (!answered) reject(error);
    });
    for (const piece of options.body ?? []) request.write(piece);
    request.end();
  });
}

/**
 * Starts a multipart upload of `body` through node:http and returns the request
 * unfinished, so a test can write it in parts, stall it or destroy it mid-way.
 * `contentLength` may claim more than `body` holds.
 */
export function openUpload(service: Service, boundary: string, body: Uint8Array, headers: Record<string, string>, contentLength = body.length) {
  return httpRequest({
    host: '127.0.0.1',
    port: service.port,
    method: 'POST',
    path: ANALYZE,
    agent: false,
    headers: { ...headers, 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Content-Length': contentLength },
  });
}

export function multipartBody(boundary: string, parts: { name: string; fileName?: string; data: Uint8Array | string }[], close = true): Buffer {
  const pieces: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"` + (part.fileName === undefined ? '' : `; filename="${part.fileName}"`);
    const type = part.fileName === undefined ? '' : 'Content-Type: application/octet-stream\r\n';
    pieces.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n`), Buffer.from(part.data), Buffer.from('\r\n'));
  }
  if (close) pieces.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(pieces);
}

/** Files in DATA_DIR/uploads (temp files of uploads in progress). */
export async function uploadsIn(service: Service): Promise<string[]> {
  return readdir(join(service.dataDir, 'uploads')).catch(() => []);
}

/** Polls until `check` holds; fails with `what` after `timeoutMs`. Not a timing assertion: a bound on waiting. */
export async function waitUntil(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`gave up waiting until ${what}`);
    await sleep(10);
  }
}
