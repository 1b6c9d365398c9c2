/**
 * What a failure means to the person who met it: one sentence saying what happened and
 * one saying what to do, from the client's error (its status and the service's
 * `{"error": {"code", "message"}}`), with the raw answer kept for a "details" view. The
 * client's own messages stay the contract's (`analyze failed (<status>): <body>`); this
 * only reads them. Also what each asset failure reason asks of the person or operator.
 * Pure functions: the import page, the project page and the CLI share them.
 */

import { UNSENT } from './errors.js';

export interface Failure {
  /** What happened, as a sentence. */
  message: string;
  /** What to do about it, as a sentence ('' when nothing can be done but waiting). */
  action: string;
  /** The service's error code, when it answered with one. */
  code: string | null;
  /** HTTP status; 0 when no answer arrived. */
  status: number;
  /** The raw answer: the client's message, which carries the status and the body as sent. */
  details: string;
}

type Advice = { message: string; action: string } | ((detail: string, operation: string) => { message: string; action: string });

/** Per service error code. `detail` is the service's own message (it names limits, chunks and offsets). */
const BY_CODE: Record<string, Advice> = {
  unauthorized: {
    message: 'The service does not know who you are.',
    action: 'Sign in (on a development service, use the development sign-in; behind a gateway, sign in to the platform) and try again.',
  },
  invalid_user: (detail) => ({
    message: `The service cannot use your user id: ${detail}.`,
    action: 'Sign in again with an id of at most 256 letters, digits, punctuation and spaces, in plain ASCII.',
  }),
  // The decoder's own words (chunk, byte offset) stay in the details: they help a developer, not a first try.
  // A map that stops early is named as such: "not a Roblox map" sent people looking for another file
  // when theirs was only copied or downloaded in part.
  not_a_place: (detail) => TRUNCATED.test(detail)
    ? {
      message: 'This map file is cut short: it ends before the map does.',
      action: 'It was probably not copied or downloaded completely. Copy it again, or save it again from Roblox Studio, and upload that copy.',
    }
    : {
      message: 'This file is not a Roblox map the importer can read.',
      action: 'Choose a .rbxl, .rbxlx, .rbxm or .rbxmx file saved by Roblox Studio. If Studio opens it, save it again from Studio and upload that copy.',
    },
  map_too_large: (detail) => ({
    message: `This map is larger than this service can take (${detail}).`,
    action: 'Remove what the game does not need (unused models, terrain far from play) and save a smaller copy, or ask the operator to raise MAX_MEMORY_MB.',
  }),
  payload_too_large: (detail) => ({
    message: `The file is larger than this service accepts (${detail}).`,
    action: 'Save a smaller copy of the map, or ask the operator to raise MAX_UPLOAD_BYTES.',
  }),
  not_found: (_detail, operation) => operation === 'create'
    ? {
      message: 'The analysis of this map is no longer on the service (analyses expire, and a restarted service may have swept it).',
      action: 'Upload the map again, then create the project.',
    }
    : { message: 'The service has no such project for you.', action: 'Check the address, or import the map again.' },
  busy: { message: 'The service is busy with other maps right now.', action: 'Try again in a few seconds.' },
  shutting_down: { message: 'The service is restarting.', action: 'Try again in a few seconds.' },
  // The object store is down or throttling (503 with Retry-After): nothing was half-saved, and it passes.
  store_unavailable: { message: 'The service cannot reach its storage right now.', action: 'Try again in a few seconds; nothing was half-saved. If it lasts, tell the operator.' },
  storage_full: { message: 'The service has run out of room to store maps.', action: 'Try again later; if it keeps happening, tell the operator (MAX_DATA_BYTES or the disk).' },
  quota_exceeded: (detail) => ({
    message: `You have used up your share of the service (${detail}).`,
    action: 'Delete projects you no longer need (each project page has a Delete button), or wait for old analyses to expire.',
  }),
  missing_file: { message: 'The upload had no file in it.', action: 'Choose a map file and upload again.' },
  unsupported_media_type: { message: 'The request was not sent the way the service expects.', action: 'Use the import page or the rbxl-import command, which send it correctly.' },
  length_required: { message: 'The upload was sent without its size.', action: 'Use the import page or the rbxl-import command.' },
  create_id_in_use: { message: 'A project is already being created under the same progress id.', action: 'Wait for it to finish, or reload the page.' },
  internal: { message: 'The service failed on its side.', action: 'Try again; if it happens again, tell the operator (the service logged the error).' },
};

/** The decoder's messages for a file that stops early (src/parser/header.ts, chunk.ts, xml/). */
const TRUNCATED = /\bfile ends (?:without|inside)\b|but the file has \d+ left|\bdocument ends before\b/;

const MALFORMED_UPLOAD = new Set(['malformed_multipart', 'invalid_boundary', 'header_too_large', 'too_many_parts', 'field_too_large', 'bad_content_length']);
const BAD_CREATE = new Set(['invalid_json', 'invalid_body', 'missing_preview_hash', 'invalid_preview_hash', 'invalid_title', 'invalid_scripts_mode', 'invalid_create_id']);

/**
 * Reads a failure of `operation` ('analyze', 'create', 'project', ...). Anything thrown
 * works: a ClientError (status, body), an AbortError, or any Error.
 */
