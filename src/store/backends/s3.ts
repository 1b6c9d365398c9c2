/**
 * The S3 object store, over the official AWS SDK v3: AWS S3 or any S3-compatible store
 * (MinIO, Ceph RGW, R2, Garage, s3rver in tests). Keys live under the configured prefix.
 *
 * Bounds: every request has a connect timeout and an idle timeout (`timeoutMs`), the SDK
 * retries network errors, 5xx and throttling at most `maxAttempts` times, and small
 * operations (head, get, put of bytes, delete, list, check) also have a deadline of
 * `timeoutMs × maxAttempts` in all. Files go up by multipart upload (`@aws-sdk/lib-storage`)
 * when larger than one part; a failed upload is aborted, so the key never holds a part of it.
 *
 * Conditional writes: S3 itself honours `If-None-Match: *` and `If-Match` on PUT and on
 * completing a multipart upload (AWS since 2024, MinIO, Ceph RGW); s3rver and some others
 * ignore them and overwrite. `capabilities()` finds out once, by a probe object, unless
 * configured; where the store does not honour them, the check is made here (HEAD, then
 * PUT) under a per-key lock: atomic between callers in this process only.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type PutObjectCommandInput,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { S3StoreConfig } from './config.js';
import { fromS3Error, s3Code, s3Status, StoreError, timeoutError, tooLargeError } from './errors.js';
import { capStream, guardStream } from './guard-stream.js';
import { createKeyedLock } from '../../concurrency/keyed-lock.js';
import { measureReachability } from './operations.js';
import { checkKey, checkPrefix } from './keys.js';
import type { Capabilities, ListOptions, ListPage, ObjectInfo, ObjectStore, ObjectStream, PutFileOptions, Reachability, StoredObject, WriteOptions, WriteResult } from './types.js';

/** Parts uploaded at once per file: memory per upload is this × the part size. */
const UPLOAD_QUEUE = 4;
/**
 * Bytes of file uploads held in memory at once by one store, in uploads of the largest
 * kind: each holds up to its parts in flight and the one being read. Without a bound,
 * every analyze and create whose upload a slow store held kept its parts (about 44 MiB
 * each at the default part size): 16 at once took 700 MiB of the main thread's share.
 */
const UPLOADS_IN_MEMORY = 2;
const MAX_PAGE = 1000;
/**
 * The most the SDK may read of any answer it reads whole: a listing page (1000 keys of at
 * most 1 KiB each, with their XML), an error, an upload's id. An object's own body is not
 * one of them (`get` and its callers bound that). Unbounded, a store that sent an endless
 * answer to a listing (or an error page without end) took 1.3 GB in five seconds.
 */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;
const MAX_SOCKETS = 64;

