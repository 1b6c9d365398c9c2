/**
 * Many users uploading the same file (src/store/previews.ts): an upload, and a create's
 * lookup and refresh, ask the store about the acting user's own uploader entries only, so
 * what they cost does not grow with how many others uploaded the same bytes; and with
 * that, nothing is lost: an entry written on one instance is found on another (which had
 * cached other users' entries of the same preview), nobody sees another user's file name,
 * and expiry and the sweep work as before. Over the disk store and over s3rver (ignoring
 * conditions, as the fleet's test server does), each instance a store of its own.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createDiskStore, createS3Store, previewKeys, storeConfigFromEnv, userKey, type ObjectStore, type S3StoreConfig,
} from '../src/store/backends/index.js';
import { createPreviewStore, type NewPreview, type PreviewStore } from '../src/store/previews.js';
import { createHoldings } from '../src/store/holdings.js';
import { createDiskQuota } from '../src/store/quota.js';
import { createAnalysisService } from '../src/service/analysis.js';
import type { WorkerPool } from '../src/workers/pool.js';
import type { Report } from '../src/project/report.js';
import { S3_TEST_ENV, startS3Server } from './support/s3-server.js';

const root = await mkdtemp(join(tmpdir(), 'rbxl-uploaders-'));
const s3 = await startS3Server();
after(async () => {
  await s3.close();
  await rm(root, { recursive: true, force: true });
});

const TTL_SECONDS = 100;
const HASH = createHash('sha256').update('the same map').digest('hex');
let namespaces = 0;

interface Subject {
  name: string;
  /** A fresh namespace: `open()` gives another instance's client of the same objects. */
  fresh(): { open(): ObjectStore };
}

const subjects: Subject[] = [
  {
    name: 'disk',
    fresh() {
      const dir = join(root, `disk-${namespaces++}`);
      return { open: () => createDiskStore({ root: dir }) };
    },
  },
  {
    name: 's3rver',
    fresh() {
      const config = storeConfigFromEnv({
        ...S3_TEST_ENV, STORE_URL: `s3://${s3.bucket}/uploaders-${namespaces++}`, S3_ENDPOINT: s3.endpoint, S3_CONDITIONAL_WRITES: 'off',
      }, root) as S3StoreConfig;
      return { open: () => createS3Store(config) };
    },
  },
];

