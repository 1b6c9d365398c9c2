/**
 * Every error the service answers with: a status, a stable code and a message meant
 * for the person using the client. The body is always {"error": {"code", "message"}}.
 * `toHttpError` is the one place where what the service refuses becomes a status.
 */
import { asServiceError, isServiceError, type ServiceErrorKind } from '../service/errors.js';
import { isStoreUnavailable } from '../store/backends/errors.js';
import { PoolBusyError } from '../workers/pool.js';

export class HttpError extends Error {
  override name = 'HttpError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const badRequest = (code: string, message: string): HttpError => new HttpError(400, code, message);
export const unauthorized = (): HttpError =>
  new HttpError(401, 'unauthorized', 'no user: send X-User-Id (or, in development mode, X-Auth-Override)');
/** One answer for unknown, expired and someone else's: the caller learns nothing about which. */
export const notFound = (what = 'resource'): HttpError => new HttpError(404, 'not_found', `${what} not found`);
export const methodNotAllowed = (allow: string): HttpError =>
  new HttpError(405, 'method_not_allowed', `method not allowed; use ${allow}`, { Allow: allow });
/** A body over its route's limit: `what` names it (an upload, a create request). */
export const tooLarge = (limit: number, what = 'upload'): HttpError =>
  new HttpError(413, 'payload_too_large', `${what} exceeds the limit of ${limit} bytes`);
export const busy = (): HttpError =>
  new HttpError(503, 'busy', 'the service is busy; retry shortly', { 'Retry-After': '2' });
export const shuttingDown = (): HttpError =>
  new HttpError(503, 'shutting_down', 'the service is shutting down', { 'Retry-After': '5' });

const SERVICE_STATUS: Record<ServiceErrorKind, [number, Record<string, string>]> = {
  not_a_place: [422, {}],
  map_too_large: [413, {}],
  not_found: [404, {}],
  busy: [503, { 'Retry-After': '2' }],
  quota_exceeded: [507, {}],
  // Sweeps free room (expired previews, retention): worth a retry later.
  storage_full: [507, { 'Retry-After': '60' }],
};

/** The HttpError an error stands for, or null for an internal error (answered 500, logged). */
export function toHttpError(error: unknown): HttpError | null {
  if (error instanceof HttpError) return error;
  if (error instanceof PoolBusyError) return busy();
  // The object store (S3, or the disk) cannot be reached now: nothing was half-written, the client retries.
  if (isStoreUnavailable(error)) {
    const retryAfter = { 'Retry-After': String(error.retryAfterSeconds) };
    return error.reason === 'full'
      ? new HttpError(507, 'storage_full', 'the storage is full', retryAfter)
      : new HttpError(503, 'store_unavailable', 'the storage is unavailable; retry shortly', retryAfter);
  }
  // The service's refusals, and the store-level ones it stands for (a share used up, a disk found full or filled by a write).
  const refusal = asServiceError(error);
  if (isServiceError(refusal)) {
    const [status, headers] = SERVICE_STATUS[refusal.kind];
    return new HttpError(status, refusal.kind, refusal.message, headers);
  }
  return null;
}

export const STATUS_TEXT: Record<number, string> = {
  200: 'OK', 204: 'No Content', 302: 'Found', 304: 'Not Modified', 308: 'Permanent Redirect', 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden',
  404: 'Not Found', 405: 'Method Not Allowed', 409: 'Conflict', 411: 'Length Required', 413: 'Payload Too Large', 415: 'Unsupported Media Type',
  422: 'Unprocessable Entity', 429: 'Too Many Requests', 500: 'Internal Server Error', 501: 'Not Implemented', 503: 'Service Unavailable',
  505: 'HTTP Version Not Supported', 507: 'Insufficient Storage',
};
