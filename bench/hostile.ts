/**
 * Hostile place files of issue 10, made with the project's own writer (chunk framing,
 * byte interleaving, LZ4) and, for ZSTD, frames built by hand (RLE blocks): small
 * files that declare or expand to far more than they hold. Used by the memory tests
 * and by `npm run bench:hostile`.
 *
 *   manyInstances   ~0.5 MB declaring 10M instances (one INST and one PRNT chunk, LZ4)
 *   lz4Bomb         ~8 MB of LZ4 chunks expanding to ~2 GB
 *   zstdBomb        ~5 MB of ZSTD chunks expanding to ~1.3 GB
 */
import { ByteWriter, utf8 } from '../src/parser/writer/bytes.js';
import { concat, fileHeader, frameChunk, lz4Block } from '../src/parser/writer/chunks.js';
import { writeReferents } from '../src/parser/writer/interleave.js';

const END = (): Uint8Array[] => frameChunk('END', utf8('</roblox>'), false);

/** One class of `count` Folder instances, every one a root: INST and PRNT, LZ4-compressed. */
export function manyInstances(count = 10_000_000): Uint8Array {
  const referents = new Int32Array(count);
  for (let i = 0; i < count; i++) referents[i] = i;
  const inst = new ByteWriter(count * 4 + 64);
  inst.u32(0);
  inst.text('Folder');
  inst.u8(0);
  inst.u32(count);
  writeReferents(inst, referents);
  const prnt = new ByteWriter(count * 8 + 64);
  prnt.u8(0);
  prnt.u32(count);
  writeReferents(prnt, referents);
  writeReferents(prnt, new Int32Array(count).fill(-1));
  return concat([fileHeader(1, count), ...frameChunk('INST', inst.finish(), true), ...frameChunk('PRNT', prnt.finish(), true), ...END()]);
}

/** `chunks` unknown chunks of `chunkBytes` zeros each, LZ4 at its best ratio (~255:1). */
export function lz4Bomb(chunks = 31, chunkBytes = 64 << 20): Uint8Array {
  const block = lz4Block(new Uint8Array(chunkBytes));
  const parts: Uint8Array[] = [fileHeader(0, 0)];
  for (let i = 0; i < chunks; i++) parts.push(chunkHeader('BOMB', block.length, chunkBytes), block);
  return concat([...parts, ...END()]);
}

/**
 * `chunks` unknown chunks, each a ZSTD frame of `chunkBytes` zeros (RLE blocks) followed
 * by a skippable frame that pads it to `storedBytes`: within LZ4's and ZSTD's per-chunk
 * ratios and the file's expansion bound as the decoder's defaults set them.
 */
export function zstdBomb(chunks = 5, chunkBytes = 256 << 20, storedBytes = 1 << 20): Uint8Array {
  const frame = zstdZeros(chunkBytes);
  const padding = storedBytes - frame.length - 8;
  const skippable = new Uint8Array(8 + padding);
  const view = new DataView(skippable.buffer);
  view.setUint32(0, 0x184d2a50, true); // skippable frame magic
  view.setUint32(4, padding, true);
  const stored = concat([frame, skippable]);
  const parts: Uint8Array[] = [fileHeader(0, 0)];
  for (let i = 0; i < chunks; i++) parts.push(chunkHeader('BOMB', stored.length, chunkBytes), stored);
  return concat([...parts, ...END()]);
}

/** A ZSTD frame (RFC 8878) holding `size` zero bytes as RLE blocks, with its content size declared. */
function zstdZeros(size: number): Uint8Array {
  const BLOCK = 128 * 1024;
  const blocks = Math.ceil(size / BLOCK);
  const out = new Uint8Array(4 + 1 + 8 + blocks * 4);
  const view = new DataView(out.buffer);
  view.setUint32(0, 0xfd2fb528, true);
  out[4] = 0xe0; // 8-byte content size, single segment, no checksum, no dictionary
  view.setBigUint64(5, BigInt(size), true);
  let at = 13;
  for (let i = 0, left = size; i < blocks; i++, left -= BLOCK) {
    const length = Math.min(BLOCK, left);
    const header = (i === blocks - 1 ? 1 : 0) | (1 << 1) | (length << 3); // last?, RLE, size
    out[at] = header & 0xff;
    out[at + 1] = (header >> 8) & 0xff;
    out[at + 2] = (header >> 16) & 0xff;
    out[at + 3] = 0; // the byte repeated
    at += 4;
  }
  return out;
}

function chunkHeader(name: string, compressed: number, uncompressed: number): Uint8Array {
  const header = new Uint8Array(16);
  for (let i = 0; i < name.length; i++) header[i] = name.charCodeAt(i);
  const view = new DataView(header.buffer);
  view.setUint32(4, compressed, true);
  view.setUint32(8, uncompressed, true);
  return header;
}

/** The three files of the hostile mix. */
export function hostileFiles(): { name: string; bytes: Uint8Array }[] {
  return [
    { name: 'many-instances.rbxl', bytes: manyInstances() },
    { name: 'lz4-bomb.rbxl', bytes: lz4Bomb() },
    { name: 'zstd-bomb.rbxl', bytes: zstdBomb() },
  ];
}
