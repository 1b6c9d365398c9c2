/**
 * The import service's client: the behaviour interface.md describes, down to header values
 * and error messages. Runs unchanged in browsers and Node 20: it uses fetch, FormData, Blob,
 * streams, TextEncoder and atob only; Node-only helpers live in ./node.js.
 */
import { authHeaders } from './auth.js';
import { refused, unreadable } from './errors.js';
import {
  boundedText,
  canReportUploadProgressWithXhr,
  countedStream,
  fetchAnswer,
  fetchResponse,
  wholeBody,
  xhrAnswer,
  type Answer,
  type Outgoing,
  type ProgressListener,
} from './transport.js';
import { multipartBody, uploadBlob, uploadName, type Upload } from './upload.js';

export { ClientError } from './errors.js';
export { authHeaders, developmentToken, isDevelopmentHost, userIdFromToken, DEVELOPMENT_HOSTS } from './auth.js';
export { describeFailure, describeAssetReason, ASSET_REASONS, type Failure, type AssetReasonAdvice } from './explain.js';
export { decideScripts, FINDINGS, type ScriptDecision, type FindingGroup, type FindingInfo } from './decision.js';
export { FALLBACK_FILE_NAME, type Upload } from './upload.js';
export type { ProgressListener } from './transport.js';

export const API_PREFIX = '/api-rbxl';
export const SCRIPTS_MODES = ['disabled', 'enabled', 'skip'] as const;
export type ScriptsMode = (typeof SCRIPTS_MODES)[number];

export interface ClientOptions {
  /** Where the service lives, without `/api-rbxl`; '' (the default) is the page's own origin. */
  baseUrl?: string;
  /** The user's access token (a JWT), sent as held; null or absent sends ''. */
  token?: string | null;
  /**
   * The host the client runs on, which decides whether `X-Auth-Override` is sent. Defaults to
   * the page's `location.hostname` in a browser and, where there is no page, the base URL's host.
   */
  hostname?: string;
}

export interface ScriptFinding {
  code: string;
  line: number;
  message: string;
}

export interface ScriptAtRisk {
  path: string;
  class: string;
  findings: ScriptFinding[];
  /** Scripts with this same source in the map, this one included. */
  copies?: number;
  /** How many of those the map itself disables. */
  disabled?: number;
  copy_paths?: string[];
}

/** The analysis report. Only `scripts_total` is in the contract; the rest may be absent. */
export interface Report {
  scripts_total: number;
  format?: string;
  file_name?: string;
  file_size?: number;
  instances_total?: number;
  parts_total?: number;
  meshes_total?: number;
  unions_total?: number;
  scripts?: Record<string, number>;
  scripts_flagged?: number;
  scripts_disabled?: number;
  scripts_linked?: number;
  scripts_by_run_context?: Record<string, number>;
  script_findings?: Record<string, number>;
  scripts_by_finding?: Record<string, { scripts: number; enabled: number; most_severe?: number; most_severe_enabled?: number }>;
  scripts_at_risk?: ScriptAtRisk[];
  assets_total?: number;
  assets?: Record<string, number>;
  /** What the project will hold, by category (parts in the Workspace and in storage, scripts, joints...). */
  imported?: Record<string, number | boolean>;
  /** What it will not hold, and why. */
  not_imported?: { class: string; property?: string; count: number; reason: string }[];
  warnings?: string[];
  [field: string]: unknown;
}

export interface AnalyzeResult {
  preview_hash: string;
  report: Report;
}

export interface CreateResult {
  project_id: string;
  redirect: string;
  assets_downloaded: number;
  assets_failed: number;
  [field: string]: unknown;
}

export interface AnalyzeOptions {
  /** Upload progress in bytes of the request body. */
  onProgress?: ProgressListener;
  signal?: AbortSignal;
}

export interface CreateOptions {
  title?: string;
  scriptsMode?: ScriptsMode;
  signal?: AbortSignal;
  /**
   * Names this create so its progress can be read with `createProgress` while it runs
   * (sent as `X-Create-Id`, the service's addition to the contract). Without it the
   * request is exactly the contract's. Use `newCreateId()`.
   */
  createId?: string;
}

