/**
 * What `analyze` accepts, the part's file name, and the multipart body built by hand for
 * the one path that needs it: streaming the upload in Node to count bytes sent.
 */

/** A Blob or File, or a Blob with a name beside it (Node's openAsBlob gives nameless Blobs). */
export type Upload = Blob | { name?: string; data: Blob };

export const FALLBACK_FILE_NAME = 'upload.rbxl';

export function uploadBlob(upload: Upload): Blob {
  return isNamedData(upload) ? upload.data : upload;
}

/** The file's own name, or the contract's fallback `upload.rbxl` when it has none. */
export function uploadName(upload: Upload): string {
  const name = isNamedData(upload) ? upload.name : (upload as { name?: unknown }).name;
  return typeof name === 'string' && name !== '' ? name : FALLBACK_FILE_NAME;
}

function isNamedData(upload: Upload): upload is { name?: string; data: Blob } {
  return !(upload instanceof Blob) && typeof upload === 'object' && upload !== null && 'data' in upload;
}

export interface MultipartBody {
  /** The whole body; its parts reference the file, they do not copy it. */
  body: Blob;
  contentType: string;
}

/** `multipart/form-data` with one part, `file`, encoded as browsers encode FormData. */
export function multipartBody(field: string, name: string, data: Blob): MultipartBody {
  const boundary = `----rbxl-import-${randomHex(16)}`;
  const head =
    `--${boundary}\r\n` +
    `Content-Disposition: form-data; name="${escapeQuoted(field)}"; filename="${escapeQuoted(name)}"\r\n` +
    `Content-Type: ${data.type || 'application/octet-stream'}\r\n\r\n`;
  const tail = `\r\n--${boundary}--\r\n`;
  const encoder = new TextEncoder();
  return {
    body: new Blob([encoder.encode(head), data, encoder.encode(tail)]),
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

// The HTML form encoding: line breaks and quotes become percent escapes; the rest is UTF-8.
function escapeQuoted(value: string): string {
  return value.replace(/\r/g, '%0D').replace(/\n/g, '%0A').replace(/"/g, '%22');
}

function randomHex(bytes: number): string {
  const buffer = new Uint8Array(bytes);
  crypto.getRandomValues(buffer);
  return Array.from(buffer, (byte) => byte.toString(16).padStart(2, '0')).join('');
}
