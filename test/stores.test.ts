import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import {
  createPreviewStore,
  createProjectStore,
  isTempName,
  moveFileAtomic,
  writeFileAtomic,
  type NewPreview,
} from '../src/store/index.js';
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

function preview(hash: string, uploaders: string[], extra: Partial<NewPreview> = {}): NewPreview {
  return {
    hash,
    report: { scripts_total: 3, classes: { Part: 10 } } as unknown as Report,
    assets: [{ id: '123', kind: 'mesh' }],
    fileName: 'map.rbxl',
    fileSize: 1234,
    format: 'binary',
    uploaders,
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

// ---- previews ----

test('preview store: put, get from cache and from disk', async () => {
  const dataDir = await freshDir();
  const time = clock();
  const store = createPreviewStore({ dataDir, cacheBytes: 1 << 20, ttlSeconds: 60, now: time.now });
  const hash = sha('a');
  assert.equal(await store.get(hash), undefined);
  const stored = await store.put(preview(hash, ['u1']));
  assert.equal(stored.createdAt, time.now());
  assert.equal(stored.expiresAt, time.now() + 60_000);
  assert.deepEqual(await store.get(hash), stored);
  assert.equal(store.cacheInfo().entries, 1);

  // A new store (a restart) reads the same preview from disk.
  const reopened = createPreviewStore({ dataDir, cacheBytes: 1 << 20, ttlSeconds: 60, now: time.now });
  assert.deepEqual(await reopened.get(hash), stored);
  assert.deepEqual(await readdir(join(dataDir, 'previews')), [`${hash}.json`]);
});

test('preview store: the uploaded file is moved in once; a second copy is deleted', async () => {
  const dataDir = await freshDir();
  const uploads = join(dataDir, 'uploads');
  await mkdir(uploads);
  const store = createPreviewStore({ dataDir, cacheBytes: 1 << 20, ttlSeconds: 60 });
  const hash = sha('place bytes');
  await writeFile(join(uploads, 'first.tmp'), 'place bytes');
  await store.put(preview(hash, ['u1']), join(uploads, 'first.tmp'));
  assert.equal(await readFile(store.placePath(hash), 'utf8'), 'place bytes');
  await writeFile(join(uploads, 'second.tmp'), 'place bytes');
  await store.put(preview(hash, ['u2']), join(uploads, 'second.tmp'));
  assert.deepEqual(await readdir(uploads), []);
  assert.deepEqual((await readdir(join(dataDir, 'previews'))).sort(), [`${hash}.json`, `${hash}.place`]);
  assert.deepEqual((await store.get(hash))?.uploaders, ['u1', 'u2']);
});

test('preview store: malformed hashes never reach the file system', async () => {
  const dataDir = await freshDir();
  const store = createPreviewStore({ dataDir, cacheBytes: 1 << 20, ttlSeconds: 60 });
  for (const bad of ['', '../../etc/passwd', sha('x').toUpperCase(), sha('x') + '0', `${sha('x').slice(0, 63)}/`]) {
    assert.equal(await store.get(bad), undefined);
    assert.equal(await store.addUploader(bad, 'u'), undefined);
    assert.throws(() => store.placePath(bad), RangeError);
    await assert.rejects(store.put(preview(bad, ['u'])), RangeError);
  }
});

test('preview store: previews expire by the injected clock and sweep removes them', async () => {
  const dataDir = await freshDir();
  const time = clock();
  const store = createPreviewStore({ dataDir, cacheBytes: 1 << 20, ttlSeconds: 100, now: time.now });
  const uploads = join(dataDir, 'uploads');
  await mkdir(uploads);
  const [old, fresh] = [sha('old'), sha('fresh')];
  await writeFile(join(uploads, 'old'), 'old');
  await store.put(preview(old, ['u1']), join(uploads, 'old'));
  time.advance(60_000);
  await store.put(preview(fresh, ['u1']));
  time.advance(40_000); // old is exactly at its expiry now
  assert.equal(await store.get(old), undefined);
  assert.equal(await store.addUploader(old, 'u2'), undefined);
  assert.ok(await store.get(fresh));
  // A restarted store agrees that it has expired.
  const reopened = createPreviewStore({ dataDir, cacheBytes: 1 << 20, ttlSeconds: 100, now: time.now });
  assert.equal(await reopened.get(old), undefined);

  assert.equal((await store.sweep()).length, 1);
  assert.deepEqual(await readdir(join(dataDir, 'previews')), [`${fresh}.json`]);
  assert.equal(store.cacheInfo().entries, 1);
  assert.equal((await store.sweep()).length, 0);

  time.advance(60_000);
  assert.equal((await store.sweep()).length, 1);
  assert.deepEqual(await readdir(join(dataDir, 'previews')), []);
  assert.equal(store.cacheInfo().entries, 0);
});

test('preview store: addUploader refreshes the expiry', async () => {
  const dataDir = await freshDir();
  const time = clock();
  const store = createPreviewStore({ dataDir, cacheBytes: 1 << 20, ttlSeconds: 100, now: time.now });
  const hash = sha('refresh');
  await store.put(preview(hash, ['u1']));
  time.advance(90_000);
  const updated = await store.addUploader(hash, 'u2');
  assert.deepEqual(updated?.uploaders, ['u1', 'u2']);
  assert.equal(updated?.expiresAt, time.now() + 100_000);
  time.advance(90_000);
  assert.ok(await store.get(hash), 'expired despite the refresh');
  assert.equal((await store.sweep()).length, 0);
});

test('preview store: sweep clears leftovers of interrupted writes', async () => {
  const dataDir = await freshDir();
  const time = clock(Date.now());
  const store = createPreviewStore({ dataDir, cacheBytes: 1 << 20, ttlSeconds: 100, now: time.now });
  const dir = join(dataDir, 'previews');
  const kept = sha('kept');
  await store.put(preview(kept, ['u']));
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, `${sha('orphan')}.place`), 'orphan');
  await writeFile(join(dir, `.${kept}.json.0123456789ab.tmp`), 'torn');
  await writeFile(join(dir, `.${kept}.json.ba9876543210.tmp`), 'in flight');
  const hourAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
  await utimes(join(dir, `.${kept}.json.0123456789ab.tmp`), hourAgo, hourAgo);
  assert.equal((await store.sweep()).length, 0);
  assert.deepEqual((await readdir(dir)).sort(), [`.${kept}.json.ba9876543210.tmp`, `${kept}.json`].sort());
});

