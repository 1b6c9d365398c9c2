/**
 * The child process `s3-server.ts` runs s3rver in (so a test can kill it like a crashed
 * store). Node runs it with `--openssl-legacy-provider`: s3rver 3.7.1 encrypts its list
 * continuation tokens with DES, which OpenSSL 3 refuses otherwise (every truncated listing
 * would answer 500).
 *
 * One fix to s3rver itself: it walks its folders in the order they read back (hash order
 * on ext4) yet pages by key comparison, so a paged listing skips keys. S3 lists in bytewise
 * key order; the walk is replaced by one in that order (objects are files
 * `<name>._S3rver_object` beside folders `<name>/`).
 *
 * argv: directory, port (0: any), bucket. Sends {port} when listening, then {request}
 * per request when REPORT_REQUESTS=1. Exits when the parent goes.
 */
import { readdirSync, statSync } from 'node:fs';
import type { IncomingMessage, Server } from 'node:http';
import { createRequire } from 'node:module';
import type S3rverClass from 's3rver';

const require = createRequire(import.meta.url);
type Walk = (dir: string, recurseFilter?: (path: string) => boolean) => Generator<string>;
const s3rverUtils = require('s3rver/lib/utils.js') as { walk: Walk };
s3rverUtils.walk = function* walkInKeyOrder(dir, recurseFilter): Generator<string> {
  const entries = readdirSync(dir).map((name) => {
    const path = `${dir}/${name}`;
    const folder = statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
    const suffix = name.indexOf('._S3rver_');
    return { path, folder, order: folder ? `${name}/` : suffix === -1 ? name : name.slice(0, suffix) };
  });
  entries.sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0));
  for (const entry of entries) {
    if (!entry.folder) yield entry.path;
    else if (recurseFilter === undefined || recurseFilter(entry.path)) yield* walkInKeyOrder(entry.path, recurseFilter);
  }
};
// Loaded after the fix: its store module takes `walk` when it loads.
const S3rver = require('s3rver') as typeof S3rverClass;

const [directory = '', port = '0', bucket = 'rbxl-test'] = process.argv.slice(2);
const server = new S3rver({ address: '127.0.0.1', port: Number(port), silent: true, directory, configureBuckets: [{ name: bucket, configs: [] }] });
const address = await server.run();
if (process.env.REPORT_REQUESTS === '1') {
  (server as unknown as { httpServer: Server }).httpServer.on('request', (request: IncomingMessage) => {
    process.send?.({ request: `${request.method} ${request.url}` });
  });
}
process.on('disconnect', () => process.exit(0));
process.send?.({ port: address.port });
