/**
 * Service configuration: environment variables with embedded defaults, so a fresh
 * clone serves with `npm start` and nothing else. Tests pass overrides directly.
 */
import { availableParallelism, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { storeConfigFromEnv, StoreConfigError, type StoreConfig } from './store/backends/config.js';
import { fillTemplate, isHttpUrl } from './assets/open-cloud.js';
import { ConfigError } from './config-error.js';
import { memoryBudget, workersThatFit } from './service/budget.js';

export type AuthMode = 'development' | 'gateway';

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  authMode: AuthMode;
  maxUploadBytes: number;
  workers: number;
  /** Tasks that may wait for a worker before analyze/create answer 503. */
  maxQueue: number;
  previewTtlSeconds: number;
  previewCacheBytes: number;
  assetDeliveryUrl: string;
  assetUrlTemplate: string | null;
  assetApiKey: string | null;
  assetConcurrency: number;
  assetTimeoutMs: number;
  assetMaxBytes: number;
  assetRetries: number;
  redirectTemplate: string;
  /** Largest create body (JSON). */
  maxJsonBytes: number;
  /** Log one JSON line per request to stdout. */
  log: boolean;
  /** Download slots one create may hold at once (fair sharing between creates). */
  assetConcurrencyPerCreate: number;
  /** Bound on one create's downloads together; unfinished assets are reported as `timeout`. */
  assetTotalTimeoutMs: number;
  /** Memory budget of the whole process (main thread and workers), in MiB. */
  maxMemoryMb: number;
  /** How long one worker task (an analysis, a build, a batch of conversions, a scene.glb) may run; past it the map is refused with 413. */
  taskTimeoutMs: number;
  /** Bytes the service may keep under dataDir; null: 80% of its file system's size, measured at start. */
  maxDataBytes: number | null;
  /** Bytes of one user's previews and projects together. */
  userMaxBytes: number;
  /** Unexpired previews one user may have. */
  userMaxPreviews: number;
  /** Projects one user may keep. */
  userMaxProjects: number;
  /** Days a project is kept; 0 keeps it until its owner deletes it. */
  projectRetentionDays: number;
  /** How often stale temp files, expired previews and old projects are swept, and disk use recounted. */
  sweepIntervalMs: number;
  /** On SIGTERM/SIGINT: how long requests in flight (and a running sweep) may take before what is open is answered 503. */
  shutdownGraceMs: number;
  /**
   * Where previews, projects and assets are kept: null for the local disk under
   * `dataDir/objects` (the default); an S3-compatible store from STORE_URL and the S3_*
   * variables (src/store/backends/config.ts) to share them between instances.
   */
  store: StoreConfig | null;
  /**
   * Whether the sweeper removes expired previews, projects whose sidecar never came and
   * incomplete multipart uploads from the store (one instance at a time, under a lease).
   * Off where the bucket's lifecycle rules do it instead (expiry is checked on read either way).
   */
  storeSweep: boolean;
}

/**
 * The default memory budget: half of what the host (or its cgroup) has, at least
 * 512 MiB. The other half is left to the kernel's page cache and whatever else runs.
 */
export function defaultMaxMemoryMb(): number {
  const constrained = typeof process.constrainedMemory === 'function' ? process.constrainedMemory() ?? 0 : 0;
  const host = constrained > 0 ? Math.min(constrained, totalmem()) : totalmem();
  return Math.max(512, Math.floor(host / 2 / 2 ** 20));
}

/** WORKERS when unset: `cores` (the cores but one) at most, as many as `maxMemoryMb` holds, at least 1. */
export function defaultWorkers(cores: number, maxMemoryMb: number, previewCacheBytes: number): number {
  return Math.max(1, Math.min(cores, workersThatFit(maxMemoryMb, previewCacheBytes)));
}

export const DEFAULT_REDIRECT_TEMPLATE = '/api-rbxl/projects/{project_id}/page';

export const DEFAULT_ASSET_DELIVERY_URL = 'https://apis.roblox.com/asset-delivery-api/v1/assetId/{id}';

/** What `defaultConfig` takes from the host: its cores and the default memory budget (given here in tests). */
export interface HostDefaults {
  cores: number;
  maxMemoryMb: number;
}

/**
 * The configuration with every default, for a service embedded without an environment
 * (`createServer()`); `configFromEnv` starts from it. Its workers are the cores but one,
 * as many as the default budget holds: on a host of many cores and little memory,
 * cores − 1 workers left each too little and the start refused.
 */
