/**
 * The retry policy: which failures another attempt may cure (429, 5xx, 408, network
 * errors, timeouts), and how long to wait first: the server's hint (Retry-After in
 * seconds or as an HTTP date, x-ratelimit-reset in seconds), capped, else exponential
 * back-off with jitter.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { AssetFetchError, AssetStoreError } from './errors.js';

export interface RetryPolicy {
  /** Extra attempts after the first for retryable failures. */
  retries: number;
  /** First back-off delay; doubles per attempt, with jitter. */
  backoffBaseMs: number;
  /** Cap on a server's Retry-After / x-ratelimit-reset hint. */
  maxRetryAfterMs: number;
}

const MAX_BACKOFF_MS = 10_000;

/**
 * Runs `attempt` until it succeeds, fails for good, or the retries run out; returns
 * the value or the last failure. A wait that would pass `deadlineAt()` (epoch ms, read
 * when the wait would begin) is not waited: the failure is returned at once, as what the
 * host said rather than a timeout. Rethrows the signal's abort and disk errors.
 */
export async function withRetries<T>(
  attempt: () => Promise<T>,
  policy: RetryPolicy,
  signal: AbortSignal,
  deadlineAt: () => number = () => Infinity,
): Promise<{ ok: true; value: T } | { ok: false; failure: AssetFetchError }> {
  for (let index = 0; ; index++) {
    let failure: AssetFetchError;
    try {
      return { ok: true, value: await attempt() };
    } catch (error) {
      failure = asFetchFailure(error, signal);
    }
    if (!failure.retryable || index >= policy.retries) return { ok: false, failure };
    const delay = failure.retryAfterMs !== undefined
      ? Math.min(failure.retryAfterMs, policy.maxRetryAfterMs)
      : backoffDelay(policy.backoffBaseMs, index);
    if (Date.now() + delay >= deadlineAt()) return { ok: false, failure };
    await sleep(delay, undefined, { signal }).catch(() => {
      throw signal.reason;
    });
  }
}

/** The failure an HTTP status stands for. */
export function statusFailure(status: number, headers: IncomingHttpHeaders): AssetFetchError {
  const message = `asset source answered HTTP ${status}`;
  switch (status) {
    case 401: return new AssetFetchError('unauthorized', message, { status });
    case 403: return new AssetFetchError('forbidden', message, { status });
    case 404:
    case 410: return new AssetFetchError('not_found', message, { status });
    case 408: return new AssetFetchError('timeout', message, { status, retryable: true });
    case 429: return new AssetFetchError('rate_limited', message, { status, retryable: true, retryAfterMs: retryAfterMs(headers) });
  }
  if (status >= 500) return new AssetFetchError('upstream_error', message, { status, retryable: true, retryAfterMs: retryAfterMs(headers) });
  return new AssetFetchError('upstream_error', message, { status });
}

/** The server's hint of when to try again, in ms: Retry-After (seconds or HTTP date), else x-ratelimit-reset. */
export function retryAfterMs(headers: IncomingHttpHeaders, now = Date.now()): number | undefined {
  const retryAfter = headerValue(headers['retry-after'])?.trim();
  if (retryAfter !== undefined && retryAfter !== '') {
    if (/^\d+(\.\d+)?$/.test(retryAfter)) return Math.round(Number(retryAfter) * 1000);
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date)) return Math.max(0, date - now);
  }
  const reset = headerValue(headers['x-ratelimit-reset'])?.trim();
  if (reset !== undefined && /^\d+(\.\d+)?$/.test(reset)) {
    const seconds = Number(reset);
    // Roblox sends seconds until the reset; some APIs send the reset's epoch second.
    return seconds > 1e9 ? Math.max(0, seconds * 1000 - now) : Math.round(seconds * 1000);
  }
  return undefined;
}

/** Exponential back-off with "equal jitter": half fixed, half random. */
function backoffDelay(baseMs: number, attempt: number): number {
  const ceiling = Math.min(baseMs * 2 ** attempt, MAX_BACKOFF_MS);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** Maps whatever an attempt threw to a failure, rethrowing the signal's own abort and disk errors. */
function asFetchFailure(error: unknown, signal: AbortSignal): AssetFetchError {
  if (signal.aborted) throw signal.reason;
  if (error instanceof AssetStoreError) throw error;
  if (error instanceof AssetFetchError) return error;
  const code = typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string'
    ? (error as { code: string }).code
    : '';
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
    return new AssetFetchError('timeout', message, { retryable: true, cause: error });
  }
  if (code.startsWith('Z_')) {
    return new AssetFetchError('upstream_error', `asset body is not valid gzip: ${message}`, { retryable: true, cause: error });
  }
  return new AssetFetchError('network_error', message, { retryable: true, cause: error });
}

export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