export function createS3Store(config: S3StoreConfig): ObjectStore {
  const { bucket, prefix, timeoutMs, maxAttempts } = config;
  checkPrefix(prefix);
  const agentOptions = { keepAlive: true, maxSockets: MAX_SOCKETS };
  function makeClient(): S3Client {
    const made = new S3Client({
      region: config.region,
      ...(config.endpoint === undefined ? {} : { endpoint: config.endpoint }),
      forcePathStyle: config.forcePathStyle,
      ...(config.credentials === undefined ? {} : { credentials: config.credentials }),
      maxAttempts,
      requestHandler: {
        connectionTimeout: Math.min(timeoutMs, 3000),
        socketTimeout: timeoutMs,
        httpAgent: new HttpAgent(agentOptions),
        httpsAgent: new HttpsAgent(agentOptions),
      },
      // Other stores often reject the newest default checksums (aws-chunked trailers); send them only where S3 requires them.
      ...(config.endpoint === undefined ? {} : { requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' }),
    });
    made.middlewareStack.add((next, context) => async (args) => {
      const result = await next(args);
      const response = result.response as { statusCode?: number; body?: unknown };
      // Placed inside the deserializer: the raw answer passes here before the SDK reads it.
      const objectBody = context.commandName === 'GetObjectCommand' && (response.statusCode ?? 0) < 300;
      if (!objectBody && response.body instanceof Readable) {
        response.body = capStream(response.body, MAX_ANSWER_BYTES, () => new StoreError(
          `object store answered unexpectedly (${String(context.commandName)}): an answer longer than ${MAX_ANSWER_BYTES} bytes`, String(context.commandName), undefined,
        ));
      }
      return result;
    }, { step: 'deserialize', priority: 'low', name: 'boundAnswers' });
    return made;
  }
  const client = makeClient();
  // Object bodies are read at their reader's pace (a slow client of a project document),
  // each holding its connection meanwhile: on sockets of their own, so that 64 of them read
  // slowly do not leave every other operation (an analyze's, a create's) waiting for one.
  const streamClient = makeClient();
  const localLock = createKeyedLock();
  const operationDeadlineMs = timeoutMs * maxAttempts + 1000;
  const perUpload = (UPLOAD_QUEUE + 1) * config.partSize;
  const uploadMemory = createMemoryGate(UPLOADS_IN_MEMORY * perUpload);

  const objectKey = (key: string): string => prefix + checkKey(key);
  const deadline = (): AbortSignal => AbortSignal.timeout(operationDeadlineMs);

  function infoOf(key: string, size: number | undefined, etag: string | undefined, lastModified: Date | undefined): ObjectInfo {
    return { key, size: size ?? 0, etag: normaliseEtag(etag), lastModified: lastModified?.getTime() ?? 0 };
  }

  let probe: Promise<Capabilities> | undefined;
  function capabilities(): Promise<Capabilities> {
    if (config.conditionalWrites !== 'auto') {
      const on = config.conditionalWrites === 'on';
      return Promise.resolve({ atomicCreate: on, atomicReplace: on });
    }
    probe ??= probeConditionalWrites().catch((error: unknown) => {
      probe = undefined; // an unreachable store is asked again next time
      throw error;
    });
    return probe;
  }

  /** Writes a probe object three times: plainly, with `If-None-Match: *`, and with a wrong `If-Match`. A store that honours them refuses the last two. */
  async function probeConditionalWrites(): Promise<Capabilities> {
    const Key = `${prefix}.conditional-write-probe-${randomBytes(8).toString('hex')}`;
    const refused = async (input: Partial<PutObjectCommandInput>): Promise<boolean> => {
      try {
        await client.send(new PutObjectCommand({ Bucket: bucket, Key, Body: 'probe', ...input }), { abortSignal: deadline() });
        return false;
      } catch (error) {
        if (isConditionFailure(error)) return true;
        if (s3Status(error) === 501 || s3Code(error) === 'NotImplemented') return false;
        throw error;
      }
    };
    try {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key, Body: 'probe' }), { abortSignal: deadline() });
      const atomicCreate = await refused({ IfNoneMatch: '*' });
      const atomicReplace = await refused({ IfMatch: '"0123456789abcdef0123456789abcdef"' });
      return { atomicCreate, atomicReplace };
    } catch (error) {
      throw fromS3Error(error, 'capabilities', undefined);
    } finally {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key }), { abortSignal: deadline() }).catch(() => {});
    }
  }

  async function head(key: string): Promise<ObjectInfo | undefined> {
    const Key = objectKey(key);
    try {
      const answer = await client.send(new HeadObjectCommand({ Bucket: bucket, Key }), { abortSignal: deadline() });
      return infoOf(key, answer.ContentLength, answer.ETag, answer.LastModified);
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw fromS3Error(error, 'head', key);
    }
  }

  async function openStream(operation: string, key: string, via: S3Client, signal?: AbortSignal): Promise<ObjectStream | undefined> {
    const Key = objectKey(key);
    try {
      const answer = await via.send(new GetObjectCommand({ Bucket: bucket, Key }), signal === undefined ? {} : { abortSignal: signal });
      const body = guardStream(answer.Body as Readable, (error) => fromS3Error(error, operation, key));
      return { ...infoOf(key, answer.ContentLength, answer.ETag, answer.LastModified), body };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw fromS3Error(error, operation, key);
    }
  }

  async function get(key: string, getOptions: { maxBytes?: number } = {}): Promise<StoredObject | undefined> {
    const started = Date.now();
    const object = await openStream('get', key, client, deadline());
    if (object === undefined) return undefined;
    const { body, ...info } = object;
    if (getOptions.maxBytes !== undefined && info.size > getOptions.maxBytes) {
      body.destroy();
      throw tooLargeError('get', key, info.size, getOptions.maxBytes);
    }
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => body.destroy(timeoutError('get', key, Date.now() - started)), Math.max(1, operationDeadlineMs - (Date.now() - started)));
    let received = 0;
    try {
      for await (const chunk of body) {
        // The length the store declared is not trusted: one that sent none, or less, is stopped here.
        received += (chunk as Buffer).length;
        if (getOptions.maxBytes !== undefined && received > getOptions.maxBytes) {
          body.destroy();
          throw tooLargeError('get', key, received, getOptions.maxBytes);
        }
        chunks.push(chunk as Buffer);
      }
    } finally {
      clearTimeout(timer);
    }
    return { ...info, body: Buffer.concat(chunks) };
  }

  function getStream(key: string): Promise<ObjectStream | undefined> {
    return openStream('getStream', key, streamClient);
  }

  /** Runs a conditional write: sent as is where the store decides conditions, else checked here first. */
  async function conditionally(operation: string, key: string, condition: WriteOptions, write: (native: Partial<PutObjectCommandInput>) => Promise<string | undefined>): Promise<WriteResult> {
    const conditional = condition.ifNoneMatch === '*' || condition.ifMatch !== undefined;
    const send = async (native: Partial<PutObjectCommandInput>): Promise<WriteResult> => {
      try {
        return { written: true, etag: normaliseEtag(await write(native)) };
      } catch (error) {
        if (conditional && isConditionFailure(error)) return { written: false };
        throw fromS3Error(error, operation, key);
      }
    };
    if (!conditional) return send({});
    const { atomicCreate, atomicReplace } = await capabilities();
    const native = condition.ifNoneMatch === '*' ? atomicCreate : atomicReplace;
    if (native) {
      return send(condition.ifNoneMatch === '*' ? { IfNoneMatch: '*' } : { IfMatch: quoteEtag(condition.ifMatch!) });
    }
    return localLock(key, async () => {
      const current = await head(key);
      if (condition.ifNoneMatch === '*' && current !== undefined) return { written: false };
      if (condition.ifMatch !== undefined && current?.etag !== normaliseEtag(condition.ifMatch)) return { written: false };
      return send({});
    });
  }

  async function put(key: string, body: Uint8Array | string, condition: WriteOptions = {}): Promise<WriteResult> {
    const Key = objectKey(key);
    const Body = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    return conditionally('put', key, condition, async (native) => {
      const answer = await client.send(new PutObjectCommand({ Bucket: bucket, Key, Body, ContentLength: Body.byteLength, ...native }), { abortSignal: deadline() });
      return answer.ETag;
    });
  }

  async function putFile(key: string, path: string, fileOptions: PutFileOptions = {}): Promise<WriteResult> {
    const Key = objectKey(key);
    let size: number;
    try {
      size = (await stat(path)).size;
    } catch (error) {
      throw new StoreError(`cannot read ${path} to upload it: ${(error as Error).message}`, 'putFile', key, { cause: error });
    }
    const result = await conditionally('putFile', key, fileOptions, async (native) => {
      // A small file is read whole, a large one a few parts at a time: that much memory is
      // taken from the store's share for uploads first, waiting (FIFO) while others hold it.
      // The wait has no deadline of its own: the uploads ahead take as long as their files do
      // (each of their requests bounded by S3_TIMEOUT_MS), and a fixed limit turned a few large
      // uploads at once on a healthy store into 503s.
      const releaseMemory = await uploadMemory.acquire(Math.min(size, perUpload));
      let body: ReturnType<typeof createReadStream> | undefined;
      let upload: Upload | undefined;
      try {
        body = createReadStream(path);
        upload = new Upload({
          client,
          params: { Bucket: bucket, Key, Body: body, ContentLength: size, ...native },
          partSize: config.partSize,
          queueSize: UPLOAD_QUEUE,
          // Aborted here rather than by lib-storage, which would throw the abort's error in place of the upload's.
          leavePartsOnError: true,
        });
        return (await upload.done()).ETag;
      } catch (error) {
        // A multipart upload is invisible until completed, so the key never holds part of it;
        // aborting frees its parts. If the store cannot be reached now, sweepIncomplete or the
        // bucket's lifecycle rule (AbortIncompleteMultipartUpload) frees them later.
        if (upload?.uploadId !== undefined) {
          await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key, UploadId: upload.uploadId }), { abortSignal: deadline() }).catch(() => {});
        }
        throw error;
      } finally {
        body?.destroy();
        releaseMemory();
      }
    });
    if (fileOptions.moveSource === true) await rm(path, { force: true });
    return result;
  }

  async function remove(key: string): Promise<void> {
    const Key = objectKey(key);
    try {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key }), { abortSignal: deadline() });
    } catch (error) {
      if (isNotFound(error)) return;
      throw fromS3Error(error, 'delete', key);
    }
  }

  async function list(listPrefix: string, listOptions: ListOptions = {}): Promise<ListPage> {
    checkPrefix(listPrefix);
    const limit = Math.max(1, Math.min(listOptions.limit ?? MAX_PAGE, MAX_PAGE));
    try {
      const answer = await client.send(new ListObjectsV2Command({
        Bucket: bucket,
        Prefix: prefix + listPrefix,
        MaxKeys: limit,
        ...(listOptions.cursor === undefined ? {} : { ContinuationToken: listOptions.cursor }),
      }), { abortSignal: deadline() });
      const objects = (answer.Contents ?? [])
        .filter((object) => object.Key?.startsWith(prefix + listPrefix) === true)
        .map((object) => infoOf(object.Key!.slice(prefix.length), object.Size, object.ETag, object.LastModified));
      if (answer.IsTruncated !== true) return { objects };
      // More to list but no way to ask for it: taken as the end, the keys after this page would look absent.
      if (answer.NextContinuationToken === undefined || answer.NextContinuationToken === '') {
        throw new StoreError(`object store answered unexpectedly (list ${listPrefix}): a truncated listing without a continuation token`, 'list', listPrefix);
      }
      return { objects, cursor: answer.NextContinuationToken };
    } catch (error) {
      throw fromS3Error(error, 'list', listPrefix);
    }
  }

  function check(): Promise<Reachability> {
    // Listing proves the bucket, the credentials and the network, with the least permission (s3:ListBucket on the prefix).
    return measureReachability(
      () => client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, MaxKeys: 1 }), { abortSignal: AbortSignal.timeout(timeoutMs) }),
      (error) => fromS3Error(error, 'check', undefined),
    );
  }

  async function sweepIncomplete(olderThanMs: number): Promise<number> {
    const cutoff = Date.now() - olderThanMs;
    let aborted = 0;
    let KeyMarker: string | undefined;
    let UploadIdMarker: string | undefined;
    try {
      for (;;) {
        const answer = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix, KeyMarker, UploadIdMarker }), { abortSignal: deadline() });
        for (const upload of answer.Uploads ?? []) {
          if (upload.Key === undefined || upload.UploadId === undefined || (upload.Initiated?.getTime() ?? 0) >= cutoff) continue;
          try {
            await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: upload.Key, UploadId: upload.UploadId }), { abortSignal: deadline() });
            aborted++;
          } catch (error) {
            // Completed or aborted since the listing (its own putFile, a lifecycle rule): nothing left to free.
            if (s3Code(error) !== 'NoSuchUpload') throw error;
          }
        }
        if (answer.IsTruncated !== true) return aborted;
        // A page must lead on: markers missing (the listing would start over) or given back
        // unchanged kept this loop, and the start-up and every sweep after it, going for ever.
        if ((answer.NextKeyMarker ?? '') === '' || (answer.NextKeyMarker === KeyMarker && answer.NextUploadIdMarker === UploadIdMarker)) {
          throw new StoreError('object store answered unexpectedly (sweepIncomplete): a truncated listing of uploads that does not lead on', 'sweepIncomplete', undefined);
        }
        KeyMarker = answer.NextKeyMarker;
        UploadIdMarker = answer.NextUploadIdMarker;
      }
    } catch (error) {
      // Stores that cannot list uploads (s3rver) rely on the bucket's lifecycle rule instead.
      if (s3Status(error) === 501 || s3Code(error) === 'NotImplemented') return aborted;
      throw fromS3Error(error, 'sweepIncomplete', undefined);
    }
  }

  return {
    kind: 's3',
    location: `s3://${bucket}/${prefix}${config.endpoint === undefined ? '' : ` at ${config.endpoint}`}`,
    capabilities,
    head,
    get,
    getStream,
    put,
    putFile,
    delete: remove,
    list,
    check,
    sweepIncomplete,
    close: async () => {
      client.destroy();
      streamClient.destroy();
    },
  };
}

