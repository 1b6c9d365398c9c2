/**
 * GET /api-rbxl/health: readiness for load balancers; no credentials, answered on the
 * main thread. 200 with `status` "ok", or "degraded" while the disk is full (analyze
 * and create answer 507 then, projects are still served); 503 with `status`
 * "unavailable" while the object store cannot be reached (asked at most every ~2 s;
 * `store` says why), and while shutting down.
 */
import { sendJson, type Exchange } from '../exchange.js';
import type { HttpContext } from '../context.js';
import type { RouteHandler } from '../route.js';

const started = Date.now();

export function healthRoute(ctx: HttpContext): RouteHandler {
  return async (exchange: Exchange) => {
    const { status, ...details } = await ctx.service.health();
    const down = status === 'unavailable';
    sendJson(exchange, down ? 503 : 200, { status, uptime_s: Math.round((Date.now() - started) / 1000), ...details }, down ? { 'Retry-After': '5' } : {});
  };
}
