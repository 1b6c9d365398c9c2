/**
 * The Luau lexer of the findings scanner. It reads every string form
 * (quoted, long brackets of any level, backtick interpolation with nested
 * `{}` expressions), comments, numbers and operators, and never throws: on
 * malformed or truncated input it ends the broken token where it can (an
 * unterminated quoted string at its line's end, a long string or comment at
 * the end of the source) and skips characters that start no token. One pass,
 * linear in the source length.
 *
 * Speed matters here (every script of a place goes through it), and what
 * costs is work per token, so:
 * - it reads the source's code units from a typed array (source-chars.ts),
 *   dispatching on a per-character class table;
 * - identifiers are looked up in the word table once, when they end, without
 *   slicing a string (words.ts);
 * - each token is four Int32s in one array (measured ~10% faster than one
 *   array per field), reused from call to call, so a stream is only valid
 *   until the next call;
 * - it notes which tokens the checks react to, so their walk skips the rest.
 *
 * Index 0 is a sentinel and the last real token is followed by EOF padding,
 * so the checks can look one token behind and three ahead without bounds
 * tests. Comments produce no tokens.
 */
import { loadChars, releaseLargeCharBuffer, MAX_SOURCE_CHARS } from './source-chars.js';
import { lookupWord, WORD_KEYWORD } from './words.js';
import {
  EOF, NAME, NUMBER, STRING, INTERP_BEGIN, INTERP_MID, INTERP_END, LPAREN, RPAREN, LBRACE, RBRACE, LBRACKET,
  RBRACKET, DOT, COLON, DOUBLE_COLON, COMMA, SEMICOLON, ASSIGN, CONCAT, ELLIPSIS, ARROW, COMPOUND_ASSIGN, COMPARE,
  ARITH, OTHER, KW_AND, KW_BREAK, KW_DO, KW_ELSE, KW_ELSEIF, KW_END, KW_FALSE, KW_FOR, KW_FUNCTION, KW_IF, KW_IN,
  KW_LOCAL, KW_NIL, KW_NOT, KW_OR, KW_REPEAT, KW_RETURN, KW_THEN, KW_TRUE, KW_UNTIL, KW_WHILE,
} from './kinds.js';

/** A lexed source; valid until the next call of `lex`. */
export interface TokenStream {
  source: string;
  /** The source's UTF-16 code units (zero-padded past its end). */
  chars: Uint16Array;
  /** The source had more tokens (or characters) than the lexer keeps; only its beginning was read. */
  truncated: boolean;
  /** Index one past the last real token; tokens are 1..count-1. */
  count: number;
  /**
   * TOKEN_STRIDE Int32s per token: kind | word << 8 (the interned word id of
   * a name or keyword, words.ts), start, end (for strings, of their
   * contents), and the 1-based line the token starts on. Read it with the
   * accessors below.
   */
  data: Int32Array;
  /**
   * Indices of the tokens the checks react to (brackets, `=`, strings,
   * keywords and known words), in order: the walk in checks.ts visits only
   * these, about half of all tokens.
   */
  notable: Int32Array;
  notableCount: number;
}

export const TOKEN_STRIDE = 4;

export function kindAt(data: Int32Array, token: number): number {
  return data[token << 2] & 0xff;
}

export function wordAt(data: Int32Array, token: number): number {
  return data[token << 2] >>> 8;
}

export function startAt(data: Int32Array, token: number): number {
  return data[(token << 2) + 1];
}

export function endAt(data: Int32Array, token: number): number {
  return data[(token << 2) + 2];
}

export function lineAt(data: Int32Array, token: number): number {
  return data[(token << 2) + 3];
}

/** EOF tokens after the last real one, for lookahead without bounds tests. */
const PADDING = 4;

