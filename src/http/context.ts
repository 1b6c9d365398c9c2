/**
 * What every route shares: the configuration, the service (src/service), how an
 * exchange begins, whether the server is shutting down, and the error log.
 */
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import type { Config } from '../config.js';
import type { Service } from '../service/index.js';
import { beginExchange, type Exchange, type ExchangeHooks } from './exchange.js';

export interface HttpContext {
  readonly config: Config;
  readonly service: Service;
  begin(res: HttpResponse, req: HttpRequest): Exchange;
  closing(): boolean;
  logError(error: unknown): void;
}

export function createHttpContext(config: Config, service: Service, hooks: ExchangeHooks): HttpContext {
  return {
    config,
    service,
    begin: (res, req) => beginExchange(res, req, hooks),
    closing: hooks.closing,
    logError(error) {
      process.stderr.write(JSON.stringify({ level: 'error', t: new Date().toISOString(), error: (error as Error)?.stack ?? String(error) }) + '\n');
    },
  };
}
