/**
 * The contract's authentication headers (interface.md section 5): `Authorization` carries
 * the token exactly as held ('' when none), and on a development host `X-Auth-Override`
 * carries the JWT payload's `id`, left out whenever that id cannot be read.
 */

export const DEVELOPMENT_HOSTS: readonly string[] = ['localhost', '127.0.0.1'];

/**
 * A user id the service can take as sent (src/http/auth.ts): 1 to 256 printable ASCII
 * characters, spaces only inside. The transport drops whatever else sits at a header
 * value's ends; the client leaves out an id that would not arrive intact.
 */
export const MAX_USER_ID_LENGTH = 256;
export const USER_ID_PATTERN = /^[\x21-\x7e](?:[\x20-\x7e]{0,254}[\x21-\x7e])?$/;

/** Longest token payload decoded; a JWT payload is small, so anything larger is not one. */
const MAX_PAYLOAD_CHARS = 64 * 1024;

export function isDevelopmentHost(hostname: string): boolean {
  return DEVELOPMENT_HOSTS.includes(hostname.toLowerCase());
}

/**
 * The user id in a JWT's payload (second dot-separated segment, base64url with optional
 * padding; the standard alphabet is tolerated too), as a string; null when the token has
 * no such segment, it is not JSON, or `id` is neither a number nor a usable string.
 */
export function userIdFromToken(token: string | null | undefined): string | null {
  if (!token) return null;
  const segments = token.split('.');
  if (segments.length < 2) return null;
  const payload = decodeBase64Url(segments[1]!);
  if (payload === null) return null;
  let claims: unknown;
  try {
    claims = JSON.parse(payload);
  } catch {
    return null;
  }
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) return null;
  const id = (claims as { id?: unknown }).id;
  if (typeof id === 'number') return Number.isFinite(id) ? String(id) : null;
  if (typeof id === 'string' && USER_ID_PATTERN.test(id)) return id;
  return null;
}

/** Headers both POST operations carry. */
export function authHeaders(token: string | null | undefined, hostname: string): Record<string, string> {
  const headers: Record<string, string> = { Authorization: token ?? '' };
  if (isDevelopmentHost(hostname)) {
    const id = userIdFromToken(token);
    if (id !== null) headers['X-Auth-Override'] = id;
  }
  return headers;
}

function decodeBase64Url(segment: string): string | null {
  if (segment.length === 0 || segment.length > MAX_PAYLOAD_CHARS) return null;
  const unpadded = segment.replace(/=+$/, '');
  if (!/^[A-Za-z0-9_\-+/]*$/.test(unpadded) || unpadded.length % 4 === 1) return null;
  const base64 = unpadded.replace(/-/g, '+').replace(/_/g, '/');
  let binary: string;
  try {
    binary = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
  } catch {
    return null;
  }
  const bytes = Uint8Array.from(binary, (char) => char.charCodeAt(0));
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

/**
 * An unsigned development token for user `id`: the JWT shape (header, payload with `id`,
 * an empty signature) that `userIdFromToken` reads on a development host. Only a service
 * in AUTH_MODE=development accepts what it carries (through X-Auth-Override); a gateway
 * checking signatures refuses it.
 */
export function developmentToken(id: string): string {
  const segment = (value: unknown): string => base64Url(new TextEncoder().encode(JSON.stringify(value)));
  return `${segment({ alg: 'none', typ: 'JWT' })}.${segment({ id, dev: true })}.`;
}

function base64Url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