// What a character can start; the order matters: `>= CHAR_DIGIT` continues an identifier.
/** Blanks, control characters, DEL and non-ASCII: no token (only `\n` counts a line). */
const CHAR_SKIP = 0;
const CHAR_NEWLINE = 1;
/** Always a one-character token, whose kind is in SINGLE_KIND. */
const CHAR_SINGLE = 2;
/** Punctuation that needs a look at what follows (operators, strings, comments, braces). */
const CHAR_PUNCT = 3;
const CHAR_DIGIT = 4;
const CHAR_IDENT = 5;

/** By UTF-16 code unit, so the loops need no range test before the lookup. */
const charClass = new Uint8Array(65536);
const SINGLE_KIND = new Uint8Array(128);
for (let c = 33; c < 127; c++) charClass[c] = CHAR_PUNCT;
for (let c = 48; c <= 57; c++) charClass[c] = CHAR_DIGIT;
for (let c = 65; c <= 90; c++) charClass[c] = CHAR_IDENT;
for (let c = 97; c <= 122; c++) charClass[c] = CHAR_IDENT;
charClass[95] = CHAR_IDENT;
charClass[10] = CHAR_NEWLINE;
for (const [c, kind] of [
  [40, LPAREN], [41, RPAREN], [44, COMMA], [59, SEMICOLON], [93, RBRACKET], [35, ARITH],
  // Printable ASCII that Luau may or may not know as an operator.
  [33, OTHER], [36, OTHER], [38, OTHER], [63, OTHER], [64, OTHER], [92, OTHER], [124, OTHER],
]) {
  charClass[c] = CHAR_SINGLE;
  SINGLE_KIND[c] = kind;
}

/**
 * 1 for the kinds the checks react to (brackets, `=`, strings, keywords);
 * names are notable when they are known words.
 */
const NOTABLE_KIND = new Uint8Array(64);
for (const kind of [
  LPAREN, RPAREN, LBRACKET, RBRACKET, LBRACE, RBRACE, INTERP_BEGIN, INTERP_END, ASSIGN, STRING,
  KW_AND, KW_BREAK, KW_DO, KW_ELSE, KW_ELSEIF, KW_END, KW_FALSE, KW_FOR, KW_FUNCTION, KW_IF, KW_IN,
  KW_LOCAL, KW_NIL, KW_NOT, KW_OR, KW_REPEAT, KW_RETURN, KW_THEN, KW_TRUE, KW_UNTIL, KW_WHILE,
]) NOTABLE_KIND[kind] = 1;

/** Token kind by word id: the keyword's kind, or NAME (also for word 0). */
const WORD_KIND = WORD_KEYWORD.map((keyword) => keyword || NAME);

const INITIAL_CAPACITY = 4096;
/**
 * At most this many token slots (about 80 MB of arrays): a source with more
 * tokens is lexed up to that point. Scripts are far smaller; this keeps a
 * hostile multi-megabyte Source from exhausting memory.
 */
const MAX_CAPACITY = 1 << 22;
/** Token arrays above this size are not kept between calls. */
const RETAINED_CAPACITY = 1 << 20;

const stream: TokenStream = {
  source: '',
  chars: new Uint16Array(0),
  truncated: false,
  count: 0,
  data: new Int32Array(INITIAL_CAPACITY * TOKEN_STRIDE),
  notable: new Int32Array(INITIAL_CAPACITY),
  notableCount: 0,
};
let capacity = INITIAL_CAPACITY;

function allocate(size: number): void {
  capacity = size;
  stream.data = new Int32Array(size * TOKEN_STRIDE);
  stream.notable = new Int32Array(size);
}

// State the rarer helpers below share with the main loop, module level so
// they allocate no closures: the current line (strings and long comments can
// span lines) and the open braces.
let line = 1;
/** Open `{`s: 0 for a table/type brace, 1 for an interpolation hole in a backtick string. */
let braces = new Uint8Array(64);
let braceDepth = 0;
/** Where the contents of the last long bracket read ended. */
let longContentEnd = 0;

/** Lets go of token and character arrays grown for an unusually large script. */
export function releaseLargeBuffers(): void {
  if (capacity > RETAINED_CAPACITY) allocate(INITIAL_CAPACITY);
  if (braces.length > 1 << 16) braces = new Uint8Array(64);
  releaseLargeCharBuffer();
}

