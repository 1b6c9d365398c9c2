/**
 * One request/response pair over uWebSockets.js: abort tracking, corked writes,
 * JSON and file answers with back-pressure, and the request's log line. A uWS
 * response must not be touched after it was aborted or ended; everything that
 * writes goes through here so that rule holds in one place.
 */
import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { STATUS_TEXT, toHttpError } from './errors.js';

export interface Exchange {
  readonly res: HttpResponse;
  readonly method: string;
  readonly path: string;
  readonly started: number;
  user: string | null;
  status: number;
  bytesIn: number;
  bytesOut: number;
  aborted: boolean;
  finished: boolean;
  /** Run once when the client goes away before the answer was sent. */
  readonly onAbort: (() => void)[];
  /**
   * Set by whoever reads the body, when it starts and when its last byte arrived. An
   * answer sent in between (an error mid-body) closes the connection, so unread body
   * bytes (and a paused socket) cannot stall the next request on a kept-alive
   * connection. An answer before the body was touched keeps it: uWS skips the body.
   */
  bodyStarted: boolean;
  bodyDone: boolean;
  /** The request's framing is ambiguous (Content-Length sent twice): the connection is not reused. */
  closeAfterAnswer: boolean;
  /** The request itself said `Connection: close`. */
  readonly clientCloses: boolean;
  /**
   * Set when uWS will close the connection as soon as the handler returns (a
   * Content-Length it cannot parse): the answer must leave before that, so it is made
   * larger than uWS's cork buffer, which makes uWS write it out at once.
   */
  flushBeforeClose: boolean;
}

export interface ExchangeHooks {
  /** Called once per exchange, when answered or aborted. */
  done(exchange: Exchange): void;
  /** While shutting down, answers close their connection. */
  closing(): boolean;
  /** Called once per exchange, when it begins. */
  began?(exchange: Exchange): void;
}

export function beginExchange(res: HttpResponse, req: HttpRequest, hooks: ExchangeHooks): Exchange {
  const exchange: Exchange = {
    res,
    method: req.getMethod().toUpperCase(),
    path: req.getUrl(),
    started: performance.now(),
    user: null,
    status: 0,
    bytesIn: 0,
    bytesOut: 0,
    aborted: false,
    finished: false,
    onAbort: [],
    bodyStarted: false,
    bodyDone: false,
    closeAfterAnswer: false,
    clientCloses: /(^|,)\s*close\s*(,|$)/i.test(req.getHeader('connection')),
    flushBeforeClose: false,
  };
  res.onAborted(() => {
    if (exchange.finished) return;
    exchange.aborted = true;
    exchange.finished = true;
    exchange.status = 499; // nginx's "client closed request", for the log only
    for (const cleanup of exchange.onAbort) {
      try { cleanup(); } catch { /* cleanup must not throw into uWS */ }
    }
    hooks.done(exchange);
  });
  doneHooks.set(exchange, hooks);
  hooks.began?.(exchange);
  return exchange;
}

const doneHooks = new WeakMap<Exchange, ExchangeHooks>();

function finish(exchange: Exchange): void {
  exchange.finished = true;
  doneHooks.get(exchange)?.done(exchange);
}

const SECURITY_HEADERS: Record<string, string> = {
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
};

/** uWS corks up to 16 KiB per connection; an answer larger than that is written out at once. */
const CORK_BUFFER_BYTES = 16 * 1024;

/** Sends a whole body. No-op when the client is gone or an answer was already sent. */
export function send(exchange: Exchange, status: number, body: string | Uint8Array, headers: Record<string, string>): void {
  if (exchange.finished) return;
  const closeConnection = (exchange.bodyStarted && !exchange.bodyDone) || exchange.closeAfterAnswer || exchange.flushBeforeClose || (doneHooks.get(exchange)?.closing() ?? false);
  // JSON allows trailing whitespace: padding keeps the body valid and pushes it past the cork buffer.
  if (exchange.flushBeforeClose && typeof body === 'string') body = body.padEnd(CORK_BUFFER_BYTES + 1024, ' ');
  exchange.status = status;
  const length = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
  // A HEAD answer sends no body, except the padded one that must leave before uWS closes (flushBeforeClose).
  const head = exchange.method === 'HEAD' && !exchange.flushBeforeClose;
  exchange.bytesOut = head ? 0 : length;
  exchange.res.cork(() => {
    writeHead(exchange.res, `${status} ${STATUS_TEXT[status] ?? ''}`.trim(), headers);
    // end(…, true) closes the socket and writes `Connection: close` itself, unless the
    // request already said so (then it writes nothing): the header goes out exactly once.
    // A 204 is ended without end(), so it always says it here.
    if (closeConnection && (exchange.clientCloses || status === 204)) exchange.res.writeHeader('Connection', 'close');
    // No Content carries no Content-Length (RFC 9110), which end() always writes. It is
    // only closing at shutdown, whose App.close() closes the connection after it.
    if (status === 204) exchange.res.endWithoutBody();
    else if (!head) exchange.res.end(body, closeConnection);
    // HEAD: the GET's status, headers and length, without the body. uWS 20.30 closes after
    // a body-less answer only when it says Content-Length: 0 (endWithoutBody with any
    // other length leaves the connection open, even one the request asked to close), so
    // one that must close (shutdown, a Content-Length sent twice) says 0.
    else if (closeConnection) exchange.res.endWithoutBody(0, true);
    else endHead(exchange.res, length);
  });
  finish(exchange);
}

