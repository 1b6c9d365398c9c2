/**
 * How project documents are stored: Brotli. Quality 1, the fastest setting, for maps
 * over 1 MiB: on the 200k-part generated place it compresses about twice as fast as
 * gzip level 1, and smaller. Small maps get quality 5: a 2006 place of 24 KB expands
 * to a 1.5 MB document (its joints are computed), which quality 1 stores at 3.7× the
 * upload and quality 5 at 2.5×, in about 40 ms (README, "The project document").
 * Compression runs in libuv's thread pool, beside the worker thread writing the JSON.
 */
import { constants, createBrotliCompress, createBrotliDecompress, type BrotliCompress, type BrotliDecompress } from 'node:zlib';

/** The `Content-Encoding` of a stored document. */
export const DOCUMENT_ENCODING = 'br';

/** Uploads up to this size get the slower, tighter quality. */
export const SMALL_MAP_BYTES = 1 << 20;

/** Brotli quality (0–11) of the document of a map of `fileBytes` bytes. */
export function documentQuality(fileBytes: number): number {
  return fileBytes <= SMALL_MAP_BYTES ? 5 : 1;
}

/** A Brotli stream for the document of a map of `fileBytes` bytes. */
export function documentCompressor(fileBytes: number): BrotliCompress {
  return createBrotliCompress({
    params: {
      [constants.BROTLI_PARAM_QUALITY]: documentQuality(fileBytes),
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
    },
  });
}

export function documentDecompressor(): BrotliDecompress {
  return createBrotliDecompress();
}

/** Whether an `Accept-Encoding` header value accepts the stored encoding (a q of 0 refuses it). */
export function acceptsDocumentEncoding(acceptEncoding: string): boolean {
  for (const part of acceptEncoding.split(',')) {
    const [coding, ...parameters] = part.trim().toLowerCase().split(';');
    if (coding !== DOCUMENT_ENCODING && coding !== '*') continue;
    const q = parameters.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (q === undefined || Number(q.slice(2)) > 0) return true;
  }
  return false;
}
