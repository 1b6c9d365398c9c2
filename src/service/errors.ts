/**
 * What the service refuses, as values of one error type that carries a kind; the
 * HTTP layer maps each kind to a status in one place (http/errors.ts). The service
 * itself knows nothing of HTTP.
 */
import { isDiskFull, QuotaExceededError, StorageFullError } from '../store/quota.js';

export type ServiceErrorKind =
  /** The upload is not a place file (its message names chunk and byte offset). */
  | 'not_a_place'
  /** The map needs more than the memory budget's per-task limits. */
  | 'map_too_large'
  /** Unknown, expired or someone else's (one answer for all three). */
  | 'not_found'
  /** Every worker is busy and the queue is full. */
  | 'busy'
  /** The user's share of the disk is used up. */
  | 'quota_exceeded'
  /** The service's disk (MAX_DATA_BYTES, or the file system) is full. */
  | 'storage_full';

export class ServiceError extends Error {
  override name = 'ServiceError';
  constructor(readonly kind: ServiceErrorKind, message: string) {
    super(message);
  }
}

export const isServiceError = (error: unknown): error is ServiceError => error instanceof ServiceError;

/**
 * The refusal a store-level error stands for: the user's share (QuotaExceededError), the
 * disk found full (StorageFullError), or a write that filled it (ENOSPC, EDQUOT: an
 * upload's temp file), which is as full as one found full before. Anything else is returned as it is.
 */
export function asServiceError(error: unknown): unknown {
  if (error instanceof QuotaExceededError) return new ServiceError('quota_exceeded', error.message);
  if (error instanceof StorageFullError) return new ServiceError('storage_full', error.message);
  if (isDiskFull(error)) return new ServiceError('storage_full', 'the disk is full');
  return error;
}
