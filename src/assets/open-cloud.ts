/**
 * Where an asset's bytes come from, one attempt at a time. Decided by configuration
 * only (never by anything in a map):
 * - `urlTemplate` set: a plain GET of the template with `{id}` filled in; the body is
 *   the asset. For mirrors, tests and self-hosted asset stores.
 * - otherwise Roblox Open Cloud asset delivery: GET `deliveryUrl` with `x-api-key`,
 *   which answers `{"location": "..."}`; the bytes are then fetched from that location
 *   (without the key). Production locations are https CDN URLs; http is accepted as
 *   well so a loopback test server or a self-hosted delivery service can answer.
 *
 * Bodies are gunzipped when `Content-Encoding: gzip` says so or when they start with
 * the gzip magic bytes (the CDN serves some assets gzipped without saying so); any
 * other encoding is an `upstream_error`. Redirects are not followed (a 3xx is an
 * `upstream_error`). A body over `maxBytes` (declared, or counted after gunzip) is
 * abandoned at once. Every body is read to its end or discarded (body.ts).
 *
 * Requests go through node:http(s), not undici: undici 7 (the last for Node 20) throws
 * an uncatchable assertion from its socket handler, ending the process, when a host
 * closes the connection while the parser is paused by a body's back-pressure (an asset
 * larger than 64 KiB written to disk more slowly than it arrives, from a host that
 * answers `Connection: close`). nodejs/undici#5360, fixed in undici 8, which needs Node 22.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { decodedBody, discard, readLimitedText, refusingWebPages } from './body.js';
import { AssetFetchError } from './errors.js';
import { headerValue, statusFailure } from './retry.js';
import { storeAssetStream, type AssetMeta, type AssetStore } from './store.js';

export interface AssetSourceOptions {
  store: AssetStore;
  deliveryUrl: string;
  urlTemplate: string | null;
  apiKey: string | null;
  timeoutMs: number;
  maxBytes: number;
}

export interface AssetSource {
  /** Whether anything can be requested at all (a template, or an API key). */
  readonly usable: boolean;
  /** One attempt: (the delivery request and) the bytes into the store. Throws AssetFetchError, AssetStoreError or the signal's reason. */
  fetch(id: string, signal: AbortSignal): Promise<AssetMeta>;
  close(): Promise<void>;
}

/** The delivery API's answer is a few hundred bytes of JSON. */
const MAX_DELIVERY_ANSWER_BYTES = 64 * 1024;
/** Error bodies are read (to keep the connection) up to this much, then dropped. */
const MAX_DISCARDED_BODY_BYTES = 64 * 1024;
const USER_AGENT = 'rbxl-import-assets/1';

/** An upstream answer: its status, headers and body (read to its end or discarded). */
interface Answer {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: IncomingMessage;
}