test('preview store: the LRU stays within its byte bound and falls back to disk', async () => {
  const dataDir = await freshDir();
  const cacheBytes = 4096;
  const store = createPreviewStore({ dataDir, cacheBytes, ttlSeconds: 60 });
  const hashes = Array.from({ length: 40 }, (_, i) => sha(`lru ${i}`));
  for (const hash of hashes) {
    await store.put(preview(hash, ['u'], { report: { scripts_total: 0, padding: 'x'.repeat(300) } as unknown as Report }));
    const info = store.cacheInfo();
    assert.ok(info.bytes <= cacheBytes, `cache holds ${info.bytes} bytes`);
  }
  const info = store.cacheInfo();
  assert.ok(info.entries > 0 && info.entries < hashes.length, `${info.entries} entries cached`);
  for (const hash of hashes) assert.equal((await store.get(hash))?.hash, hash);
  assert.ok(store.cacheInfo().bytes <= cacheBytes);

  // Larger than the whole cache: served from disk, never cached.
  const huge = sha('huge');
  await store.put(preview(huge, ['u'], { report: { scripts_total: 0, padding: 'x'.repeat(10_000) } as unknown as Report }));
  assert.equal((await store.get(huge))?.hash, huge);
  assert.ok(store.cacheInfo().bytes <= cacheBytes);

  // No cache at all.
  const uncached = createPreviewStore({ dataDir, cacheBytes: 0, ttlSeconds: 60 });
  assert.equal((await uncached.get(hashes[0]!))?.hash, hashes[0]);
  assert.deepEqual(uncached.cacheInfo(), { entries: 0, bytes: 0, maxBytes: 0 });
});

