/**
 * The service over uWebSockets.js: routes (each inside the one wrapper, route.ts),
 * one log line per request, and a graceful close: stop listening, let what is in
 * flight finish, answer whatever is still open past the grace with 503, then stop the
 * service (downloads, pool).
 */
import uWS from 'uWebSockets.js';
import { ConfigError, configFromEnv, defaultConfig, type Config } from '../config.js';
import { createService } from '../service/index.js';
import { createHttpContext } from './context.js';
import { methodNotAllowed, notFound, shuttingDown } from './errors.js';
import { send, sendError, type Exchange } from './exchange.js';
import { route, type RouteHandler, type RouteOptions } from './route.js';
import { currentUwsFallbackReason } from './uws-build.js';
import { analyzeRoute } from './routes/analyze.js';
import { createProgressRoute, createRoute } from './routes/create.js';
import { healthRoute } from './routes/health.js';
import { deleteProjectRoute, projectAssetRoute, projectRoute, projectSummaryRoute } from './routes/projects.js';
import { pictureRoute, sceneRoute, vendorRoute } from './routes/scene.js';
import { clientModuleRoute, configRoute, pageRoute, projectPageRoute, staticRoute } from './routes/static.js';

export const PREFIX = '/api-rbxl';

export interface RunningServer {
  url: string;
  /** The import page's address. */
  pageUrl: string;
  port: number;
  config: Config;
  /** Stops accepting, waits for requests in flight (up to `graceMs`), answers the rest 503, closes the service. */
  close(graceMs?: number): Promise<void>;
}

function logLine(exchange: Exchange): string {
  return JSON.stringify({
    t: new Date().toISOString(),
    method: exchange.method,
    path: exchange.path,
    status: exchange.status,
    bytes_in: exchange.bytesIn,
    bytes_out: exchange.bytesOut,
    ms: Math.round((performance.now() - exchange.started) * 10) / 10,
    user: exchange.user,
  }) + '\n';
}

type Method = 'get' | 'head' | 'post' | 'del';

/** The typings know `listen(port, options, cb)` only; the binding takes a host first too. */
type ListenWithHost = (host: string, port: number, options: number, cb: (socket: uWS.us_listen_socket | false) => void) => void;
/** LIBUS_LISTEN_EXCLUSIVE_PORT (the binding exports it; the typings only as a const enum's member). */
const EXCLUSIVE_PORT = 1;

/**
 * Listens on host:port alone. uWS shares a port by default (SO_REUSEPORT), so a second
 * instance started on a port in use would take half its connections, with its own data
 * directory, and nobody would be told.
 */
function listenExclusively(app: uWS.TemplatedApp, host: string, port: number): Promise<uWS.us_listen_socket> {
  return new Promise((resolve, reject) => {
    (app.listen as unknown as ListenWithHost).call(app, host, port, EXCLUSIVE_PORT, (socket) => {
      if (socket) resolve(socket);
      else reject(new ConfigError(`cannot listen on ${host}:${port}: the port is in use, or HOST is not an address of this machine (HOST, PORT)`));
    });
  });
}

