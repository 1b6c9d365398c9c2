/**
 * The object stores the service keeps its state in: the local disk (default) or an
 * S3-compatible store, behind one interface (`types.ts`), chosen by `STORE_URL` (`config.ts`).
 * Key layout in `keys.ts`; every error in `errors.ts`.
 */
import type { StoreConfig } from './config.js';
import { createDiskStore } from './disk.js';
import { createS3Store } from './s3.js';
import type { ObjectStore } from './types.js';

export type { Capabilities, ListOptions, ListPage, ObjectInfo, ObjectStore, ObjectStream, PutFileOptions, Reachability, StoredObject, WriteOptions, WriteResult } from './types.js';
export { ObjectTooLargeError, StoreError, StoreUnavailableError, isStoreUnavailable, type UnavailableReason } from './errors.js';
export { defaultStoreConfig, describeStore, storeConfigFromEnv, StoreConfigError, type ConditionalWrites, type DiskStoreConfig, type S3StoreConfig, type StoreConfig } from './config.js';
export { assetKeys, checkKey, holdingKeys, isValidKey, leaseKey, parseHoldingKey, parseProjectKey, parseUploaderKey, previewKeys, progressKeys, projectKeys, userKey, type Holding, type HoldingKind } from './keys.js';
export { listAll, listKeys, readModifyWrite, type UpdateOptions } from './operations.js';
export { acquireLease, readLease, releaseLease, type LeaseState } from './lease.js';
export { createDiskStore, type DiskStoreOptions } from './disk.js';
export { createS3Store } from './s3.js';

export function openObjectStore(config: StoreConfig): ObjectStore {
  return config.kind === 'disk' ? createDiskStore({ root: config.root }) : createS3Store(config);
}