export function defaultConfig(host: HostDefaults = { cores: availableParallelism(), maxMemoryMb: defaultMaxMemoryMb() }): Config {
  const previewCacheBytes = 64 * 1024 * 1024;
  return {
    host: '127.0.0.1',
    port: 8080,
    dataDir: resolve('data'),
    authMode: 'development',
    maxUploadBytes: 512 * 1024 * 1024,
    workers: defaultWorkers(host.cores - 1, host.maxMemoryMb, previewCacheBytes),
    maxQueue: 64,
    previewTtlSeconds: 24 * 60 * 60,
    previewCacheBytes,
    assetDeliveryUrl: DEFAULT_ASSET_DELIVERY_URL,
    assetUrlTemplate: null,
    assetApiKey: null,
    assetConcurrency: 8,
    assetTimeoutMs: 30_000,
    assetMaxBytes: 100 * 1024 * 1024,
    assetRetries: 3,
    // The service's own project page; behind a gateway, operators point it at their editor.
    redirectTemplate: DEFAULT_REDIRECT_TEMPLATE,
    maxJsonBytes: 64 * 1024,
    log: true,
    assetConcurrencyPerCreate: 4,
    assetTotalTimeoutMs: 120_000,
    maxMemoryMb: host.maxMemoryMb,
    taskTimeoutMs: 120_000,
    maxDataBytes: null,
    userMaxBytes: 2 * 1024 ** 3,
    userMaxPreviews: 100,
    userMaxProjects: 500,
    projectRetentionDays: 0,
    sweepIntervalMs: 60_000,
    shutdownGraceMs: 30_000,
    store: null,
    storeSweep: true,
  };
}

/**
 * The largest upload a request can carry: uWebSockets.js 20.30 reads a Content-Length of 9
 * digits at most (1e9 or more is refused 413), and the multipart framing around the file
 * is given up to 64 KiB. Above it, /config would promise the page files it cannot receive.
 */
export const MAX_UPLOAD_BYTES_LIMIT = 999_999_999 - 64 * 1024;

/** The longest preview life: 100 years. */
export const MAX_PREVIEW_TTL_SECONDS = 100 * 365 * 24 * 60 * 60;