/**
 * Answers a HEAD request to a route that streams its body: the GET's status and
 * headers, with the body's length when it is known (a stored file or object), without
 * sending or reading the body. Returns false, doing nothing, for any other method.
 */
function headOnly(exchange: Exchange, headers: Record<string, string>, length?: number): boolean {
  if (exchange.method !== 'HEAD') return false;
  if (exchange.finished) return true;
  exchange.status = 200;
  exchange.res.cork(() => {
    writeHead(exchange.res, '200 OK', headers);
    endHead(exchange.res, length);
  });
  finish(exchange);
  return true;
}

/** The status line, the security headers and `headers` (inside a cork). */
function writeHead(res: HttpResponse, status: string, headers: Record<string, string>): void {
  res.writeStatus(status);
  for (const [name, value] of Object.entries({ ...SECURITY_HEADERS, ...headers })) res.writeHeader(name, value);
}

/**
 * Ends a HEAD answer with the GET's framing: `length` as its Content-Length, or
 * `Transfer-Encoding: chunked` when the GET streams a body of unknown length. uWS 20.30's
 * own endWithoutBody(length) leaves the connection open even when the request said
 * `Connection: close`; written as headers, the framing goes out as is and the request's
 * own close is honoured.
 */
function endHead(res: HttpResponse, length: number | undefined): void {
  if (length !== undefined) res.writeHeader('Content-Length', String(length));
  else res.writeHeader('Transfer-Encoding', 'chunked');
  res.endWithoutBody();
}

export function sendJson(exchange: Exchange, status: number, value: unknown, headers: Record<string, string> = {}): void {
  send(exchange, status, JSON.stringify(value), { 'Content-Type': 'application/json; charset=utf-8', ...headers });
}

/** The one error answer: mapped by toHttpError; anything it does not know is a logged 500. */
export function sendError(exchange: Exchange, error: unknown, log?: (error: unknown) => void): void {
  // A client that left (or a shutdown that cut it off) is not an internal error worth a log line.
  if (exchange.finished) return;
  const mapped = toHttpError(error);
  if (mapped) {
    sendJson(exchange, mapped.status, { error: { code: mapped.code, message: mapped.message } }, mapped.headers);
    return;
  }
  log?.(error);
  sendJson(exchange, 500, { error: { code: 'internal', message: 'internal error' } });
}

/**
 * Streams a file with uWS back-pressure (tryEnd/onWritable), never holding it whole.
 * Resolves when the last byte is handed to uWS or the client went away.
 */
export async function sendFile(exchange: Exchange, path: string, headers: Record<string, string>): Promise<void> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    if (exchange.finished || headOnly(exchange, headers, size)) return;
    exchange.status = 200;
    exchange.bytesOut = size;
    const chunk = Buffer.allocUnsafe(Math.min(size, 256 * 1024) || 1);
    let offset = 0;
    let headerSent = false;
    while (!exchange.aborted) {
      const { bytesRead } = size === 0 ? { bytesRead: 0 } : await handle.read(chunk, 0, Math.min(chunk.length, size - offset), offset);
      if (exchange.aborted) break;
      if (bytesRead === 0 && offset < size) throw new Error(`file ${path} shrank while being sent`);
      const piece = chunk.subarray(0, bytesRead);
      const pieceStart = offset;
      offset += bytesRead;
      let ok = false;
      let done = false;
      exchange.res.cork(() => {
        if (!headerSent) {
          writeHead(exchange.res, '200 OK', headers);
          headerSent = true;
        }
        [ok, done] = exchange.res.tryEnd(piece, size);
      });
      if (done) break;
      if (!ok) {
        // uWS keeps what it could not send only up to its write offset; resend the rest when writable.
        await new Promise<void>((resolve) => {
          exchange.onAbort.push(resolve);
          exchange.res.onWritable((writeOffset) => {
            const rest = piece.subarray(writeOffset - pieceStart);
            const [writableOk, writableDone] = exchange.res.tryEnd(rest, size);
            if (writableDone || writableOk) resolve();
            return writableOk;
          });
        });
        if (offset >= size) break;
      }
      if (offset >= size) break;
    }
    if (!exchange.aborted) finish(exchange);
  } finally {
    await handle.close();
  }
}

