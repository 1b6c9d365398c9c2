/**
 * The Luau lexer, over the source's UTF-8 bytes. It reads every string form
 * (quoted, long brackets of any level, backtick interpolation with nested
 * `{}` expressions), comments, numbers and operators, and never fails: on
 * malformed or truncated input it ends the broken token where it can (an
 * unterminated quoted string at its line's end, a long string or comment at
 * the end of the source) and skips bytes that start no token. One pass,
 * linear in the source length.
 *
 * Every byte of a non-ASCII character starts no token, as the character
 * would not, so tokens and lines are the same as over the decoded text.
 *
 * Each token is four i32s (token.ts). Index 0 is a sentinel and the last
 * real token is followed by EOF padding, so the walk can look one token
 * behind and three ahead without bounds tests. Comments produce no tokens.
 * It also lists the tokens the walk reacts to ("notable": brackets, `=`,
 * strings, keywords and known words), about half of all tokens.
 */
import {
  EOF, NAME, NUMBER, STRING, INTERP_BEGIN, INTERP_MID, INTERP_END, LBRACE, RBRACE, LBRACKET, DOT, COLON,
  DOUBLE_COLON, ASSIGN, CONCAT, ELLIPSIS, ARROW, COMPOUND_ASSIGN, COMPARE, ARITH, OTHER,
} from '../kinds';
import { CHAR_CLASS, SINGLE_KIND, NOTABLE_KIND, WORD_KIND, CHAR_NEWLINE, CHAR_SINGLE, CHAR_DIGIT, CHAR_IDENT } from './tables';
import { lookupWord } from './words';
import { TOKEN_PADDING, writeToken } from './token';

/** Zero bytes the host writes after the source: lookahead reads up to three past a position, a word key eight. */
export const SOURCE_PADDING = 16;

// Results of the last `lex`.
export let tokenCount = 0;
export let notableCount = 0;
/** The source had more tokens than the arrays hold; only its beginning was read. */
export let truncated = false;
/** The line the source ends on (1 for a source without newlines). */
export let lastLine = 1;

// State the rarer helpers share with the main loop: the current line
// (strings and long comments can span lines) and the open braces.
let src: usize = 0;
let line = 1;
/** Open `{`s, one byte each: 0 for a table/type brace, 1 for an interpolation hole in a backtick string. */
let braces: usize = 0;
let braceDepth = 0;
/** Where the contents of the last long bracket read ended. */
let longContentEnd = 0;
/** Set by interpolatedPiece: where the piece's text ends, and where lexing resumes. */
let pieceEnd = 0;
let pieceNext = 0;

@inline function at(p: i32): i32 {
  return <i32>load<u8>(src + <usize>p);
}

@inline function classOf(c: i32): i32 {
  return <i32>load<u8>(CHAR_CLASS + <usize>c);
}

/**
 * Lexes the `n` bytes at `source` (followed by SOURCE_PADDING zeros) into
 * `tokens` (room for `capacity` tokens) and `notable` (as many i32s), using
 * `braceStack` (`capacity` bytes). Sets the results above.
 */