function pushBrace(kind: number): void {
  if (braceDepth === braces.length) {
    const bigger = new Uint8Array(braces.length * 2);
    bigger.set(braces);
    braces = bigger;
  }
  braces[braceDepth++] = kind;
}

/** Lexes `source` into the shared token stream. */
export function lex(source: string): TokenStream {
  const n = Math.min(source.length, MAX_SOURCE_CHARS);
  const cs = loadChars(source, n);
  // Arrays that run out start the source over at twice the size: the loop
  // keeps them in constants, and after the first large script they fit.
  while (!lexInto(source, cs, n)) allocate(capacity * 2);
  stream.source = source;
  stream.chars = cs;
  stream.truncated ||= n < source.length;
  return stream;
}

/** One attempt at lexing into the current arrays; false when they were too small. */
function lexInto(source: string, cs: Uint16Array, n: number): boolean {
  const data = stream.data;
  const notables = stream.notable;
  const limit = capacity - PADDING;
  let notableCount = 0;
  let p = 0;
  let ln = 1;
  let c = 1;
  braceDepth = 0;
  stream.truncated = false;
  data[0] = EOF;
  data[1] = 0;
  data[2] = 0;
  data[3] = 1;

  // Each turn skips one character or reads one token; a token is written at
  // the bottom from `kind`, `start`, `end`, `at` (its first line) and `word`.
  while (p < n) {
    let ch = cs[p];
    let cls = charClass[ch];
    if (cls <= CHAR_NEWLINE) {
      // A run of blanks (and of characters that start no token).
      do {
        if (ch === 10) ln++;
        ch = cs[++p];
        cls = charClass[ch];
      } while (cls <= CHAR_NEWLINE && p < n);
      if (p >= n) break;
    }
    if (c >= limit) {
      if (capacity < MAX_CAPACITY) return false;
      stream.truncated = true;
      break;
    }
    let kind: number;
    let start = p;
    let end = p;
    let at = ln;
    let word = 0;
    /** A name the checks must see although its kind alone does not say so. */
    let notable = 0;

    if (cls === CHAR_IDENT) {
      // The zero after the source ends the last identifier.
      end = p + 1;
      while (charClass[cs[end]] >= CHAR_DIGIT) end++;
      word = lookupWord(cs, p, end);
      kind = WORD_KIND[word];
      // A known word: 1 for ids 1..256 without a branch (half the names are
      // words, so a branch would mispredict often).
      notable = (word + 255) >> 8;
      p = end;
    } else if (cls === CHAR_SINGLE) {
      kind = SINGLE_KIND[ch];
      end = ++p;
    } else if (cls === CHAR_DIGIT) {
      kind = NUMBER;
      end = p = numberEnd(cs, p, n);
    } else {
      const next = cs[p + 1];
      let width = 1;
      switch (ch) {
        case 34: // "
        case 39: // '
          line = ln;
          start = p + 1;
          end = quotedEnd(cs, start, n, ch);
          kind = STRING;
          ln = line;
          p = end < n && cs[end] === ch ? end + 1 : end;
          width = 0;
          break;
        case 96: // `
          start = p + 1;
          line = ln;
          kind = interpolatedPiece(cs, start, n, STRING, INTERP_BEGIN);
          ln = line;
          end = pieceEnd;
          p = pieceNext;
          width = 0;
          break;
        case 125: // }
          if (braceDepth > 0 && braces[--braceDepth] === 1) {
            // The end of an interpolation hole: the backtick string goes on.
            start = p + 1;
            line = ln;
            kind = interpolatedPiece(cs, start, n, INTERP_END, INTERP_MID);
            ln = line;
            end = pieceEnd;
            p = pieceNext;
            width = 0;
          } else {
            kind = RBRACE;
          }
          break;
        case 45: // -
          if (next === 45) {
            line = ln;
            p = commentEnd(source, cs, p + 2, n);
            ln = line;
            continue;
          }
          if (next === 61) {
            kind = COMPOUND_ASSIGN;
            width = 2;
          } else if (next === 62) {
            kind = ARROW;
            width = 2;
          } else {
            kind = ARITH;
          }
          break;
        case 91: { // [
          const level = longBracketLevel(cs, p, n);
          if (level < 0) {
            kind = LBRACKET;
            break;
          }
          kind = STRING;
          start = p + level + 2;
          line = ln;
          p = longBracketEnd(cs, start, n, level);
          ln = line;
          end = longContentEnd;
          width = 0;
          break;
        }
        case 123: // {
          pushBrace(0);
          kind = LBRACE;
          break;
        case 46: // .
          if (next === 46) {
            const third = cs[p + 2];
            if (third === 46) {
              kind = ELLIPSIS;
              width = 3;
            } else if (third === 61) {
              kind = COMPOUND_ASSIGN;
              width = 3;
            } else {
              kind = CONCAT;
              width = 2;
            }
          } else if (charClass[next] === CHAR_DIGIT) {
            kind = NUMBER;
            end = p = numberEnd(cs, p, n);
            width = 0;
          } else {
            kind = DOT;
          }
          break;
        case 58: // :
          if (next === 58) {
            kind = DOUBLE_COLON;
            width = 2;
          } else {
            kind = COLON;
          }
          break;
        case 61: // =
          if (next === 61) {
            kind = COMPARE;
            width = 2;
          } else {
            kind = ASSIGN;
          }
          break;
        case 126: // ~
          if (next === 61) {
            kind = COMPARE;
            width = 2;
          } else {
            kind = OTHER;
          }
          break;
        case 60: // <
        case 62: // >
          kind = COMPARE;
          if (next === 61) width = 2;
          break;
        case 47: // /
          if (next === 47) {
            if (cs[p + 2] === 61) {
              kind = COMPOUND_ASSIGN;
              width = 3;
            } else {
              kind = ARITH;
              width = 2;
            }
          } else if (next === 61) {
            kind = COMPOUND_ASSIGN;
            width = 2;
          } else {
            kind = ARITH;
          }
          break;
        default: // + * % ^
          if (next === 61) {
            kind = COMPOUND_ASSIGN;
            width = 2;
          } else {
            kind = ARITH;
          }
          break;
      }
      if (width !== 0) end = p += width;
    }

    const o = c << 2;
    data[o] = kind | (word << 8);
    data[o + 1] = start;
    data[o + 2] = end;
    data[o + 3] = at;
    // Written always, kept by advancing the count: no branch on a coin flip.
    notables[notableCount] = c;
    notableCount += NOTABLE_KIND[kind] | notable;
    c++;
  }

  for (let i = 0; i < PADDING; i++) {
    const o = (c + i) << 2;
    data[o] = EOF;
    data[o + 1] = n;
    data[o + 2] = n;
    data[o + 3] = ln;
  }
  stream.count = c;
  stream.notableCount = notableCount;
  return true;
}


