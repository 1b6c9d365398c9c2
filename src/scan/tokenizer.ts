/**
 * A Luau tokenizer for the findings scanner. It reads every string form
 * (quoted, long brackets of any level, backtick interpolation with nested
 * `{}` expressions), comments, numbers and operators, and never throws: on
 * malformed or truncated input it ends the broken token where it can (an
 * unterminated quoted string at its line's end, a long string or comment at
 * the end of the source) and skips characters that start no token. One pass,
 * linear in the source length.
 *
 * Tokens go into typed arrays that are reused from call to call (the scanner
 * runs on every script of a place), so the result is only valid until the
 * next call. Index 0 is a sentinel and the last real token is followed by
 * EOF padding, so the checks can look one token behind and three ahead
 * without bounds tests. Comments produce no tokens.
 */
import {
  hashStep, lookupWord, WORD_KEYWORD,
  KW_AND, KW_BREAK, KW_DO, KW_ELSE, KW_ELSEIF, KW_END, KW_FALSE, KW_FOR, KW_FUNCTION, KW_IF, KW_IN,
  KW_LOCAL, KW_NIL, KW_NOT, KW_OR, KW_REPEAT, KW_RETURN, KW_THEN, KW_TRUE, KW_UNTIL, KW_WHILE,
} from './words.js';

export {
  KW_AND, KW_BREAK, KW_DO, KW_ELSE, KW_ELSEIF, KW_END, KW_FALSE, KW_FOR, KW_FUNCTION, KW_IF, KW_IN,
  KW_LOCAL, KW_NIL, KW_NOT, KW_OR, KW_REPEAT, KW_RETURN, KW_THEN, KW_TRUE, KW_UNTIL, KW_WHILE,
};

// Token kinds. Keywords are 10..30 (from words.ts); `continue`, `type` and
// `export` are contextual in Luau and stay names.
export const EOF = 0;
export const NAME = 1;
export const NUMBER = 2;
/** A quoted, long-bracket or interpolation-free backtick string; start/end span its contents. */
export const STRING = 3;
/** Backtick string pieces around `{expr}`: `a{  }b{  }c`. */
export const INTERP_BEGIN = 4;
export const INTERP_MID = 5;
export const INTERP_END = 6;
export const LPAREN = 40;
export const RPAREN = 41;
export const LBRACE = 42;
export const RBRACE = 43;
export const LBRACKET = 44;
export const RBRACKET = 45;
export const DOT = 46;
export const COLON = 47;
export const DOUBLE_COLON = 48;
export const COMMA = 49;
export const SEMICOLON = 50;
export const ASSIGN = 51;
export const CONCAT = 52;
export const ELLIPSIS = 53;
export const ARROW = 54;
/** `+=` `-=` `*=` `/=` `//=` `%=` `^=` `..=` */
export const COMPOUND_ASSIGN = 55;
/** `==` `~=` `<` `>` `<=` `>=` */
export const COMPARE = 56;
/** `+` `-` `*` `/` `//` `%` `^` `#` */
export const ARITH = 57;
/** Any other ASCII punctuation (`?`, `|`, `&`, `@`, ...). */
export const OTHER = 58;

export function isKeyword(kind: number): boolean {
  return kind >= KW_AND && kind <= KW_WHILE;
}

export interface Tokens {
  source: string;
  /** The source had more tokens than the scanner keeps; only its beginning was read. */
  truncated: boolean;
  /** Index one past the last real token; tokens are 1..count-1. */
  count: number;
  kind: Uint8Array;
  /** Interned word id for names and keywords (words.ts), 0 for anything else. */
  word: Uint16Array;
  start: Int32Array;
  end: Int32Array;
  /** 1-based line on which the token starts. */
  line: Int32Array;
}

/** EOF tokens after the last real one, for lookahead without bounds tests. */
const PADDING = 4;

const CHAR_IDENT = 1;
const CHAR_DIGIT = 2;
const charClass = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95) charClass[c] = CHAR_IDENT;
  else if (c >= 48 && c <= 57) charClass[c] = CHAR_DIGIT;
}

