import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import {
  createPreviewStore,
  createProjectStore,
  moveFileAtomic,
  writeFileAtomic,
  type NewPreview,
} from '../src/store/index.js';
import { createDiskStore, listAll, StoreUnavailableError, type ObjectStore } from '../src/store/backends/index.js';
import { createLocalMirror } from '../src/store/mirror.js';
import type { Report } from '../src/project/report.js';

const root = await mkdtemp(join(tmpdir(), 'rbxl-stores-'));
after(() => rm(root, { recursive: true, force: true }));

let dirCount = 0;
async function freshDir(): Promise<string> {
  const dir = join(root, `d${dirCount++}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

const sha = (text: string): string => createHash('sha256').update(text).digest('hex');

function preview(hash: string, user: string, extra: Partial<NewPreview> = {}): NewPreview {
  return {
    hash,
    report: { scripts_total: 3, classes: { Part: 10 } } as unknown as Report,
    assets: [{ id: '123', kind: 'mesh' }],
    fileName: 'map.rbxl',
    fileSize: 1234,
    format: 'binary',
    user,
    ...extra,
  };
}

/** A controllable clock, in milliseconds. */
function clock(start = 1_700_000_000_000): { now: () => number; advance(ms: number): void } {
  let time = start;
  return { now: () => time, advance: (ms) => (time += ms) };
}

// ---- atomic writes ----

test('writeFileAtomic writes, replaces, and leaves no temp file', async () => {
  const dir = await freshDir();
  const path = join(dir, 'doc.json');
  await writeFileAtomic(path, '{"v":1}');
  await writeFileAtomic(path, new Uint8Array([0x7b, 0x7d]));
  assert.equal(await readFile(path, 'utf8'), '{}');
  await Promise.all(Array.from({ length: 20 }, (_, i) => writeFileAtomic(path, JSON.stringify({ v: i }))));
  assert.match(await readFile(path, 'utf8'), /^\{"v":\d+\}$/);
  assert.deepEqual(await readdir(dir), ['doc.json']);
});

test('writeFileAtomic removes its temp file when the rename fails', async () => {
  const dir = await freshDir();
  await mkdir(join(dir, 'target')); // a directory cannot be replaced by a file
  await assert.rejects(writeFileAtomic(join(dir, 'target'), 'x'));
  assert.deepEqual(await readdir(dir), ['target']);
  await assert.rejects(writeFileAtomic(join(dir, 'missing', 'x.json'), 'x'), { code: 'ENOENT' });
});

test('moveFileAtomic renames within a file system', async () => {
  const dir = await freshDir();
  await writeFile(join(dir, 'a'), 'content');
  await writeFile(join(dir, 'b'), 'old');
  await moveFileAtomic(join(dir, 'a'), join(dir, 'b'));
  assert.equal(await readFile(join(dir, 'b'), 'utf8'), 'content');
  assert.deepEqual(await readdir(dir), ['b']);
});

test('moveFileAtomic copies across file systems', async (t) => {
  const other = '/dev/shm';
  const otherDevice = await stat(other).then((s) => s.dev, () => null);
  if (otherDevice === null || otherDevice === (await stat(root)).dev) {
    t.skip('no second file system available');
    return;
  }
  const source = await mkdtemp(join(other, 'rbxl-stores-'));
  try {
    const dir = await freshDir();
    const content = Buffer.alloc(300_000, 7);
    await writeFile(join(source, 'upload'), content);
    await moveFileAtomic(join(source, 'upload'), join(dir, 'moved'));
    assert.ok((await readFile(join(dir, 'moved'))).equals(content));
    assert.deepEqual(await readdir(source), []);
    assert.deepEqual(await readdir(dir), ['moved']);
  } finally {
    await rm(source, { recursive: true, force: true });
  }
});

// ---- previews (over the disk object store; test/scale.test.ts runs them over S3 through the service) ----

interface Stores { objects: ObjectStore; dataDir: string; uploads: string }

async function stores(): Promise<Stores> {
  const dataDir = await freshDir();
  const uploads = join(dataDir, 'uploads');
  await mkdir(uploads);
  return { objects: createDiskStore({ root: join(dataDir, 'objects') }), dataDir, uploads };
}

function previewStore(s: Stores, options: { cacheBytes?: number; ttlSeconds?: number; now?: () => number } = {}) {
  return createPreviewStore({ objects: s.objects, workDir: s.uploads, cacheBytes: options.cacheBytes ?? 1 << 20, ttlSeconds: options.ttlSeconds ?? 60, ...(options.now ? { now: options.now } : {}) });
}

/** Every key the store holds under `prefix`. */
async function keys(objects: ObjectStore, prefix: string): Promise<string[]> {
  const found: string[] = [];
  for await (const info of listAll(objects, prefix)) found.push(info.key);
  return found;
}

/** The keys of one preview, with uploader entries reduced to `uploaders/<n>`. */
async function previewKeys(objects: ObjectStore, hash: string): Promise<string[]> {
  const found = await keys(objects, `previews/${hash}/`);
  const entries = found.filter((key) => key.includes('/uploaders/')).length;
  return [...found.filter((key) => !key.includes('/uploaders/')).map((key) => key.slice(`previews/${hash}/`.length)), ...(entries ? [`uploaders/${entries}`] : [])];
}

test('preview store: put, get from cache and from the store', async () => {
  const s = await stores();
  const time = clock();
  const store = previewStore(s, { now: time.now });
  const hash = sha('a');
  assert.equal(await store.get(hash), undefined);
  const stored = await store.put(preview(hash, 'u1'));
  assert.equal(stored.createdAt, time.now());
  assert.equal(stored.expiresAt, time.now() + 60_000);
  assert.deepEqual([stored.user, stored.fileName], ['u1', 'map.rbxl']);
  assert.deepEqual(await store.getFor(hash, 'u1'), stored);
  const all = await store.get(hash);
  assert.deepEqual([all?.uploaders, all?.expiresAt, all?.createdAt, all?.report], [['u1'], stored.expiresAt, stored.createdAt, stored.report]);
  assert.equal(store.cacheInfo().entries, 1);

  // A new store (a restart, or another instance) reads the same preview from the store.
  const reopened = previewStore(s, { now: time.now });
  assert.deepEqual(await reopened.get(hash), all);
  assert.deepEqual(await reopened.getFor(hash, 'u1'), stored);
  assert.equal(await reopened.getFor(hash, 'u2'), undefined, 'someone who did not upload');
  assert.deepEqual(await previewKeys(s.objects, hash), ['analysis.json', 'uploaders/1']);
});

test('preview store: the uploaded file is stored once; a second copy is deleted', async () => {
  const s = await stores();
  const store = previewStore(s);
  const hash = sha('place bytes');
  await writeFile(join(s.uploads, 'first.tmp'), 'place bytes');
  await store.put(preview(hash, 'u1'), join(s.uploads, 'first.tmp'));
  const place = await store.openPlace(hash);
  assert.equal(await readFile(place!.path, 'utf8'), 'place bytes');
  await place!.release();
  await writeFile(join(s.uploads, 'second.tmp'), 'place bytes');
  await store.put(preview(hash, 'u2'), join(s.uploads, 'second.tmp'));
  assert.deepEqual(await readdir(s.uploads), []);
  assert.deepEqual(await previewKeys(s.objects, hash), ['analysis.json', 'place', 'uploaders/2']);
  assert.deepEqual((await store.get(hash))?.uploaders.sort(), ['u1', 'u2']);
  assert.equal(await store.hasAnalysis(hash), true);
  assert.equal(await store.hasAnalysis(sha('never')), false);
});

test('preview store: malformed hashes never reach the store', async () => {
  const s = await stores();
  const store = previewStore(s);
  for (const bad of ['', '../../etc/passwd', sha('x').toUpperCase(), sha('x') + '0', `${sha('x').slice(0, 63)}/`]) {
    assert.equal(await store.get(bad), undefined);
    assert.equal(await store.getFor(bad, 'u'), undefined);
    assert.equal(await store.addUploader(bad, 'u'), undefined);
    await assert.rejects(store.openPlace(bad), RangeError);
    await assert.rejects(store.put(preview(bad, 'u')), RangeError);
  }
  assert.deepEqual(await keys(s.objects, ''), []);
});

test('preview store: previews expire by the injected clock and sweep removes them', async () => {
  const s = await stores();
  const time = clock();
  const store = previewStore(s, { ttlSeconds: 100, now: time.now });
  const [old, fresh] = [sha('old'), sha('fresh')];
  await writeFile(join(s.uploads, 'old'), 'old');
  await store.put(preview(old, 'u1'), join(s.uploads, 'old'));
  time.advance(60_000);
  await store.put(preview(fresh, 'u1'));
  time.advance(40_000); // old is exactly at its expiry now
  assert.equal(await store.get(old), undefined);
  assert.equal(await store.getFor(old, 'u1'), undefined, 'a cached entry past its expiry');
  assert.equal(await store.addUploader(old, 'u2'), undefined);
  assert.ok(await store.get(fresh));
  // Another instance (a store of its own over the same objects) agrees that it has expired.
  const other = previewStore(s, { ttlSeconds: 100, now: time.now });
  assert.equal(await other.get(old), undefined);
  assert.equal(await other.getFor(old, 'u1'), undefined);

  assert.deepEqual(await store.sweep(), [old]);
  assert.deepEqual(await keys(s.objects, 'previews/'), (await keys(s.objects, `previews/${fresh}/`)));
  assert.equal(store.cacheInfo().entries, 1);
  assert.deepEqual(await store.sweep(), []);

  time.advance(60_000);
  assert.deepEqual(await other.sweep(), [fresh], 'any instance may sweep');
  assert.deepEqual(await keys(s.objects, 'previews/'), []);
  assert.equal(await store.get(fresh), undefined);
});

/**
 * A preview whose only upload has expired, swept by stores (instances) that run one
 * another: `plan[i]` says at which store calls of the i-th sweeper the next one sweeps
 * (two sweeps at once, as where the lease overlaps) and at which bob uploads the same
 * bytes, as the analysis service does. Resolves with what the upload got, once all is done.
 */
async function sweptWhileUploaded(plan: readonly { sweep?: number; upload?: number; again?: 'here' | 'elsewhere' }[]): Promise<{ outcome: string; reached: boolean; bob: ReturnType<typeof previewStore> }> {
  const s = await stores();
  const time = clock();
  const hash = sha('swept while uploaded');
  const first = previewStore(s, { ttlSeconds: 100, now: time.now });
  await writeFile(join(s.uploads, 'ann'), 'the map');
  await first.put(preview(hash, 'ann'), join(s.uploads, 'ann'));
  time.advance(100_000); // ann's upload has expired: the preview is the sweep's to remove
  // Uploaded long ago by the wall clock too: a sweep that finds no entry left takes them as leftovers.
  const old = new Date(Date.now() - 20 * 60 * 1000);
  for (const name of ['place', 'analysis.json']) await utimes(s.objects.localPath!(`previews/${hash}/${name}`), old, old);
  const bob = previewStore(s, { ttlSeconds: 100, now: time.now });
  const upload = async (on = bob): Promise<string> => {
    try {
      if (await on.hasAnalysis(hash) && (await on.addUploader(hash, 'bob', 'bob.rbxl', true)) !== undefined) return 'joined';
      await writeFile(join(s.uploads, 'bob'), 'the map');
      await on.put(preview(hash, 'bob', { fileName: 'bob.rbxl' }), join(s.uploads, 'bob'));
      return 'stored';
    } catch (error) {
      if (error instanceof StoreUnavailableError) return 'refused'; // to be sent again
      throw error;
    }
  };
  let uploaded: Promise<string> | undefined;
  const sweeper = (depth: number): ReturnType<typeof previewStore> => {
    let calls = 0;
    const hooked = new Proxy(s.objects, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (typeof value !== 'function' || !['head', 'get', 'put', 'delete', 'list'].includes(String(name))) return value;
        return async (...args: unknown[]) => {
          const call = calls++;
          if (call === plan[depth]?.sweep) await sweeper(depth + 1).sweep();
          const { upload: at, again } = plan[depth] ?? {};
          // Sent again at once when refused (here, or through another instance), while the sweep still runs.
          if (call === at) {
            await (uploaded = upload().then(async (first) => first !== 'refused' || again === undefined ? first
              : `refused, then ${await upload(again === 'here' ? bob : previewStore(s, { ttlSeconds: 100, now: time.now }))} at once`));
          }
          return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        };
      },
    });
    return createPreviewStore({ objects: hooked, workDir: s.uploads, cacheBytes: 1 << 20, ttlSeconds: 100, now: time.now });
  };
  await sweeper(0).sweep();
  const reached = uploaded !== undefined;
  let outcome = await (uploaded ?? upload());
  // A refusal is told to send the file again, which then works.
  if (/refused( at once)?$/.test(outcome)) outcome = `${outcome}, then ${await upload()}`;
  return { outcome, reached, bob };
}

async function assertWhole({ outcome, bob }: { outcome: string; bob: ReturnType<typeof previewStore> }, what: string): Promise<void> {
  const hash = sha('swept while uploaded');
  assert.equal((await bob.getFor(hash, 'bob'))?.fileName, 'bob.rbxl', `${what}: ${outcome}, then not found`);
  const place = await bob.openPlace(hash);
  assert.ok(place !== undefined, `${what}: ${outcome}, and the map is gone`);
  assert.equal(await readFile(place.path, 'utf8'), 'the map');
}

test('preview store: an upload of the same bytes at any step of the sweep removing them is kept whole or refused, never answered over a removed map', async () => {
  const outcomes: string[] = [];
  for (let step = 0; ; step++) {
    const raced = await sweptWhileUploaded([{ upload: step }]);
    await assertWhole(raced, `step ${step}`);
    outcomes.push(raced.outcome);
    if (!raced.reached) break; // the upload came after the sweep's last call
  }
  assert.ok(outcomes.length > 5, outcomes.join());
  assert.ok(outcomes.some((outcome) => outcome.startsWith('refused')), outcomes.join());
});

test('preview store: the same with two sweeps at once (a lease overlapping), the upload during the second or after it, during the first', async () => {
  for (let second = 0; second < 8; second++) {
    for (let step = 0; step < 10; step++) {
      const during = await sweptWhileUploaded([{ sweep: second }, { upload: step }]);
      await assertWhole(during, `second sweep at ${second}, upload at its ${step}`);
      const after = await sweptWhileUploaded([{ sweep: second, upload: second + step }]);
      await assertWhole(after, `second sweep at ${second}, upload at the first's ${second + step}`);
    }
  }
});

