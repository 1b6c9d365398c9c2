/**
 * Who is calling. In `gateway` mode only X-User-Id counts (the gateway sets it after
 * checking the token). In `development` mode the client's X-Auth-Override (the JWT's
 * `id`, sent from localhost) is trusted first, as interface.md section 5 describes.
 */
import type { AuthMode } from '../config.js';

const MAX_USER_ID_LENGTH = 256;

function clean(value: string): string | null {
  const trimmed = value.trim();
  // Control characters would let a user id forge log lines or file contents.
  if (trimmed === '' || trimmed.length > MAX_USER_ID_LENGTH || /[\u0000-\u001f\u007f]/.test(trimmed)) return null;
  return trimmed;
}

export function userFromHeaders(mode: AuthMode, header: (name: string) => string): string | null {
  if (mode === 'development') {
    const override = clean(header('x-auth-override'));
    if (override) return override;
  }
  return clean(header('x-user-id'));
}
