/**
 * Every failure of an object store, in one place. Callers see two classes:
 *
 * - `StoreUnavailableError`: the store cannot serve now (unreachable, timed out, 5xx,
 *   throttled, disk full, or misconfigured: wrong bucket, credentials or region). The
 *   HTTP layer answers 503 with `Retry-After`; /health reports it. Nothing was written.
 * - `StoreError`: anything else the store answered that we did not expect (a bug of ours
 *   or of the store), or an object larger than the caller allowed.
 *
 * Not found is never an error: the stores return `undefined`.
 */

export type UnavailableReason = 'unreachable' | 'timeout' | 'server_error' | 'throttled' | 'misconfigured' | 'full' | 'io' | 'busy';

export class StoreError extends Error {
  override name = 'StoreError';
  constructor(
    message: string,
    /** The operation (`get`, `put`, …) and key, for logs. */
    readonly operation: string,
    readonly key: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export class StoreUnavailableError extends StoreError {
  override name = 'StoreUnavailableError';
  constructor(
    message: string,
    operation: string,
    key: string | undefined,
    readonly reason: UnavailableReason,
    /** What to tell clients in `Retry-After`. */
    readonly retryAfterSeconds: number,
    options?: { cause?: unknown },
  ) {
    super(message, operation, key, options);
  }
}

export function isStoreUnavailable(error: unknown): error is StoreUnavailableError {
  return error instanceof StoreUnavailableError;
}

const RETRY_AFTER_SECONDS: Record<UnavailableReason, number> = {
  unreachable: 5,
  timeout: 5,
  server_error: 5,
  throttled: 2,
  busy: 1,
  io: 5,
  full: 60,
  misconfigured: 60,
};

function unavailable(reason: UnavailableReason, detail: string, operation: string, key: string | undefined, cause: unknown, retryAfter?: number): StoreUnavailableError {
  const where = key === undefined ? operation : `${operation} ${key}`;
  return new StoreUnavailableError(`object store ${reason.replace('_', ' ')} (${where}): ${detail}`, operation, key, reason, retryAfter ?? RETRY_AFTER_SECONDS[reason], { cause });
}

// ---- disk ----

const DISK_UNAVAILABLE: Record<string, UnavailableReason> = {
  ENOSPC: 'full',
  EDQUOT: 'full',
  EIO: 'io',
  EMFILE: 'io',
  ENFILE: 'io',
  EROFS: 'misconfigured',
  EACCES: 'misconfigured',
  EPERM: 'misconfigured',
};

/** A file-system error as a store error. */
export function fromFsError(error: unknown, operation: string, key: string | undefined): StoreError {
  if (error instanceof StoreError) return error;
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const reason = code === undefined ? undefined : DISK_UNAVAILABLE[code];
  const detail = error instanceof Error ? error.message : String(error);
  if (reason !== undefined) return unavailable(reason, detail, operation, key, error);
  return new StoreError(`disk store failed (${operation}${key === undefined ? '' : ` ${key}`}): ${detail}`, operation, key, { cause: error });
}

// ---- S3 (errors thrown by @aws-sdk/client-s3 and the Node HTTP stack beneath it) ----

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE', 'UND_ERR_SOCKET']);
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'ERR_STREAM_PREMATURE_CLOSE_TIMEOUT']);
const MISCONFIGURED = new Set([
  'AccessDenied', 'InvalidAccessKeyId', 'SignatureDoesNotMatch', 'NoSuchBucket', 'PermanentRedirect',
  'AuthorizationHeaderMalformed', 'InvalidBucketName', 'ExpiredToken', 'InvalidToken', 'AllAccessDisabled',
  'CredentialsProviderError',
]);
const THROTTLED = new Set(['SlowDown', 'Throttling', 'ThrottlingException', 'TooManyRequests', 'RequestLimitExceeded']);
// NoSuchUpload: a multipart upload gone under us, most often completed by a try whose answer was lost (the SDK's retry finds it done), or aborted by a sweep or lifecycle rule.
const SERVER = new Set(['InternalError', 'ServiceUnavailable', 'RequestTimeout', 'RequestTimeTooSkewed', 'NoSuchUpload']);

