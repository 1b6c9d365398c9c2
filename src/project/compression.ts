/**
 * How project documents are stored: Brotli, at a quality chosen by the upload's size.
 * Quality 1, the fastest setting that still finds long matches, for maps over 64 KiB:
 * their documents are 2–12× the upload and quality 1 stores them at 0.3–1.2× the
 * upload (2.1× on the 200k-part generated place) at 250–300 MB/s, about twice as fast
 * as gzip level 1. Quality 5 costs 4–8× as much (10 ms on a 230 KB document, 230 ms on
 * booga's 9.5 MB) for 15–20% less. Tiny maps, up to 64 KiB, get quality 5: a 2006
 * place of 24 KB expands to a 1.5 MB document (its surface joints are computed), which
 * quality 1 stores at 3.7× the upload and quality 5 at 2.5×, in about 11 ms
 * (README, "The project document"). The window is 256 KiB (lgwin 18), not Brotli's
 * 4 MiB: it changes the stored size by 0–2% (slime-defense's 0.53× becomes 0.66×) and
 * is up to 13% faster, and every reader decompressing a document (a client that does
 * not take `br`) holds a window of that size: 4.2 MB each before.
 * Compression runs on a thread of its own, beside the worker thread writing the JSON
 * (compress-thread.ts, fed by json-stream.ts `pumpChunks`): it takes up to
 * COMPRESSOR_BUFFER_BYTES of JSON before it pushes back, so the writer does not wait for
 * a chunk's compression, nor the compression for the writer.
 */
import type { TransformOptions } from 'node:stream';
import { constants, createBrotliCompress, createBrotliDecompress, type BrotliCompress, type BrotliDecompress, type BrotliOptions } from 'node:zlib';

/** The `Content-Encoding` of a stored document. */
export const DOCUMENT_ENCODING = 'br';

/** Brotli window bits of stored documents (README, "The project document"). */
export const DOCUMENT_WINDOW_BITS = 18;

/** Uploads up to this size get the slower, tighter quality. */
export const SMALL_MAP_BYTES = 64 * 1024;

/** Brotli quality (0–11) of the document of a map of `fileBytes` bytes. */
export function documentQuality(fileBytes: number): number {
  return fileBytes <= SMALL_MAP_BYTES ? 5 : 1;
}

/** JSON a document's compressor holds before it pushes back, and the size of its output pieces. */
export const COMPRESSOR_BUFFER_BYTES = 4 << 20;
const COMPRESSED_PIECE_BYTES = 256 << 10;

/** A Brotli stream for the document of a map of `fileBytes` bytes. */
export function documentCompressor(fileBytes: number): BrotliCompress {
  // zlib streams take a stream's highWaterMark, though BrotliOptions does not list it.
  const options: BrotliOptions & TransformOptions = {
    highWaterMark: COMPRESSOR_BUFFER_BYTES,
    chunkSize: COMPRESSED_PIECE_BYTES,
    params: {
      [constants.BROTLI_PARAM_QUALITY]: documentQuality(fileBytes),
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_LGWIN]: DOCUMENT_WINDOW_BITS,
    },
  };
  return createBrotliCompress(options);
}

export function documentDecompressor(): BrotliDecompress {
  return createBrotliDecompress();
}

/**
 * Whether an `Accept-Encoding` header value accepts the stored encoding: named with a
 * q above 0, or not named and `*` accepted (RFC 9110 12.5.3: `*` stands only for codings
 * the header does not name, so `br;q=0, *` refuses it).
 */
export function acceptsDocumentEncoding(acceptEncoding: string): boolean {
  let named: boolean | undefined;
  let any: boolean | undefined;
  for (const part of acceptEncoding.split(',')) {
    const [name = '', ...parameters] = part.toLowerCase().split(';');
    const coding = name.trim(); // white space may stand before the `;` (RFC 9110 5.6.6)
    if (coding !== DOCUMENT_ENCODING && coding !== '*') continue;
    // `q = 0` breaks the grammar (no white space around `=`), but it says no: read it as q=0, as lenient parsers do.
    const q = parameters.map((p) => p.split('=')).find(([key]) => key!.trim() === 'q');
    const accepted = q === undefined || Number(q[1]?.trim() ?? '') > 0;
    if (coding === DOCUMENT_ENCODING) named = (named ?? false) || accepted;
    else any = (any ?? false) || accepted;
  }
  return named ?? any ?? false;
}