export function lex(source: usize, n: i32, tokens: usize, notable: usize, capacity: i32, braceStack: usize): void {
  src = source;
  braces = braceStack;
  braceDepth = 0;
  truncated = false;
  const limit = capacity - TOKEN_PADDING;
  let notables = 0;
  let p = 0;
  let ln = 1;
  let c = 1;
  writeToken(tokens, 0, EOF, 0, 0, 1);

  // Each turn skips one byte or reads one token; a token is written at the
  // bottom from `kind`, `start`, `end`, `first` (its first line) and `word`.
  while (p < n) {
    let ch = at(p);
    let cls = classOf(ch);
    if (cls <= CHAR_NEWLINE) {
      // A run of blanks (and of bytes that start no token).
      do {
        if (ch == 10) ln++;
        ch = at(++p);
        cls = classOf(ch);
      } while (cls <= CHAR_NEWLINE && p < n);
      if (p >= n) break;
    }
    if (c >= limit) {
      truncated = true;
      break;
    }
    let kind: i32;
    let start = p;
    let end = p;
    const first = ln;
    let word = 0;
    /** A name the walk must see although its kind alone does not say so. */
    let notableName = 0;

    if (cls == CHAR_IDENT) {
      // The zero after the source ends the last identifier.
      end = p + 1;
      while (classOf(at(end)) >= CHAR_DIGIT) end++;
      word = lookupWord(src + <usize>p, end - p);
      kind = <i32>load<u8>(WORD_KIND + <usize>word);
      notableName = (word + 255) >> 8;
      p = end;
    } else if (cls == CHAR_SINGLE) {
      kind = <i32>load<u8>(SINGLE_KIND + <usize>ch);
      end = ++p;
    } else if (cls == CHAR_DIGIT) {
      kind = NUMBER;
      end = p = numberEnd(p, n);
    } else {
      const next = at(p + 1);
      let width = 1;
      switch (ch) {
        case 34: // "
        case 39: // '
          line = ln;
          start = p + 1;
          end = quotedEnd(start, n, ch);
          kind = STRING;
          ln = line;
          p = end < n && at(end) == ch ? end + 1 : end;
          width = 0;
          break;
        case 96: // `
          start = p + 1;
          line = ln;
          kind = interpolatedPiece(start, n, STRING, INTERP_BEGIN);
          ln = line;
          end = pieceEnd;
          p = pieceNext;
          width = 0;
          break;
        case 125: // }
          if (braceDepth > 0 && load<u8>(braces + <usize>(--braceDepth)) == 1) {
            // The end of an interpolation hole: the backtick string goes on.
            start = p + 1;
            line = ln;
            kind = interpolatedPiece(start, n, INTERP_END, INTERP_MID);
            ln = line;
            end = pieceEnd;
            p = pieceNext;
            width = 0;
          } else {
            kind = RBRACE;
          }
          break;
        case 45: // -
          if (next == 45) {
            line = ln;
            p = commentEnd(p + 2, n);
            ln = line;
            continue;
          }
          if (next == 61) {
            kind = COMPOUND_ASSIGN;
            width = 2;
          } else if (next == 62) {
            kind = ARROW;
            width = 2;
          } else {
            kind = ARITH;
          }
          break;
        case 91: { // [
          const level = longBracketLevel(p, n);
          if (level < 0) {
            kind = LBRACKET;
            break;
          }
          kind = STRING;
          start = p + level + 2;
          line = ln;
          p = longBracketEnd(start, n, level);
          ln = line;
          end = longContentEnd;
          width = 0;
          break;
        }
        case 123: // {
          store<u8>(braces + <usize>(braceDepth++), 0);
          kind = LBRACE;
          break;
        case 46: // .
          if (next == 46) {
            const third = at(p + 2);
            if (third == 46) {
              kind = ELLIPSIS;
              width = 3;
            } else if (third == 61) {
              kind = COMPOUND_ASSIGN;
              width = 3;
            } else {
              kind = CONCAT;
              width = 2;
            }
          } else if (classOf(next) == CHAR_DIGIT) {
            kind = NUMBER;
            end = p = numberEnd(p, n);
            width = 0;
          } else {
            kind = DOT;
          }
          break;
        case 58: // :
          if (next == 58) {
            kind = DOUBLE_COLON;
            width = 2;
          } else {
            kind = COLON;
          }
          break;
        case 61: // =
          if (next == 61) {
            kind = COMPARE;
            width = 2;
          } else {
            kind = ASSIGN;
          }
          break;
        case 126: // ~
          if (next == 61) {
            kind = COMPARE;
            width = 2;
          } else {
            kind = OTHER;
          }
          break;
        case 60: // <
        case 62: // >
          kind = COMPARE;
          if (next == 61) width = 2;
          break;
        case 47: // /
          if (next == 47) {
            if (at(p + 2) == 61) {
              kind = COMPOUND_ASSIGN;
              width = 3;
            } else {
              kind = ARITH;
              width = 2;
            }
          } else if (next == 61) {
            kind = COMPOUND_ASSIGN;
            width = 2;
          } else {
            kind = ARITH;
          }
          break;
        default: // + * % ^
          if (next == 61) {
            kind = COMPOUND_ASSIGN;
            width = 2;
          } else {
            kind = ARITH;
          }
          break;
      }
      if (width != 0) end = p += width;
    }

    writeToken(tokens, c, kind | (word << 8), start, end, first);
    // Written always, kept by advancing the count: no branch on a coin flip.
    store<i32>(notable + (<usize>notables << 2), c);
    notables += <i32>load<u8>(NOTABLE_KIND + <usize>kind) | notableName;
    c++;
  }

  for (let i = 0; i < TOKEN_PADDING; i++) writeToken(tokens, c + i, EOF, n, n, ln);
  tokenCount = c;
  notableCount = notables;
  lastLine = ln;
}