/** Starts the service. `overrides` win over the environment (tests pass port 0 and a temp dataDir). */
export async function startServer(overrides: Partial<Config> = {}, env: NodeJS.ProcessEnv | null = null): Promise<RunningServer> {
  const config: Config = { ...(env ? configFromEnv(env) : defaultConfig()), ...overrides };
  const fallback = currentUwsFallbackReason();
  if (fallback) throw new ConfigError(fallback);
  let closing = false;
  const open = new Set<Exchange>();
  let drained: (() => void) | null = null;
  const service = await createService(config);
  const ctx = createHttpContext(config, service, {
    done(exchange) {
      open.delete(exchange);
      if (config.log) process.stdout.write(logLine(exchange));
      if (open.size === 0) drained?.();
    },
    closing: () => closing,
    // Every exchange is known from its start until it is answered or aborted, so close() can answer what is left.
    began: (exchange) => open.add(exchange),
  });

  const app = uWS.App();
  const allowed = new Map<string, Method[]>();
  const add = (method: Method, path: string, handler: RouteHandler, options?: RouteOptions): void => {
    app[method](path, route(ctx, handler, options));
    allowed.set(path, [...(allowed.get(path) ?? []), method]);
    // Every GET route answers HEAD too (RFC 9110): the same status and headers, no body (exchange.ts sends none).
    if (method === 'get') add('head', path, handler, options);
  };
  add('post', `${PREFIX}/import/rbxl/analyze`, analyzeRoute(ctx));
  add('post', `${PREFIX}/import/rbxl/create`, createRoute(ctx));
  add('get', `${PREFIX}/import/rbxl/create/:id`, createProgressRoute(ctx));
  add('get', `${PREFIX}/health`, healthRoute(ctx), { auth: false });
  add('get', `${PREFIX}/config`, configRoute(ctx), { auth: false });
  add('get', `${PREFIX}/projects/:id`, projectRoute(ctx));
  add('del', `${PREFIX}/projects/:id`, deleteProjectRoute(ctx));
  add('get', `${PREFIX}/projects/:id/assets/:sha256`, projectAssetRoute(ctx));
  add('get', `${PREFIX}/projects/:id/scene.glb`, sceneRoute(ctx));
  add('get', `${PREFIX}/previews/:hash/image.png`, pictureRoute(ctx));
  add('get', `${PREFIX}/vendor/three/*`, vendorRoute(ctx), { auth: false });
  add('get', `${PREFIX}/projects/:id/summary`, projectSummaryRoute(ctx));
  add('get', `${PREFIX}/projects/:id/page`, projectPageRoute, { auth: false });
  add('get', `${PREFIX}/`, pageRoute, { auth: false });
  add('get', `${PREFIX}/static/:file`, staticRoute, { auth: false });
  add('get', `${PREFIX}/client/:file`, clientModuleRoute, { auth: false });
  // The page's links are relative to /api-rbxl/; send the bare prefix there.
  add('get', PREFIX, (exchange) => send(exchange, 308, '', { Location: `${PREFIX}/` }), { auth: false });
  // A developer opening the address the start log prints lands on the import page.
  add('get', '/', (exchange) => send(exchange, 302, '', { Location: `${PREFIX}/` }), { auth: false });
  for (const [path, methods] of allowed) {
    const allow = methods.map((method) => (method === 'del' ? 'DELETE' : method.toUpperCase())).join(', ');
    app.any(path, route(ctx, () => { throw methodNotAllowed(allow); }, { auth: false }));
  }
  app.any('/*', route(ctx, () => { throw notFound('route'); }, { auth: false }));

  let listenSocket: uWS.us_listen_socket;
  try {
    listenSocket = await listenExclusively(app, config.host, config.port);
  } catch (error) {
    await service.close();
    throw error;
  }
  const port = uWS.us_socket_local_port(listenSocket);
  // The sweep running now, if any: close waits for it (within the grace), so nothing writes to the store after.
  let sweeping: Promise<void> | null = null;
  const sweeper = setInterval(() => {
    if (sweeping) return;
    sweeping = service.sweep().catch(ctx.logError).finally(() => { sweeping = null; });
  }, config.sweepIntervalMs); // expiry is checked on every read; the sweep only frees the store
  sweeper.unref();

  async function close(graceMs = config.shutdownGraceMs): Promise<void> {
    if (closing) return;
    closing = true;
    uWS.us_listen_socket_close(listenSocket);
    clearInterval(sweeper);
    // One grace for both the requests in flight and a running sweep: an operator's
    // stop timeout is set from it, so waiting for each in turn would outlast it.
    let graceTimer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<void>((resolve) => { graceTimer = setTimeout(resolve, graceMs); });
    graceTimer!.unref();
    if (open.size > 0) await Promise.race([new Promise<void>((resolve) => { drained = resolve; }), graceOver]);
    // Past the grace: whatever is still open gets an answer (and its work is told to stop), not a cut connection.
    for (const exchange of [...open]) {
      if (exchange.status !== 0) continue; // a file already streaming out cannot change its status
      for (const cleanup of exchange.onAbort) {
        try { cleanup(); } catch { /* stopping work must not stop the shutdown */ }
      }
      sendError(exchange, shuttingDown());
    }
    // Idle keep-alive connections would otherwise stay open (and keep the process alive)
    // until each client gives up. uWS.js has App.close() since v20.26; its types omit it.
    (app as unknown as { close?: () => void }).close?.();
    if (sweeping) await Promise.race([sweeping, graceOver]);
    clearTimeout(graceTimer);
    await service.close();
  }

  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  return { url, pageUrl: `${url}${PREFIX}/`, port, config, close };
}
