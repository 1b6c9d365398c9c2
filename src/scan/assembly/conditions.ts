/**
 * Loop conditions that are constant: `while true do`, `while 1 do`,
 * `repeat … until false`, with `not` and parentheses around a literal, and
 * numeric `for` loops that count to math.huge.
 */
import {
  NAME, NUMBER, STRING, LPAREN, RPAREN, DOT, COMMA, ASSIGN, KW_NOT, KW_TRUE, KW_FALSE, KW_NIL, KW_AND, KW_OR,
  CONCAT, COMPARE, ARITH, DOUBLE_COLON, COLON, LBRACKET, LBRACE, INTERP_BEGIN,
} from '../kinds';
import { kindAt, wordAt } from './token';
import { wordMath, wordHuge } from './word-ids';

export const TRUTHY = 1;
export const FALSY = 0;
export const UNKNOWN = -1;

/** Set by readConstant: the first token after the constant. */
let constantEnd = 0;

/**
 * Reads a constant condition starting at token `from`: any mix of `not` and
 * `(` around one literal, then the matching `)`s. Returns the truth value
 * (and sets constantEnd), or UNKNOWN when the condition is anything else. In
 * Lua every value but nil and false is true, so numbers and strings (even
 * "") count as true.
 */
function readConstant(from: i32): i32 {
  let i = from;
  let negations = 0;
  let parens = 0;
  for (;;) {
    const k = kindAt(i);
    if (k == KW_NOT) negations++;
    else if (k == LPAREN) parens++;
    else break;
    i++;
  }
  let truth: i32;
  switch (kindAt(i)) {
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
      constantEnd = i;
      return UNKNOWN;
  }
  i++;
  while (parens > 0 && kindAt(i) == RPAREN) {
    parens--;
    i++;
  }
  constantEnd = i;
  if (parens != 0) return UNKNOWN;
  return negations % 2 == 0 ? truth : 1 - truth;
}

/** The truth of a `while` condition, the tokens strictly between `while` and its `do`. */
export function whileConditionTruth(whileToken: i32, doToken: i32): i32 {
  const truth = readConstant(whileToken + 1);
  return constantEnd == doToken ? truth : UNKNOWN;
}

/** Tokens that would continue an expression, so what came before was not the whole condition. */
function continuesExpression(kind: i32): bool {
  switch (kind) {
    case KW_AND: case KW_OR: case CONCAT: case COMPARE: case ARITH: case DOUBLE_COLON:
    case DOT: case COLON: case LPAREN: case LBRACKET: case LBRACE: case STRING: case INTERP_BEGIN:
      return true;
    default:
      return false;
  }
}

/** The truth of the condition after `until` (its end is found by reading the constant). */
export function untilConditionTruth(untilToken: i32): i32 {
  const truth = readConstant(untilToken + 1);
  return truth == UNKNOWN || continuesExpression(kindAt(constantEnd)) ? UNKNOWN : truth;
}

/** A numeric `for` whose limit (or step-less header end) is `math.huge`: `for i = 1, math.huge do`. */
export function countsToHuge(forToken: i32, doToken: i32): bool {
  if (kindAt(forToken + 1) != NAME || kindAt(forToken + 2) != ASSIGN) return false;
  for (let i = forToken + 3; i + 3 < doToken; i++) {
    if (kindAt(i) == COMMA && wordAt(i + 1) == wordMath && kindAt(i + 2) == DOT && wordAt(i + 3) == wordHuge
      && (i + 4 == doToken || kindAt(i + 4) == COMMA)) return true;
  }
  return false;
}