/** Decimal, hex (0x), binary (0b), with `_` separators, fractions and exponents; returns where it ends. */
function numberEnd(p: i32, n: i32): i32 {
  const second = at(p + 1);
  if (at(p) == 48 && (second == 120 || second == 88 || second == 98 || second == 66)) {
    p += 2;
    while (p < n && classOf(at(p)) >= CHAR_DIGIT) p++;
    return p;
  }
  while (p < n) {
    const c = at(p);
    if (classOf(c) == CHAR_DIGIT || c == 46 || c == 95) p++;
    else break;
  }
  const e = at(p);
  if (e == 101 || e == 69) {
    p++;
    const sign = at(p);
    if (sign == 43 || sign == 45) p++;
  }
  // Trailing letters make a malformed number; they belong to it, as in Luau.
  while (p < n && classOf(at(p)) >= CHAR_DIGIT) p++;
  return p;
}

/** The level of a long bracket opening at `from` (`[[` is 0, `[==[` is 2), or -1 when the `[` does not open one. */
function longBracketLevel(from: i32, n: i32): i32 {
  let p = from + 1;
  while (p < n && at(p) == 61) p++;
  return at(p) == 91 ? p - from - 1 : -1;
}

/**
 * Skips a long bracket body starting at `p` (after the opening), counting
 * lines; returns the position after the closing bracket, or the source end
 * when it is unterminated. Sets longContentEnd.
 */
function longBracketEnd(p: i32, n: i32, level: i32): i32 {
  while (p < n) {
    const c = at(p);
    if (c == 93) {
      let q = p + 1;
      while (q < n && at(q) == 61) q++;
      if (q - p - 1 == level && at(q) == 93) {
        longContentEnd = p;
        return q + 1;
      }
      // The `=`s just read cannot start a closing bracket; a `]` at q can.
      p = q;
    } else {
      if (c == 10) line++;
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
function escapeEnd(p: i32, n: i32): i32 {
  const e = at(p + 1);
  if (e == 10) {
    line++;
    return p + 2;
  }
  if (e == 13) {
    p += 2;
    if (at(p) == 10) {
      line++;
      p++;
    }
    return p;
  }
  if (e == 122) {
    p += 2;
    while (p < n) {
      const w = at(p);
      if (w == 10) line++;
      else if (w != 32 && w != 9 && w != 13 && w != 11 && w != 12) break;
      p++;
    }
    return p;
  }
  return p + 2 > n ? n : p + 2;
}

/** The closing quote of a '…' or "…" string from `p`, or (unterminated) its line's end. */
function quotedEnd(p: i32, n: i32, quote: i32): i32 {
  while (p < n) {
    const c = at(p);
    if (c == quote || c == 10) break;
    if (c == 92) p = escapeEnd(p, n);
    else p++;
  }
  return p;
}

/**
 * One piece of a backtick string, from `from` (just after a backtick or a
 * hole's `}`): `closed` when a backtick ends it, `hole` when `{` opens an
 * interpolation (pushed). Unterminated, it ends at the line's end (Luau
 * allows no raw newline there).
 */
function interpolatedPiece(from: i32, n: i32, closed: i32, hole: i32): i32 {
  let p = interpolatedEnd(from, n);
  pieceEnd = p;
  let kind = closed;
  const c = at(p);
  if (c == 96) {
    p++;
  } else if (c == 123) {
    kind = hole;
    store<u8>(braces + <usize>(braceDepth++), 1);
    p++;
  }
  pieceNext = p;
  return kind;
}

function interpolatedEnd(p: i32, n: i32): i32 {
  while (p < n) {
    const c = at(p);
    if (c == 96 || c == 123 || c == 10) break;
    if (c == 92) p = escapeEnd(p, n);
    else p++;
  }
  return p;
}

/** After `--` at `p`: to the end of the line, or past `[==[ … ]==]`. */
function commentEnd(p: i32, n: i32): i32 {
  if (at(p) == 91) {
    const level = longBracketLevel(p, n);
    if (level >= 0) return longBracketEnd(p + level + 2, n, level);
  }
  while (p < n && at(p) != 10) p++;
  return p;
}
