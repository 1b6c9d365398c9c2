/** Asset downloads and the content-addressed asset store. */
export {
  CALL_LANES,
  createAssetDownloader,
  retryAfterMs,
  statusFailure,
  type AssetDownloader,
  type AssetDownloaderOptions,
  type AssetKind,
  type AssetOutcome,
  type AssetRequest,
} from './download.js';
export {
  ASSET_ID_PATTERN,
  DEFAULT_CONTENT_TYPE,
  assetPath,
  assetTempDir,
  isSha256,
  lookupAssetId,
  normaliseContentType,
  readAssetMeta,
  recordAssetId,
  storeAssetStream,
  sweepStaleTempFiles,
  type AssetMeta,
  type AssetStore,
  type StoreAssetOptions,
} from './store.js';
export { AssetFetchError, AssetStoreError, type AssetFailureReason, type AssetFetchErrorDetails } from './errors.js';
