/** The one error the client throws: a refused request, an unreadable answer or no answer at all. */
export class ClientError extends Error {
  override name = 'ClientError';
  /** HTTP status of the answer; 0 when no answer arrived (network failure). */
  readonly status: number;
  /** The raw response body as text ('' when there was none). */
  readonly body: string;

  constructor(message: string, status: number, body: string, options?: { cause?: unknown }) {
    super(message, options);
    this.status = status;
    this.body = body;
  }
}

/** The contract's message for a non-2xx answer: `<operation> failed (<status>): <response_text>`. */
export function refused(operation: string, status: number, body: string): ClientError {
  return new ClientError(`${operation} failed (${status}): ${body}`, status, body);
}

/** A 2xx answer whose body is not JSON: the contract promises JSON, so say what came instead. */
export function unreadable(operation: string, status: number, body: string): ClientError {
  const excerpt = body.length > 200 ? `${body.slice(0, 200)}…` : body;
  return new ClientError(`${operation} failed (${status}): response is not JSON: ${excerpt}`, status, body);
}

/** No answer at all (connection refused, DNS, reset): status 0, with the platform's reason. */
export function unreachable(operation: string, cause: unknown): ClientError {
  return new ClientError(`${operation} failed: ${describe(cause)}`, 0, '', { cause });
}

function describe(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  // Node's fetch says only "fetch failed"; the useful part (ECONNREFUSED ...) is its cause.
  const inner = (cause as { cause?: unknown }).cause;
  return inner instanceof Error && inner.message ? `${cause.message} (${inner.message})` : cause.message;
}