test('preview store: an upload refused for a sweep\'s mark and sent again at once, here or on another instance, is refused again or kept whole', async () => {
  for (const again of ['here', 'elsewhere'] as const) {
    const outcomes: string[] = [];
    for (let step = 0; ; step++) {
      const raced = await sweptWhileUploaded([{ upload: step, again }]);
      await assertWhole(raced, `${again}, step ${step}`);
      outcomes.push(raced.outcome);
      if (!raced.reached) break;
    }
    assert.ok(outcomes.some((outcome) => outcome.includes('refused, then refused')), outcomes.join());
  }
});

test('preview store: addUploader refreshes the expiry', async () => {
  const s = await stores();
  const time = clock();
  const store = previewStore(s, { ttlSeconds: 100, now: time.now });
  const hash = sha('refresh');
  await writeFile(join(s.uploads, 'refresh'), 'refresh'); // an upload is added to a preview whose map is stored
  await store.put(preview(hash, 'u1'), join(s.uploads, 'refresh'));
  time.advance(90_000);
  const updated = await store.addUploader(hash, 'u2', undefined, true); // an upload by u2
  assert.equal(updated?.user, 'u2');
  assert.equal(updated?.expiresAt, time.now() + 100_000);
  assert.deepEqual((await store.get(hash))?.uploaders.sort(), ['u1', 'u2']);
  time.advance(90_000);
  assert.ok(await store.get(hash), 'expired despite the refresh');
  assert.deepEqual((await store.get(hash))?.uploaders, ['u2'], 'u1 expired on its own');
  assert.equal(await store.getFor(hash, 'u1'), undefined);
  assert.deepEqual(await store.sweep(), []);
  assert.deepEqual(await previewKeys(s.objects, hash), ['analysis.json', 'place', 'uploaders/1'], 'the expired entry went, the preview stayed');
});

