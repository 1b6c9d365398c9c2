/**
 * The one route wrapper (a hook, in fastify's terms): every route handler runs inside
 * it, and it alone checks the request's framing (and, in development mode on loopback,
 * its Host: auth.ts `developmentHostCheck`), refuses while shutting down,
 * authenticates, awaits the handler and maps whatever the handler throws or rejects
 * with to one error answer (exchange.ts `sendError`). Handlers read the request
 * synchronously (uWS frees it when the handler returns), then await what they need.
 */
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { developmentHostCheck, userFromRequest } from './auth.js';
import type { HttpContext } from './context.js';
import { badRequest, HttpError, shuttingDown, unauthorized } from './errors.js';
import { sendError, type Exchange } from './exchange.js';

export type RouteHandler = (exchange: Exchange, req: HttpRequest) => void | Promise<void>;

export interface RouteOptions {
  /** Whether the route needs a user (401 without one). Default true. */
  auth?: boolean;
}

/** uWS parses Content-Length itself and closes the connection after the handler when it is not 1 to 9 digits. */
const UWS_CONTENT_LENGTH = /^\d{1,9}$/;
/** Under 1e9 however many leading zeros pad it: too long for uWS, but not too large. */
const BELOW_1E9 = /^0*\d{1,9}$/;

export function route(ctx: HttpContext, handler: RouteHandler, options: RouteOptions = {}): (res: HttpResponse, req: HttpRequest) => void {
  const auth = options.auth ?? true;
  const checkHost = developmentHostCheck(ctx.config);
  return (res, req) => {
    const exchange = ctx.begin(res, req);
    const fail = (error: unknown): void => sendError(exchange, error, ctx.logError);
    try {
      checkFraming(exchange, req);
      checkHost?.(req);
      if (ctx.closing()) throw shuttingDown();
      if (auth) {
        exchange.user = userFromRequest(ctx.config.authMode, req);
        if (exchange.user === null) throw unauthorized();
      } else {
        exchange.user = userForLog(ctx, req);
      }
      const result = handler(exchange, req);
      if (result) result.catch(fail);
    } catch (error) {
      fail(error);
    }
  };
}

/**
 * Refuses Content-Length values uWS cannot frame a body by (it would close the
 * connection without an answer): sent twice with different values, not digits, or
 * 1e9 or more (or padded with zeros past 9 digits).
 */
function checkFraming(exchange: Exchange, req: HttpRequest): void {
  const lengths: string[] = [];
  let codings: string[] | null = null;
  req.forEach((key, value) => {
    if (key === 'content-length') lengths.push(value);
    // Every line of the list, each element (RFC 9110 5.3); empty elements do not count, but the line does:
    // uWS reads the body of `Transfer-Encoding: ,` as chunked too.
    else if (key === 'transfer-encoding') {
      codings ??= [];
      for (const coding of value.split(',')) if (coding.trim() !== '') codings.push(coding.trim().toLowerCase());
    }
  });
  if (codings !== null) checkTransferCoding(exchange, codings);
  if (lengths.length === 0) return;
  const length = req.getHeader('content-length');
  if (!UWS_CONTENT_LENGTH.test(length)) {
    exchange.flushBeforeClose = true;
    if (!/^\d+$/.test(length)) throw badRequest('bad_content_length', 'Content-Length must be a non-negative decimal number');
    // `0000000002` was answered 413, "larger than this service reads": the refusal is its length, not its value.
    throw BELOW_1E9.test(length)
      ? badRequest('bad_content_length', 'Content-Length must have at most 9 digits, leading zeros included')
      : new HttpError(413, 'payload_too_large', `Content-Length ${length} is larger than this service reads (at most 999999999 bytes)`);
  }
  if (lengths.some((value) => value.trim() !== length)) {
    exchange.closeAfterAnswer = true;
    throw badRequest('bad_content_length', 'Content-Length is sent more than once with different values');
  }
}

/**
 * uWS 20.30 reads the body of any request that names a Transfer-Encoding as chunked,
 * whatever the codings say (`identity`, `xchunked`, `gzip, chunked`, `chunked` and
 * `identity` on two lines, none at all: `,`), and keeps the connection for the next request. A gateway
 * that frames such a request another way (no body, or up to the connection's end) would
 * then disagree with the service on where the next request starts: the ground of
 * request smuggling. Only `chunked` alone is taken; anything else is refused and its
 * connection closed (RFC 9112 6.1 and 6.3: 400 when chunked is not the final coding,
 * 501 for a coding the service does not decode).
 */
function checkTransferCoding(exchange: Exchange, codings: readonly string[]): void {
  if (codings.length === 1 && codings[0] === 'chunked') return;
  exchange.closeAfterAnswer = true;
  const chunkedLast = codings.at(-1) === 'chunked' && codings.indexOf('chunked') === codings.length - 1;
  const named = JSON.stringify(codings.join(', ').slice(0, 200));
  throw chunkedLast
    ? new HttpError(501, 'unsupported_transfer_encoding', `Transfer-Encoding ${named} is not taken: send the body with Content-Length or Transfer-Encoding: chunked alone`)
    : badRequest('bad_transfer_encoding', `Transfer-Encoding ${named} does not end in chunked once, so the body's length cannot be told: send Content-Length or Transfer-Encoding: chunked`);
}

/** The user for the log line of a route that needs none; an unusable id is simply not logged. */
function userForLog(ctx: HttpContext, req: HttpRequest): string | null {
  try {
    return userFromRequest(ctx.config.authMode, req);
  } catch {
    return null;
  }
}

