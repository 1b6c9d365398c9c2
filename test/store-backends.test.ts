/**
 * The object-store contract, run alike against every implementation:
 *   - the disk store,
 *   - the S3 store against s3rver, which ignores conditional headers (so the client checks them),
 *   - the S3 store against s3rver deciding conditions as S3 does (by the test proxy).
 * Both S3 runs go through the test proxy (support/s3-proxy.ts), which serves one request
 * per object at a time as S3's atomic writes would look, and adds the multipart calls
 * s3rver lacks.
 * "Another instance" is a second store object (a second client) on the same data.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, open, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import {
  acquireLease,
  createDiskStore,
  createS3Store,
  listAll, listKeys,
  previewKeys,
  parseUploaderKey,
  readLease,
  readModifyWrite,
  releaseLease,
  storeConfigFromEnv,
  StoreError,
  StoreUnavailableError,
  type ObjectStore,
  type S3StoreConfig,
} from '../src/store/backends/index.js';
import { S3_TEST_ENV, startS3Server } from './support/s3-server.js';
import { s3rverUploadsDir, startS3Proxy } from './support/s3-proxy.js';

const root = await mkdtemp(join(tmpdir(), 'rbxl-backends-'));
const s3 = await startS3Server();
const gaps = { directory: s3.directory, bucket: s3.bucket };
const proxy = await startS3Proxy(s3.port, { conditional: true, s3rver: gaps });
const plain = await startS3Proxy(s3.port, { conditional: false, s3rver: gaps });
after(async () => {
  await proxy.close();
  await plain.close();
  await s3.close();
  await rm(root, { recursive: true, force: true });
});

const PART = 5 * 1024 * 1024;
let namespaces = 0;

function s3Config(endpoint: string, prefix: string): S3StoreConfig {
  const config = storeConfigFromEnv({
    ...S3_TEST_ENV,
    STORE_URL: `s3://${s3.bucket}/${prefix}`,
    S3_ENDPOINT: endpoint,
    S3_TIMEOUT_MS: '5000',
    S3_PART_SIZE: String(PART),
  }, root);
  assert.equal(config.kind, 's3');
  return config;
}

interface Subject {
  name: string;
  /** Stores on one fresh namespace: call `open()` again for another instance on the same data. */
  fresh(): { open(): ObjectStore };
  /** Whether the store decides conditions itself (what `capabilities()` must detect). */
  atomic: boolean;
  s3: boolean;
}

const subjects: Subject[] = [
  {
    name: 'disk',
    atomic: true,
    s3: false,
    fresh() {
      const dir = join(root, `disk-${namespaces++}`);
      return { open: () => createDiskStore({ root: dir, lockTimeoutMs: 5000 }) };
    },
  },
  {
    name: 's3rver (ignores conditions: the client checks them)',
    atomic: false,
    s3: true,
    fresh() {
      const config = s3Config(plain.endpoint, `direct-${namespaces++}`);
      return { open: () => createS3Store(config) };
    },
  },
  {
    name: 's3rver behind a proxy that decides conditions as S3 does',
    atomic: true,
    s3: true,
    fresh() {
      const config = s3Config(proxy.endpoint, `proxied-${namespaces++}`);
      return { open: () => createS3Store(config) };
    },
  },
];

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

const sha = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** Opens stores for one test and closes them after it. */
function using(subject: Subject, t: { after(fn: () => Promise<void>): void }): { store: ObjectStore; another(): ObjectStore } {
  const space = subject.fresh();
  const opened: ObjectStore[] = [];
  const open = (): ObjectStore => {
    const store = space.open();
    opened.push(store);
    return store;
  };
  t.after(async () => {
    await Promise.all(opened.map((store) => store.close()));
  });
  return { store: open(), another: open };
}

async function bigFile(bytes: number): Promise<{ path: string; hash: string }> {
  const path = join(root, `file-${randomBytes(6).toString('hex')}`);
  const handle = await open(path, 'w');
  const hash = createHash('sha256');
  const chunk = randomBytes(1024 * 1024);
  for (let written = 0; written < bytes; written += chunk.length) {
    const piece = chunk.subarray(0, Math.min(chunk.length, bytes - written));
    chunk[0] = (chunk[0]! + 1) & 0xff; // parts differ, so a misplaced part changes the hash
    hash.update(piece);
    await handle.write(piece);
  }
  await handle.close();
  return { path, hash: hash.digest('hex') };
}

