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
import type { AuthMode } from '../config.js';
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
