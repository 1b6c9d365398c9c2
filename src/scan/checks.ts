/**
 * The one walk over a script's tokens: it keeps the block structure and
 * local scopes (blocks.ts), records the per-token findings (deprecated
 * globals, legacy methods, LocalPlayer on the server, require by id, dynamic
 * code, platform services) and collects loops that look endless and never
 * yield; loops.ts then decides which of those to report.
 *
 * It visits only the tokens the lexer noted as notable (brackets, `=`,
 * strings, keywords, known words), about half of them, and reads the others
 * only as neighbours: that halves the dispatch, the walk's main cost.
 */
import { type TokenStream, kindAt, wordAt, startAt, endAt, lineAt } from './lexer.js';
import {
  isKeyword,
  NAME, NUMBER, STRING, INTERP_BEGIN, INTERP_END, LPAREN, RPAREN, LBRACE, RBRACE, LBRACKET, RBRACKET,
  DOT, COLON, DOUBLE_COLON, COMMA, ASSIGN,
  KW_BREAK, KW_DO, KW_ELSE, KW_ELSEIF, KW_END, KW_FOR, KW_FUNCTION, KW_IF, KW_IN, KW_LOCAL, KW_REPEAT, KW_RETURN,
  KW_THEN, KW_UNTIL, KW_WHILE, KW_AND, KW_OR, KW_NOT, COMPOUND_ASSIGN, ARITH, COMPARE, CONCAT, INTERP_MID,
} from './kinds.js';
import {
  WORD_ROLES, ROLE_DEPRECATED_GLOBAL, ROLE_LEGACY_METHOD, ROLE_PLATFORM_SERVICE, ROLE_SHADOWABLE,
  W_WAIT, W_WAIT_UPPER, W_TASK, W_COROUTINE, W_YIELD, W_SYNCHRONIZE, W_DESYNCHRONIZE, W_REQUIRE,
  W_LOCAL_PLAYER, W_INVOKE_SERVER, W_INVOKE_CLIENT, SERVICE_NAME_MIN, SERVICE_NAME_MAX, lookupText,
} from './words.js';
import {
  type Blocks, newBlocks, resetBlocks, openBlock, closeBlock, endBranchScope, markSeen, innermostFunc, declareLocal, isRedefined, isLoop,
  BLOCK_FUNCTION, BLOCK_WHILE, BLOCK_FOR, BLOCK_REPEAT, BLOCK_IF, BLOCK_DO,
  SEEN_HEADER, SEEN_YIELD, SEEN_BREAK, SEEN_RETURN, LOOP_ENDLESS,
} from './blocks.js';
import { whileConditionTruth, untilConditionTruth, countsToHuge, TRUTHY, FALSY } from './conditions.js';
import {
  type FindingSink, addFinding, LEGACY_METHOD, LOCAL_PLAYER_ON_SERVER, PLATFORM_SERVICE, DEPRECATED_GLOBAL, DYNAMIC_CODE,
  EXTERNAL_CODE,
} from './findings.js';

/** A function body: where it is, what it is called, and whether it yields itself. */
export interface FunctionRecord {
  /** The `function` keyword. */
  token: number;
  /**
   * The name whose uses decide whether the function can run at all
   * (`local function f`, `local f = function`, a global `function f`), or -1
   * when it can be reached from elsewhere (methods, fields, anonymous).
   */
  nameToken: number;
  /** The last segment of its name (`update` in `function M:update`), or -1. */
  lastNameToken: number;
  /** The `end` that closes it (the last token when unterminated). */
  endToken: number;
  /** The enclosing function's record index, or -1. */
  parent: number;
  /** A yield in its own body (outside nested functions). */
  yields: boolean;
}

/** A loop with a constant condition and no yield, break or return of its own. */
export interface LoopCandidate {
  /** The `while`, `repeat` or `for` keyword. */
  token: number;
  endToken: number;
  /** Record index of the function the loop is in, or -1. */
  func: number;
}

export interface WalkResult {
  funcs: FunctionRecord[];
  loops: LoopCandidate[];
}

// What an open bracket is, to tell table constructors from calls and groups.
const PAREN = 1;
const SQUARE = 2;
const BRACE = 3;
const INTERPOLATION = 4;

/** Tokens that start the arguments of a call: `f(...)`, `f "..."`, `f {...}`. */
function isCallOpener(kind: number): boolean {
  return kind === LPAREN || kind === STRING || kind === LBRACE;
}

/**
 * Tokens after which `if` starts an expression (`local x = if a then b else c`),
 * which has no `end`, rather than a statement.
 */