/** A create's progress (GET /api-rbxl/import/rbxl/create/{create_id}). */
export interface CreateProgress {
  create_id: string;
  phase: 'starting' | 'assets' | 'converting' | 'building' | 'storing' | 'done' | 'failed';
  assets_done: number;
  assets_total: number;
  assets_failed: number;
  started_at: string;
  project_id?: string;
  error?: { code: string; message: string };
}

/** What the pages learn about the service before any upload (GET /api-rbxl/config). */
export interface ServiceConfig {
  auth_mode: 'development' | 'gateway';
  /** The largest map file accepted, in bytes. */
  max_upload_bytes: number;
  [field: string]: unknown;
}

export interface Client {
  analyze(file: Upload, options?: AnalyzeOptions): Promise<AnalyzeResult>;
  create(previewHash: string, options?: CreateOptions): Promise<CreateResult>;
  /** The health route's JSON (its shape is the service's own). */
  health(options?: { signal?: AbortSignal }): Promise<unknown>;
  /**
   * A binary resource of the service with the user's credentials: the report's picture
   * (`report.picture.url`) or a project's scene (`/api-rbxl/projects/{id}/scene.glb`).
   */
  download(path: string, options?: { signal?: AbortSignal }): Promise<ArrayBuffer>;
  /** The progress of one of this user's creates named with `createId`; null while the service does not know it (not started yet, or gone). */
  createProgress(createId: string, options?: { signal?: AbortSignal }): Promise<CreateProgress | null>;
  /** What the service tells its pages: how users sign in, the largest map. */
  config(options?: { signal?: AbortSignal }): Promise<ServiceConfig>;
  /** The project page's data (GET /api-rbxl/projects/{id}/summary), for its owner. */
  projectSummary(projectId: string, options?: { signal?: AbortSignal }): Promise<Record<string, unknown>>;
  /** The project document as the service stores it. */
  projectDocument(projectId: string, options?: { signal?: AbortSignal }): Promise<Blob>;
  deleteProject(projectId: string, options?: { signal?: AbortSignal }): Promise<void>;
}

