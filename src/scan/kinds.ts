/**
 * Token kinds of the scanner. Keywords are 10..30 and come from words.ts,
 * where the word table that recognises them is built.
 */
import {
  KW_AND, KW_BREAK, KW_DO, KW_ELSE, KW_ELSEIF, KW_END, KW_FALSE, KW_FOR, KW_FUNCTION, KW_IF, KW_IN,
  KW_LOCAL, KW_NIL, KW_NOT, KW_OR, KW_REPEAT, KW_RETURN, KW_THEN, KW_TRUE, KW_UNTIL, KW_WHILE,
} from './words.js';

export {
  KW_AND, KW_BREAK, KW_DO, KW_ELSE, KW_ELSEIF, KW_END, KW_FALSE, KW_FOR, KW_FUNCTION, KW_IF, KW_IN,
  KW_LOCAL, KW_NIL, KW_NOT, KW_OR, KW_REPEAT, KW_RETURN, KW_THEN, KW_TRUE, KW_UNTIL, KW_WHILE,
};

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

export function isKeyword(kind: number): boolean {
  return kind >= KW_AND && kind <= KW_WHILE;
}