/** Every call an instance makes to its store, as `operation key-or-prefix`. */
function counted(objects: ObjectStore): { objects: ObjectStore; calls: string[] } {
  const calls: string[] = [];
  const traced = new Set(['head', 'get', 'getStream', 'put', 'putFile', 'delete', 'list']);
  const proxy = new Proxy(objects, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof property !== 'string' || !traced.has(property) || typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(`${property} ${String(args[0])}`);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { objects: proxy, calls };
}

/** How many calls of each operation, and how many of them name an uploader entry that is not `user`'s. */
function tally(calls: readonly string[], user: string): Record<string, number> {
  const own = previewKeys.uploaderEntries(HASH, user);
  const counts: Record<string, number> = { others: 0 };
  for (const call of calls) {
    const [operation, key] = call.split(' ') as [string, string];
    counts[operation] = (counts[operation] ?? 0) + 1;
    if (key.includes('/uploaders/') && !key.startsWith(own)) counts.others!++;
  }
  return counts;
}

function clock(): { now: () => number; advance(ms: number): void } {
  let time = 1_700_000_000_000;
  return { now: () => time, advance: (ms) => (time += ms) };
}

function newPreview(user: string, fileName: string): NewPreview {
  return {
    hash: HASH, report: { scripts_total: 0 } as unknown as Report, assets: [], fileSize: 12, format: 'binary', user, fileName,
  };
}

interface Instance { previews: PreviewStore; objects: ObjectStore; calls: string[] }

async function setUp(subject: Subject, time: { now: () => number }) {
  const namespace = subject.fresh();
  const workDir = join(root, `work-${namespaces++}`);
  await mkdir(workDir, { recursive: true });
  /** Another instance over the same objects, with nothing cached, whose store calls are counted. */
  const instance = (): Instance => {
    const { objects, calls } = counted(namespace.open());
    return { previews: createPreviewStore({ objects, workDir, cacheBytes: 1 << 20, ttlSeconds: TTL_SECONDS, now: time.now }), objects, calls };
  };
  const first = instance();
  await writeFile(join(workDir, 'upload'), 'the same map');
  await first.previews.put(newPreview('first', 'first.rbxl'), join(workDir, 'upload'));
  let others = 0;
  /** Adds `count` more uploaders of the same file, as their uploads would on any instance. */
  const addOthers = async (count: number): Promise<void> => {
    const users = Array.from({ length: count }, () => `other${others++}`);
    for (let i = 0; i < users.length; i += 25) {
      await Promise.all(users.slice(i, i + 25).map((user) => first.previews.addUploader(HASH, user, `${user}.rbxl`, true)));
    }
  };
  return { instance, addOthers, workDir };
}

for (const subject of subjects) {
  describe(`uploaders over ${subject.name}`, () => {
    test('an upload and a create\'s lookup and refresh cost the same store calls with 3 or 150 other uploaders, and read none of theirs', async () => {
      const time = clock();
      const { instance, addOthers } = await setUp(subject, time);
      /** On a new instance: an upload of the same bytes by `newcomer`, then `creator`'s create (lookup, then refresh: their entry is past half its TTL). */
      const measure = async (newcomer: string, creator: string): Promise<{ upload: Record<string, number>; create: Record<string, number> }> => {
        const { previews, calls } = instance();
        const uploaded = await previews.addUploader(HASH, newcomer, `${newcomer}.rbxl`, true);
        assert.deepEqual([uploaded?.user, uploaded?.fileName], [newcomer, `${newcomer}.rbxl`]);
        const upload = tally(calls.splice(0), newcomer);
        assert.equal((await previews.getFor(HASH, creator))?.fileName, `${creator}.rbxl`);
        const refreshed = await previews.addUploader(HASH, creator);
        assert.equal(refreshed?.expiresAt, time.now() + TTL_SECONDS * 1000, 'refreshed');
        return { upload, create: tally(calls.splice(0), creator) };
      };
      time.advance(50_000);
      await addOthers(3);
      time.advance(10_000); // first's entry is past half its TTL
      const few = await measure('newcomer-a', 'first');
      await addOthers(147);
      time.advance(60_000); // other0's is past half its TTL; every other entry is unexpired
      const many = await measure('newcomer-b', 'other0');
      assert.deepEqual(many, few, 'the same calls with 150 other uploaders as with 3');
      assert.equal(few.upload.others, 0, 'an upload reads no other uploader\'s entry');
      assert.equal(few.create.others, 0, 'a create reads no other uploader\'s entry');
      // Listings: the user's own entries, and the sweep's marks (a new uploader's entry is all that keeps the preview).
      assert.ok((few.upload.get ?? 0) <= 2 && (few.upload.list ?? 0) <= 2, JSON.stringify(few.upload));
    });

    test('the analysis service: an upload of stored bytes costs the same with 3 or 150 other uploaders, quota accounting included', async () => {
      const time = clock();
      const { instance, addOthers, workDir } = await setUp(subject, time);
      const upload = async (user: string): Promise<Record<string, number>> => {
        const { previews, objects, calls } = instance();
        // The user's share is counted through the same store: its calls are counted too.
        const holdings = createHoldings(objects, { userMaxBytes: 1e9, userMaxPreviews: 100, userMaxProjects: 10 }, time.now);
        const pool = { analyze: () => Promise.reject(new Error('the stored analysis is reused: no decode')) } as unknown as WorkerPool;
        const service = createAnalysisService({ previews, pool, quota: createDiskQuota({ dataDir: workDir, maxDataBytes: null }), holdings });
        const preview = await service.analyze({ path: join(workDir, 'absent'), sha256: HASH, size: 12, fileName: `${user}.rbxl`, user });
        assert.deepEqual([preview.user, preview.fileName], [user, `${user}.rbxl`]);
        const counts = tally(calls, user);
        assert.equal((await holdings.usage(user)).previews, 1, 'counted in the user\'s share');
        return counts;
      };
      await addOthers(3);
      const few = await upload('newcomer-a');
      await addOthers(147);
      const many = await upload('newcomer-b');
      assert.deepEqual(many, few, 'the same store calls with 150 other uploaders as with 3');
      assert.equal(few.others, 0);
    });

    test('across instances: an entry written on one is found on another that cached other users; nobody sees another\'s name; expiry and the sweep', async () => {
      const time = clock();
      const { instance, addOthers } = await setUp(subject, time);
      await addOthers(5);
      const [a, b] = [instance().previews, instance().previews];
      // B knows the preview through other users (their uploads or creates there).
      assert.equal((await b.getFor(HASH, 'other0'))?.fileName, 'other0.rbxl');
      time.advance(60_000);
      assert.equal((await b.addUploader(HASH, 'other1', 'other1.rbxl', true))?.expiresAt, time.now() + TTL_SECONDS * 1000, 'other1 refreshed on B');
      assert.equal(await b.getFor(HASH, 'late'), undefined, 'not an uploader yet');
      // Analyze on A, create on B: B's cache of others does not answer for this user.
      time.advance(1000);
      await a.addUploader(HASH, 'late', 'mine.rbxl', true);
      const seen = await b.getFor(HASH, 'late');
      assert.deepEqual([seen?.user, seen?.fileName, seen?.expiresAt], ['late', 'mine.rbxl', time.now() + TTL_SECONDS * 1000]);
      assert.doesNotMatch(JSON.stringify(seen), /other\d|first/, 'nothing of another uploader');
      assert.equal(await b.getFor(HASH, 'stranger'), undefined);
      assert.deepEqual((await b.get(HASH))?.uploaders.sort(), ['first', 'late', ...Array.from({ length: 5 }, (_, i) => `other${i}`)].sort());
      // The entries written at the start expire; late's (and other1's, refreshed on B) stay.
      time.advance(39_500);
      assert.equal(await b.getFor(HASH, 'other0'), undefined, 'expired, though cached');
      assert.equal(await a.getFor(HASH, 'first'), undefined);
      assert.equal((await a.getFor(HASH, 'late'))?.fileName, 'mine.rbxl');
      assert.deepEqual(await a.sweep(), []);
      assert.deepEqual((await b.get(HASH))?.uploaders.sort(), ['late', 'other1']);
      time.advance(61_000);
      assert.equal(await b.getFor(HASH, 'late'), undefined);
      assert.equal(await a.addUploader(HASH, 'late'), undefined, 'a create cannot bring back an expired preview');
      assert.deepEqual(await b.sweep(), [HASH]);
      assert.equal(await a.hasAnalysis(HASH), false);
    });
  });
}

test('a refresh (not forced) needs the user\'s own live entry; the sweep keeps a preview whose only live entry is past a page of expired ones', async () => {
  const time = clock();
  const objects = createDiskStore({ root: join(root, `disk-${namespaces++}`) });
  const previews = createPreviewStore({ objects, workDir: root, cacheBytes: 1 << 20, ttlSeconds: TTL_SECONDS, now: time.now });
  // The live uploader's key sorts late (`ff…`); more expired entries than a listing's page sort before it.
  const live = nameWhere((key) => key.startsWith('ff'), 'live');
  await previews.put(newPreview(live, 'live.rbxl'));
  const before = userKey(live);
  const expired = Array.from({ length: 1100 }, (_, i) => nameWhere((key) => key < before, `gone${i}-`));
  for (let i = 0; i < expired.length; i += 100) {
    await Promise.all(expired.slice(i, i + 100).map((user) => objects.put(previewKeys.uploader(HASH, user, time.now() - 1), JSON.stringify({ user }))));
  }
  // Someone else's upload lets nobody else in: not a user who never uploaded, not one whose entry expired.
  assert.equal(await previews.addUploader(HASH, 'joiner'), undefined);
  assert.equal(await previews.addUploader(HASH, expired[0]!), undefined);
  assert.equal((await previews.addUploader(HASH, live))?.user, live);
  assert.deepEqual(await previews.sweep(), []);
  assert.equal((await previews.getFor(HASH, live))?.user, live);
});

test('an instance remembers a bounded number of users\' entries: past the bound a user\'s ownership is asked of the store again, and answered the same', async () => {
  const time = clock();
  const { instance, addOthers, workDir } = await setUp(subjects[0]!, time);
  await addOthers(4);
  const { objects, calls } = instance();
  const previews = createPreviewStore({ objects, workDir, cacheBytes: 1 << 20, ttlSeconds: TTL_SECONDS, now: time.now, knownUsers: 4 });
  const lookups = async (user: string): Promise<number> => {
    calls.length = 0;
    assert.equal((await previews.getFor(HASH, user))?.fileName, `${user}.rbxl`);
    return calls.filter((call) => call.startsWith('list ')).length;
  };
  assert.equal(await lookups('first'), 1, 'not known yet: the store is asked');
  assert.equal(await lookups('first'), 0, 'remembered');
  for (const user of ['other0', 'other1', 'other2']) await lookups(user);
  assert.equal(await lookups('first'), 0, 'four users: within the bound');
  assert.equal(await lookups('other3'), 1);
  // A fifth user of the preview passes the bound: what was remembered of it goes.
  assert.equal(await lookups('first'), 1, 'forgotten past the bound, asked again');
  assert.equal(await previews.getFor(HASH, 'stranger'), undefined);
});

test('an upload past the bound, or a refresh while other users push the preview out, is answered from the entry it wrote', async () => {
  const time = clock();
  const { instance, workDir } = await setUp(subjects[0]!, time);
  const { objects } = instance();
  let meanwhile: (() => Promise<unknown>) | undefined;
  const hooked = new Proxy(objects, {
    get(target, property, receiver) {
      if (property !== 'delete') return Reflect.get(target, property, receiver) as unknown;
      return async (key: string) => {
        await meanwhile?.();
        return target.delete(key);
      };
    },
  });
  const previews = createPreviewStore({ objects: hooked, workDir, cacheBytes: 1 << 20, ttlSeconds: TTL_SECONDS, now: time.now, knownUsers: 2 });
  // The store's analysis of the same bytes again (its map gone, say): a second user known here, then a third's put.
  assert.equal((await previews.getFor(HASH, 'first'))?.user, 'first');
  assert.equal(await previews.getFor(HASH, 'second'), undefined);
  await writeFile(join(workDir, 'again'), 'the same map');
  const third = await previews.put(newPreview('third', 'third.rbxl'), join(workDir, 'again'));
  assert.deepEqual([third?.user, third?.fileName], ['third', 'third.rbxl']);
  // A refresh drops the entry it supersedes; meanwhile two users of another file fill the bound.
  time.advance(TTL_SECONDS * 1000 * 0.6);
  const other = createHash('sha256').update('another map').digest('hex');
  meanwhile = async () => {
    meanwhile = undefined;
    for (const user of ['x', 'y']) await previews.getFor(other, user);
  };
  const refreshed = await previews.addUploader(HASH, 'first');
  assert.deepEqual([refreshed?.user, refreshed?.fileName], ['first', 'first.rbxl']);
  assert.equal(meanwhile, undefined, 'the superseded entry was deleted');
});

/** The first user id `<prefix><n>` whose key segment (its SHA-256) satisfies `accept`. */
function nameWhere(accept: (key: string) => boolean, prefix: string): string {
  for (let n = 0; ; n++) if (accept(userKey(`${prefix}${n}`))) return `${prefix}${n}`;
}