function isIdentPart(c: number): boolean {
  return c < 128 && charClass[c] !== 0;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

const INITIAL_CAPACITY = 4096;
/**
 * At most this many token slots (about 60 MB of arrays): a source with more
 * tokens is scanned up to that point. Scripts are far smaller; this keeps a
 * hostile multi-megabyte Source from exhausting memory.
 */
const MAX_CAPACITY = 1 << 22;
/** Token arrays above this size are not kept between calls. */
const RETAINED_CAPACITY = 1 << 20;

let tokens: Tokens = allocate(INITIAL_CAPACITY);
let capacity = INITIAL_CAPACITY;
/** Set when a source had more tokens than fit: the rest of it was not read. */
let truncated = false;

// Scan state, module level so the small helpers below can share it without
// allocating closures per call.
let src = '';
let length = 0;
let pos = 0;
let line = 1;
let count = 1;
/** Open `{`s: 0 for a table/type brace, 1 for an interpolation hole in a backtick string. */
let braces = new Uint8Array(64);
let braceDepth = 0;

/** Lets go of token arrays grown for an unusually large script. */
export function releaseLargeTokenBuffers(): void {
  if (capacity > RETAINED_CAPACITY) {
    tokens = allocate(INITIAL_CAPACITY);
    capacity = INITIAL_CAPACITY;
  }
  if (braces.length > 1 << 16) braces = new Uint8Array(64);
}

function allocate(size: number): Tokens {
  return {
    source: '',
    truncated: false,
    count: 0,
    kind: new Uint8Array(size),
    word: new Uint16Array(size),
    start: new Int32Array(size),
    end: new Int32Array(size),
    line: new Int32Array(size),
  };
}

function grow(): void {
  const bigger = allocate(capacity * 2);
  bigger.kind.set(tokens.kind);
  bigger.word.set(tokens.word);
  bigger.start.set(tokens.start);
  bigger.end.set(tokens.end);
  bigger.line.set(tokens.line);
  tokens = bigger;
  capacity *= 2;
}

function emit(kind: number, start: number, end: number, atLine: number, word: number): void {
  if (count + PADDING >= capacity) {
    if (capacity >= MAX_CAPACITY) {
      truncated = true;
      return;
    }
    grow();
  }
  const t = tokens;
  t.kind[count] = kind;
  t.word[count] = word;
  t.start[count] = start;
  t.end[count] = end;
  t.line[count] = atLine;
  count++;
}

function pushBrace(kind: number): void {
  if (braceDepth === braces.length) {
    const bigger = new Uint8Array(braces.length * 2);
    bigger.set(braces);
    braces = bigger;
  }
  braces[braceDepth++] = kind;
}

export function tokenize(source: string): Tokens {
  const s = source;
  const n = s.length;
  braceDepth = 0;
  truncated = false;
  tokens.kind[0] = EOF;
  tokens.line[0] = 1;
  // The hot paths (blanks, names, common punctuation) run on locals; the rest
  // syncs them into the module state the helpers share.
  let t = tokens;
  let kinds = t.kind;
  let words = t.word;
  let starts = t.start;
  let ends = t.end;
  let lines = t.line;
  let limit = capacity - PADDING;
  let p = 0;
  let ln = 1;
  let c = 1;

  while (p < n) {
    if (c >= limit) {
      if (capacity >= MAX_CAPACITY) {
        truncated = true;
        break;
      }
      count = c;
      grow();
      t = tokens;
      kinds = t.kind;
      words = t.word;
      starts = t.start;
      ends = t.end;
      lines = t.line;
      limit = capacity - PADDING;
    }
    const ch = s.charCodeAt(p);
    if (ch <= 32) {
      // Blanks; other control characters start no token either.
      if (ch === 10) ln++;
      p++;
      continue;
    }
    let simple = 0;
    if (ch < 128) {
      if (charClass[ch] === CHAR_IDENT) {
        let q = p + 1;
        let hash = ch;
        while (q < n) {
          const d = s.charCodeAt(q);
          if (d >= 128 || charClass[d] === 0) break;
          hash = hashStep(hash, d);
          q++;
        }
        const w = lookupWord(hash, s, p, q);
        kinds[c] = w === 0 ? NAME : WORD_KEYWORD[w] || NAME;
        words[c] = w;
        starts[c] = p;
        ends[c] = q;
        lines[c] = ln;
        c++;
        p = q;
        continue;
      }
      switch (ch) {
        case 40: simple = LPAREN; break;
        case 41: simple = RPAREN; break;
        case 44: simple = COMMA; break;
        case 59: simple = SEMICOLON; break;
        case 93: simple = RBRACKET; break;
        case 35: simple = ARITH; break;
        case 46: { // `.` alone, not `..`, `...` or `.5`
          const next = s.charCodeAt(p + 1);
          if (next !== 46 && !isDigit(next)) simple = DOT;
          break;
        }
        case 58: // `:` alone, not `::`
          if (s.charCodeAt(p + 1) !== 58) simple = COLON;
          break;
        case 61: // `=` alone, not `==`
          if (s.charCodeAt(p + 1) !== 61) simple = ASSIGN;
          break;
        default:
          break;
      }
    }
    if (simple !== 0) {
      kinds[c] = simple;
      words[c] = 0;
      starts[c] = p;
      ends[c] = p + 1;
      lines[c] = ln;
      c++;
      p++;
      continue;
    }
    // Everything else: numbers, strings, comments, multi-character operators.
    src = s;
    length = n;
    pos = p;
    line = ln;
    count = c;
    if (isDigit(ch)) readNumber();
    else readPunctuation(ch);
    p = pos;
    ln = line;
    c = count;
    if (truncated) break;
    if (t !== tokens) {
      t = tokens;
      kinds = t.kind;
      words = t.word;
      starts = t.start;
      ends = t.end;
      lines = t.line;
      limit = capacity - PADDING;
    }
  }

  for (let i = 0; i < PADDING; i++) {
    t.kind[c + i] = EOF;
    t.word[c + i] = 0;
    t.start[c + i] = n;
    t.end[c + i] = n;
    t.line[c + i] = ln;
  }
  t.source = source;
  t.truncated = truncated;
  t.count = c;
  src = '';
  return t;
}

/** Decimal, hex (0x), binary (0b), with `_` separators, fractions and exponents. */
function readNumber(): void {
  const start = pos;
  let p = pos;
  const second = src.charCodeAt(p + 1);
  if (src.charCodeAt(p) === 48 && (second === 120 || second === 88 || second === 98 || second === 66)) {
    p += 2;
    while (p < length && isIdentPart(src.charCodeAt(p))) p++;
  } else {
    while (p < length) {
      const c = src.charCodeAt(p);
      if (isDigit(c) || c === 46 || c === 95) p++;
      else break;
    }
    const e = src.charCodeAt(p);
    if (e === 101 || e === 69) {
      p++;
      const sign = src.charCodeAt(p);
      if (sign === 43 || sign === 45) p++;
    }
    // Trailing letters make a malformed number; they belong to it, as in Luau.
    while (p < length && isIdentPart(src.charCodeAt(p))) p++;
  }
  emit(NUMBER, start, p, line, 0);
  pos = p;
}

/**
 * The level of a long bracket opening at `at` (`[[` is 0, `[==[` is 2), or -1
 * when the `[` does not open one.
 */
function longBracketLevel(at: number): number {
  let p = at + 1;
  while (p < length && src.charCodeAt(p) === 61) p++;
  return src.charCodeAt(p) === 91 ? p - at - 1 : -1;
}

/** Where the contents of the last long bracket read ended. */
let longContentEnd = 0;

/**
 * Skips a long bracket body starting at `p` (after the opening), counting
 * lines; returns the position after the closing bracket, or the source end
 * when it is unterminated.
 */
function skipLongBracket(p: number, level: number): number {
  while (p < length) {
    const c = src.charCodeAt(p);
    if (c === 93) {
      let q = p + 1;
      while (q < length && src.charCodeAt(q) === 61) q++;
      if (q - p - 1 === level && src.charCodeAt(q) === 93) {
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
  longContentEnd = length;
  return length;
}

/**
 * Skips the escape whose backslash is at `p`; returns the position after it.
 * A backslash-newline continues the string and `\z` skips following
 * whitespace, so both can move to later lines.
 */
function skipEscape(p: number): number {
  const e = src.charCodeAt(p + 1);
  if (e === 10) {
    line++;
    return p + 2;
  }
  if (e === 13) {
    p += 2;
    if (src.charCodeAt(p) === 10) {
      line++;
      p++;
    }
    return p;
  }
  if (e === 122) {
    p += 2;
    while (p < length) {
      const w = src.charCodeAt(p);
      if (w === 10) line++;
      else if (w !== 32 && w !== 9 && w !== 13 && w !== 11 && w !== 12) break;
      p++;
    }
    return p;
  }
  return p + 2 > length ? length : p + 2;
}

/** A '…' or "…" string; an unescaped newline ends an unterminated one. */
function readQuoted(quote: number): void {
  const startLine = line;
  let p = pos + 1;
  while (p < length) {
    const c = src.charCodeAt(p);
    if (c === quote || c === 10) break;
    if (c === 92) p = skipEscape(p);
    else p++;
  }
  emit(STRING, pos + 1, p, startLine, 0);
  pos = p < length && src.charCodeAt(p) === quote ? p + 1 : p;
}

/**
 * One literal piece of a backtick string, from `p` up to the closing
 * backtick, an interpolation hole `{`, or (unterminated, as Luau allows no
 * raw newline there) the end of the line.
 */
function readInterpolated(p: number, first: boolean): void {
  const startLine = line;
  const start = p;
  while (p < length) {
    const c = src.charCodeAt(p);
    if (c === 96) {
      emit(first ? STRING : INTERP_END, start, p, startLine, 0);
      pos = p + 1;
      return;
    }
    if (c === 123) {
      emit(first ? INTERP_BEGIN : INTERP_MID, start, p, startLine, 0);
      pushBrace(1);
      pos = p + 1;
      return;
    }
    if (c === 10) break;
    if (c === 92) p = skipEscape(p);
    else p++;
  }
  emit(first ? STRING : INTERP_END, start, p, startLine, 0);
  pos = p;
}

function readPunctuation(c: number): void {
  const next = src.charCodeAt(pos + 1);
  switch (c) {
    case 34: // "
    case 39: // '
      readQuoted(c);
      return;
    case 96: // `
      readInterpolated(pos + 1, true);
      return;
    case 45: // -
      if (next === 45) {
        skipComment();
        return;
      }
      if (next === 61) return op(COMPOUND_ASSIGN, 2);
      if (next === 62) return op(ARROW, 2);
      return op(ARITH, 1);
    case 91: { // [
      const level = longBracketLevel(pos);
      if (level < 0) return op(LBRACKET, 1);
      const startLine = line;
      const contentStart = pos + level + 2;
      pos = skipLongBracket(contentStart, level);
      emit(STRING, contentStart, longContentEnd, startLine, 0);
      return;
    }
    case 93: return op(RBRACKET, 1);
    case 40: return op(LPAREN, 1);
    case 41: return op(RPAREN, 1);
    case 123: // {
      pushBrace(0);
      return op(LBRACE, 1);
    case 125: // }
      if (braceDepth > 0 && braces[--braceDepth] === 1) {
        readInterpolated(pos + 1, false);
        return;
      }
      return op(RBRACE, 1);
    case 44: return op(COMMA, 1);
    case 59: return op(SEMICOLON, 1);
    case 46: // .
      if (next === 46) {
        const third = src.charCodeAt(pos + 2);
        if (third === 46) return op(ELLIPSIS, 3);
        if (third === 61) return op(COMPOUND_ASSIGN, 3);
        return op(CONCAT, 2);
      }
      if (isDigit(next)) {
        readNumber();
        return;
      }
      return op(DOT, 1);
    case 58: // :
      return next === 58 ? op(DOUBLE_COLON, 2) : op(COLON, 1);
    case 61: // =
      return next === 61 ? op(COMPARE, 2) : op(ASSIGN, 1);
    case 126: // ~
      return next === 61 ? op(COMPARE, 2) : op(OTHER, 1);
    case 60: // <
    case 62: // >
      return next === 61 ? op(COMPARE, 2) : op(COMPARE, 1);
    case 47: // /
      if (next === 47) return src.charCodeAt(pos + 2) === 61 ? op(COMPOUND_ASSIGN, 3) : op(ARITH, 2);
      return next === 61 ? op(COMPOUND_ASSIGN, 2) : op(ARITH, 1);
    case 43: // +
    case 42: // *
    case 37: // %
    case 94: // ^
      return next === 61 ? op(COMPOUND_ASSIGN, 2) : op(ARITH, 1);
    case 35: // #
      return op(ARITH, 1);
    default:
      // Other printable ASCII is an operator Luau may or may not know; control
      // characters and non-ASCII start no token and are skipped.
      if (c > 32 && c < 127) return op(OTHER, 1);
      pos++;
  }
}

function op(kind: number, width: number): void {
  emit(kind, pos, pos + width, line, 0);
  pos += width;
}

/** `--` to the end of the line, or `--[==[ … ]==]`. */
function skipComment(): void {
  const p = pos + 2;
  if (src.charCodeAt(p) === 91) {
    const level = longBracketLevel(p);
    if (level >= 0) {
      pos = skipLongBracket(p + level + 2, level);
      return;
    }
  }
  const newline = src.indexOf('\n', p);
  pos = newline < 0 ? length : newline;
}