test('preview store: sweep clears leftovers of interrupted puts once stale, never a put in flight', async () => {
  const s = await stores();
  const store = previewStore(s);
  const kept = sha('kept');
  await store.put(preview(kept, 'u'));
  // A crash between the map and the analysis (old), and a put in flight (new).
  const orphan = sha('orphan');
  await s.objects.put(`previews/${orphan}/place`, 'orphan');
  const inFlight = sha('in flight');
  await s.objects.put(`previews/${inFlight}/place`, 'in flight');
  const hourAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
  await utimes(join(s.dataDir, 'objects', 'previews', orphan, 'place'), hourAgo, hourAgo);
  assert.deepEqual(await store.sweep(), []);
  assert.deepEqual(await keys(s.objects, `previews/${orphan}/`), []);
  assert.deepEqual(await keys(s.objects, `previews/${inFlight}/`), [`previews/${inFlight}/place`]);
  assert.deepEqual(await previewKeys(s.objects, kept), ['analysis.json', 'uploaders/1']);
});

test('preview store: the LRU stays within its byte bound and falls back to the store', async () => {
  const s = await stores();
  const cacheBytes = 4096;
  const store = previewStore(s, { cacheBytes });
  const hashes = Array.from({ length: 40 }, (_, i) => sha(`lru ${i}`));
  for (const hash of hashes) {
    await store.put(preview(hash, 'u', { report: { scripts_total: 0, padding: 'x'.repeat(300) } as unknown as Report }));
    const info = store.cacheInfo();
    assert.ok(info.bytes <= cacheBytes, `cache holds ${info.bytes} bytes`);
  }
  const info = store.cacheInfo();
  assert.ok(info.entries > 0 && info.entries < hashes.length, `${info.entries} entries cached`);
  for (const hash of hashes) assert.equal((await store.getFor(hash, 'u'))?.hash, hash);
  assert.ok(store.cacheInfo().bytes <= cacheBytes);

  // Counted as heap, not as text: an analysis of 2 KB of JSON takes more than a 4 KB cache.
  const small = previewStore(s, { cacheBytes });
  const half = sha('half');
  await small.put(preview(half, 'u', { report: { scripts_total: 0, padding: 'x'.repeat(2000) } as unknown as Report }));
  assert.equal(small.cacheInfo().entries, 0);
  assert.equal((await small.get(half))?.hash, half);

  // Larger than the whole cache: served from the store, never cached.
  const huge = sha('huge');
  await store.put(preview(huge, 'u', { report: { scripts_total: 0, padding: 'x'.repeat(10_000) } as unknown as Report }));
  assert.equal((await store.get(huge))?.hash, huge);
  assert.ok(store.cacheInfo().bytes <= cacheBytes);

  // No cache at all.
  const uncached = previewStore(s, { cacheBytes: 0 });
  assert.equal((await uncached.get(hashes[0]!))?.hash, hashes[0]);
  assert.deepEqual(uncached.cacheInfo(), { entries: 0, bytes: 0, maxBytes: 0 });
});

