/**
 * A loopback proxy in front of the test S3 server (s3rver), for what s3rver does not do
 * as S3 does:
 *
 * - Requests for one object are served one at a time (a GET until its body is sent). S3
 *   replaces an object atomically, so a read sees the old or the new bytes; s3rver writes
 *   over the file a concurrent read is streaming, which tears the read.
 * - `conditional: true` decides `If-None-Match: *` and `If-Match` on a PUT (or a multipart
 *   completion) as S3 does since 2024: checked against the object (a HEAD to the server)
 *   and refused with 412 when it does not hold. With `false` the headers reach s3rver,
 *   which ignores them, as some S3-compatible stores do. Requests go through byte for
 *   byte, so their signatures stay valid.
 * - `s3rver` given: the multipart calls s3rver lacks, answered from its folder:
 *   AbortMultipartUpload (removes the upload's parts) and ListMultipartUploads.
 * - `fault(...)` makes matching requests fail: a 500/503 answer, a reset connection, or an
 *   answer whose body stalls after its first bytes; or holds them unanswered until
 *   `releaseHeld()` forwards them; or (`endless_list`, for a ListObjectsV2 request) answers
 *   the same truncated page, one key under the asked prefix and the same continuation
 *   token, however often it is asked: a store whose listing never ends.
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

export type FaultAction = 'server_error' | 'slow_down' | 'reset' | 'stall' | 'hold' | 'endless_list';

export interface S3Proxy {
  endpoint: string;
  /** Requests seen, as `METHOD path?query`. */
  requests: string[];
  /** The next `times` requests matching `pattern` (against `METHOD path?query`) fail with `action`. */
  fault(pattern: RegExp, action: FaultAction, times?: number): void;
  clearFaults(): void;
  /** Requests held by a `hold` fault, as `METHOD path?query`. */
  held(): string[];
  /** Forwards the requests held so far. */
  releaseHeld(): void;
  close(): Promise<void>;
}

interface Fault {
  pattern: RegExp;
  action: FaultAction;
  left: number;
}

export interface S3ProxyOptions {
  conditional: boolean;
  /** s3rver's folder and bucket, to answer the multipart calls it lacks. */
  s3rver?: { directory: string; bucket: string };
}

/** Where s3rver keeps the parts of multipart uploads in progress (one folder per upload id). */
export function s3rverUploadsDir(directory: string, bucket: string): string {
  return join(directory, bucket, '._S3rver_uploads');
}

