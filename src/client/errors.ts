/** The one error the client throws: a refused request, an unreadable answer or no answer at all. */
export class ClientError extends Error {
  override name = 'ClientError';
  /**
   * HTTP status of the answer; 0 when no answer arrived (network failure), UNREAD (-1) when one
   * came but could not be read whole, UNSENT (-2) when the upload's own file could not be read.
   */
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

/** A 2xx answer whose body is not JSON (or, given `why`, not the contract's JSON): say what came instead. */
export function unreadable(operation: string, status: number, body: string, why = 'response is not JSON'): ClientError {
  const excerpt = body.length > 200 ? `${body.slice(0, 200)}…` : body;
  return new ClientError(`${operation} failed (${status}): ${why}: ${excerpt}`, status, body);
}

/** The `status` of an answer that came but could not be read whole (its status is in the message). */
export const UNREAD = -1;

/** An answer larger than the client reads (transport.ts MAX_ANSWER_BYTES). */
export function tooLarge(operation: string, status: number): ClientError {
  return new ClientError(`${operation} failed (${status}): the answer is larger than the client reads (64 MiB)`, UNREAD, '');
}

/** An answer whose body did not arrive in time (transport.ts ANSWER_BODY_DEADLINE_MS). */
export function tooSlow(operation: string, status: number): ClientError {
  return new ClientError(`${operation} failed (${status}): the answer did not arrive in time`, UNREAD, '');
}

/** An answer whose body broke off (connection closed or reset, a Content-Length not met, a body that does not decode): it came, so the service was reached. */
export function cutShort(operation: string, status: number, cause: unknown): ClientError {
  return new ClientError(`${operation} failed (${status}): the answer was cut short: ${describe(cause)}`, UNREAD, '', { cause });
}

/** The `status` of a request whose body could not be read here (the upload's file changed or went away while it was sent). */
export const UNSENT = -2;

/** The upload's file could not be read while it was sent: the service was not at fault, and may not have been reached. */
export function unsent(operation: string, cause: unknown): ClientError {
  return new ClientError(`${operation} failed: the file could not be read while it was sent (it changed or was removed): ${describe(cause)}`, UNSENT, '', { cause });
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
