/**
 * Getting a request to the service and its answer back as (status, text), on whichever
 * platform runs the client: fetch everywhere, XMLHttpRequest in browsers when upload
 * progress is wanted (fetch reports none), a counted stream body in Node for the same.
 */
import { ClientError, cutShort, tooLarge, tooSlow, unreachable, unsent } from './errors.js';

export interface Answer {
  status: number;
  text: string;
}

export type ProgressListener = (sent: number, total: number) => void;

export interface Outgoing {
  operation: string;
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  body?: BodyInit;
  signal?: AbortSignal;
}

/**
 * Redirects are not followed outside a page: the service never redirects its API, and a 3xx
 * is a non-2xx answer, which the contract makes a failure with its status. Followed, a POST
 * became a GET of another path (an http → https redirect answered 404 or 405), a loop said
 * only "fetch failed", and `X-Auth-Override` went to whatever origin the answer named. In a
 * browser the page's own origin answers, and fetch could not show a 3xx's status anyway.
 */
const REDIRECT: RequestRedirect = typeof (globalThis as { document?: unknown }).document === 'undefined' ? 'manual' : 'follow';

export async function fetchAnswer(request: Outgoing): Promise<Answer> {
  const init: RequestInit & { duplex?: 'half' } = {
    method: request.method,
    headers: request.headers,
    body: request.body,
    signal: request.signal,
    redirect: REDIRECT,
  };
  // Node's fetch refuses a stream body unless told the request is sent before the answer is read.
  if (typeof ReadableStream !== 'undefined' && request.body instanceof ReadableStream) init.duplex = 'half';
  let response: Response;
  try {
    response = await fetch(request.url, init);
  } catch (error) {
    if (isAbort(error, request.signal)) throw error;
    // A Blob whose file changed since it was opened (openAsBlob) cannot be read: not a network failure.
    if (isUnreadableBody(error)) throw unsent(request.operation, (error as { cause: unknown }).cause);
    throw unreachable(request.operation, error);
  }
  // The status line and headers came: a body that breaks off now is an answer not read whole, not an unreachable service.
  return { status: response.status, text: await boundedText(response, request.operation, request.signal) };
}

/** The largest answer the client reads: the service's are JSON of a few MB at most. */
export const MAX_ANSWER_BYTES = 64 * 1024 * 1024;
/** How long an answer's body may take once its headers came (the service sends it whole, at once). */
export const ANSWER_BODY_DEADLINE_MS = 5 * 60 * 1000;

/**
 * The answer's text, read up to MAX_ANSWER_BYTES (decoded bytes: a gzip bomb counts as
 * what it inflates to) and within ANSWER_BODY_DEADLINE_MS: a server that floods or
 * trickles gets a clean error, not a process out of memory or a wait without end.
 */
export async function boundedText(response: Response, operation: string, signal?: AbortSignal): Promise<string> {
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(tooSlow(operation, response.status)), ANSWER_BODY_DEADLINE_MS);
  });
  late.catch(() => undefined);
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), late]);
      if (done) break;
      total += value.byteLength;
      if (total > MAX_ANSWER_BYTES) throw tooLarge(operation, response.status);
      chunks.push(value);
    }
  } catch (error) {
    void reader.cancel().catch(() => undefined);
    if (error instanceof ClientError || isAbort(error, signal)) throw error;
    throw cutShort(operation, response.status, error);
  } finally {
    clearTimeout(timer);
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) { bytes.set(chunk, at); at += chunk.byteLength; }
  return new TextDecoder().decode(bytes);
}

/**
 * A download's body, whole (a scene.glb or a document may be large, so it is not held to
 * MAX_ANSWER_BYTES); a body that breaks off is the client's error, with the status that came.
 */
export async function wholeBody<T>(response: Response, operation: string, read: (response: Response) => Promise<T>, signal?: AbortSignal): Promise<T> {
  try {
    return await read(response);
  } catch (error) {
    throw isAbort(error, signal) ? error : cutShort(operation, response.status, error);
  }
}

/** A GET whose body the caller reads itself (a download); a network failure is the client's error. */
export async function fetchResponse(operation: string, url: string, init: { headers: Record<string, string>; signal?: AbortSignal }): Promise<Response> {
  try {
    return await fetch(url, { method: 'GET', headers: init.headers, signal: init.signal, redirect: REDIRECT });
  } catch (error) {
    throw isAbort(error, init.signal) ? error : unreachable(operation, error);
  }
}

export function canReportUploadProgressWithXhr(): boolean {
  return typeof XMLHttpRequest === 'function';
}

/** Browser upload with progress events; same headers, same (status, text) answer as fetch. */
export function xhrAnswer(request: Outgoing, onProgress: ProgressListener): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(request.method, request.url);
    for (const [name, value] of Object.entries(request.headers)) xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded, event.total);
    };
    xhr.onload = () => resolve({ status: xhr.status, text: xhr.responseText });
    xhr.onerror = () => reject(unreachable(request.operation, new Error('network error')));
    xhr.ontimeout = () => reject(unreachable(request.operation, new Error('timed out')));
    const signal = request.signal;
    if (signal) {
      if (signal.aborted) return reject(signal.reason);
      const abort = () => xhr.abort();
      signal.addEventListener('abort', abort, { once: true });
      xhr.onabort = () => reject(signal.reason);
      xhr.onloadend = () => signal.removeEventListener('abort', abort);
    }
    xhr.send(request.body as XMLHttpRequestBodyInit);
  });
}

/** A stream over `body` that reports the bytes handed to the transport so far. */
export function countedStream(body: Blob, onProgress: ProgressListener): ReadableStream<Uint8Array> {
  const total = body.size;
  const reader = body.stream().getReader();
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    start() {
      onProgress(0, total);
    },
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) {
        controller.close();
        return;
      }
      sent += value.byteLength;
      controller.enqueue(value);
      onProgress(sent, total);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/**
 * Whether the caller stopped the request: an AbortError, or whatever its signal was aborted with
 * (`AbortSignal.timeout` rejects with a TimeoutError, which was taken for an unreachable service).
 */
function isAbort(error: unknown, signal?: AbortSignal): boolean {
  if (signal?.aborted === true) return true;
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'AbortError';
}

function isUnreadableBody(error: unknown): boolean {
  const cause = (error as { cause?: unknown } | null)?.cause;
  return typeof cause === 'object' && cause !== null && (cause as { name?: unknown }).name === 'NotReadableError';
}
