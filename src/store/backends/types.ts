/**
 * One interface for an object store, implemented by the local disk (`disk.ts`, the
 * default) and by S3-compatible stores (`s3.ts`). Keys are `/`-separated paths checked
 * by `keys.ts`; values are bytes. Absence is a value (`undefined`), never an error; a
 * store that cannot be reached throws `StoreUnavailableError` (`errors.ts`).
 */
import type { Readable } from 'node:stream';

export interface ObjectInfo {
  key: string;
  size: number;
  /**
   * Changes whenever the object is written. Opaque, without quotes. Equal bytes may or may
   * not give equal ETags (S3: MD5 for single PUTs; disk: file identity and time).
   */
  etag: string;
  /** Milliseconds since the epoch. */
  lastModified: number;
}

export interface StoredObject extends ObjectInfo {
  body: Buffer;
}

export interface ObjectStream extends ObjectInfo {
  /** Must be read to the end or destroyed. A store failure mid-read destroys it with `StoreUnavailableError`. */
  body: Readable;
}

export interface WriteOptions {
  /** `'*'`: write only when no object has the key (conditional create). */
  ifNoneMatch?: '*';
  /** Write only when the object's ETag is this one (conditional replace). */
  ifMatch?: string;
}

export interface PutFileOptions extends WriteOptions {
  /**
   * The store may take the file instead of copying it (a rename on the same disk). When
   * the call returns, the source is gone (written or not); after a throw it may or may not
   * be, so the caller removes it (`rm` with `force`) in any case.
   */
  moveSource?: boolean;
  /**
   * The source is never changed in place (only replaced or removed), so a store that can
   * give the same file a second name (a hard link on disk) may do that instead of copying.
   */
  linkSource?: boolean;
}

/** A write either happened (with the new ETag) or its condition did not hold. */
export type WriteResult = { written: true; etag: string } | { written: false };

export interface ListPage {
  /** In key order (bytewise). */
  objects: ObjectInfo[];
  /** Pass to `list` for the next page; absent on the last page. */
  cursor?: string;
}

export interface ListOptions {
  /** From the previous page. */
  cursor?: string;
  /** Objects per page (at most 1000, the S3 limit). */
  limit?: number;
  /**
   * Only the keys are wanted: a store may then give 0 and '' for size, ETag and time
   * (the disk store skips its `stat` per file; S3's listing has them anyway).
   */
  keysOnly?: boolean;
}

export interface Capabilities {
  /** `ifNoneMatch: '*'` is decided by the store itself, atomically across every client. */
  atomicCreate: boolean;
  /** `ifMatch` is decided by the store itself, atomically across every client. */
  atomicReplace: boolean;
}

export type Reachability =
  | { ok: true; latencyMs: number }
  | { ok: false; latencyMs: number; reason: string; message: string };

export interface ObjectStore {
  readonly kind: 'disk' | 's3';
  /** Where the objects are, for logs and /health (never credentials). */
  readonly location: string;
  /**
   * Whether conditional writes are atomic across clients. Where they are not (s3rver,
   * some gateways), this store still honours them within this process (check, then
   * write, under a per-key lock), so across instances the last writer wins.
   */
  capabilities(): Promise<Capabilities>;
  head(key: string): Promise<ObjectInfo | undefined>;
  /** The whole object in memory: for small objects (JSON records). Larger than `maxBytes` throws a `StoreError`. */
  get(key: string, options?: { maxBytes?: number }): Promise<StoredObject | undefined>;
  getStream(key: string): Promise<ObjectStream | undefined>;
  put(key: string, body: Uint8Array | string, options?: WriteOptions): Promise<WriteResult>;
  /** Streams a local file into the store (S3: multipart upload when large; a failed upload is aborted). */
  putFile(key: string, path: string, options?: PutFileOptions): Promise<WriteResult>;
  /** Removes the object; an absent one is not an error. */
  delete(key: string): Promise<void>;
  /** One page of the objects whose keys start with `prefix`. */
  list(prefix: string, options?: ListOptions): Promise<ListPage>;
  /** Can the store be read and listed now? Never throws. */
  check(): Promise<Reachability>;
  /**
   * Removes leftovers of interrupted writes older than `olderThanMs`: temp files on disk,
   * incomplete multipart uploads on S3 (where the store can list them). Returns how many.
   */
  sweepIncomplete(olderThanMs: number): Promise<number>;
  /**
   * Where the object's bytes are as a local file, for readers that need a path (the
   * workers): only stores that keep objects on this machine (disk) have it. The file is
   * replaced whole by a write, never changed in place; it may vanish (a delete or sweep).
   */
  localPath?(key: string): string;
  /** Releases sockets and timers. */
  close(): Promise<void>;
}
