/**
 * The pages: GET /api-rbxl/ (the import page, public/index.html),
 * /api-rbxl/projects/{id}/page (the project page, public/project.html: a shell that
 * reads the project with the user's credentials, so it needs none itself),
 * /api-rbxl/static/<file> (public/) and /api-rbxl/client/<file>.js (the compiled
 * browser client); and GET /api-rbxl/config, what the pages need to know about the
 * service before any upload. Files are small; they are read once and kept in memory.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { extname, join } from 'node:path';
import type { HttpRequest } from 'uWebSockets.js';
import { notFound } from '../errors.js';
import { send, sendJson, type Exchange } from '../exchange.js';
import type { HttpContext } from '../context.js';
import type { RouteHandler } from '../route.js';

// dist/src/http/routes → the repository root holds public/; dist/src/client holds the client.
const PUBLIC_DIR = fileURLToPath(new URL('../../../../public/', import.meta.url));
const CLIENT_DIR = fileURLToPath(new URL('../../client/', import.meta.url));
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.ico': 'image/x-icon', '.json': 'application/json',
};
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const cache = new Map<string, Promise<{ body: Buffer; csp: string }>>();

/**
 * A page's only inline script may be its import map (the project page's: three.js from
 * /api-rbxl/vendor/); the CSP allows exactly those bytes by their hash, computed here
 * from the file so that the two cannot part.
 */
function policyFor(body: Buffer, type: string): string {
  const scripts = ["'self'"];
  if (type.startsWith('text/html')) {
    for (const match of body.toString('utf8').matchAll(/<script type="importmap">([\s\S]*?)<\/script>/g)) {
      scripts.push(`'sha256-${createHash('sha256').update(match[1]!).digest('base64')}'`);
    }
  }
  // base-uri and form-action do not fall back to default-src; object-src does, to 'self', which no page needs.
  return `default-src 'self'; script-src ${scripts.join(' ')}; img-src 'self' data: blob:; style-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`;
}

function load(path: string, type: string): Promise<{ body: Buffer; csp: string }> {
  let file = cache.get(path);
  if (!file) {
    file = readFile(path).then((body) => ({ body, csp: policyFor(body, type) }));
    cache.set(path, file);
    file.catch(() => cache.delete(path));
  }
  return file;
}

async function serve(exchange: Exchange, dir: string, name: string): Promise<void> {
  if (!SAFE_NAME.test(name) || !(extname(name) in TYPES)) throw notFound('file');
  const type = TYPES[extname(name)]!;
  const { body, csp } = await load(join(dir, name), type).catch(() => { throw notFound('file'); });
  send(exchange, 200, body, {
    'Content-Type': type,
    'Content-Security-Policy': csp,
    'Referrer-Policy': 'no-referrer',
  });
}

export const pageRoute: RouteHandler = (exchange) => serve(exchange, PUBLIC_DIR, 'index.html');
export const projectPageRoute: RouteHandler = (exchange) => serve(exchange, PUBLIC_DIR, 'project.html');

/** What the pages learn before any upload: how users sign in here, and the largest map accepted (to refuse it before uploading). */
export function configRoute(ctx: HttpContext): RouteHandler {
  return (exchange: Exchange) => {
    sendJson(exchange, 200, {
      auth_mode: ctx.config.authMode,
      max_upload_bytes: ctx.service.maxMapBytes,
      scripts_modes: ['disabled', 'enabled', 'skip'],
      // Whether create can download assets at all: 'off' means every asset fails with no_credentials.
      asset_downloads: ctx.config.assetUrlTemplate !== null ? 'mirror' : ctx.config.assetApiKey !== null ? 'open_cloud' : 'off',
    });
  };
}
export const staticRoute: RouteHandler = (exchange, req: HttpRequest) => serve(exchange, PUBLIC_DIR, req.getParameter(0) ?? '');
export const clientModuleRoute: RouteHandler = (exchange, req: HttpRequest) => serve(exchange, CLIENT_DIR, req.getParameter(0) ?? '');