interface SdkErrorShape {
  name?: string;
  code?: string;
  message?: string;
  Code?: string;
  $metadata?: { httpStatusCode?: number };
  $response?: { headers?: Record<string, string | undefined> };
  cause?: unknown;
}

/** The HTTP status of an S3 answer, when the error is one. */
export function s3Status(error: unknown): number | undefined {
  return (error as SdkErrorShape | null)?.$metadata?.httpStatusCode;
}

/** The S3 error code (`NoSuchKey`, `PreconditionFailed`, …) or the Node error code. */
export function s3Code(error: unknown): string | undefined {
  const shape = error as SdkErrorShape | null;
  return shape?.Code ?? (shape?.name !== undefined && shape.name !== 'Error' ? shape.name : undefined) ?? shape?.code;
}

function retryAfterHeader(error: unknown): number | undefined {
  const value = (error as SdkErrorShape | null)?.$response?.headers?.['retry-after'];
  const seconds = value === undefined ? NaN : Number(value);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(Math.ceil(seconds), 3600) : undefined;
}

/** An error of the SDK (or of the socket under it) as a store error. */
export function fromS3Error(error: unknown, operation: string, key: string | undefined): StoreError {
  if (error instanceof StoreError) return error;
  const shape = (error ?? {}) as SdkErrorShape;
  const status = s3Status(error);
  const name = shape.name ?? '';
  const code = shape.Code ?? name;
  const nodeCode = shape.code ?? (shape.cause as SdkErrorShape | undefined)?.code;
  const detail = `${code || nodeCode || 'error'}${status === undefined ? '' : ` (HTTP ${status})`}: ${shape.message ?? String(error)}`;
  if (name === 'TimeoutError' || name === 'AbortError' || (nodeCode !== undefined && TIMEOUT_CODES.has(nodeCode))) {
    return unavailable('timeout', detail, operation, key, error);
  }
  if (MISCONFIGURED.has(code) || status === 401 || status === 403 || status === 301) return unavailable('misconfigured', detail, operation, key, error);
  if (THROTTLED.has(code) || status === 429) return unavailable('throttled', detail, operation, key, error, retryAfterHeader(error));
  if (SERVER.has(code) || (status !== undefined && status >= 500)) return unavailable('server_error', detail, operation, key, error, retryAfterHeader(error));
  if (status === undefined && ((nodeCode !== undefined && NETWORK_CODES.has(nodeCode)) || /socket hang up|aborted|ECONNRE|premature close/i.test(shape.message ?? ''))) {
    return unavailable('unreachable', detail, operation, key, error);
  }
  return new StoreError(`object store answered unexpectedly (${operation}${key === undefined ? '' : ` ${key}`}): ${detail}`, operation, key, { cause: error });
}

/** A local wait for a lock or a deadline ran out. */
export function busyError(operation: string, key: string, waitedMs: number): StoreUnavailableError {
  return unavailable('busy', `another writer held the key for ${waitedMs} ms`, operation, key, undefined);
}

export function timeoutError(operation: string, key: string | undefined, ms: number): StoreUnavailableError {
  return unavailable('timeout', `no answer within ${ms} ms`, operation, key, undefined);
}

/** An object larger than its reader allows (`get` with `maxBytes`). */
export class ObjectTooLargeError extends StoreError {
  override name = 'ObjectTooLargeError';
}

export function tooLargeError(operation: string, key: string, size: number, maxBytes: number): ObjectTooLargeError {
  return new ObjectTooLargeError(`object ${key} is ${size} bytes, more than the ${maxBytes} allowed (${operation})`, operation, key);
}
