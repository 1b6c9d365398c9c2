/** GET /api-rbxl/health: liveness for load balancers; no credentials, answered on the main thread. */
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { sendJson } from '../exchange.js';
import type { ServiceContext } from '../context.js';

const started = Date.now();

export function handleHealth(ctx: ServiceContext, res: HttpResponse, req: HttpRequest, closing: () => boolean): void {
  const exchange = ctx.begin(res, req);
  const status = closing() ? 'shutting_down' : 'ok';
  sendJson(exchange, closing() ? 503 : 200, {
    status,
    uptime_s: Math.round((Date.now() - started) / 1000),
    workers: ctx.pool.stats(),
    preview_cache: ctx.previews.cacheInfo(),
  });
}
