/**
 * Getting a request to the service and its answer back as (status, text), on whichever
 * platform runs the client: fetch everywhere, XMLHttpRequest in browsers when upload
 * progress is wanted (fetch reports none), a counted stream body in Node for the same.
 */
import { unreachable } from './errors.js';

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

export async function fetchAnswer(request: Outgoing): Promise<Answer> {
  const init: RequestInit & { duplex?: 'half' } = {
    method: request.method,
    headers: request.headers,
    body: request.body,
    signal: request.signal,
  };
  // Node's fetch refuses a stream body unless told the request is sent before the answer is read.
  if (typeof ReadableStream !== 'undefined' && request.body instanceof ReadableStream) init.duplex = 'half';
  let response: Response;
  let text: string;
  try {
    response = await fetch(request.url, init);
    text = await response.text();
  } catch (error) {
    throw isAbort(error) ? error : unreachable(request.operation, error);
  }
  return { status: response.status, text };
}

/** A GET whose body the caller reads itself (a download); a network failure is the client's error. */
export async function fetchResponse(operation: string, url: string, init: { headers: Record<string, string>; signal?: AbortSignal }): Promise<Response> {
  try {
    return await fetch(url, { method: 'GET', headers: init.headers, signal: init.signal });
  } catch (error) {
    throw isAbort(error) ? error : unreachable(operation, error);
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

function isAbort(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'AbortError';
}