test('preview store: concurrent addUploader and concurrent puts on two instances lose no uploader', async () => {
  const s = await stores();
  const [a, b] = [previewStore(s), previewStore(s)];
  const hash = sha('shared');
  await a.put(preview(hash, 'first'));
  const users = Array.from({ length: 50 }, (_, i) => `user${i}`);
  await Promise.all(users.map((user, i) => (i % 2 ? a : b).addUploader(hash, user, undefined, true)));
  const reader = previewStore(s, { cacheBytes: 0 });
  assert.deepEqual((await reader.get(hash))?.uploaders.sort(), ['first', ...users].sort());

  // The same file analysed by two users at once on two instances: both puts race, both are recorded.
  const other = sha('raced');
  await writeFile(join(s.uploads, 'a'), 'raced');
  await writeFile(join(s.uploads, 'b'), 'raced');
  await Promise.all([
    a.put(preview(other, 'alice'), join(s.uploads, 'a')),
    b.put(preview(other, 'bob'), join(s.uploads, 'b')),
  ]);
  assert.deepEqual((await reader.get(other))?.uploaders.sort(), ['alice', 'bob']);
  assert.deepEqual(await readdir(s.uploads), []);
  assert.deepEqual(await previewKeys(s.objects, other), ['analysis.json', 'place', 'uploaders/2']);
  const place = await reader.openPlace(other);
  assert.equal(await readFile(place!.path, 'utf8'), 'raced');
});

