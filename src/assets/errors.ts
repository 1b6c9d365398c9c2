/**
 * Errors of the asset area. An asset that cannot be fetched is not an exception to
 * the caller: it becomes an outcome with one reason from a fixed set. Exceptions are
 * kept for the store's own file-system failures (a full disk is the operator's
 * problem, not the asset's) and for aborts.
 */

/** Why an asset could not be fetched; the fixed set the project document records. */
export type AssetFailureReason =
  | 'no_credentials'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'rate_limited'
  | 'timeout'
  | 'too_large'
  | 'upstream_error'
  | 'network_error';

export interface AssetFetchErrorDetails {
  /** HTTP status of the answer that decided the failure, when there was one. */
  status?: number;
  /** Whether another attempt may succeed (429, 5xx, network errors, timeouts). */
  retryable?: boolean;
  /** The server's own hint (Retry-After / x-ratelimit-reset), in milliseconds. */
  retryAfterMs?: number;
  cause?: unknown;
}

/** One failed attempt at fetching an asset; its reason ends up in the outcome. */
export class AssetFetchError extends Error {
  override name = 'AssetFetchError';
  readonly reason: AssetFailureReason;
  readonly status?: number;
  readonly retryable: boolean;
  readonly retryAfterMs?: number;

  constructor(reason: AssetFailureReason, message: string, details: AssetFetchErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.reason = reason;
    this.status = details.status;
    this.retryable = details.retryable ?? false;
    this.retryAfterMs = details.retryAfterMs;
  }
}

/** The asset store could not write to disk; the download as a whole fails with it. */
export class AssetStoreError extends Error {
  override name = 'AssetStoreError';

  constructor(message: string, cause: unknown) {
    super(`${message}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}