/**
 * Sends an object of `size` bytes from the store (a stream) with uWS back-pressure,
 * never holding it whole. A failure before the first byte rejects (so the route answers
 * with the error, e.g. 503 for a store that went away); a failure once the answer has
 * begun can no longer change its status, so the connection is closed: the client sees a
 * cut body, never a short one that looks whole. The body is destroyed in every case.
 */
export async function sendObject(exchange: Exchange, body: Readable, size: number, headers: Record<string, string>): Promise<void> {
  let headerSent = false;
  let offset = 0;
  const write = (piece: Uint8Array): [boolean, boolean] => {
    let result: [boolean, boolean] = [false, false];
    exchange.res.cork(() => {
      if (!headerSent) {
        writeHead(exchange.res, '200 OK', headers);
        headerSent = true;
      }
      result = exchange.res.tryEnd(piece, size);
    });
    return result;
  };
  try {
    if (exchange.finished || headOnly(exchange, headers, size)) return;
    exchange.status = 200;
    exchange.bytesOut = size;
    let done = false;
    for await (const chunk of body) {
      if (exchange.aborted) return;
      const piece = chunk as Buffer;
      const pieceStart = offset;
      offset += piece.byteLength;
      if (offset > size) throw new Error(`a stored object is longer than its ${size} bytes`);
      let ok: boolean;
      [ok, done] = write(piece);
      if (done) break;
      if (!ok) await writable(exchange, piece, pieceStart, size);
      if (exchange.aborted) return;
    }
    if (!done && offset < size) throw new Error(`a stored object ended after ${offset} of its ${size} bytes`);
    if (size === 0) write(new Uint8Array(0));
    finish(exchange);
  } catch (error) {
    if (!headerSent || exchange.aborted) {
      exchange.status = 0;
      throw error;
    }
    // Mid-answer: closing is the only honest signal left (uWS then reports the exchange aborted).
    exchange.res.close();
  } finally {
    body.destroy();
  }
}

/** Waits until uWS has sent what it kept of `piece` (from its write offset on), or the client left. */
function writable(exchange: Exchange, piece: Uint8Array, pieceStart: number, size: number): Promise<void> {
  return new Promise<void>((resolve) => {
    exchange.onAbort.push(resolve);
    exchange.res.onWritable((writeOffset) => {
      const [ok, done] = exchange.res.tryEnd(piece.subarray(writeOffset - pieceStart), size);
      if (ok || done) resolve();
      return ok;
    });
  });
}

/**
 * Streams a body of unknown length (chunked) with uWS back-pressure: each chunk is
 * written as it comes, and the next waits while uWS still holds data for a slow
 * client. The source is destroyed however the answer ends (a client gone before it
 * started included), which closes what feeds it. A failure after the status line
 * went out can only cut the connection.
 */
export async function sendStream(exchange: Exchange, source: Readable, headers: Record<string, string>): Promise<void> {
  try {
    await streamAnswer(exchange, source, headers);
  } finally {
    // A client gone before or during the answer leaves the source unread: destroying it closes what feeds it.
    source.destroy();
  }
}

async function streamAnswer(exchange: Exchange, source: Readable, headers: Record<string, string>): Promise<void> {
  if (exchange.finished || headOnly(exchange, headers)) return;
  let headerSent = false;
  const head = (): void => {
    if (headerSent) return;
    writeHead(exchange.res, '200 OK', headers);
    headerSent = true;
  };
  exchange.status = 200;
  try {
    for await (const chunk of source as AsyncIterable<Uint8Array>) {
      if (exchange.aborted) return;
      let ok = true;
      exchange.res.cork(() => {
        head();
        ok = exchange.res.write(chunk);
      });
      exchange.bytesOut += chunk.byteLength;
      if (!ok) {
        await new Promise<void>((resolve) => {
          exchange.onAbort.push(resolve);
          exchange.res.onWritable(() => {
            resolve();
            return true;
          });
        });
      }
    }
  } catch (error) {
    if (!headerSent || exchange.aborted) throw error;
    exchange.res.close(); // the client sees a cut answer, never a wrong one
    finish(exchange);
    return;
  }
  if (exchange.aborted) return;
  exchange.res.cork(() => {
    head();
    exchange.res.end();
  });
  finish(exchange);
}