/** A fresh id for `CreateOptions.createId`. */
export function newCreateId(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

export function createClient(options: ClientOptions = {}): Client {
  const baseUrl = (options.baseUrl ?? '').replace(/\/+$/, '');
  const token = options.token ?? '';
  const hostname = options.hostname ?? defaultHostname(baseUrl);
  const endpoint = (path: string) => `${baseUrl}${API_PREFIX}${path}`;

  return {
    async analyze(file, { onProgress, signal } = {}) {
      const operation = 'analyze';
      const headers = authHeaders(token, hostname);
      const url = endpoint('/import/rbxl/analyze');
      const name = uploadName(file);
      const data = uploadBlob(file);
      let answer: Answer;
      if (onProgress && canReportUploadProgressWithXhr()) {
        answer = await xhrAnswer({ operation, method: 'POST', url, headers, body: formData(name, data), signal }, onProgress);
      } else if (onProgress) {
        const { body, contentType } = multipartBody('file', name, data);
        const streamed: Outgoing = {
          operation,
          method: 'POST',
          url,
          headers: { ...headers, 'Content-Type': contentType, 'Content-Length': String(body.size) },
          body: countedStream(body, onProgress),
          signal,
        };
        answer = await fetchAnswer(streamed);
      } else {
        answer = await fetchAnswer({ operation, method: 'POST', url, headers, body: formData(name, data), signal });
      }
      return checked(operation, answer, json<AnalyzeResult>(operation, answer), (body) => typeof body.preview_hash === 'string' && isObject(body.report), 'an object with a preview_hash and a report');
    },

    async create(previewHash, { title = '', scriptsMode = 'disabled', signal, createId } = {}) {
      const operation = 'create';
      const body = JSON.stringify({ preview_hash: previewHash, title, scripts_mode: scriptsMode });
      const headers: Record<string, string> = { ...authHeaders(token, hostname), 'Content-Type': 'application/json' };
      if (createId !== undefined) headers['X-Create-Id'] = createId;
      const answer = await fetchAnswer({ operation, method: 'POST', url: endpoint('/import/rbxl/create'), headers, body, signal });
      return checked(operation, answer, json<CreateResult>(operation, answer), (body) => typeof body.project_id === 'string' && typeof body.redirect === 'string', 'an object with a project_id and a redirect');
    },

    async download(path, { signal } = {}) {
      const operation = 'download';
      if (!path.startsWith(`${API_PREFIX}/`)) throw new TypeError(`not a path of the service: ${path}`);
      const response = await fetchResponse(operation, `${baseUrl}${path}`, { headers: authHeaders(token, hostname), signal });
      // An error's text is read as any answer is (bounded in size and time): a flood of one is not held whole.
      if (!response.ok) throw refused(operation, response.status, await boundedText(response, operation, signal));
      return wholeBody(response, operation, (whole) => whole.arrayBuffer(), signal);
    },

    async health({ signal } = {}) {
      const operation = 'health';
      const answer = await fetchAnswer({ operation, method: 'GET', url: endpoint('/health'), headers: {}, signal });
      return json<unknown>(operation, answer);
    },

    async createProgress(createId, { signal } = {}) {
      const operation = 'progress';
      const url = endpoint(`/import/rbxl/create/${encodeURIComponent(createId)}`);
      const answer = await fetchAnswer({ operation, method: 'GET', url, headers: authHeaders(token, hostname), signal });
      if (answer.status === 404) return null;
      // Checked as analyze's and create's answers are: a progress bar reads these fields as numbers and a phase.
      return checked(operation, answer, json<CreateProgress>(operation, answer), isProgress, "a create's progress (a phase and numeric asset counts)");
    },

    async config({ signal } = {}) {
      const operation = 'config';
      return json<ServiceConfig>(operation, await fetchAnswer({ operation, method: 'GET', url: endpoint('/config'), headers: {}, signal }));
    },

    async projectSummary(projectId, { signal } = {}) {
      const operation = 'project';
      const url = endpoint(`/projects/${encodeURIComponent(projectId)}/summary`);
      return json<Record<string, unknown>>(operation, await fetchAnswer({ operation, method: 'GET', url, headers: authHeaders(token, hostname), signal }));
    },

    async projectDocument(projectId, { signal } = {}) {
      const operation = 'download';
      const url = endpoint(`/projects/${encodeURIComponent(projectId)}`);
      const response = await fetchResponse(operation, url, { headers: authHeaders(token, hostname), signal });
      if (!response.ok) throw refused(operation, response.status, await boundedText(response, operation, signal));
      return wholeBody(response, operation, (whole) => whole.blob(), signal);
    },

    async deleteProject(projectId, { signal } = {}) {
      const operation = 'delete';
      const url = endpoint(`/projects/${encodeURIComponent(projectId)}`);
      const answer = await fetchAnswer({ operation, method: 'DELETE', url, headers: authHeaders(token, hostname), signal });
      if (answer.status < 200 || answer.status > 299) throw refused(operation, answer.status, answer.text);
    },
  };
}

/** Any 2xx is success and its body JSON; anything else fails with the contract's message. */
function json<T>(operation: string, { status, text }: Answer): T {
  if (status < 200 || status > 299) throw refused(operation, status, text);
  try {
    return JSON.parse(text) as T;
  } catch {
    throw unreadable(operation, status, text);
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const isCount = (value: unknown): boolean => typeof value === 'number' && Number.isFinite(value) && value >= 0;
const isProgress = (body: Record<string, unknown>): boolean =>
  typeof body.phase === 'string' && isCount(body.assets_done) && isCount(body.assets_total) && isCount(body.assets_failed);

/** The contract's answer, checked at the edge for what the caller reads first: anything else is an unreadable answer. */
function checked<T>(operation: string, answer: Answer, body: T, holds: (body: Record<string, unknown>) => boolean, what: string): T {
  if (isObject(body) && holds(body)) return body;
  throw unreadable(operation, answer.status, answer.text, `the answer is not ${what}`);
}

function formData(name: string, data: Blob): FormData {
  const form = new FormData();
  form.append('file', data, name);
  return form;
}

function defaultHostname(baseUrl: string): string {
  const page = (globalThis as { location?: { hostname?: unknown } }).location;
  if (page && typeof page.hostname === 'string') return page.hostname;
  try {
    return new URL(baseUrl).hostname;
  } catch {
    return '';
  }
}
