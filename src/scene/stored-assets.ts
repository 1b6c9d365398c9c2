/**
 * The downloaded assets a project's scene.glb may use, read from the asset store (in a
 * worker): meshes and union models as their converted geometry, images as their
 * bytes. Only the assets the project downloaded (asset id → SHA-256, from its create)
 * are looked at, so a scene never shows another project's files.
 */
import { convertStoredAsset, readConversion, readConvertedGlb } from '../assets/converted.js';
import { assetPath } from '../assets/store.js';
import { GlbReadError, readGlbGeometry } from '../gltf/read.js';
import { readFileSync, statSync } from 'node:fs';
import type { MeshLookup, SceneAssets } from './assemble.js';
import type { SceneImages } from './glb.js';

export interface StoredAssetsOptions {
  dataDir: string;
  /** Asset id → SHA-256 of the bytes its download gave. */
  assets: ReadonlyMap<string, string>;
  /** Largest asset read (the memory budget's share). */
  maxBytes: number;
}

export function storedAssets({ dataDir, assets, maxBytes }: StoredAssetsOptions): SceneAssets & SceneImages {
  const meshes = new Map<string, MeshLookup>();
  return {
    mesh(id) {
      const sha256 = assets.get(id);
      if (!sha256) return undefined;
      let found = meshes.get(sha256);
      if (!found) {
        // Converted at create; a store that lost the record converts again here.
        const record = readConversion(dataDir, sha256) ?? convertStoredAsset(dataDir, sha256, { maxBytes });
        if (!record.converted) found = { ok: false, reason: record.reason };
        else {
          try {
            found = { ok: true, geometry: readGlbGeometry(readConvertedGlb(dataDir, sha256)) };
          } catch (error) {
            if (!(error instanceof GlbReadError) && !(error as NodeJS.ErrnoException).code) throw error;
            found = { ok: false, reason: 'unreadable' };
          }
        }
        meshes.set(sha256, found);
      }
      return found;
    },
    image(id) {
      const sha256 = assets.get(id);
      if (!sha256) return undefined;
      try {
        const path = assetPath(dataDir, sha256);
        if (statSync(path).size > maxBytes) return undefined;
        return readFileSync(path);
      } catch {
        return undefined;
      }
    },
  };
}
