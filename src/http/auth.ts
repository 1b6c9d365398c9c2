/**
 * Who is calling. In `gateway` mode only X-User-Id counts (the gateway sets it after
 * checking the token). In `development` mode the client's X-Auth-Override (the JWT's
 * `id`, sent from localhost) is trusted first, as interface.md section 5 describes.
 *
 * A user id is taken exactly as sent or refused, never mapped to another id:
 * valid ids are 1 to 256 printable ASCII characters, spaces only inside (the client's
 * rule, src/client/auth.ts: what it sends, the service takes). The
 * reason is the transport: uWebSockets.js drops every byte below 0x21 or from 0x80 up
 * at either end of a header value before the service sees it (`X-User-Id: élève`
 * arrives as `lève`, `bob` + U+00A0 as `bob`), so a non-ASCII id cannot be received
 * intact. One that keeps a non-ASCII byte inside is refused (400 `invalid_user`);
 * one whose only non-ASCII bytes sit at its ends cannot be told apart from the
 * trimmed id, which is why gateways must send ASCII ids (README, "User ids"). A
 * header sent twice is refused too: which one would count is not for the service to guess.
 */
import type { HttpRequest } from 'uWebSockets.js';
import type { AuthMode, Config } from '../config.js';
import { MAX_USER_ID_LENGTH, USER_ID_PATTERN } from '../client/auth.js';
import { HttpError } from './errors.js';

const invalid = (name: string, why: string): HttpError => new HttpError(400, 'invalid_user', `${name} ${why}`);

/** The header's value, null when absent; refuses a header sent twice or an invalid id. */
function idHeader(req: HttpRequest, name: 'x-user-id' | 'x-auth-override'): string | null {
  let count = 0;
  req.forEach((key) => {
    if (key === name) count++;
  });
  if (count === 0) return null;
  const label = name === 'x-user-id' ? 'X-User-Id' : 'X-Auth-Override';
  if (count > 1) throw invalid(label, 'is sent more than once');
  const value = req.getHeader(name); // the raw bytes, one character each
  if (!USER_ID_PATTERN.test(value)) {
    throw invalid(label, value === ''
      ? 'is empty (or held only characters outside printable ASCII, which do not survive the transport)'
      : `must be 1 to ${MAX_USER_ID_LENGTH} printable ASCII characters, spaces only inside`);
  }
  return value;
}

/** The caller's user id, null when the request names none; throws 400 for an id that cannot be taken as sent. */
export function userFromRequest(mode: AuthMode, req: HttpRequest): string | null {
  if (mode === 'development') {
    const override = idHeader(req, 'x-auth-override');
    if (override !== null) return override;
  }
  return idHeader(req, 'x-user-id');
}

/** A Host header naming this machine only: localhost (and its subdomains, a final dot allowed), 127.x.x.x, [::1] or [::ffff:127.x.x.x], with any port. */
const LOOPBACK_HOST = /^(?:(?:[a-z0-9-]+\.)*localhost\.?|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\]|\[::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3}\])(?::\d{1,5})?$/i;

/** Whether the service listens on loopback only (HOST `localhost`, `127.x.x.x` or `::1`). */
function listensOnLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * In development mode on loopback (`npm start`'s defaults) the service takes any id a
 * request names, and only the machine itself can reach it. A page on another site can
 * still have its own name resolve to 127.0.0.1 (DNS rebinding) and call the service from
 * the developer's browser as anyone, with the operator's asset key: the request then
 * names that site in its Host header. So such a service answers only requests addressed
 * to a loopback name; an empty Host (not a browser's) is taken (uWS closes a request without one).
 * Returns the check, or null where none applies (gateway mode, or listening beyond loopback).
 */
export function developmentHostCheck(config: Pick<Config, 'authMode' | 'host'>): ((req: HttpRequest) => void) | null {
  if (config.authMode !== 'development' || !listensOnLoopback(config.host)) return null;
  return (req) => {
    const host = req.getHeader('host');
    if (host !== '' && !LOOPBACK_HOST.test(host)) {
      throw new HttpError(403, 'host_not_allowed', `development mode answers only requests addressed to this machine (Host localhost, 127.0.0.1 or [::1]), not ${JSON.stringify(host.slice(0, 100))}: open the page at http://localhost instead, or run with AUTH_MODE=gateway behind a gateway`);
    }
  };
}
