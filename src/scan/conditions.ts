/**
 * Loop conditions that are constant: `while true do`, `while 1 do`,
 * `repeat … until false`, with `not` and parentheses around a literal, and
 * numeric `for` loops that count to math.huge.
 */
import { type TokenStream, kindAt, wordAt } from './lexer.js';
import {
  NAME, NUMBER, STRING, LPAREN, RPAREN, DOT, COMMA, ASSIGN,
  KW_NOT, KW_TRUE, KW_FALSE, KW_NIL, KW_AND, KW_OR, CONCAT, COMPARE, ARITH, DOUBLE_COLON, COLON,
  LBRACKET, LBRACE, INTERP_BEGIN,
} from './kinds.js';
import { W_MATH, W_HUGE } from './words.js';

export const TRUTHY = 1;
export const FALSY = 0;
export const UNKNOWN = -1;

/**
 * Reads a constant condition starting at token `from`: any mix of `not` and
 * `(` around one literal, then the matching `)`s. Returns the truth value and
 * the index of the first token after it, or UNKNOWN when the condition is
 * anything else. In Lua every value but nil and false is true, so numbers and
 * strings (even "") count as true.
 */
function readConstant(t: TokenStream, from: number): { truth: number; next: number } {
  const data = t.data;
  let i = from;
  let negations = 0;
  let parens = 0;
  for (;;) {
    const k = kindAt(data, i);
    if (k === KW_NOT) negations++;
    else if (k === LPAREN) parens++;
    else break;
    i++;
  }
  let truth: number;
  switch (kindAt(data, i)) {
    case KW_TRUE:
    case NUMBER:
    case STRING:
      truth = TRUTHY;
      break;
    case KW_FALSE:
    case KW_NIL:
      truth = FALSY;
      break;
    default:
      return { truth: UNKNOWN, next: i };
  }
  i++;
  while (parens > 0 && kindAt(data, i) === RPAREN) {
    parens--;
    i++;
  }
  if (parens !== 0) return { truth: UNKNOWN, next: i };
  return { truth: negations % 2 === 0 ? truth : 1 - truth, next: i };
}

/** The truth of a `while` condition, the tokens strictly between `while` and its `do`. */
export function whileConditionTruth(t: TokenStream, whileToken: number, doToken: number): number {
  const { truth, next } = readConstant(t, whileToken + 1);
  return next === doToken ? truth : UNKNOWN;
}

/** Tokens that would continue an expression, so what came before was not the whole condition. */
function continuesExpression(kind: number): boolean {
  switch (kind) {
    case KW_AND: case KW_OR: case CONCAT: case COMPARE: case ARITH: case DOUBLE_COLON:
    case DOT: case COLON: case LPAREN: case LBRACKET: case LBRACE: case STRING: case INTERP_BEGIN:
      return true;
    default:
      return false;
  }
}

/** The truth of the condition after `until` (its end is found by reading the constant). */
export function untilConditionTruth(t: TokenStream, untilToken: number): number {
  const { truth, next } = readConstant(t, untilToken + 1);
  return truth === UNKNOWN || continuesExpression(kindAt(t.data, next)) ? UNKNOWN : truth;
}

/** A numeric `for` whose limit (or step-less header end) is `math.huge`: `for i = 1, math.huge do`. */
export function countsToHuge(t: TokenStream, forToken: number, doToken: number): boolean {
  const data = t.data;
  if (kindAt(data, forToken + 1) !== NAME || kindAt(data, forToken + 2) !== ASSIGN) return false;
  for (let i = forToken + 3; i + 3 < doToken; i++) {
    if (kindAt(data, i) === COMMA && wordAt(data, i + 1) === W_MATH && kindAt(data, i + 2) === DOT && wordAt(data, i + 3) === W_HUGE
      && (i + 4 === doToken || kindAt(data, i + 4) === COMMA)) return true;
  }
  return false;
}
