/**
 * Which blob this is, from its first bytes (never a file name or content type):
 * a mesh file (`version x.yy` line), an obfuscated `CSGMDL` union model, a
 * `CSGPHS` collision blob, or a `CSGK` key marker.
 */
import { clearByte } from './csg/obfuscation.js';
import { MeshDecodeError } from './errors.js';
import { startsWith } from './reader.js';

export type SniffedFormat =
  | { family: 'mesh'; version: string; /** Offset of the first byte after the version line. */ bodyStart: number }
  | { family: 'csgmdl'; version: number }
  | { family: 'csgphs'; version: number }
  | { family: 'csgk' };

export const MESH_VERSIONS: readonly string[] = ['1.00', '1.01', '2.00', '3.00', '3.01', '4.00', '4.01', '5.00', '6.00', '7.00'];

export function sniffMeshFormat(bytes: Uint8Array): SniffedFormat {
  if (startsWith(bytes, 'version ')) return sniffMeshVersion(bytes);
  if (startsWith(bytes, 'CSGPHS')) {
    if (bytes.length < 10) throw new MeshDecodeError('CSGPHS', 6, 'unexpected end of data reading the version');
    return { family: 'csgphs', version: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(6, true) };
  }
  if (startsWith(bytes, 'CSGK')) return { family: 'csgk' };
  if (bytes.length >= 6 && clearText(bytes, 0, 6) === 'CSGMDL') {
    if (bytes.length < 10) throw new MeshDecodeError('CSGMDL', 6, 'unexpected end of data reading the version');
    const version = (clearByte(bytes, 6) | (clearByte(bytes, 7) << 8) | (clearByte(bytes, 8) << 16) | (clearByte(bytes, 9) << 24)) >>> 0;
    return { family: 'csgmdl', version };
  }
  const what = bytes.length === 0
    ? 'the input is empty'
    : 'it starts with none of "version " (mesh), CSGMDL (union model, obfuscated), "CSGPHS" (union physics) or "CSGK"';
  throw new MeshDecodeError('unknown', 0, `not a Roblox mesh or union blob: ${what}`);
}

function sniffMeshVersion(bytes: Uint8Array): SniffedFormat {
  const limit = Math.min(bytes.length, 32);
  let newline = -1;
  for (let i = 8; i < limit; i++) if (bytes[i] === 0x0a) { newline = i; break; }
  if (newline < 0) throw new MeshDecodeError('mesh', 0, 'the version line does not end within 32 bytes');
  const lineEnd = bytes[newline - 1] === 0x0d ? newline - 1 : newline;
  let version = '';
  for (let i = 8; i < lineEnd; i++) version += String.fromCharCode(bytes[i]!);
  if (!MESH_VERSIONS.includes(version)) {
    throw new MeshDecodeError('mesh', 8, `unsupported mesh version ${JSON.stringify(version)} (known: ${MESH_VERSIONS.join(', ')})`);
  }
  return { family: 'mesh', version, bodyStart: newline + 1 };
}

function clearText(bytes: Uint8Array, start: number, end: number): string {
  let text = '';
  for (let i = start; i < end; i++) text += String.fromCharCode(clearByte(bytes, i));
  return text;
}