for (const subject of subjects) {
  describe(`object store contract: ${subject.name}`, { timeout: 120_000 }, () => {
    test('put, get, head and getStream agree on bytes, size and ETag; absence is a value', async (t) => {
      const { store } = using(subject, t);
      const body = randomBytes(70_000);
      const put = await store.put('a/b/object.bin', body);
      assert.equal(put.written, true);
      const got = await store.get('a/b/object.bin');
      assert.ok(got !== undefined);
      assert.deepEqual(got.body, body);
      assert.equal(got.size, body.length);
      const head = await store.head('a/b/object.bin');
      assert.equal(head?.size, body.length);
      assert.equal(head?.etag, got.etag);
      assert.ok(put.written && put.etag === got.etag, 'the ETag a put returns is the one read back');
      assert.match(got.etag, /^[^"\s]+$/, 'ETags are given without quotes');
      assert.ok(Math.abs(got.lastModified - Date.now()) < 60_000);
      const stream = await store.getStream('a/b/object.bin');
      assert.equal(stream?.etag, got.etag);
      const chunks: Buffer[] = [];
      for await (const chunk of stream.body) chunks.push(chunk as Buffer);
      assert.deepEqual(Buffer.concat(chunks), body);

      await store.put('text.json', '{"é":1}');
      assert.equal((await store.get('text.json'))?.body.toString('utf8'), '{"é":1}');
      await store.put('empty', new Uint8Array(0));
      assert.equal((await store.get('empty'))?.size, 0);

      assert.equal(await store.get('a/b/missing'), undefined);
      assert.equal(await store.head('a/b/missing'), undefined);
      assert.equal(await store.getStream('a/b/missing'), undefined);
      assert.equal(await store.get('a/b'), undefined, 'a folder of keys is not an object');
      await store.delete('a/b/missing');
      await assert.rejects(store.get('a/b/object.bin', { maxBytes: 1000 }), (error: unknown) => error instanceof StoreError && !(error instanceof StoreUnavailableError));
    });

    test('a write replaces the object and changes its ETag; delete removes it', async (t) => {
      const { store } = using(subject, t);
      const first = await store.put('k', 'one');
      const second = await store.put('k', 'two!');
      assert.ok(first.written && second.written);
      assert.notEqual(first.etag, second.etag);
      assert.equal((await store.get('k'))?.body.toString(), 'two!');
      assert.equal((await store.head('k'))?.etag, second.etag);
      await store.delete('k');
      assert.equal(await store.head('k'), undefined);
      assert.deepEqual((await store.list('')).objects, []);
    });

    test('keys are checked the same way by every store', async (t) => {
      const { store } = using(subject, t);
      for (const bad of ['', '/a', 'a/', 'a//b', '../x', 'a/./b', '.hidden', 'a/.lock', 'sp ace', 'ü', 'x'.repeat(513)]) {
        await assert.rejects(store.put(bad, 'x'), TypeError, JSON.stringify(bad));
        await assert.rejects(store.get(bad), TypeError, JSON.stringify(bad));
      }
      await assert.rejects(store.list('../'), TypeError);
    });

    test('list: prefix matching, bytewise key order, pages that cover everything once', async (t) => {
      const { store } = using(subject, t);
      const keys = ['a-b', 'a/b', 'a/b/c', 'a/b1', 'a/c/d/e', 'a.x', 'a0', 'b', 'a/b/c2', 'a/b-', 'ab/x'];
      // On disk a key cannot also be a folder (a/b and a/b/c): leave that out there, as the layout never does it.
      const used = subject.s3 ? keys : keys.filter((key) => key !== 'a/b');
      await Promise.all(used.map((key) => store.put(key, key)));
      const all = await collect(listAll(store, ''));
      assert.deepEqual(all.map((object) => object.key), [...used].sort());
      assert.ok(all.every((object) => object.size === object.key.length && object.etag !== ''));
      const underB = (await store.list('a/b')).objects.map((object) => object.key);
      assert.deepEqual(underB, used.filter((key) => key.startsWith('a/b')).sort());
      assert.deepEqual((await store.list('a/')).objects.map((object) => object.key), used.filter((key) => key.startsWith('a/')).sort());
      assert.deepEqual((await store.list('zz/')).objects, []);

      for (const limit of [1, 2, 3]) {
        const seen: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await store.list('a', { limit, ...(cursor === undefined ? {} : { cursor }) });
          assert.ok(page.objects.length <= limit);
          seen.push(...page.objects.map((object) => object.key));
          cursor = page.cursor;
          pages++;
        } while (cursor !== undefined && pages < 50);
        assert.deepEqual(seen, used.filter((key) => key.startsWith('a')).sort(), `pages of ${limit}`);
      }
      // Keys only (what the per-user shares list): the same keys, in the same order, page by page.
      assert.deepEqual(await collect(listKeys(store, 'a')), used.filter((key) => key.startsWith('a')).sort());
      const firstPage = await store.list('a', { keysOnly: true, limit: 2 });
      assert.deepEqual(firstPage.objects.map((object) => object.key), used.filter((key) => key.startsWith('a')).sort().slice(0, 2));
    });

    test('conditional create: one writer wins, even among concurrent writers of another instance', async (t) => {
      const { store, another } = using(subject, t);
      const second = another();
      assert.deepEqual(await store.capabilities(), { atomicCreate: subject.atomic, atomicReplace: subject.atomic });
      const first = await store.put('once', 'first', { ifNoneMatch: '*' });
      assert.equal(first.written, true);
      assert.deepEqual(await store.put('once', 'second', { ifNoneMatch: '*' }), { written: false });
      assert.equal((await store.get('once'))?.body.toString(), 'first');

      // Within one instance every store keeps the promise; across instances only an atomic one does.
      const local = await Promise.all(Array.from({ length: 8 }, (_, i) => store.put('race-local', `w${i}`, { ifNoneMatch: '*' })));
      assert.equal(local.filter((result) => result.written).length, 1);
      const across = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? store : second).put('race', `w${i}`, { ifNoneMatch: '*' })));
      const winners = across.filter((result) => result.written).length;
      if (subject.atomic) assert.equal(winners, 1);
      else assert.ok(winners >= 1);
    });

    test('conditional replace: only on the ETag read; refused when it changed or the object is gone', async (t) => {
      const { store, another } = using(subject, t);
      const v1 = await store.put('doc', 'v1');
      assert.ok(v1.written);
      const v2 = await store.put('doc', 'v2', { ifMatch: v1.etag });
      assert.ok(v2.written);
      assert.equal((await store.get('doc'))?.body.toString(), 'v2');
      assert.deepEqual(await store.put('doc', 'stale', { ifMatch: v1.etag }), { written: false });
      assert.equal((await store.get('doc'))?.body.toString(), 'v2');
      // Writers that all read v2 race to replace it: one wins (across instances only where the store decides conditions).
      const local = await Promise.all(Array.from({ length: 8 }, (_, i) => store.put('doc', `local-${i}`, { ifMatch: v2.etag })));
      assert.equal(local.filter((result) => result.written).length, 1);
      const v3 = await store.head('doc');
      const second = another();
      const across = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? store : second).put('doc', `across-${i}`, { ifMatch: v3!.etag })));
      const winners = across.filter((result) => result.written).length;
      if (subject.atomic) assert.equal(winners, 1);
      else assert.ok(winners >= 1);
      await store.delete('doc');
      assert.deepEqual(await store.put('doc', 'gone', { ifMatch: v2.etag }), { written: false });
      assert.equal(await store.head('doc'), undefined);
    });

    test('uploader entries written at once by two instances are all kept (one object per entry)', async (t) => {
      const { store, another } = using(subject, t);
      const second = another();
      const hash = sha(Buffer.from('a map'));
      const expiresAt = Date.now() + 3_600_000;
      const users = Array.from({ length: 40 }, (_, i) => `user-${i}`);
      await Promise.all(users.map((user, i) => (i % 2 === 0 ? store : second).put(previewKeys.uploader(hash, user, expiresAt), JSON.stringify({ user }))));
      const entries = await collect(listAll(second, previewKeys.uploaders(hash), 7));
      assert.equal(entries.length, users.length);
      const parsed = entries.map((entry) => parseUploaderKey(entry.key));
      assert.ok(parsed.every((entry) => entry?.hash === hash && entry.expiresAt === expiresAt));
      const mine = await store.list(previewKeys.uploaderEntries(hash, 'user-7'));
      assert.equal(mine.objects.length, 1);
    });

    test('read-modify-write retries on a changed ETag and loses no update', async (t) => {
      const { store, another } = using(subject, t);
      const increment = (current: Buffer | undefined): string => String(Number(current?.toString() ?? '0') + 1);
      await Promise.all(Array.from({ length: 12 }, () => readModifyWrite(store, 'counter', increment)));
      assert.equal((await store.get('counter'))?.body.toString(), '12', 'one instance');
      const second = another();
      await Promise.all(Array.from({ length: 12 }, (_, i) => readModifyWrite(i % 2 === 0 ? store : second, 'counter2', increment)));
      const total = Number((await store.get('counter2'))?.body.toString());
      if (subject.atomic) assert.equal(total, 12, 'two instances');
      else assert.ok(total >= 1 && total <= 12); // documented: such stores keep state as one object per entry instead
    });

    test('a lease has one holder at a time, is renewed by it, taken over after expiry, and released', async (t) => {
      const { store, another } = using(subject, t);
      const second = another();
      let now = 1_000_000;
      const clock = (): number => now;
      assert.equal(await acquireLease(store, 'sweep', 'A', 10_000, clock), true);
      assert.equal(await acquireLease(second, 'sweep', 'B', 10_000, clock), false);
      now += 8000;
      assert.equal(await acquireLease(store, 'sweep', 'A', 10_000, clock), true, 'renewed');
      now += 8000;
      assert.equal(await acquireLease(second, 'sweep', 'B', 10_000, clock), false, 'the renewal counts');
      now += 3000;
      assert.equal(await acquireLease(second, 'sweep', 'B', 10_000, clock), true, 'expired: taken over');
      assert.deepEqual(await readLease(store, 'sweep', clock), { holder: 'B', expiresAt: now + 10_000 });
      await releaseLease(store, 'sweep', 'A'); // not A's any more: no effect
      assert.equal((await readLease(store, 'sweep', clock))?.holder, 'B');
      await releaseLease(second, 'sweep', 'B');
      assert.equal(await readLease(store, 'sweep', clock), undefined);
      if (subject.atomic) {
        const contenders = await Promise.all(['C', 'D', 'E', 'F'].map((holder, i) => acquireLease(i % 2 === 0 ? store : second, 'race', holder, 10_000, clock)));
        assert.equal(contenders.filter(Boolean).length, 1);
      }
    });

    test('putFile streams a large file (multipart on S3) and can take the source; a conditional one does not overwrite', async (t) => {
      const { store } = using(subject, t);
      const file = await bigFile(2 * PART + 123_457);
      const put = await store.putFile('big/place', file.path);
      assert.ok(put.written);
      const stream = await store.getStream('big/place');
      assert.equal(stream?.size, 2 * PART + 123_457);
      const hash = createHash('sha256');
      for await (const chunk of stream.body) hash.update(chunk as Buffer);
      assert.equal(hash.digest('hex'), file.hash);
      assert.equal((await store.head('big/place'))?.etag, put.etag);
      if (subject.s3) assert.ok(!proxy.requests.some((line) => line.includes('/proxied-') && line.includes('uploadId') && line.startsWith('DELETE')));

      const other = await bigFile(1000);
      assert.deepEqual(await store.putFile('big/place', other.path, { ifNoneMatch: '*', moveSource: true }), { written: false });
      await assert.rejects(stat(other.path), { code: 'ENOENT' }, 'the source was taken even though not written');
      const small = await bigFile(1000);
      assert.ok((await store.putFile('small', small.path, { moveSource: true })).written);
      await assert.rejects(stat(small.path), { code: 'ENOENT' });
      assert.equal(sha((await store.get('small'))!.body), small.hash);
      assert.equal(sha((await store.get('big/place', { maxBytes: 3 * PART }))!.body), file.hash, 'unchanged');
      await assert.rejects(store.putFile('nope', join(root, 'no-such-file')), StoreError);
      assert.equal(await store.head('nope'), undefined);
      await rm(file.path);
    });

    test('check() reports a reachable store', async (t) => {
      const { store } = using(subject, t);
      const reach = await store.check();
      assert.equal(reach.ok, true);
      assert.ok(reach.latencyMs >= 0 && reach.latencyMs < 5000);
    });
  });
}