/**
 * Bytes handed out up to `limit`, first come first served: a request waits until what it
 * asks for fits beside what is held (or nothing is held: one larger than the limit runs
 * alone). Later requests wait behind an earlier one, so a large upload is not passed over
 * for ever by small ones.
 */
function createMemoryGate(limit: number): { acquire(bytes: number): Promise<() => void> } {
  let used = 0;
  const waiting: { bytes: number; grant: () => void }[] = [];
  const fits = (bytes: number): boolean => used === 0 || used + bytes <= limit;
  const take = (bytes: number): (() => void) => {
    used += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      used -= bytes;
      while (waiting.length > 0 && fits(waiting[0]!.bytes)) waiting.shift()!.grant();
    };
  };
  return {
    acquire(bytes) {
      if (waiting.length === 0 && fits(bytes)) return Promise.resolve(take(bytes));
      return new Promise((resolve) => waiting.push({ bytes, grant: () => resolve(take(bytes)) }));
    },
  };
}

function isNotFound(error: unknown): boolean {
  const code = s3Code(error);
  return code === 'NoSuchKey' || code === 'NotFound' || (s3Status(error) === 404 && code !== 'NoSuchBucket');
}

/**
 * 412 (the condition did not hold), 409 (a concurrent conditional write won) or 404 (If-Match
 * on a missing key). Not a 404 for the bucket, nor for the multipart upload itself: a
 * completion whose answer was lost is sent again and finds its upload gone (NoSuchUpload),
 * which says nothing of the condition; taken as one, the write was reported as another's.
 */
function isConditionFailure(error: unknown): boolean {
  const status = s3Status(error);
  const code = s3Code(error);
  return status === 412 || code === 'PreconditionFailed' || status === 409 || code === 'ConditionalRequestConflict'
    || (status === 404 && code !== 'NoSuchBucket' && code !== 'NoSuchUpload');
}

function normaliseEtag(etag: string | undefined): string {
  return (etag ?? '').replace(/^W\//, '').replace(/^"|"$/g, '');
}

function quoteEtag(etag: string): string {
  return `"${normaliseEtag(etag)}"`;
}
