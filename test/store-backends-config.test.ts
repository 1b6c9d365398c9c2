/** STORE_URL and the S3 variables, and the key layout: pure functions, no store needed. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  assetKeys,
  defaultStoreConfig,
  describeStore,
  isValidKey,
  leaseKey,
  parseUploaderKey,
  previewKeys,
  projectKeys,
  storeConfigFromEnv,
  StoreConfigError,
  userKey,
} from '../src/store/backends/index.js';

const DATA = '/srv/rbxl';

test('without STORE_URL the store is the local disk under DATA_DIR/objects', () => {
  assert.deepEqual(storeConfigFromEnv({}, DATA), { kind: 'disk', root: '/srv/rbxl/objects' });
  assert.deepEqual(storeConfigFromEnv({ STORE_URL: '  ' }, DATA), defaultStoreConfig(DATA));
  assert.equal(describeStore(defaultStoreConfig(DATA)), 'disk:/srv/rbxl/objects');
  // The AWS variables may be there for other software; they do not ask for an S3 store.
  assert.deepEqual(storeConfigFromEnv({ AWS_REGION: 'eu-central-1', AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE', S3_ENDPOINT: ' ' }, DATA), defaultStoreConfig(DATA));
});

test('an S3 variable without STORE_URL stops the start rather than running each instance on its own disk', () => {
  assert.throws(() => storeConfigFromEnv({ S3_ENDPOINT: 'http://minio.internal:9000' }, DATA),
    (error: unknown) => error instanceof StoreConfigError && error.message === 'S3_ENDPOINT is set but STORE_URL is not: set STORE_URL=s3://BUCKET[/PREFIX] to use an S3 store, or unset it for the local disk');
  assert.throws(() => storeConfigFromEnv({ S3_FORCE_PATH_STYLE: '1', S3_PART_SIZE: '8388608', STORE_URL: '' }, DATA), /^StoreConfigError: S3_FORCE_PATH_STYLE, S3_PART_SIZE are set but STORE_URL is not/);
});

test('STORE_URL=s3://BUCKET/PREFIX with S3_ENDPOINT, path style and the standard AWS variables', () => {
  const config = storeConfigFromEnv({
    STORE_URL: 's3://maps-bucket/fleet/prod/',
    S3_ENDPOINT: 'http://minio.internal:9000',
    S3_FORCE_PATH_STYLE: '1',
    AWS_REGION: 'eu-central-1',
    AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'secret',
    AWS_SESSION_TOKEN: 'token',
    S3_TIMEOUT_MS: '2500',
    S3_MAX_ATTEMPTS: '5',
    S3_PART_SIZE: String(16 * 1024 * 1024),
    S3_CONDITIONAL_WRITES: 'on',
  }, DATA);
  assert.deepEqual(config, {
    kind: 's3',
    bucket: 'maps-bucket',
    prefix: 'fleet/prod/',
    endpoint: 'http://minio.internal:9000',
    forcePathStyle: true,
    region: 'eu-central-1',
    credentials: { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'secret', sessionToken: 'token' },
    conditionalWrites: 'on',
    timeoutMs: 2500,
    maxAttempts: 5,
    partSize: 16 * 1024 * 1024,
  });
  assert.equal(describeStore(config), 's3://maps-bucket/fleet/prod/ at http://minio.internal:9000');
  assert.doesNotMatch(describeStore(config), /secret|AKIA/);
});

test('S3 defaults: AWS itself, virtual-host style, the default credential chain, probed conditions', () => {
  const config = storeConfigFromEnv({ STORE_URL: 's3://bucket', AWS_DEFAULT_REGION: 'us-west-2' }, DATA);
  assert.ok(config.kind === 's3');
  assert.equal(config.prefix, '');
  assert.equal(config.endpoint, undefined);
  assert.equal(config.forcePathStyle, false);
  assert.equal(config.region, 'us-west-2');
  assert.equal(config.credentials, undefined);
  assert.equal(config.conditionalWrites, 'auto');
  assert.deepEqual([config.timeoutMs, config.maxAttempts, config.partSize], [10_000, 3, 8 * 1024 * 1024]);
  const region = storeConfigFromEnv({ STORE_URL: 's3://bucket/p' }, DATA);
  assert.ok(region.kind === 's3' && region.region === 'us-east-1' && region.prefix === 'p/');
});

test('a malformed store variable is an error at start-up, naming the variable', () => {
  const bad: [Record<string, string>, RegExp][] = [
    [{ STORE_URL: 'http://bucket/x' }, /STORE_URL/],
    [{ STORE_URL: 's3://' }, /STORE_URL/],
    [{ STORE_URL: 's3://a' }, /bucket/],
    [{ STORE_URL: 's3://bucket/../etc' }, /prefix/],
    [{ STORE_URL: 's3://bucket/a b' }, /prefix/],
    [{ STORE_URL: 's3://bucket', S3_ENDPOINT: 'minio:9000' }, /S3_ENDPOINT/],
    [{ STORE_URL: 's3://bucket', S3_ENDPOINT: 'ftp://minio' }, /S3_ENDPOINT/],
    [{ STORE_URL: 's3://bucket', S3_ENDPOINT: 'http://user:pw@minio' }, /S3_ENDPOINT/],
    [{ STORE_URL: 's3://bucket', S3_FORCE_PATH_STYLE: 'yes' }, /S3_FORCE_PATH_STYLE/],
    [{ STORE_URL: 's3://bucket', S3_CONDITIONAL_WRITES: 'maybe' }, /S3_CONDITIONAL_WRITES/],
    [{ STORE_URL: 's3://bucket', S3_TIMEOUT_MS: '10s' }, /S3_TIMEOUT_MS/],
    [{ STORE_URL: 's3://bucket', S3_MAX_ATTEMPTS: '0' }, /S3_MAX_ATTEMPTS/],
    [{ STORE_URL: 's3://bucket', S3_PART_SIZE: '1048576' }, /S3_PART_SIZE/],
    [{ STORE_URL: 's3://bucket', AWS_ACCESS_KEY_ID: 'only-the-id' }, /AWS_SECRET_ACCESS_KEY/],
  ];
  for (const [env, message] of bad) {
    assert.throws(() => storeConfigFromEnv(env, DATA), (error: unknown) => error instanceof StoreConfigError && message.test(error.message), JSON.stringify(env));
  }
});

test('S3_ENDPOINT with credentials or a query is refused without echoing them (a start line goes to the log); a password alone too', () => {
  const cases: [string, string][] = [
    ['http://user:s3cr3t@minio.internal:9000', 'http://…@minio.internal:9000/'],
    ['http://:s3cr3t@minio.internal:9000', 'http://…@minio.internal:9000/'],
    ['https://minio.internal/?X-Amz-Signature=s3cr3t', 'https://minio.internal/?…'],
  ];
  for (const [endpoint, shown] of cases) {
    assert.throws(() => storeConfigFromEnv({ STORE_URL: 's3://bucket', S3_ENDPOINT: endpoint }, DATA), (error: unknown) =>
      error instanceof StoreConfigError && error.message === `S3_ENDPOINT must be an http(s) URL without query or credentials, got ${JSON.stringify(shown)}`, endpoint);
  }
  assert.throws(() => storeConfigFromEnv({ STORE_URL: 's3://bucket', S3_ENDPOINT: 'ftp://minio' }, DATA), (error: unknown) =>
    error instanceof StoreConfigError && error.message === 'S3_ENDPOINT must be an http(s) URL without query or credentials, got "ftp://minio"');
});

test('the key layout: previews, uploader entries with their expiry, projects, assets, leases', () => {
  const hash = createHash('sha256').update('map').digest('hex');
  assert.equal(previewKeys.place(hash), `previews/${hash}/place`);
  assert.equal(previewKeys.analysis(hash), `previews/${hash}/analysis.json`);
  const entry = previewKeys.uploader(hash, 'élève 42', 1_700_000_000_123);
  assert.equal(entry, `previews/${hash}/uploaders/${userKey('élève 42')}.1700000000123`);
  assert.ok(entry.startsWith(previewKeys.uploaderEntries(hash, 'élève 42')));
  assert.ok(entry.startsWith(previewKeys.uploaders(hash)));
  assert.deepEqual(parseUploaderKey(entry), { hash, user: userKey('élève 42'), expiresAt: 1_700_000_000_123 });
  assert.equal(parseUploaderKey(previewKeys.uploader(hash, 'u', 5))?.expiresAt, 5, 'zero-padded, so keys sort by expiry');
  assert.equal(parseUploaderKey(previewKeys.place(hash)), undefined);
  assert.notEqual(userKey('élève'), userKey('ülève'), 'ids are hashed exactly as given');
  assert.equal(projectKeys.document('p_abcdefghijklmnopqrst'), 'projects/p_abcdefghijklmnopqrst/document.json');
  assert.equal(projectKeys.meta('p_abcdefghijklmnopqrst'), 'projects/p_abcdefghijklmnopqrst/meta.json');
  assert.equal(assetKeys.bytes(hash), `assets/sha256/${hash.slice(0, 2)}/${hash}`);
  assert.equal(assetKeys.meta(hash), `assets/sha256/${hash.slice(0, 2)}/${hash}.json`);
  assert.equal(assetKeys.id('1818'), 'assets/ids/1818.json');
  assert.equal(leaseKey('preview-sweep'), 'leases/preview-sweep');
  for (const key of [previewKeys.place(hash), entry, projectKeys.meta('p_abcdefghijklmnopqrst'), assetKeys.meta(hash), assetKeys.id('1')]) {
    assert.ok(isValidKey(key), key);
  }
  // Anything that is not what the layout expects is refused, so no request can name another key.
  assert.throws(() => previewKeys.place('../../etc'), TypeError);
  assert.throws(() => previewKeys.place(hash.toUpperCase()), TypeError);
  assert.throws(() => projectKeys.document('p_../x'), TypeError);
  assert.throws(() => assetKeys.id('12a'), TypeError);
  assert.throws(() => assetKeys.bytes('x'), TypeError);
  assert.throws(() => previewKeys.uploader(hash, 'u', -1), RangeError);
  assert.throws(() => leaseKey('../x'), TypeError);
});
