/**
 * CSGMDL bytes are XORed with a fixed 31-byte cycle keyed by each byte's offset in
 * the blob (the magic included), so `CSGMDL` itself never appears in clear.
 * The cycle is the format's, as rbx_mesh documents it.
 */
const CYCLE = Uint8Array.of(
  86, 46, 110, 88, 49, 32, 48, 4, 52, 105, 12, 119, 12, 1, 94, 0,
  26, 96, 55, 105, 29, 82, 43, 7, 79, 36, 89, 101, 83, 4, 122,
);

/** A copy of `bytes` with the obfuscation undone (it is its own inverse). */
export function deobfuscate(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length);
  const n = CYCLE.length;
  for (let i = 0, k = 0; i < bytes.length; i++) {
    out[i] = bytes[i]! ^ CYCLE[k]!;
    if (++k === n) k = 0;
  }
  return out;
}

/** The byte at `offset` in clear. */
export function clearByte(bytes: Uint8Array, offset: number): number {
  return bytes[offset]! ^ CYCLE[offset % CYCLE.length]!;
}