export async function startS3Proxy(upstreamPort: number, options: S3ProxyOptions): Promise<S3Proxy> {
  const faults: Fault[] = [];
  const requests: string[] = [];
  const keyLocks = new Map<string, Promise<void>>();
  const stalled = new Set<ServerResponse>();
  const holding: { line: string; forward: () => void }[] = [];

  function errorXml(res: ServerResponse, status: number, code: string, message: string): void {
    const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`;
    res.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  }

  function forward(req: IncomingMessage, res: ServerResponse, stall: boolean): Promise<void> {
    return new Promise((resolve) => {
      const upstream = httpRequest({ host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        if (stall) {
          answer.once('data', (chunk: Buffer) => {
            res.write(chunk.subarray(0, Math.min(chunk.length, 1024)));
            stalled.add(res);
            answer.destroy(); // nothing more is sent, and the connection stays open
            resolve();
          });
          return;
        }
        answer.pipe(res);
        answer.once('end', () => resolve());
        answer.once('error', () => resolve());
      });
      upstream.once('error', () => {
        if (!res.headersSent) errorXml(res, 503, 'ServiceUnavailable', 'upstream unreachable');
        else res.destroy();
        resolve();
      });
      req.pipe(upstream);
    });
  }

  /** The object's ETag (unquoted) or undefined, asked of the server without credentials (s3rver allows that). */
  function headEtag(path: string): Promise<string | undefined> {
    return new Promise((resolve, reject) => {
      const head = httpRequest({ host: '127.0.0.1', port: upstreamPort, method: 'HEAD', path }, (answer) => {
        answer.resume();
        const etag = answer.headers.etag;
        resolve(answer.statusCode === 200 && etag !== undefined ? etag.replace(/"/g, '') : undefined);
      });
      head.once('error', reject);
      head.end();
    });
  }

  /** Serves one request of the object at `path` at a time, checking a write's condition first when deciding them. */
  async function serialised(req: IncomingMessage, res: ServerResponse, path: string, checkCondition: boolean): Promise<void> {
    const previous = keyLocks.get(path) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => mine);
    keyLocks.set(path, tail);
    await previous;
    try {
      if (checkCondition) {
        const etag = await headEtag(path);
        const noneMatch = req.headers['if-none-match'];
        const match = req.headers['if-match'];
        const missing = match !== undefined && etag === undefined;
        if ((noneMatch === '*' && etag !== undefined) || missing || (match !== undefined && match.replace(/"/g, '') !== etag)) {
          req.resume();
          errorXml(res, missing ? 404 : 412, missing ? 'NoSuchKey' : 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold');
          return;
        }
      }
      await forward(req, res, false);
    } catch {
      if (!res.headersSent) errorXml(res, 503, 'ServiceUnavailable', 'upstream unreachable');
    } finally {
      release();
      if (keyLocks.get(path) === tail) keyLocks.delete(path);
    }
  }

  async function abortUpload(s3rver: { directory: string; bucket: string }, uploadId: string, res: ServerResponse): Promise<void> {
    if (!/^[0-9a-f]+$/.test(uploadId)) return errorXml(res, 404, 'NoSuchUpload', 'no such upload');
    await rm(join(s3rverUploadsDir(s3rver.directory, s3rver.bucket), uploadId), { recursive: true, force: true });
    res.writeHead(204).end();
  }

  async function listUploads(s3rver: { directory: string; bucket: string }, prefix: string, res: ServerResponse): Promise<void> {
    const dir = s3rverUploadsDir(s3rver.directory, s3rver.bucket);
    const ids = await readdir(dir).catch(() => [] as string[]);
    let uploads = '';
    for (const id of ids) {
      const key = await readFile(join(dir, id, 'key'), 'utf8').catch(() => undefined);
      const info = await stat(join(dir, id)).catch(() => undefined);
      if (key === undefined || info === undefined || !key.startsWith(prefix)) continue;
      uploads += `<Upload><Key>${key}</Key><UploadId>${id}</UploadId><Initiated>${info.mtime.toISOString()}</Initiated></Upload>`;
    }
    const body = `<?xml version="1.0" encoding="UTF-8"?>\n<ListMultipartUploadsResult><Bucket>${s3rver.bucket}</Bucket><IsTruncated>false</IsTruncated>${uploads}</ListMultipartUploadsResult>`;
    res.writeHead(200, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) }).end(body);
  }

  const server = createServer((req, res) => {
    const line = `${req.method} ${req.url}`;
    requests.push(line);
    const fault = faults.find((candidate) => candidate.left > 0 && candidate.pattern.test(line));
    if (fault !== undefined) {
      fault.left--;
      if (fault.action === 'reset') {
        req.socket.destroy();
        return;
      }
      if (fault.action === 'hold') {
        holding.push({ line, forward: () => dispatch(req, res) });
        return;
      }
      if (fault.action === 'endless_list') {
        req.resume();
        const prefix = new URL(req.url ?? '/', 'http://proxy').searchParams.get('prefix') ?? '';
        const body = `<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult><Name>rbxl-test</Name><Prefix>${prefix}</Prefix><KeyCount>1</KeyCount><MaxKeys>1000</MaxKeys>`
          + `<IsTruncated>true</IsTruncated><NextContinuationToken>again</NextContinuationToken><Contents><Key>${prefix}again</Key>`
          + `<LastModified>${new Date(0).toISOString()}</LastModified><ETag>"0"</ETag><Size>0</Size></Contents></ListBucketResult>`;
        req.once('end', () => res.writeHead(200, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) }).end(body));
        return;
      }
      if (fault.action !== 'stall') {
        req.resume();
        req.once('end', () => errorXml(res, fault.action === 'slow_down' ? 503 : 500, fault.action === 'slow_down' ? 'SlowDown' : 'InternalError', 'injected by the test'));
        return;
      }
      void forward(req, res, true);
      return;
    }
    dispatch(req, res);
  });

  /** A request as S3 would take it: s3rver's missing multipart calls, one at a time per object, conditions decided. */
  function dispatch(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://proxy');
    if (options.s3rver !== undefined && req.method === 'DELETE' && url.searchParams.has('uploadId')) {
      void abortUpload(options.s3rver, url.searchParams.get('uploadId') ?? '', res);
      return;
    }
    if (options.s3rver !== undefined && req.method === 'GET' && url.searchParams.has('uploads')) {
      void listUploads(options.s3rver, url.searchParams.get('prefix') ?? '', res);
      return;
    }
    const object = url.pathname.split('/').filter(Boolean).length >= 2 && !url.searchParams.has('partNumber') && !url.searchParams.has('uploads');
    if (!object) {
      void forward(req, res, false);
      return;
    }
    const write = req.method === 'PUT' || (req.method === 'POST' && url.searchParams.has('uploadId'));
    const conditional = req.headers['if-none-match'] !== undefined || req.headers['if-match'] !== undefined;
    void serialised(req, res, url.pathname, options.conditional && write && conditional);
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    fault: (pattern, action, times = 1) => {
      faults.push({ pattern, action, left: times });
    },
    clearFaults: () => {
      faults.length = 0;
    },
    held: () => holding.map((request) => request.line),
    releaseHeld: () => {
      for (const request of holding.splice(0)) request.forward();
    },
    close: async () => {
      for (const res of stalled) res.destroy();
      for (const request of holding.splice(0)) request.forward();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
