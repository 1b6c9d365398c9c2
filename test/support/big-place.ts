/**
 * What the import experience is tested against: a civil-war-size place made by the
 * project's generator (thousands of scripts, many flagged, one free-model script copied
 * hundreds of times, a fifth of them switched off), and a slow asset host on loopback
 * that answers every id after a delay (even ids with bytes, odd ids 404), so a create
 * takes long enough to watch its progress and ends with assets of two outcomes.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatePlace } from '../../bench/generate.js';
import { encode } from '../../src/parser/writer/index.js';
import { startAssetServer, type AssetReply, type AssetServer } from './asset-server.js';

export interface BigPlace {
  path: string;
  name: string;
  scripts: number;
  copies: number;
  assets: number;
  remove(): Promise<void>;
}

/** The generated civil-war-size place, written to a temp file. */
export async function writeBigPlace(options: { parts?: number; scripts?: number; copies?: number; assets?: number } = {}): Promise<BigPlace> {
  const scripts = options.scripts ?? 3000;
  const copies = options.copies ?? 300;
  const assets = options.assets ?? 240;
  const dom = generatePlace({ parts: options.parts ?? 8000, scripts, uniqueAssets: assets, scriptLines: 30, freeModelCopies: copies, seed: 16 });
  const dir = await mkdtemp(join(tmpdir(), 'rbxl-big-place-'));
  const name = 'civil-war-size.rbxl';
  const path = join(dir, name);
  await writeFile(path, encode(dom));
  return { path, name, scripts: scripts + copies, copies, assets, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Every id answered after `delayMs`: an even last digit gets bytes, an odd one 404. */
export async function startSlowAssetHost(delayMs: number): Promise<AssetServer> {
  const found: AssetReply = { type: 'bytes', body: 'asset bytes', contentType: 'application/octet-stream', delayMs };
  const missing: AssetReply = { type: 'status', status: 404, delayMs };
  const assets = new Proxy({}, {
    get: (_target, id) => (typeof id === 'string' && /[02468]$/.test(id) ? found : missing),
  });
  return startAssetServer({ assets });
}