describe('leftovers of interrupted writes', { timeout: 120_000 }, () => {
  test('disk: the sweep removes old temp and lock files and empty folders, and keeps objects and fresh temps', async (t) => {
    const dir = join(root, 'sweep-disk');
    const store = createDiskStore({ root: dir });
    t.after(() => store.close());
    await store.put('keep/object', 'x');
    await mkdir(join(dir, 'empty', 'nested'), { recursive: true });
    const old = Date.now() / 1000 - 7200;
    for (const name of ['.object.abc123.tmp', '.object.lock']) {
      await writeFile(join(dir, 'keep', name), 'partial');
      await utimes(join(dir, 'keep', name), old, old);
    }
    await writeFile(join(dir, 'keep', '.object.fresh01.tmp'), 'in flight');
    assert.equal(await store.sweepIncomplete(3_600_000), 2);
    assert.deepEqual((await readdir(join(dir, 'keep'))).sort(), ['.object.fresh01.tmp', 'object']);
    await assert.rejects(stat(join(dir, 'empty')), { code: 'ENOENT' });
    assert.deepEqual((await store.list('')).objects.map((object) => object.key), ['keep/object']);
    // A write after the sweep removed its folder re-creates it.
    await store.put('empty/nested/again', 'y');
    assert.equal((await store.get('empty/nested/again'))?.body.toString(), 'y');
  });

  test('disk: a failed write leaves no temp file, and deleting the last object of a folder removes the folder', async (t) => {
    const dir = join(root, 'failed-disk');
    const store = createDiskStore({ root: dir });
    t.after(() => store.close());
    await store.put('f/one', '1');
    await assert.rejects(store.put('f', 'a folder cannot be replaced by an object'), StoreError);
    await assert.rejects(store.putFile('f/two', join(root, 'missing-source')), StoreError);
    assert.deepEqual(await readdir(dir), ['f']);
    assert.deepEqual(await readdir(join(dir, 'f')), ['one']);
    await store.delete('f/one');
    assert.deepEqual(await readdir(dir), []);
  });

  test('S3: a multipart upload that fails is aborted, leaving no object and no parts', async (t) => {
    const store = createS3Store({ ...s3Config(proxy.endpoint, 'aborted'), maxAttempts: 2 });
    t.after(() => store.close());
    const file = await bigFile(3 * PART);
    proxy.fault(/^PUT \/rbxl-test\/aborted\/upload\/place\?.*partNumber=2/, 'server_error', 2);
    await assert.rejects(store.putFile('upload/place', file.path), StoreUnavailableError);
    proxy.clearFaults();
    assert.equal(await store.head('upload/place'), undefined);
    assert.ok(proxy.requests.some((line) => /^DELETE \/rbxl-test\/aborted\/upload\/place\?.*uploadId=/.test(line)), 'the upload was aborted');
    assert.deepEqual(await readdir(s3rverUploadsDir(s3.directory, s3.bucket)).catch(() => []), [], 'no parts are left');
    await rm(file.path);
  });

  test('S3: the sweep aborts multipart uploads left by a crash, where the store can list them', async (t) => {
    const store = createS3Store(s3Config(proxy.endpoint, 'crashed'));
    t.after(() => store.close());
    const file = await bigFile(2 * PART + 1);
    // A crash after the first part: the process died, so nothing aborted the upload.
    proxy.fault(/^PUT \/rbxl-test\/crashed\/left\?.*partNumber=2/, 'reset', 10);
    proxy.fault(/^DELETE \/rbxl-test\/crashed\/left\?.*uploadId=/, 'reset', 10);
    await assert.rejects(store.putFile('left', file.path), StoreUnavailableError);
    proxy.clearFaults();
    const uploads = s3rverUploadsDir(s3.directory, s3.bucket);
    assert.equal((await readdir(uploads)).length, 1, 'an upload is left');
    assert.equal(await store.sweepIncomplete(3_600_000), 0, 'too young to be a leftover');
    assert.equal(await store.sweepIncomplete(0), 1);
    assert.deepEqual(await readdir(uploads), []);
    assert.equal(await store.head('left'), undefined);
    await rm(file.path);
  });

  test('S3: stores that cannot list uploads (s3rver itself) leave them to the lifecycle rule', async (t) => {
    const store = createS3Store(s3Config(s3.endpoint, 'no-list'));
    t.after(() => store.close());
    assert.equal(await store.sweepIncomplete(0), 0);
  });
});

test('the stores agree: the same operations give the same listing on disk and on S3', async (t) => {
  const disk = createDiskStore({ root: join(root, 'agree') });
  const remote = createS3Store(s3Config(s3.endpoint, 'agree'));
  t.after(async () => {
    await disk.close();
    await remote.close();
  });
  const hash = sha(Buffer.from('agree'));
  const ops = async (store: ObjectStore): Promise<string[]> => {
    await store.put(previewKeys.analysis(hash), '{}');
    await store.put(previewKeys.uploader(hash, 'u1', 1_700_000_000_000), '{}');
    await store.put(previewKeys.uploader(hash, 'u2', 1_700_000_000_001), '{}');
    await store.put(previewKeys.place(hash), 'bytes');
    await store.delete(previewKeys.uploader(hash, 'u1', 1_700_000_000_000));
    const listed = await collect(listAll(store, 'previews/'));
    return listed.map((object) => `${object.key}:${object.size}`);
  };
  assert.deepEqual(await ops(disk), await ops(remote));
  const stream = await remote.getStream(previewKeys.place(hash));
  assert.equal(await text(stream!.body), 'bytes');
});