test('preview store: concurrent addUploader and concurrent puts lose no uploader', async () => {
  const dataDir = await freshDir();
  const store = createPreviewStore({ dataDir, cacheBytes: 1 << 20, ttlSeconds: 60 });
  const hash = sha('shared');
  await store.put(preview(hash, ['first']));
  const users = Array.from({ length: 50 }, (_, i) => `user${i}`);
  await Promise.all(users.map((user) => store.addUploader(hash, user)));
  const onDisk = createPreviewStore({ dataDir, cacheBytes: 0, ttlSeconds: 60 });
  assert.deepEqual((await onDisk.get(hash))?.uploaders.sort(), ['first', ...users].sort());

  // The same file analysed by two users at once: both puts race, both are recorded.
  const uploads = join(dataDir, 'uploads');
  await mkdir(uploads);
  const other = sha('raced');
  await writeFile(join(uploads, 'a'), 'raced');
  await writeFile(join(uploads, 'b'), 'raced');
  await Promise.all([
    store.put(preview(other, ['alice']), join(uploads, 'a')),
    store.put(preview(other, ['bob']), join(uploads, 'b')),
    store.addUploader(other, 'carol'),
  ]);
  const raced = await onDisk.get(other);
  assert.deepEqual(raced?.uploaders.slice(0, 2).sort(), ['alice', 'bob']);
  assert.ok(raced?.uploaders.length === 2 || raced?.uploaders[2] === 'carol');
  assert.deepEqual(await readdir(uploads), []);
  assert.equal(await readFile(store.placePath(other), 'utf8'), 'raced');
});

test('preview store: startSweeper sweeps on its interval and stops', async () => {
  const dataDir = await freshDir();
  const time = clock(Date.now());
  const store = createPreviewStore({ dataDir, cacheBytes: 1 << 20, ttlSeconds: 1, now: time.now });
  const hash = sha('swept');
  await store.put(preview(hash, ['u']));
  time.advance(2000);
  const errors: unknown[] = [];
  const stop = store.startSweeper(5, (error) => errors.push(error));
  try {
    for (let i = 0; i < 400 && (await readdir(join(dataDir, 'previews'))).length > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } finally {
    stop();
  }
  assert.deepEqual(await readdir(join(dataDir, 'previews')), []);
  assert.deepEqual(errors, []);
});

// ---- projects ----

test('project store: save and get, random URL-safe ids, atomic files', async () => {
  const dataDir = await freshDir();
  const store = createProjectStore({ dataDir });
  const doc = { format: 'rbxl-import/project', version: 1, owner: 'u1', title: 'Map', scene: { children: [] } };
  const ids = await Promise.all(Array.from({ length: 20 }, () => store.save(doc)));
  for (const id of ids) {
    assert.match(id, /^p_[a-z2-7]{20}$/);
    assert.deepEqual(await store.get(id), doc);
  }
  assert.equal(new Set(ids).size, ids.length);
  const names = await readdir(join(dataDir, 'projects'));
  assert.equal(names.length, ids.length);
  assert.ok(!names.some(isTempName));
  assert.equal(await store.get('p_aaaaaaaaaaaaaaaaaaaa'), undefined);
});

test('project store: malformed ids never reach the file system', async () => {
  const dataDir = await freshDir();
  await writeFile(join(dataDir, 'secret.json'), '{"owner":"x"}');
  const store = createProjectStore({ dataDir });
  for (const bad of ['', '../secret', 'p_../../secret', 'p_AAAAAAAAAAAAAAAAAAAA', 'p_aaaaaaaaaaaaaaaaaaa', 'p_aaaaaaaaaaaaaaaaaaaa/']) {
    assert.equal(await store.get(bad), undefined);
  }
  await assert.rejects(store.save({ owner: '' }), TypeError);
});
