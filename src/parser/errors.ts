/**
 * The one error type for input the decoder refuses. It says where: the chunk (name
 * and its byte offset in the file), the property when one was being read, and the
 * byte offset at which reading failed; and, when the file is refused for declaring
 * more than a cap allows rather than for its form, which cap (`limit`).
 */
import type { DecodeLimits } from './limits.js';

export interface DecodeErrorContext {
  /** Chunk name, e.g. "PROP", or "header" / "xml". */
  chunk?: string;
  /** Byte offset in the file where the failing read started. */
  offset?: number;
  /** "Class.Property" when the failure is inside a property column. */
  property?: string;
  /** The cap the file declares more than (e.g. "maxInstances"); absent when the file is malformed. */
  limit?: keyof DecodeLimits;
}

export class DecodeError extends Error {
  readonly chunk?: string;
  readonly offset?: number;
  readonly property?: string;
  /** The cap the file declares more than; absent for a malformed file (see DecodeErrorContext). */
  readonly limit?: keyof DecodeLimits;
  /** The message without its location, so an outer reader can add context. */
  readonly reason: string;

  constructor(reason: string, context: DecodeErrorContext = {}) {
    super(reason + describe(context));
    this.name = 'DecodeError';
    this.reason = reason;
    this.chunk = context.chunk;
    this.offset = context.offset;
    this.property = context.property;
    this.limit = context.limit;
  }

  /** The same error with missing location fields filled in from an outer reader. */
  withContext(context: DecodeErrorContext): DecodeError {
    return new DecodeError(this.reason, {
      chunk: this.chunk ?? context.chunk,
      offset: this.offset ?? context.offset,
      property: this.property ?? context.property,
      limit: this.limit,
    });
  }
}

function describe({ chunk, offset, property }: DecodeErrorContext): string {
  const parts: string[] = [];
  if (chunk !== undefined) parts.push(`chunk ${chunk}`);
  if (property !== undefined) parts.push(`property ${property}`);
  if (offset !== undefined) parts.push(`byte offset ${offset}`);
  return parts.length ? ` (${parts.join(', ')})` : '';
}

export function isDecodeError(error: unknown): error is DecodeError {
  return error instanceof DecodeError;
}
