/**
 * Fixed tables of the WebAssembly scanner, in static memory. The character
 * tables are built here at start; the word table is built by words.ts on the
 * JavaScript side (the one list of words) and copied in by the host once,
 * through `configure` (index.ts).
 */
import {
  LPAREN, RPAREN, COMMA, SEMICOLON, RBRACKET, ARITH, OTHER, LBRACKET, LBRACE, RBRACE, INTERP_BEGIN, INTERP_END,
  ASSIGN, STRING, KW_AND, KW_WHILE,
} from '../kinds';

// What a byte can start; the order matters: `>= CHAR_DIGIT` continues an identifier.
/** Blanks, control characters, DEL and every byte of a non-ASCII character: no token. */
export const CHAR_SKIP = 0;
/** Only `\n` counts a line. */
export const CHAR_NEWLINE = 1;
/** Always a one-character token, whose kind is in SINGLE_KIND. */
export const CHAR_SINGLE = 2;
/** Punctuation that needs a look at what follows (operators, strings, comments, braces). */
export const CHAR_PUNCT = 3;
export const CHAR_DIGIT = 4;
export const CHAR_IDENT = 5;

/** Class of each byte value. */
export const CHAR_CLASS: usize = memory.data(256);
/** Token kind of each CHAR_SINGLE byte. */
export const SINGLE_KIND: usize = memory.data(128);
/** 1 for the token kinds the walk reacts to (brackets, `=`, strings, keywords); names are notable when they are known words. */
export const NOTABLE_KIND: usize = memory.data(64);

/** Word ids fit a byte: the word table has room for 255 words. */
export const MAX_WORDS = 256;
/** log2 of the word table's slot count (words.ts builds it with the same). */
export const WORD_TABLE_BITS = 11;
/** Word id by hash slot (0: none). */
export const WORD_SLOTS: usize = memory.data(1 << WORD_TABLE_BITS);
/** By word id: its token kind (a keyword's, or NAME), its roles, and its key (see words.ts). */
export const WORD_KIND: usize = memory.data(MAX_WORDS);
export const WORD_ROLES: usize = memory.data(MAX_WORDS);
export const WORD_HEAD: usize = memory.data(MAX_WORDS * 4, 4);
export const WORD_TAIL: usize = memory.data(MAX_WORDS * 4, 4);
export const WORD_LENGTH: usize = memory.data(MAX_WORDS * 4, 4);
/** Where each word's characters after the eighth start in WORD_LONG_CHARS. */
export const WORD_LONG_OFFSET: usize = memory.data(MAX_WORDS * 4, 4);
export const MAX_LONG_CHARS = 2048;
export const WORD_LONG_CHARS: usize = memory.data(MAX_LONG_CHARS);
/** Masks that keep the first min(length, 4) and the next characters of a key, by identifier length. */
export const MAX_KEYED_LENGTH = 64;
export const HEAD_MASK: usize = memory.data(MAX_KEYED_LENGTH * 4, 4);
export const TAIL_MASK: usize = memory.data(MAX_KEYED_LENGTH * 4, 4);

function setSingle(c: i32, kind: i32): void {
  store<u8>(CHAR_CLASS + <usize>c, CHAR_SINGLE);
  store<u8>(SINGLE_KIND + <usize>c, kind);
}

/** Builds the character tables; runs once when the module starts. */
export function buildCharTables(): void {
  for (let c = 33; c < 127; c++) store<u8>(CHAR_CLASS + <usize>c, CHAR_PUNCT);
  for (let c = 48; c <= 57; c++) store<u8>(CHAR_CLASS + <usize>c, CHAR_DIGIT);
  for (let c = 65; c <= 90; c++) store<u8>(CHAR_CLASS + <usize>c, CHAR_IDENT);
  for (let c = 97; c <= 122; c++) store<u8>(CHAR_CLASS + <usize>c, CHAR_IDENT);
  store<u8>(CHAR_CLASS + 95, CHAR_IDENT);
  store<u8>(CHAR_CLASS + 10, CHAR_NEWLINE);
  setSingle(40, LPAREN);
  setSingle(41, RPAREN);
  setSingle(44, COMMA);
  setSingle(59, SEMICOLON);
  setSingle(93, RBRACKET);
  setSingle(35, ARITH);
  // Printable ASCII that Luau may or may not know as an operator.
  setSingle(33, OTHER);
  setSingle(36, OTHER);
  setSingle(38, OTHER);
  setSingle(63, OTHER);
  setSingle(64, OTHER);
  setSingle(92, OTHER);
  setSingle(124, OTHER);

  store<u8>(NOTABLE_KIND + <usize>LPAREN, 1);
  store<u8>(NOTABLE_KIND + <usize>RPAREN, 1);
  store<u8>(NOTABLE_KIND + <usize>LBRACKET, 1);
  store<u8>(NOTABLE_KIND + <usize>RBRACKET, 1);
  store<u8>(NOTABLE_KIND + <usize>LBRACE, 1);
  store<u8>(NOTABLE_KIND + <usize>RBRACE, 1);
  store<u8>(NOTABLE_KIND + <usize>INTERP_BEGIN, 1);
  store<u8>(NOTABLE_KIND + <usize>INTERP_END, 1);
  store<u8>(NOTABLE_KIND + <usize>ASSIGN, 1);
  store<u8>(NOTABLE_KIND + <usize>STRING, 1);
  for (let k = KW_AND; k <= KW_WHILE; k++) store<u8>(NOTABLE_KIND + <usize>k, 1);
}