export function describeFailure(error: unknown, operation = 'request'): Failure {
  const details = error instanceof Error ? error.message : String(error);
  const status = typeof (error as { status?: unknown })?.status === 'number' ? (error as { status: number }).status : -1;
  const body = typeof (error as { body?: unknown })?.body === 'string' ? (error as { body: string }).body : '';
  const { code, message: serviceMessage } = serviceError(body);
  const failure = (message: string, action: string): Failure => ({ message, action, code, status: Math.max(status, 0), details });

  if ((error as { name?: unknown })?.name === 'AbortError') return failure('Stopped.', '');
  if ((error as { name?: unknown })?.name === 'TimeoutError') return failure('Stopped: it took longer than allowed.', 'Try again; a large map may need more time.');
  if (status === 0) {
    return failure('The service could not be reached.', 'Check that it is running and that the address is right, then try again.');
  }
  if (status === UNSENT) {
    return failure('The file changed or was removed while it was being sent.', 'Wait until it is saved (or copied) completely, then import it again.');
  }
  if (status < 0) return failure(details, 'Try again; if it happens again, tell the operator.');
  if (code !== null) {
    // The code is the service's text: only the table's own entries count (`constructor` is not advice).
    const advice = Object.hasOwn(BY_CODE, code) ? BY_CODE[code] : undefined;
    if (advice) {
      const { message, action } = typeof advice === 'function' ? advice(serviceMessage, operation) : advice;
      return failure(message, action);
    }
    if (MALFORMED_UPLOAD.has(code)) {
      return failure(`The upload arrived damaged (${serviceMessage}).`, 'Upload the file again; if it keeps failing, check the network between you and the service.');
    }
    if (BAD_CREATE.has(code)) return failure(`The service refused the request: ${serviceMessage}.`, 'Correct it and try again.');
    return failure(`The service refused the request (${code}): ${serviceMessage}.`, 'Try again; if it happens again, tell the operator.');
  }
  if (status >= 200 && status < 300) return failure('The service answered, but not as this client expects.', 'Check that the address is rbxl-import\'s; if it is, tell the operator.');
  if (status >= 300 && status < 400) {
    return failure(`The service's address answers with a redirect (${status}).`, 'Use the address it redirects to (for example https:// rather than http://) as the service\'s address.');
  }
  if (status >= 500) return failure(`The service answered with an error (${status}).`, 'Try again in a moment; if it keeps happening, tell the operator.');
  if (status === 401 || status === 403) return failure('You are not allowed to do this.', 'Sign in and try again.');
  if (status === 404) return failure('The service does not have this (404).', 'Check the address the page or command uses.');
  return failure(`The service refused the request (${status}).`, 'Try again; if it happens again, tell the operator.');
}

function serviceError(body: string): { code: string | null; message: string } {
  try {
    const parsed = JSON.parse(body) as { error?: { code?: unknown; message?: unknown } };
    const code = parsed?.error?.code;
    const message = parsed?.error?.message;
    if (typeof code === 'string') return { code, message: typeof message === 'string' ? message.replace(/\.$/, '') : '' };
  } catch {
    // not the service's JSON: a proxy's page or nothing
  }
  return { code: null, message: '' };
}

export interface AssetReasonAdvice {
  /** What happened to these assets, for a heading ("No credentials for the asset service"). */
  label: string;
  /** What to do about it. */
  action: string;
  /** Who can act: the person importing, or the service's operator. */
  who: 'you' | 'operator' | 'nobody';
}

/** Every reason the create answer's `asset_failures` can carry (README, "HTTP API"). */
export const ASSET_REASONS: Record<string, AssetReasonAdvice> = {
  no_credentials: {
    label: 'Not downloaded: the service has no key for the Roblox asset API',
    action: 'The operator sets ASSET_API_KEY (an Open Cloud API key with asset read access), or ASSET_URL_TEMPLATE for a mirror, restarts the service, and you import the map again.',
    who: 'operator',
  },
  unauthorized: {
    label: 'Refused: the asset API did not accept the service\'s key',
    action: 'The operator checks ASSET_API_KEY: it may be mistyped, expired or revoked.',
    who: 'operator',
  },
  forbidden: {
    label: 'Refused: these assets are private or the key may not read them',
    action: 'Make the assets public or grant the key access to them (or their group), then import the map again.',
    who: 'you',
  },
  not_found: {
    label: 'Missing: Roblox no longer has these assets (deleted or moderated)',
    action: 'Replace them in Studio with assets that exist, or leave them out; the rest of the map is imported.',
    who: 'you',
  },
  rate_limited: {
    label: 'Not downloaded: the asset API asked the service to slow down',
    action: 'Import the map again in a few minutes; assets already downloaded are kept and not fetched again.',
    who: 'you',
  },
  timeout: {
    label: 'Not downloaded in time',
    action: 'Import the map again; assets already downloaded are kept. If it keeps happening, the operator can raise ASSET_TIMEOUT_MS or ASSET_TOTAL_TIMEOUT_MS.',
    who: 'you',
  },
  too_large: {
    label: 'Skipped: larger than the service keeps',
    action: 'The operator can raise ASSET_MAX_BYTES if these assets are needed.',
    who: 'operator',
  },
  upstream_error: {
    label: 'Not downloaded: the asset API failed',
    action: 'Import the map again later; assets already downloaded are kept.',
    who: 'you',
  },
  network_error: {
    label: 'Not downloaded: the service could not reach the asset API',
    action: 'The operator checks the service\'s network access to the asset host (or ASSET_DELIVERY_URL / ASSET_URL_TEMPLATE).',
    who: 'operator',
  },
};

export function describeAssetReason(reason: string): AssetReasonAdvice {
  return (Object.hasOwn(ASSET_REASONS, reason) ? ASSET_REASONS[reason] : undefined) ?? { label: `Not downloaded (${reason})`, action: 'Import the map again; if it keeps happening, tell the operator.', who: 'nobody' };
}