// ---- projects ----

function projectStore(s: Stores) {
  return createProjectStore({ objects: s.objects, workDir: s.uploads });
}

test('project store: save and get, random URL-safe ids, whole objects', async () => {
  const s = await stores();
  const store = projectStore(s);
  const doc = { format: 'rbxl-import/project', version: 1, owner: 'u1', title: 'Map', scene: { children: [] } };
  const ids = await Promise.all(Array.from({ length: 20 }, () => store.save(doc)));
  for (const id of ids) {
    assert.match(id, /^p_[a-z2-7]{20}$/);
    assert.deepEqual(await store.get(id), doc);
    assert.equal((await store.getMeta(id))?.owner, 'u1');
  }
  assert.equal(new Set(ids).size, ids.length);
  assert.equal((await store.list()).length, ids.length);
  assert.equal((await keys(s.objects, 'projects/')).length, 2 * ids.length);
  assert.equal(await store.get('p_aaaaaaaaaaaaaaaaaaaa'), undefined);
});

test('project store: a summary is read back up to the analysis\'s own limit (a map with 100,000 asset ids has a 20 MB one)', async () => {
  const s = await stores();
  const store = projectStore(s);
  const { id, tempPath } = await store.prepare();
  await writeFile(tempPath, '{"doc":1}');
  const summary = JSON.stringify({ assets: Array.from({ length: 100_000 }, (_, i) => ({ id: String(1e9 + i), kind: 'image', ok: false, reason: 'no_credentials', padding: 'x'.repeat(120) })) });
  assert.ok(summary.length > 16 * 1024 * 1024);
  await store.commit(id, tempPath, { owner: 'ann', assets: [], bytes: 9, createdAt: 1 }, summary);
  assert.equal((await store.getSummary(id))?.length, summary.length);
});