/** The longest duration a timer takes (2^31 - 1 ms, about 24.8 days). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export { ConfigError } from './config-error.js';

/** Reads the environment; a malformed value is an error at start-up, not a silent default. */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): Config {
  const host = { cores: availableParallelism(), maxMemoryMb: defaultMaxMemoryMb() };
  const config = defaultConfig(host);
  const text = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value === '' ? undefined : value;
  };
  const integer = (name: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined => {
    const value = text(name);
    if (value === undefined) return undefined;
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
    }
    return Number(value);
  };
  // A duration that becomes a timer: Node fires a longer one at once (setTimeout) or throws (AbortSignal.timeout).
  const duration = (name: string, min: number): number | undefined => integer(name, min, MAX_TIMER_MS);
  config.host = text('HOST') ?? config.host;
  config.port = integer('PORT', 0, 65_535) ?? config.port;
  config.dataDir = resolve(text('DATA_DIR') ?? config.dataDir);
  const authMode = text('AUTH_MODE');
  if (authMode !== undefined) {
    if (authMode !== 'development' && authMode !== 'gateway') {
      throw new ConfigError(`AUTH_MODE must be "development" or "gateway", got ${JSON.stringify(authMode)}`);
    }
    config.authMode = authMode;
  }
  config.maxUploadBytes = integer('MAX_UPLOAD_BYTES', 1, MAX_UPLOAD_BYTES_LIMIT) ?? config.maxUploadBytes;
  const workers = integer('WORKERS', 1);
  config.maxQueue = integer('MAX_QUEUE', 0) ?? config.maxQueue;
  // An expiry is written into keys as 13 digits of milliseconds (until the year 2286): a century fits.
  config.previewTtlSeconds = integer('PREVIEW_TTL_SECONDS', 1, MAX_PREVIEW_TTL_SECONDS) ?? config.previewTtlSeconds;
  config.previewCacheBytes = integer('PREVIEW_CACHE_BYTES', 0) ?? config.previewCacheBytes;
  config.assetDeliveryUrl = text('ASSET_DELIVERY_URL') ?? config.assetDeliveryUrl;
  config.assetUrlTemplate = text('ASSET_URL_TEMPLATE') ?? null;
  config.assetApiKey = text('ASSET_API_KEY') ?? null;
  config.assetConcurrency = integer('ASSET_CONCURRENCY', 1) ?? config.assetConcurrency;
  config.assetTimeoutMs = duration('ASSET_TIMEOUT_MS', 1) ?? config.assetTimeoutMs;
  config.assetMaxBytes = integer('ASSET_MAX_BYTES', 1) ?? config.assetMaxBytes;
  config.assetRetries = integer('ASSET_RETRIES', 0) ?? config.assetRetries;
  config.redirectTemplate = text('REDIRECT_TEMPLATE') ?? config.redirectTemplate;
  const log = text('LOG');
  if (log !== undefined && log !== '0' && log !== '1') throw new ConfigError(`LOG must be 1 (a JSON line per request) or 0 (none), got ${JSON.stringify(log)}`);
  config.log = log !== '0';
  config.assetConcurrencyPerCreate = integer('ASSET_CONCURRENCY_PER_CREATE', 1) ?? Math.min(config.assetConcurrencyPerCreate, config.assetConcurrency);
  config.assetTotalTimeoutMs = duration('ASSET_TOTAL_TIMEOUT_MS', 1) ?? config.assetTotalTimeoutMs;
  const maxMemoryMb = integer('MAX_MEMORY_MB', 256, 1 << 24); // 16 TiB: its bytes stay safe integers
  config.maxMemoryMb = maxMemoryMb ?? config.maxMemoryMb;
  // Unset, WORKERS is the cores but one, and no more than the budget holds: in a container limited to a few GiB
  // on a host of many cores (which Node counts), cores − 1 workers left each too little and the start refused.
  config.workers = workers ?? defaultWorkers(host.cores - 1, config.maxMemoryMb, config.previewCacheBytes);
  // The service checks the budget again as it starts; checked here, a refusal can say that MAX_MEMORY_MB was not set.
  if (maxMemoryMb === undefined) memoryBudget({ maxMemoryMb: config.maxMemoryMb, workers: config.workers, previewCacheBytes: config.previewCacheBytes, maxMemoryFromHost: true });
  config.taskTimeoutMs = duration('TASK_TIMEOUT_MS', 100) ?? config.taskTimeoutMs;
  config.maxDataBytes = integer('MAX_DATA_BYTES', 1) ?? config.maxDataBytes;
  config.userMaxBytes = integer('USER_MAX_BYTES', 1) ?? config.userMaxBytes;
  config.userMaxPreviews = integer('USER_MAX_PREVIEWS', 1) ?? config.userMaxPreviews;
  config.userMaxProjects = integer('USER_MAX_PROJECTS', 1) ?? config.userMaxProjects;
  config.projectRetentionDays = integer('PROJECT_RETENTION_DAYS', 0, Math.floor(Number.MAX_SAFE_INTEGER / 86_400_000)) ?? config.projectRetentionDays;
  config.sweepIntervalMs = duration('SWEEP_INTERVAL_MS', 1000) ?? config.sweepIntervalMs;
  config.shutdownGraceMs = duration('SHUTDOWN_GRACE_MS', 0) ?? config.shutdownGraceMs;
  const storeSweep = text('STORE_SWEEP');
  if (storeSweep !== undefined) {
    if (storeSweep !== '0' && storeSweep !== '1') throw new ConfigError(`STORE_SWEEP must be 1 or 0, got ${JSON.stringify(storeSweep)}`);
    config.storeSweep = storeSweep === '1';
  }
  for (const [name, template] of [['ASSET_DELIVERY_URL', config.assetDeliveryUrl], ['ASSET_URL_TEMPLATE', config.assetUrlTemplate]] as const) {
    if (template === null) continue;
    if (!template.includes('{id}')) throw new ConfigError(`${name} must contain {id}`);
    if (!isHttpUrl(fillTemplate(template, '1'))) throw new ConfigError(`${name} must be an http or https URL containing {id}, got ${JSON.stringify(template)}`);
  }
  if (!config.redirectTemplate.includes('{project_id}')) throw new ConfigError('REDIRECT_TEMPLATE must contain {project_id}');
  try {
    const store = storeConfigFromEnv(env, config.dataDir);
    config.store = store.kind === 's3' ? store : null;
  } catch (error) {
    if (error instanceof StoreConfigError) throw new ConfigError(error.message);
    throw error;
  }
  return config;
}
