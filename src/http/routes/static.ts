/**
 * The import page: GET /api-rbxl/ (public/index.html), /api-rbxl/static/<file>
 * (public/) and /api-rbxl/client/<file>.js (the compiled browser client). Files are
 * small; they are read once and kept in memory.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { extname, join } from 'node:path';
import type { HttpRequest } from 'uWebSockets.js';
import { notFound } from '../errors.js';
import { send, type Exchange } from '../exchange.js';
import type { RouteHandler } from '../route.js';

// dist/src/http/routes → the repository root holds public/; dist/src/client holds the client.
const PUBLIC_DIR = fileURLToPath(new URL('../../../../public/', import.meta.url));
const CLIENT_DIR = fileURLToPath(new URL('../../client/', import.meta.url));
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.ico': 'image/x-icon', '.json': 'application/json',
};
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/**
 * The page's one inline script is its import map (three.js from /api-rbxl/vendor/);
 * the CSP allows exactly it by hash. test/browser-viewer.test.ts fails if the two part.
 */
export const IMPORT_MAP_HASH = 'sha256-UIiVg22PC4ABTdJ22WSTrliOLGvfsog+qnGKL+MGxbk=';
const cache = new Map<string, Promise<Buffer>>();

function load(path: string): Promise<Buffer> {
  let file = cache.get(path);
  if (!file) {
    file = readFile(path);
    cache.set(path, file);
    file.catch(() => cache.delete(path));
  }
  return file;
}

async function serve(exchange: Exchange, dir: string, name: string): Promise<void> {
  if (!SAFE_NAME.test(name) || !(extname(name) in TYPES)) throw notFound('file');
  const body = await load(join(dir, name)).catch(() => { throw notFound('file'); });
  send(exchange, 200, body, {
    'Content-Type': TYPES[extname(name)]!,
    'Content-Security-Policy': `default-src 'self'; script-src 'self' '${IMPORT_MAP_HASH}'; img-src 'self' data: blob:; style-src 'self'; connect-src 'self'; frame-ancestors 'none'`,
    'Referrer-Policy': 'no-referrer',
  });
}

export const pageRoute: RouteHandler = (exchange) => serve(exchange, PUBLIC_DIR, 'index.html');
export const staticRoute: RouteHandler = (exchange, req: HttpRequest) => serve(exchange, PUBLIC_DIR, req.getParameter(0) ?? '');
export const clientModuleRoute: RouteHandler = (exchange, req: HttpRequest) => serve(exchange, CLIENT_DIR, req.getParameter(0) ?? '');
