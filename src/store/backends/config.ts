/**
 * Which object store the service uses, from the environment. `src/config.ts` calls
 * `storeConfigFromEnv` and keeps the result; `openObjectStore` (index.ts) opens it.
 *
 *   STORE_URL              unset: the local disk under DATA_DIR/objects; s3://BUCKET[/PREFIX]: an S3-compatible store
 *   S3_ENDPOINT            e.g. http://minio:9000 for non-AWS stores (MinIO, Ceph RGW, R2, Garage); unset: AWS
 *   S3_FORCE_PATH_STYLE    1: http://host/BUCKET/KEY instead of http://BUCKET.host/KEY
 *   S3_CONDITIONAL_WRITES  auto (probe the store once), on, off
 *   S3_TIMEOUT_MS          per request: connect, first byte, and silence mid-body (default 10000)
 *   S3_MAX_ATTEMPTS        tries per request, on network errors, 5xx and throttling (default 3)
 *   S3_PART_SIZE           multipart part size in bytes, at least 5 MiB (default 8 MiB)
 *   AWS_REGION (or AWS_DEFAULT_REGION), AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN:
 *                          the standard AWS variables; without keys the SDK's default chain
 *                          (profile, container or instance role, web identity) is used.
 */
import { join } from 'node:path';
import { checkPrefix } from './keys.js';

export type ConditionalWrites = 'auto' | 'on' | 'off';

export interface DiskStoreConfig {
  kind: 'disk';
  root: string;
}

export interface S3StoreConfig {
  kind: 's3';
  bucket: string;
  /** Empty, or ends with `/`. */
  prefix: string;
  endpoint: string | undefined;
  forcePathStyle: boolean;
  region: string;
  /** Undefined: the SDK's default credential chain. */
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined;
  conditionalWrites: ConditionalWrites;
  timeoutMs: number;
  maxAttempts: number;
  partSize: number;
}

export type StoreConfig = DiskStoreConfig | S3StoreConfig;

/** A malformed store variable; `src/config.ts` reports it as its own ConfigError. */
export class StoreConfigError extends Error {
  override name = 'StoreConfigError';
}

const MIN_PART_SIZE = 5 * 1024 * 1024;
/** The variables that only configure an S3 store (the AWS_* ones may be set for other software). */
const S3_VARIABLES = ['S3_ENDPOINT', 'S3_FORCE_PATH_STYLE', 'S3_CONDITIONAL_WRITES', 'S3_TIMEOUT_MS', 'S3_MAX_ATTEMPTS', 'S3_PART_SIZE'];
const BUCKET = /^[A-Za-z0-9][A-Za-z0-9._-]{1,61}[A-Za-z0-9]$/;

export function defaultStoreConfig(dataDir: string): DiskStoreConfig {
  return { kind: 'disk', root: join(dataDir, 'objects') };
}

export function storeConfigFromEnv(env: NodeJS.ProcessEnv, dataDir: string): StoreConfig {
  const text = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const value = text(name);
    if (value === undefined) return fallback;
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      throw new StoreConfigError(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
    }
    return Number(value);
  };

  const url = text('STORE_URL');
  if (url === undefined) {
    // An S3 setting without STORE_URL is a store left unnamed: running on the local disk instead
    // would give each instance of a fleet its own previews and projects, silently.
    const set = S3_VARIABLES.filter((name) => text(name) !== undefined);
    if (set.length > 0) {
      throw new StoreConfigError(`${set.join(', ')} ${set.length === 1 ? 'is' : 'are'} set but STORE_URL is not: set STORE_URL=s3://BUCKET[/PREFIX] to use an S3 store, or unset ${set.length === 1 ? 'it' : 'them'} for the local disk`);
    }
    return defaultStoreConfig(dataDir);
  }
  const match = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(url);
  if (match === null) throw new StoreConfigError(`STORE_URL must be s3://BUCKET or s3://BUCKET/PREFIX (or unset for the local disk), got ${JSON.stringify(url)}`);
  const bucket = match[1]!;
  if (!BUCKET.test(bucket)) throw new StoreConfigError(`STORE_URL names an invalid bucket: ${JSON.stringify(bucket)}`);
  const path = (match[2] ?? '').replace(/^\/+|\/+$/g, '');
  const prefix = path === '' ? '' : `${path}/`;
  try {
    checkPrefix(prefix);
  } catch {
    throw new StoreConfigError(`STORE_URL's prefix may hold only letters, digits, '.', '_', '-' and '/' (no segment starting with '.'), got ${JSON.stringify(path)}`);
  }

  const endpoint = text('S3_ENDPOINT');
  if (endpoint !== undefined) {
    let parsed: URL;
    try {
      parsed = new URL(endpoint);
    } catch {
      throw new StoreConfigError(`S3_ENDPOINT must be an http(s) URL, got ${JSON.stringify(endpoint)}`);
    }
    if ((parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.search !== '' || parsed.username !== '' || parsed.password !== '') {
      // Named without what it carries: a password (or a signature in a query) would go into the start log.
      const shown = parsed.username !== '' || parsed.password !== '' || parsed.search !== ''
        ? `${parsed.protocol}//${parsed.username !== '' || parsed.password !== '' ? '…@' : ''}${parsed.host}${parsed.pathname}${parsed.search !== '' ? '?…' : ''}`
        : endpoint;
      throw new StoreConfigError(`S3_ENDPOINT must be an http(s) URL without query or credentials, got ${JSON.stringify(shown)}`);
    }
  }

  const flag = (name: string): boolean => {
    const value = text(name)?.toLowerCase();
    if (value === undefined || value === '0' || value === 'false') return false;
    if (value === '1' || value === 'true') return true;
    throw new StoreConfigError(`${name} must be 1 or 0, got ${JSON.stringify(text(name))}`);
  };

  const conditional = text('S3_CONDITIONAL_WRITES') ?? 'auto';
  if (conditional !== 'auto' && conditional !== 'on' && conditional !== 'off') {
    throw new StoreConfigError(`S3_CONDITIONAL_WRITES must be auto, on or off, got ${JSON.stringify(conditional)}`);
  }

  const accessKeyId = text('AWS_ACCESS_KEY_ID');
  const secretAccessKey = text('AWS_SECRET_ACCESS_KEY');
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new StoreConfigError('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together: set both, or neither for the default credential chain');
  }
  const sessionToken = text('AWS_SESSION_TOKEN');

  return {
    kind: 's3',
    bucket,
    prefix,
    endpoint,
    forcePathStyle: flag('S3_FORCE_PATH_STYLE'),
    region: text('AWS_REGION') ?? text('AWS_DEFAULT_REGION') ?? 'us-east-1',
    credentials: accessKeyId === undefined || secretAccessKey === undefined
      ? undefined
      : { accessKeyId, secretAccessKey, ...(sessionToken === undefined ? {} : { sessionToken }) },
    conditionalWrites: conditional,
    timeoutMs: integer('S3_TIMEOUT_MS', 10_000, 100, 600_000),
    maxAttempts: integer('S3_MAX_ATTEMPTS', 3, 1, 10),
    partSize: integer('S3_PART_SIZE', 8 * 1024 * 1024, MIN_PART_SIZE, 5 * 1024 ** 3),
  };
}

/** Where the store is, for logs and /health; never credentials. */
export function describeStore(config: StoreConfig): string {
  if (config.kind === 'disk') return `disk:${config.root}`;
  return `s3://${config.bucket}/${config.prefix}${config.endpoint === undefined ? '' : ` at ${config.endpoint}`}`;
}
