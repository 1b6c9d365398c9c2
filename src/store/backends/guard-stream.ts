/** A readable that passes `source` through and fails with the store's own error class, whatever broke underneath. */
import { PassThrough, Transform, type Readable } from 'node:stream';

export function guardStream(source: Readable, mapError: (error: unknown) => Error): Readable {
  const out = new PassThrough();
  // A body cut short (a closed socket, an idle timeout) errors the source: Node's HTTP client
  // destroys a response with ECONNRESET "aborted" when its connection ends before its length.
  source.once('error', (error) => out.destroy(mapError(error)));
  out.once('close', () => {
    if (!source.destroyed) source.destroy();
  });
  source.pipe(out);
  return out;
}

/**
 * A readable that passes `source` through up to `maxBytes`, and fails with `tooLarge()`
 * (destroying the source, which closes its connection) at the first byte past them.
 */
export function capStream(source: Readable, maxBytes: number, tooLarge: () => Error): Readable {
  let received = 0;
  const out = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      received += chunk.length;
      if (received > maxBytes) {
        done(tooLarge());
        return;
      }
      done(null, chunk);
    },
  });
  source.once('error', (error) => out.destroy(error));
  out.once('close', () => {
    if (!source.destroyed) source.destroy();
  });
  source.pipe(out);
  return out;
}
