/** `CSGK`: a marker that names where a union's data lives (32 hexadecimal characters) and holds no geometry. */
import type { UnionKeyAsset } from '../types.js';
import { fail, meshReader, take } from '../reader.js';

const KEY_CHARS = 32;

export function decodeCsgk(bytes: Uint8Array): UnionKeyAsset {
  const r = meshReader(bytes, 'CSGK', 4);
  const at = take(r, KEY_CHARS, 'key');
  if (r.pos !== r.end) fail(r, `${r.end - r.pos} bytes after the key`);
  let key = '';
  for (let i = at; i < at + KEY_CHARS; i++) {
    const b = bytes[i]!;
    const hex = (b >= 0x30 && b <= 0x39) || (b >= 0x61 && b <= 0x66) || (b >= 0x41 && b <= 0x46);
    if (!hex) fail(r, `key byte ${i - at} is not a hexadecimal digit`, i);
    key += String.fromCharCode(b);
  }
  return { kind: 'union_key', version: 'CSGK', geometry: null, key };
}
