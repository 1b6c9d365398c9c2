/**
 * Word lookup over the source bytes, with the perfect-hash table words.ts
 * builds (see there for the key: length and the first eight bytes, read as
 * two little-endian i32s).
 */
import {
  WORD_SLOTS, WORD_HEAD, WORD_TAIL, WORD_LENGTH, WORD_LONG_OFFSET, WORD_LONG_CHARS, HEAD_MASK, TAIL_MASK,
  WORD_TABLE_BITS,
} from './tables';

/** Set by `configure`: the hash multiplier words.ts found, and the longest word. */
export let wordSeed: i32 = 0;
export let maxWordLength: i32 = 0;

export function setWordTable(seed: i32, longest: i32): void {
  wordSeed = seed;
  maxWordLength = longest;
}

/** Characters of a key; the source is padded so that many can be read from any identifier start. */
export const KEY_CHARS = 8;

@inline function packHead(p: usize, length: i32): i32 {
  return load<i32>(p) & load<i32>(HEAD_MASK + (<usize>length << 2));
}

@inline function packTail(p: usize, length: i32): i32 {
  return load<i32>(p, 4) & load<i32>(TAIL_MASK + (<usize>length << 2));
}

/**
 * The id of the ASCII identifier of `length` bytes at `p`, or 0 when it is
 * not a known word. Inlined into the lexer's loop: as a call, the lookup's
 * chain of dependent loads was a fifth of the scan (7-9% faster inlined).
 */
@inline export function lookupWord(p: usize, length: i32): i32 {
  if (length > maxWordLength) return 0;
  const head = packHead(p, length);
  const tail = packTail(p, length);
  const slot = <u32>((head ^ (tail * 0x01000193) ^ length) * wordSeed) >> (32 - WORD_TABLE_BITS);
  const id = <i32>load<u8>(WORD_SLOTS + <usize>slot);
  const entry = <usize>id << 2;
  if (load<i32>(WORD_HEAD + entry) != head || load<i32>(WORD_TAIL + entry) != tail || load<i32>(WORD_LENGTH + entry) != length) return 0;
  if (length <= KEY_CHARS) return id;
  const long = WORD_LONG_CHARS + <usize>load<i32>(WORD_LONG_OFFSET + entry);
  for (let i = 0; i < length - KEY_CHARS; i++) {
    if (load<u8>(long + <usize>i) != load<u8>(p + <usize>(KEY_CHARS + i))) return 0;
  }
  return id;
}

/** The id of arbitrary bytes (a string's contents); the key holds whole bytes, so non-ASCII text matches no word. */
export function lookupText(p: usize, length: i32): i32 {
  if (length <= 0) return 0;
  return lookupWord(p, length);
}
