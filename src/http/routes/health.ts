/**
 * GET /api-rbxl/health: liveness for load balancers; no credentials, answered on the
 * main thread. 200 with `status` "ok", or "degraded" while the disk is full (analyze
 * and create answer 507 then, projects are still served); 503 while shutting down.
 */
import { sendJson, type Exchange } from '../exchange.js';
import type { HttpContext } from '../context.js';
import type { RouteHandler } from '../route.js';

const started = Date.now();

export function healthRoute(ctx: HttpContext): RouteHandler {
  return (exchange: Exchange) => {
    const { status, ...details } = ctx.service.health();
    sendJson(exchange, 200, { status, uptime_s: Math.round((Date.now() - started) / 1000), ...details });
  };
}