function startsExpression(kind: number): boolean {
  switch (kind) {
    case ASSIGN: case COMPOUND_ASSIGN: case LPAREN: case LBRACKET: case LBRACE: case COMMA: case KW_RETURN:
    case ARITH: case COMPARE: case CONCAT: case KW_AND: case KW_OR: case KW_NOT: case INTERP_BEGIN: case INTERP_MID:
    case KW_IN: case KW_UNTIL: case KW_WHILE: case KW_IF: case KW_ELSEIF:
      return true;
    default:
      return false;
  }
}

// Walk state that outlives one call, so a place's thousands of scripts reuse
// it; module level (not closures) so the hot loop keeps its locals in registers.
const blocks: Blocks = newBlocks();
/** What each open bracket is (PAREN, SQUARE, BRACE, INTERPOLATION), innermost last. */
const brackets: number[] = [];
/** Block depths of `if` expressions still waiting for their `else`. */
const ifExpressions: number[] = [];
let funcs: FunctionRecord[] = [];
let loops: LoopCandidate[] = [];

/** Closes the innermost block at token `at`, recording a finished function or a candidate loop. */
function closeInnermost(at: number): void {
  const b = blocks;
  const d = b.depth - 1;
  const blockKind = b.kind[d];
  const flags = b.flags[d];
  if (blockKind === BLOCK_FUNCTION) {
    const record = funcs[b.func[d]];
    record.endToken = at;
    record.yields = (flags & SEEN_YIELD) !== 0;
  } else if (isLoop(blockKind)
    && (flags & (LOOP_ENDLESS | SEEN_HEADER | SEEN_YIELD | SEEN_BREAK | SEEN_RETURN)) === LOOP_ENDLESS) {
    loops.push({ token: b.token[d], endToken: at, func: b.func[d] });
  }
  closeBlock(b);
  while (ifExpressions.length > 0 && ifExpressions[ifExpressions.length - 1] > b.depth) ifExpressions.pop();
}

/** Whether the identifier ending at `end` (longer than five characters) ends in `Async`. */
function endsWithAsync(cs: Uint16Array, end: number): boolean {
  // A, s, y, n, c
  return cs[end - 1] === 99 && cs[end - 2] === 110 && cs[end - 3] === 121 && cs[end - 4] === 115 && cs[end - 5] === 65;
}

/**
 * Whether the call opener at `opener` follows `:SomethingAsync`: any such call
 * waits on the engine (a web or data request), so it yields. (Checked at the
 * opener, which is notable, rather than at the name, which is not.)
 */
function isAsyncCall(data: Int32Array, chars: Uint16Array, opener: number): boolean {
  const name = opener - 1;
  return kindAt(data, name) === NAME && wordAt(data, name) === 0 && kindAt(data, name - 1) === COLON
    && endAt(data, name) - startAt(data, name) > 5 && endsWithAsync(chars, endAt(data, name));
}

/**
 * Walks the tokens once. `localPlayerIsNil` says the script runs on the
 * server, where Players.LocalPlayer is nil.
 */
