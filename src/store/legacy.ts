/**
 * Data written by versions before the object store (issue 15) lived directly under
 * DATA_DIR: `projects/<id>.json|.meta|.summary` and `assets/{sha256,ids}/…`. At start on
 * the disk store, they are moved (renamed: same file system) into the disk object
 * store's layout under DATA_DIR/objects, so an upgrade keeps every project and asset.
 * Previews (a day's life) are not moved: one made before the upgrade is uploaded again.
 * A move that fails leaves the file where it was, for the next start.
 */
import { mkdir, readdir, rename, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { assetKeys, projectKeys } from './backends/keys.js';

const PROJECT_FILE = /^(p_[a-z2-7]{20})\.(json|meta|summary)$/;
const NAMES: Record<string, (id: string) => string> = { json: projectKeys.document, meta: projectKeys.meta, summary: projectKeys.summary };

/** Moves what an older version left under `dataDir` into the disk store at `root`; returns how many files moved. */
export async function migrateLegacyLayout(dataDir: string, root: string): Promise<number> {
  let moved = 0;
  const move = async (from: string, key: string): Promise<void> => {
    const to = join(root, ...key.split('/'));
    await mkdir(join(to, '..'), { recursive: true });
    await rename(from, to);
    moved++;
  };
  const projects = join(dataDir, 'projects');
  const names = await readdir(projects).catch(() => [] as string[]);
  // The sidecar last: a project appears in the store only with its document beside it.
  for (const name of names.sort((a, b) => Number(a.endsWith('.meta')) - Number(b.endsWith('.meta')))) {
    const match = PROJECT_FILE.exec(name);
    if (match !== null) await move(join(projects, name), NAMES[match[2]!]!(match[1]!)).catch(() => {});
  }
  await rmdir(projects).catch(() => {});

  const assets = join(dataDir, 'assets');
  for (const shard of await readdir(join(assets, 'sha256')).catch(() => [] as string[])) {
    const files = await readdir(join(assets, 'sha256', shard)).catch(() => [] as string[]);
    // Bytes before their meta, as the asset store writes them.
    for (const name of files.sort((a, b) => Number(a.endsWith('.json')) - Number(b.endsWith('.json')))) {
      const sha256 = name.replace(/\.json$/, '');
      if (!/^[0-9a-f]{64}$/.test(sha256) || sha256.slice(0, 2) !== shard) continue;
      await move(join(assets, 'sha256', shard, name), name.endsWith('.json') ? assetKeys.meta(sha256) : assetKeys.bytes(sha256)).catch(() => {});
    }
    await rmdir(join(assets, 'sha256', shard)).catch(() => {});
  }
  await rmdir(join(assets, 'sha256')).catch(() => {});
  // The index last: an id points at bytes already moved.
  for (const name of await readdir(join(assets, 'ids')).catch(() => [] as string[])) {
    const id = /^(\d{1,20})\.json$/.exec(name)?.[1];
    if (id !== undefined) await move(join(assets, 'ids', name), assetKeys.id(id)).catch(() => {});
  }
  await rmdir(join(assets, 'ids')).catch(() => {});
  // Previews of the old layout: not carried over (see above).
  await rm(join(dataDir, 'previews'), { recursive: true, force: true });
  return moved;
}
