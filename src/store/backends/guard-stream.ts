/** A readable that passes `source` through and fails with the store's own error class, whatever broke underneath. */
import { PassThrough, type Readable } from 'node:stream';

export function guardStream(source: Readable, mapError: (error: unknown) => Error): Readable {
  const out = new PassThrough();
  source.once('error', (error) => out.destroy(mapError(error)));
  // A body cut short without an error event (a closed socket on some Node versions).
  source.once('close', () => {
    if (!source.readableEnded && !out.destroyed) out.destroy(mapError(Object.assign(new Error('the body ended early (premature close)'), { code: 'ERR_STREAM_PREMATURE_CLOSE' })));
  });
  out.once('close', () => {
    if (!source.destroyed) source.destroy();
  });
  source.pipe(out);
  return out;
}
