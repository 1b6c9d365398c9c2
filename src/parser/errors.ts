/**
 * The one error type for malformed input. It says where: the chunk (name and its
 * byte offset in the file), the property when one was being read, and the byte
 * offset at which reading failed.
 */
export interface DecodeErrorContext {
  /** Chunk name, e.g. "PROP", or "header" / "xml". */
  chunk?: string;
  /** Byte offset in the file where the failing read started. */
  offset?: number;
  /** "Class.Property" when the failure is inside a property column. */
  property?: string;
}

export class DecodeError extends Error {
  readonly chunk?: string;
  readonly offset?: number;
  readonly property?: string;
  /** The message without its location, so an outer reader can add context. */
  readonly reason: string;

  constructor(reason: string, context: DecodeErrorContext = {}) {
    super(reason + describe(context));
    this.name = 'DecodeError';
    this.reason = reason;
    this.chunk = context.chunk;
    this.offset = context.offset;
    this.property = context.property;
  }

  /** The same error with missing location fields filled in from an outer reader. */
  withContext(context: DecodeErrorContext): DecodeError {
    return new DecodeError(this.reason, {
      chunk: this.chunk ?? context.chunk,
      offset: this.offset ?? context.offset,
      property: this.property ?? context.property,
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