export function walkTokens(t: TokenStream, sink: FindingSink, localPlayerIsNil: boolean): WalkResult {
  const { data, chars } = t;
  const count = t.count;
  const b = blocks;
  resetBlocks(b);
  funcs = [];
  loops = [];
  ifExpressions.length = 0;
  let bracketDepth = 0;
  /** Bracket depth of the `local` statement whose names are being read, or -1. */
  let localDepth = -1;
  /** Reading the variable names of a `for`. */
  let forNames = false;
  /** A `function` was seen and its parameter list's `(` not yet. */
  let paramsPending = false;
  /** Bracket depth inside the parameter list being read, or -1. */
  let paramDepth = -1;
  /** Names up to this token belong to a function statement's name (`function a.b:c`). */
  let functionNameEnd = 0;
  /** The last `then`/`else` that belonged to an `if` expression: an `if` right after it is one too. */
  let expressionBranch = -1;

  const notable = t.notable;
  const notableCount = t.notableCount;
  /** The last token the `local` rule below was applied to. */
  let ruled = 0;

  // Only the notable tokens (see lexer.ts): the others change nothing here
  // but the end of a `local` name list, which is worked out when it matters.
  for (let q = 0; q < notableCount; q++) {
    const i = notable[q];
    const k = kindAt(data, i);
    if (localDepth >= 0) {
      // A `local` statement's names end at its `=`, at a keyword, or at a new
      // line that does not continue the name list. Each token is ruled on once.
      for (let j = ruled + 1; j <= i; j++) {
        if (isKeyword(kindAt(data, j)) || (lineAt(data, j) !== lineAt(data, j - 1) && kindAt(data, j - 1) !== COMMA)) {
          localDepth = -1;
          break;
        }
      }
    }
    ruled = i;

    switch (k) {
      case NAME: {
        // Notable names are known words (w > 0).
        const w = wordAt(data, i);
        const prev = kindAt(data, i - 1);
        if (i <= functionNameEnd) break;
        const next = kindAt(data, i + 1);
        const roles = WORD_ROLES[w];

        if (prev === COLON) {
          if (!isCallOpener(next)) break; // a type annotation, not a method call
          if (w === W_WAIT || w === W_WAIT_UPPER || w === W_INVOKE_SERVER || w === W_INVOKE_CLIENT) {
            markSeen(b, SEEN_YIELD);
          }
          if (roles & ROLE_LEGACY_METHOD) addFinding(sink, LEGACY_METHOD, lineAt(data, i), i);
          break;
        }
        if (prev === DOT) {
          if (w === W_LOCAL_PLAYER && localPlayerIsNil) addFinding(sink, LOCAL_PLAYER_ON_SERVER, lineAt(data, i), i);
          if (roles & ROLE_PLATFORM_SERVICE) addFinding(sink, PLATFORM_SERVICE, lineAt(data, i), i);
          if (isCallOpener(next) && kindAt(data, i - 2) === NAME && kindAt(data, i - 3) !== DOT && kindAt(data, i - 3) !== COLON) {
            const owner = wordAt(data, i - 2);
            if ((owner === W_TASK && (w === W_WAIT || w === W_SYNCHRONIZE || w === W_DESYNCHRONIZE))
              || (owner === W_COROUTINE && w === W_YIELD)) markSeen(b, SEEN_YIELD);
          }
          break;
        }
        if (prev === DOUBLE_COLON) break; // a type after `::`

        if (roles & ROLE_SHADOWABLE) {
          // Declarations and assignments name the word; they do not use the global.
          if ((localDepth === bracketDepth && (prev === KW_LOCAL || prev === COMMA))
            || (forNames && (prev === KW_FOR || prev === COMMA))
            || (paramDepth === bracketDepth && (prev === LPAREN || prev === COMMA))) {
            declareLocal(b, w);
            break;
          }
          if (next === ASSIGN) {
            if (bracketDepth === 0 || brackets[bracketDepth - 1] !== BRACE) b.userGlobals[w] = 1; // else a table key
            break;
          }
          // `{ wait: number }` or `(wait: number) -> ()`: a field or parameter name in a type.
          if (next === COLON && !(kindAt(data, i + 2) === NAME && isCallOpener(kindAt(data, i + 3)))) break;
        }

        // A call to anything named wait yields, even a local alias (`local wait = task.wait`).
        if ((w === W_WAIT || w === W_WAIT_UPPER) && isCallOpener(next)) markSeen(b, SEEN_YIELD);
        if ((roles & ROLE_SHADOWABLE) && !isRedefined(b, w)) {
          addFinding(sink, roles & ROLE_DEPRECATED_GLOBAL ? DEPRECATED_GLOBAL : DYNAMIC_CODE, lineAt(data, i), i);
        }
        if (w === W_REQUIRE && next === LPAREN && kindAt(data, i + 2) === NUMBER && kindAt(data, i + 3) === RPAREN) {
          addFinding(sink, EXTERNAL_CODE, lineAt(data, i), i + 2);
        }
        break;
      }

      case STRING: {
        if (isAsyncCall(data, chars, i)) markSeen(b, SEEN_YIELD);
        const length = endAt(data, i) - startAt(data, i);
        if (length >= SERVICE_NAME_MIN && length <= SERVICE_NAME_MAX) {
          const w = lookupText(chars, startAt(data, i), endAt(data, i));
          if (w !== 0 && (WORD_ROLES[w] & ROLE_PLATFORM_SERVICE)) addFinding(sink, PLATFORM_SERVICE, lineAt(data, i), i);
        }
        break;
      }

      case LPAREN:
        if (isAsyncCall(data, chars, i)) markSeen(b, SEEN_YIELD);
        brackets[bracketDepth++] = PAREN;
        if (paramsPending) {
          paramsPending = false;
          paramDepth = bracketDepth;
        }
        break;
      case LBRACKET:
        brackets[bracketDepth++] = SQUARE;
        break;
      case LBRACE:
        if (isAsyncCall(data, chars, i)) markSeen(b, SEEN_YIELD);
        brackets[bracketDepth++] = BRACE;
        break;
      case INTERP_BEGIN:
        brackets[bracketDepth++] = INTERPOLATION;
        break;
      case RPAREN:
      case RBRACKET:
      case RBRACE:
      case INTERP_END:
        if (bracketDepth > 0) bracketDepth--;
        if (bracketDepth < paramDepth) paramDepth = -1;
        break;

      case ASSIGN:
        if (localDepth === bracketDepth) localDepth = -1;
        forNames = false;
        break;
      case KW_IN:
        forNames = false;
        break;
      case KW_LOCAL:
        if (kindAt(data, i + 1) !== KW_FUNCTION) localDepth = bracketDepth;
        break;

      case KW_FUNCTION: {
        let nameToken = -1;
        let lastNameToken = -1;
        const prev = kindAt(data, i - 1);
        if (kindAt(data, i + 1) === NAME) {
          // `local function f` or a function statement `function a.b:c`.
          let j = i + 1;
          if (prev !== KW_LOCAL) {
            while ((kindAt(data, j + 1) === DOT || kindAt(data, j + 1) === COLON) && kindAt(data, j + 2) === NAME) j += 2;
          }
          lastNameToken = j;
          functionNameEnd = j;
          if (j === i + 1) {
            nameToken = j;
            const w = wordAt(data, j);
            if (w !== 0 && (WORD_ROLES[w] & ROLE_SHADOWABLE)) {
              if (prev === KW_LOCAL) declareLocal(b, w);
              else b.userGlobals[w] = 1;
            }
          }
        } else if (prev === ASSIGN && kindAt(data, i - 2) === NAME) {
          // `local f = function`, `f = function`, `t.f = function`, `{ f = function`.
          lastNameToken = i - 2;
          const before = kindAt(data, i - 3);
          if (before === KW_LOCAL
            || (before !== DOT && before !== COLON && (bracketDepth === 0 || brackets[bracketDepth - 1] !== BRACE))) {
            nameToken = i - 2;
          }
        }
        funcs.push({ token: i, nameToken, lastNameToken, endToken: count - 1, parent: innermostFunc(b), yields: false });
        openBlock(b, BLOCK_FUNCTION, i, funcs.length - 1);
        paramsPending = true;
        break;
      }

      case KW_WHILE:
        openBlock(b, BLOCK_WHILE, i, innermostFunc(b), SEEN_HEADER);
        break;
      case KW_FOR:
        openBlock(b, BLOCK_FOR, i, innermostFunc(b), SEEN_HEADER);
        forNames = true;
        break;
      case KW_REPEAT:
        openBlock(b, BLOCK_REPEAT, i, innermostFunc(b));
        break;
      case KW_IF:
        if (startsExpression(kindAt(data, i - 1)) || expressionBranch === i - 1) ifExpressions.push(b.depth);
        else openBlock(b, BLOCK_IF, i, innermostFunc(b));
        break;
      case KW_THEN:
        if (ifExpressions.length > 0 && ifExpressions[ifExpressions.length - 1] === b.depth) expressionBranch = i;
        break;
      case KW_DO: {
        forNames = false;
        const d = b.depth - 1;
        if (d >= 0 && (b.flags[d] & SEEN_HEADER)) {
          // The `do` of a `while`/`for` header: the loop body starts here.
          let flags = b.flags[d] & ~SEEN_HEADER;
          const endless = b.kind[d] === BLOCK_WHILE
            ? whileConditionTruth(t, b.token[d], i) === TRUTHY
            : countsToHuge(t, b.token[d], i);
          if (endless) flags |= LOOP_ENDLESS;
          b.flags[d] = flags;
        } else {
          openBlock(b, BLOCK_DO, i, innermostFunc(b));
        }
        break;
      }
      case KW_UNTIL: {
        const d = b.depth - 1;
        if (d >= 0 && b.kind[d] === BLOCK_REPEAT) {
          if (untilConditionTruth(t, i) === FALSY) b.flags[d] |= LOOP_ENDLESS;
          closeInnermost(i);
        }
        break;
      }
      case KW_END:
        // A stray `end` closes nothing; `end` cannot close a `repeat`.
        if (b.depth > 0 && b.kind[b.depth - 1] !== BLOCK_REPEAT) closeInnermost(i);
        break;
      case KW_ELSE:
      case KW_ELSEIF:
        if (ifExpressions.length > 0 && ifExpressions[ifExpressions.length - 1] === b.depth) {
          // A branch of an `if` expression; its `else` completes it.
          if (k === KW_ELSE) {
            ifExpressions.pop();
            expressionBranch = i;
          }
        } else if (b.depth > 0 && b.kind[b.depth - 1] === BLOCK_IF) {
          endBranchScope(b);
        }
        break;
      case KW_BREAK:
        markSeen(b, SEEN_BREAK);
        break;
      case KW_RETURN:
        markSeen(b, SEEN_RETURN);
        break;
      default:
        break;
    }
  }
  // Unterminated blocks end with the source.
  while (b.depth > 0) closeInnermost(count - 1);
  const result = { funcs, loops };
  funcs = [];
  loops = [];
  return result;
}