test('project store: commit takes the document, then the summary, then the sidecar; delete removes all', async () => {
  const s = await stores();
  const store = projectStore(s);
  const { id, tempPath } = await store.prepare();
  await writeFile(tempPath, '{"doc":1}');
  await store.commit(id, tempPath, { owner: 'ann', assets: [], bytes: 9, createdAt: 1 }, '{"summary":1}');
  assert.deepEqual(await readdir(s.uploads), []);
  assert.deepEqual(await keys(s.objects, 'projects/'), ['document.json', 'meta.json', 'summary.json'].map((name) => `projects/${id}/${name}`));
  const stream = await store.openDocument(id);
  const chunks: Buffer[] = [];
  for await (const chunk of stream!.body) chunks.push(chunk as Buffer);
  assert.equal(Buffer.concat(chunks).toString(), '{"doc":1}');
  assert.equal(await store.getSummary(id), '{"summary":1}');
  assert.equal(await store.delete(id), true);
  assert.deepEqual(await keys(s.objects, 'projects/'), []);
  assert.equal(await store.delete(id), false);
});

test('project store: a sweep after any write of a create leaves the project whole, its map linked from a preview uploaded long ago included', async () => {
  const s = await stores();
  const store = projectStore(s);
  const hash = sha('old upload');
  const previews = previewStore(s);
  await writeFile(join(s.uploads, 'up'), 'the map');
  await previews.put(preview(hash, 'ann'), join(s.uploads, 'up'));
  // The preview was uploaded 20 minutes ago: its map's file (linked, not copied, into the project) says so.
  const placePath = s.objects.localPath!(`previews/${hash}/place`);
  const old = new Date(Date.now() - 20 * 60 * 1000);
  await utimes(placePath, old, old);
  // The other instance's sweep (or this one's next), run after each write of the create.
  const sweeper = createProjectStore({ objects: s.objects, workDir: s.uploads });
  const sweepAfter = <T>(write: Promise<T>): Promise<T> => write.then(async (result) => {
    await sweeper.sweep({ staleMs: 10 * 60 * 1000, createdBefore: 0 });
    return result;
  });
  const hooked = new Proxy(s.objects, {
    get(target, name, receiver) {
      if (name === 'put') return (...args: Parameters<ObjectStore['put']>) => sweepAfter(target.put(...args));
      if (name === 'putFile') return (...args: Parameters<ObjectStore['putFile']>) => sweepAfter(target.putFile(...args));
      return Reflect.get(target, name, receiver) as unknown;
    },
  });
  const creating = createProjectStore({ objects: hooked, workDir: s.uploads });
  const { id, tempPath } = await creating.prepare();
  await writeFile(tempPath, '{"doc":1}');
  await creating.keepScene(id, placePath, { 1: sha('mesh') });
  await creating.commit(id, tempPath, { owner: 'ann', assets: [], bytes: 9, createdAt: Date.now() }, '{"summary":1}');
  assert.deepEqual(
    await keys(s.objects, `projects/${id}/`),
    ['document.json', 'meta.json', 'place', 'scene-assets.json', 'summary.json'].map((name) => `projects/${id}/${name}`),
    'nothing of the project was swept as a leftover',
  );
  assert.equal(await readFile(s.objects.localPath!(`projects/${id}/place`), 'utf8'), 'the map');
  // A create cut short after keeping its scene is still a leftover, once stale.
  const cut = await store.prepare();
  await store.keepScene(cut.id, placePath, {});
  await store.sweep({ staleMs: 0, createdBefore: 0, now: Date.now() + 1000 });
  assert.deepEqual(await keys(s.objects, `projects/${cut.id}/`), []);
  assert.equal(await readFile(placePath, 'utf8'), 'the map', 'the preview keeps its map');
});

