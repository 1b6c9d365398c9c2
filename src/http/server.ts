/**
 * The service over uWebSockets.js: routes, one log line per request, and a graceful
 * close (stop listening, let what is in flight finish, then stop the pool).
 */
import uWS from 'uWebSockets.js';
import { configFromEnv, defaultConfig, type Config } from '../config.js';
import { createContext } from './context.js';
import { HttpError, methodNotAllowed, notFound } from './errors.js';
import { send, sendError, type Exchange } from './exchange.js';
import { handleAnalyze } from './routes/analyze.js';
import { handleCreate } from './routes/create.js';
import { handleHealth } from './routes/health.js';
import { handleProject, handleProjectAsset } from './routes/projects.js';
import { handleClientModule, handlePage, handleStatic } from './routes/static.js';

export const PREFIX = '/api-rbxl';

export interface RunningServer {
  url: string;
  port: number;
  config: Config;
  /** Stops accepting, waits for requests in flight (up to `graceMs`), closes the pool. */
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

/** Starts the service. `overrides` win over the environment (tests pass port 0 and a temp dataDir). */
export async function startServer(overrides: Partial<Config> = {}, env: NodeJS.ProcessEnv | null = null): Promise<RunningServer> {
  const config: Config = { ...(env ? configFromEnv(env) : defaultConfig()), ...overrides };
  let closing = false;
  let inFlight = 0;
  let drained: (() => void) | null = null;
  const ctx = await createContext(config, {
    done(exchange) {
      inFlight--;
      if (config.log) process.stdout.write(logLine(exchange));
      if (inFlight === 0) drained?.();
    },
    closing: () => closing,
  });
  const counted = <A extends unknown[]>(handler: (...args: A) => void) => (...args: A): void => {
    inFlight++;
    handler(...args);
  };
  const answerError = (res: uWS.HttpResponse, req: uWS.HttpRequest, error: HttpError): void => {
    const exchange = ctx.begin(res, req);
    exchange.user = ctx.authenticate((name) => req.getHeader(name));
    sendError(exchange, error);
  };
  const reject = (error: HttpError) => counted((res: uWS.HttpResponse, req: uWS.HttpRequest) => answerError(res, req, error));
  const refuseWhileClosing = (handler: (res: uWS.HttpResponse, req: uWS.HttpRequest) => void) => (res: uWS.HttpResponse, req: uWS.HttpRequest): void => {
    if (closing) answerError(res, req, new HttpError(503, 'shutting_down', 'the service is shutting down', { 'Retry-After': '5' }));
    else handler(res, req);
  };

  const app = uWS.App();
  const route = (method: 'get' | 'post', path: string, handler: (res: uWS.HttpResponse, req: uWS.HttpRequest) => void): void => {
    app[method](path, counted(refuseWhileClosing(handler)));
    app.any(path, reject(methodNotAllowed(method.toUpperCase())));
  };
  route('post', `${PREFIX}/import/rbxl/analyze`, (res, req) => handleAnalyze(ctx, res, req));
  route('post', `${PREFIX}/import/rbxl/create`, (res, req) => handleCreate(ctx, res, req));
  route('get', `${PREFIX}/health`, (res, req) => handleHealth(ctx, res, req, () => closing));
  // Probes that use HEAD get the status without the body.
  app.head(`${PREFIX}/health`, counted((res, req) => send(ctx.begin(res, req), closing ? 503 : 200, '', {})));
  route('get', `${PREFIX}/projects/:id`, (res, req) => handleProject(ctx, res, req));
  route('get', `${PREFIX}/projects/:id/assets/:sha256`, (res, req) => handleProjectAsset(ctx, res, req));
  route('get', `${PREFIX}/`, (res, req) => handlePage(ctx, res, req));
  route('get', `${PREFIX}/static/:file`, (res, req) => handleStatic(ctx, res, req));
  route('get', `${PREFIX}/client/:file`, (res, req) => handleClientModule(ctx, res, req));
  // The page's links are relative to /api-rbxl/; send the bare prefix there.
  app.get(PREFIX, counted((res, req) => {
    const exchange = ctx.begin(res, req);
    send(exchange, 308, '', { Location: `${PREFIX}/` });
  }));
  app.any('/*', reject(notFound('route')));

  const listenSocket = await new Promise<uWS.us_listen_socket>((resolve, reject) => {
    app.listen(config.host, config.port, (socket) => (socket ? resolve(socket) : reject(new Error(`cannot listen on ${config.host}:${config.port}`))));
  });
  const port = uWS.us_socket_local_port(listenSocket);
  const stopSweeper = ctx.previews.startSweeper(Math.min(config.previewTtlSeconds * 1000, 10 * 60 * 1000), ctx.logError);

  async function close(graceMs = 30_000): Promise<void> {
    if (closing) return;
    closing = true;
    uWS.us_listen_socket_close(listenSocket);
    stopSweeper();
    if (inFlight > 0) {
      await new Promise<void>((resolve) => {
        drained = resolve;
        setTimeout(resolve, graceMs).unref();
      });
    }
    // Idle keep-alive connections would otherwise stay open (and keep the process alive)
    // until each client gives up. uWS.js has App.close() since v20.26; its types omit it.
    (app as unknown as { close?: () => void }).close?.();
    await ctx.assets.close();
    await ctx.pool.close();
  }

  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  return { url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`, port, config, close };
}