export function createAssetSource(options: AssetSourceOptions): AssetSource {
  const { store, urlTemplate, apiKey, timeoutMs, maxBytes } = options;
  // Kept-alive connections. The agent's timeout is each socket's from its creation: the
  // connect (as for an answer or a stalled body, no longer than an attempt may take) and,
  // once free, its idle life. No per-origin cap: the downloader's slots bound the attempts.
  const agentOptions = { keepAlive: true, timeout: timeoutMs };
  const agents = { http: new HttpAgent(agentOptions), https: new HttpsAgent(agentOptions) };

  /** One GET; resolves with the answer once its headers arrive. The attempt's own deadline (download.ts) bounds the whole of it. */
  function get(url: string, headers: Record<string, string>, signal: AbortSignal): Promise<Answer> {
    const target = new URL(url);
    const https = target.protocol === 'https:';
    return new Promise((resolve, reject) => {
      const request = (https ? httpsRequest : httpRequest)(target, {
        method: 'GET', headers: { ...headers, 'user-agent': USER_AGENT }, agent: https ? agents.https : agents.http, signal,
      }, (response) => {
        // Whoever reads the body sees its errors; one raised before a reader attaches (a
        // reset right after the headers) must not become an uncaught exception.
        response.on('error', () => {});
        // A stalled body ends as a timeout rather than waiting for the attempt's deadline.
        response.setTimeout(timeoutMs, () => response.destroy(new AssetFetchError('timeout', `no data for ${timeoutMs} ms`, { retryable: true })));
        resolve({ statusCode: response.statusCode ?? 0, headers: response.headers, body: response });
      });
      request.setTimeout(timeoutMs, () => request.destroy(new AssetFetchError('timeout', `no answer within ${timeoutMs} ms`, { retryable: true })));
      request.on('error', reject);
      request.end();
    });
  }

  /** Asks the Open Cloud delivery API where the bytes of `id` are. */
  async function resolveLocation(id: string, signal: AbortSignal): Promise<string> {
    const response = await get(fillTemplate(options.deliveryUrl, id), { accept: 'application/json', 'x-api-key': apiKey! }, signal);
    await expectOk(response);
    const text = await readLimitedText(response.body, MAX_DELIVERY_ANSWER_BYTES, 'the asset delivery answer');
    let answer: unknown;
    try {
      answer = JSON.parse(text);
    } catch {
      throw new AssetFetchError('upstream_error', 'the asset delivery answer is not JSON', { status: response.statusCode });
    }
    const location = isRecord(answer) ? answer.location : undefined;
    if (typeof location === 'string') {
      if (!isHttpUrl(location)) {
        throw new AssetFetchError('upstream_error', 'the asset delivery location is not an http(s) URL', { status: response.statusCode });
      }
      return location;
    }
    // Some answers are 200 with {"errors": [{"code": 404, ...}]} instead of a location.
    const code = isRecord(answer) && Array.isArray(answer.errors) && isRecord(answer.errors[0]) ? answer.errors[0].code : undefined;
    if (typeof code === 'number' && code >= 400 && code <= 599) throw statusFailure(code, {});
    throw new AssetFetchError('upstream_error', 'the asset delivery answer has no location', { status: response.statusCode });
  }

  async function fetchIntoStore(url: string, signal: AbortSignal): Promise<AssetMeta> {
    const response = await get(url, { accept: '*/*', 'accept-encoding': 'gzip' }, signal);
    await expectOk(response);
    const encoding = headerValue(response.headers['content-encoding'])?.trim().toLowerCase() || 'identity';
    const gzipped = encoding === 'gzip' || encoding === 'x-gzip';
    if (!gzipped && encoding !== 'identity') {
      discard(response.body);
      throw new AssetFetchError('upstream_error', `unsupported Content-Encoding ${JSON.stringify(encoding)}`, { status: response.statusCode });
    }
    const declared = Number(headerValue(response.headers['content-length']));
    // A gzipped body's length says nothing sure about the asset's; it is counted after gunzip.
    if (!gzipped && Number.isFinite(declared) && declared > maxBytes) {
      discard(response.body);
      throw new AssetFetchError('too_large', `asset is ${declared} bytes, more than ${maxBytes}`, { status: response.statusCode });
    }
    return storeAssetStream(store, refusingWebPages(decodedBody(response.body, gzipped)), {
      maxBytes,
      contentType: headerValue(response.headers['content-type']),
    });
  }

  return {
    usable: urlTemplate !== null || apiKey !== null,
    async fetch(id, signal) {
      const url = urlTemplate !== null ? fillTemplate(urlTemplate, id) : await resolveLocation(id, signal);
      return fetchIntoStore(url, signal);
    },
    close: async () => {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

/** Throws the failure a non-200 answer stands for, after reading a little of its body (a short one keeps its connection). */
async function expectOk(response: Answer): Promise<void> {
  if (response.statusCode === 200) return;
  await readLimitedText(response.body, MAX_DISCARDED_BODY_BYTES, 'an error answer').catch(() => {});
  throw statusFailure(response.statusCode, response.headers);
}

export function fillTemplate(template: string, id: string): string {
  return template.replaceAll('{id}', id);
}

export function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