test('project store: a listing that leaves out a sidecar (a store whose listings lag behind its writes) does not make the sweep take a whole project', async () => {
  const s = await stores();
  const store = projectStore(s);
  const { id, tempPath } = await store.prepare();
  await writeFile(tempPath, '{"doc":1}');
  await store.commit(id, tempPath, { owner: 'ann', assets: [], bytes: 9, createdAt: Date.now() }, '{"summary":1}');
  // The store lists every object but the sidecar; reading it finds it.
  const lagging = new Proxy(s.objects, {
    get(target, name, receiver) {
      if (name === 'list') {
        return async (...args: Parameters<ObjectStore['list']>) => {
          const page = await target.list(...args);
          return { ...page, objects: page.objects.filter((info) => !info.key.endsWith('/meta.json')) };
        };
      }
      return Reflect.get(target, name, receiver) as unknown;
    },
  });
  const sweeper = createProjectStore({ objects: lagging, workDir: s.uploads });
  await sweeper.sweep({ staleMs: 0, createdBefore: 0, now: Date.now() + 60_000 });
  assert.deepEqual(await keys(s.objects, `projects/${id}/`), ['document.json', 'meta.json', 'summary.json'].map((name) => `projects/${id}/${name}`), 'the project is whole');
  assert.deepEqual(await store.get(id), { doc: 1 });
  // A leftover without a sidecar still goes.
  const cut = await store.prepare();
  await store.keepScene(cut.id, join(s.dataDir, 'nothing'), {}).catch(() => undefined);
  await sweeper.sweep({ staleMs: 0, createdBefore: 0, now: Date.now() + 60_000 });
  assert.deepEqual(await keys(s.objects, `projects/${cut.id}/`), []);
});

