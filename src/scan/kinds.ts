/**
 * Token kinds of the scanner. Constants only: the WebAssembly scanner
 * (assembly/) compiles this same file, so both sides agree on every number.
 */

// Keywords are 10..30; words.ts maps their text to these kinds.
export const KW_AND = 10;
export const KW_BREAK = 11;
export const KW_DO = 12;
export const KW_ELSE = 13;
export const KW_ELSEIF = 14;
export const KW_END = 15;
export const KW_FALSE = 16;
export const KW_FOR = 17;
export const KW_FUNCTION = 18;
export const KW_IF = 19;
export const KW_IN = 20;
export const KW_LOCAL = 21;
export const KW_NIL = 22;
export const KW_NOT = 23;
export const KW_OR = 24;
export const KW_REPEAT = 25;
export const KW_RETURN = 26;
export const KW_THEN = 27;
export const KW_TRUE = 28;
export const KW_UNTIL = 29;
export const KW_WHILE = 30;

// `continue`, `type` and `export` are contextual in Luau and stay names.
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