/** Decimal, hex (0x), binary (0b), with `_` separators, fractions and exponents; returns where it ends. */
function numberEnd(cs: Uint16Array, p: number, n: number): number {
  const second = cs[p + 1];
  if (cs[p] === 48 && (second === 120 || second === 88 || second === 98 || second === 66)) {
    p += 2;
    while (p < n && charClass[cs[p]] >= CHAR_DIGIT) p++;
    return p;
  }
  while (p < n) {
    const c = cs[p];
    if (charClass[c] === CHAR_DIGIT || c === 46 || c === 95) p++;
    else break;
  }
  const e = cs[p];
  if (e === 101 || e === 69) {
    p++;
    const sign = cs[p];
    if (sign === 43 || sign === 45) p++;
  }
  // Trailing letters make a malformed number; they belong to it, as in Luau.
  while (p < n && charClass[cs[p]] >= CHAR_DIGIT) p++;
  return p;
}

/**
 * The level of a long bracket opening at `at` (`[[` is 0, `[==[` is 2), or -1
 * when the `[` does not open one.
 */
function longBracketLevel(cs: Uint16Array, at: number, n: number): number {
  let p = at + 1;
  while (p < n && cs[p] === 61) p++;
  return cs[p] === 91 ? p - at - 1 : -1;
}