test('project store: malformed ids never reach the store', async () => {
  const s = await stores();
  await writeFile(join(s.dataDir, 'secret.json'), '{"owner":"x"}');
  const store = projectStore(s);
  for (const bad of ['', '../secret', 'p_../../secret', 'p_AAAAAAAAAAAAAAAAAAAA', 'p_aaaaaaaaaaaaaaaaaaa', 'p_aaaaaaaaaaaaaaaaaaaa/']) {
    assert.equal(await store.get(bad), undefined);
    assert.equal(await store.getMeta(bad), undefined);
    assert.equal(await store.openDocument(bad), undefined);
  }
  await assert.rejects(store.save({ owner: '' }), TypeError);
});

// ---- local mirror (S3 mode) ----

test('local mirror: a sweep leaves the copies a task holds, kept from an earlier task however old, and prunes them once released', async () => {
  const s = await stores();
  // The disk store without its local files stands for S3: the mirror copies.
  const remote = new Proxy(s.objects, { get: (target, name, receiver) => (name === 'localPath' ? undefined : Reflect.get(target, name, receiver) as unknown) });
  const key = `assets/sha256/ab/ab${'0'.repeat(62)}`;
  await s.objects.put(key, 'mesh bytes');
  const mirror = createLocalMirror(remote, join(s.dataDir, 'mirror'));
  const path = mirror.pathOf(key);
  const tenMinutes = 10 * 60 * 1000;
  // An earlier create fetched it 20 minutes ago; its copy stays.
  (await mirror.fetch([key]))();
  const old = new Date(Date.now() - 2 * tenMinutes);
  await utimes(path, old, old);
  // This create finds the copy (nothing fetched again), and the sweep runs while its worker reads it.
  const [release] = await Promise.all([mirror.fetch([key]), mirror.prune(tenMinutes)]);
  await mirror.prune(tenMinutes);
  assert.equal(await readFile(path, 'utf8'), 'mesh bytes', 'a held copy stays');
  // Two tasks hold it: one done is not both.
  const second = await mirror.fetch([key]);
  release();
  await mirror.prune(tenMinutes);
  assert.equal(await readFile(path, 'utf8'), 'mesh bytes');
  second();
  await mirror.prune(tenMinutes);
  await assert.rejects(stat(path), { code: 'ENOENT' }, 'released, a stale copy goes');
  // Fetched again, it is copied anew.
  const again = await mirror.fetch([key]);
  assert.equal(await readFile(path, 'utf8'), 'mesh bytes');
  again();
});
