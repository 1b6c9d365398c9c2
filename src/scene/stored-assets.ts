/**
 * The downloaded assets a project's scene.glb may use, read from the asset store (in a
 * worker): meshes and union models as their converted geometry, images as their
 * bytes. Only the assets the project downloaded (asset id → SHA-256, from its create)
 * are looked at, so a scene never shows another project's files.
 */
import { convertStoredAsset, readConvertedGlb } from '../assets/converted.js';
import { assetPath } from '../assets/store.js';
import { GlbReadError, readGlbGeometry } from '../gltf/read.js';
import type { MeshLimits } from '../mesh/limits.js';
import { readFileSync, statSync } from 'node:fs';
import type { MeshLookup, SceneAssets } from './assemble.js';
import { GlbTooLargeError, type SceneImages } from './glb.js';

export interface StoredAssetsOptions {
  dataDir: string;
  /** Asset id → SHA-256 of the bytes its download gave. */
  assets: ReadonlyMap<string, string>;
  /** Largest asset read (the memory budget's share). */
  maxBytes: number;
  /**
   * What the images and converted meshes read may come to in all: the scene.glb's own
   * bound, since each is embedded in it. Past it GlbTooLargeError is thrown at once,
   * rather than after every one is held in memory (outside the worker's heap limit).
   */
  maxTotalBytes?: number;
  /** What converting a mesh again (a store that lost its record) may decode. */
  meshLimits?: Partial<MeshLimits>;
}

export function storedAssets({ dataDir, assets, maxBytes, maxTotalBytes = Infinity, meshLimits }: StoredAssetsOptions): SceneAssets & SceneImages {
  const meshes = new Map<string, MeshLookup>();
  let total = 0;
  const held = <T extends Uint8Array>(bytes: T): T => {
    total += bytes.byteLength;
    if (total > maxTotalBytes) throw new GlbTooLargeError(total, maxTotalBytes, true);
    return bytes;
  };
  return {
    mesh(id) {
      const sha256 = assets.get(id);
      if (!sha256) return undefined;
      let found = meshes.get(sha256);
      if (!found) {
        // Converted at create; a store that lost the record converts again here.
        const record = convertStoredAsset(dataDir, sha256, { maxBytes, ...(meshLimits ? { limits: meshLimits } : {}) });
        if (!record.converted) found = { ok: false, reason: record.reason };
        else {
          try {
            found = { ok: true, geometry: readGlbGeometry(held(readConvertedGlb(dataDir, sha256))) };
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
        return held(readFileSync(path));
      } catch (error) {
        if (error instanceof GlbTooLargeError) throw error;
        return undefined;
      }
    },
  };
}