/**
 * Skips a long bracket body starting at `p` (after the opening), counting
 * lines; returns the position after the closing bracket, or the source end
 * when it is unterminated. Sets longContentEnd.
 */
function longBracketEnd(cs: Uint16Array, p: number, n: number, level: number): number {
  while (p < n) {
    const c = cs[p];
    if (c === 93) {
      let q = p + 1;
      while (q < n && cs[q] === 61) q++;
      if (q - p - 1 === level && cs[q] === 93) {
        longContentEnd = p;
        return q + 1;
      }
      // The `=`s just read cannot start a closing bracket; a `]` at q can.
      p = q;
    } else {
      if (c === 10) line++;
      p++;
    }
  }
  longContentEnd = n;
  return n;
}

/**
 * Skips the escape whose backslash is at `p`; returns the position after it.
 * A backslash-newline continues the string and `\z` skips following
 * whitespace, so both can move to later lines.
 */
function escapeEnd(cs: Uint16Array, p: number, n: number): number {
  const e = cs[p + 1];
  if (e === 10) {
    line++;
    return p + 2;
  }
  if (e === 13) {
    p += 2;
    if (cs[p] === 10) {
      line++;
      p++;
    }
    return p;
  }
  if (e === 122) {
    p += 2;
    while (p < n) {
      const w = cs[p];
      if (w === 10) line++;
      else if (w !== 32 && w !== 9 && w !== 13 && w !== 11 && w !== 12) break;
      p++;
    }
    return p;
  }
  return p + 2 > n ? n : p + 2;
}

/** The closing quote of a '…' or "…" string from `p`, or (unterminated) its line's end. */
function quotedEnd(cs: Uint16Array, p: number, n: number, quote: number): number {
  while (p < n) {
    const c = cs[p];
    if (c === quote || c === 10) break;
    if (c === 92) p = escapeEnd(cs, p, n);
    else p++;
  }
  return p;
}

/**
 * Where one literal piece of a backtick string from `p` stops: the closing
 * backtick, an interpolation hole `{`, or (unterminated, as Luau allows no
 * raw newline there) the end of the line.
 */
/** Set by interpolatedPiece: where the piece's text ends, and where lexing resumes. */
let pieceEnd = 0;
let pieceNext = 0;

/**
 * One piece of a backtick string, from `from` (just after a backtick or a hole's `}`):
 * `closed` when a backtick ends it, `hole` when `{` opens an interpolation (pushed).
 */
function interpolatedPiece(cs: Uint16Array, from: number, n: number, closed: number, hole: number): number {
  let p = (pieceEnd = interpolatedEnd(cs, from, n));
  let kind = closed;
  if (cs[p] === 96) {
    p++;
  } else if (cs[p] === 123) {
    kind = hole;
    pushBrace(1);
    p++;
  }
  pieceNext = p;
  return kind;
}

function interpolatedEnd(cs: Uint16Array, p: number, n: number): number {
  while (p < n) {
    const c = cs[p];
    if (c === 96 || c === 123 || c === 10) break;
    if (c === 92) p = escapeEnd(cs, p, n);
    else p++;
  }
  return p;
}

/** After `--` at `p`: to the end of the line, or past `[==[ … ]==]`. */
function commentEnd(source: string, cs: Uint16Array, p: number, n: number): number {
  if (cs[p] === 91) {
    const level = longBracketLevel(cs, p, n);
    if (level >= 0) return longBracketEnd(cs, p + level + 2, n, level);
  }
  // A native search: comment lines can be long.
  const newline = source.indexOf('\n', p);
  return newline < 0 || newline > n ? n : newline;
}
