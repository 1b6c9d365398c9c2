/**
 * The one walk over a script's tokens: it keeps the block structure and
 * local scopes (blocks.ts), records the per-token findings (deprecated
 * globals, legacy methods, LocalPlayer on the server, require by id, dynamic
 * code, platform services) and collects loops that look endless and never
 * yield; the host (loops.ts) then decides which of those to report.
 *
 * It visits only the tokens the lexer noted as notable, about half of them,
 * and reads the others only as neighbours.
 *
 * Output, in regions the host reads: findings (code, line, subject token)
 * in the order found; function records (FUNC_FIELDS i32s: `function`
 * token, name token, last name token, closing token, parent record, yields);
 * loop candidates (LOOP_FIELDS i32s: keyword token, closing token, function
 * record).
 */
import {
  NAME, NUMBER, STRING, INTERP_BEGIN, INTERP_END, LPAREN, RPAREN, LBRACE, RBRACE, LBRACKET, RBRACKET,
  DOT, COLON, DOUBLE_COLON, COMMA, ASSIGN, KW_BREAK, KW_DO, KW_ELSE, KW_ELSEIF, KW_END, KW_FOR, KW_FUNCTION,
  KW_IF, KW_IN, KW_LOCAL, KW_REPEAT, KW_RETURN, KW_THEN, KW_UNTIL, KW_WHILE, KW_AND, KW_OR, KW_NOT,
  COMPOUND_ASSIGN, ARITH, COMPARE, CONCAT, INTERP_MID,
} from '../kinds';
import {
  LEGACY_METHOD, LOCAL_PLAYER_ON_SERVER, PLATFORM_SERVICE, DEPRECATED_GLOBAL, DYNAMIC_CODE, EXTERNAL_CODE,
  ROLE_DEPRECATED_GLOBAL, ROLE_LEGACY_METHOD, ROLE_PLATFORM_SERVICE, ROLE_SHADOWABLE, FINDING_FIELDS, FUNC_FIELDS, LOOP_FIELDS,
} from '../constants';
import { WORD_ROLES, MAX_WORDS } from './tables';
import { kindAt, wordAt, startAt, endAt, lineAt } from './token';
import { lookupText } from './words';
import {
  wordWait, wordWaitUpper, wordTask, wordCoroutine, wordYield, wordSynchronize, wordDesynchronize, wordRequire,
  wordLocalPlayer, wordInvokeServer, wordInvokeClient, serviceNameMin, serviceNameMax,
} from './word-ids';
import {
  resetBlocks, openBlock, closeBlock, endBranchScope, markSeen, innermostFunc, declareLocal, defineGlobal, isRedefined,
  isLoop, kindOf, flagsOf, setFlags, tokenOf, funcOf, depth,
  BLOCK_FUNCTION, BLOCK_WHILE, BLOCK_FOR, BLOCK_REPEAT, BLOCK_IF, BLOCK_DO,
  SEEN_HEADER, SEEN_YIELD, SEEN_BREAK, SEEN_RETURN, LOOP_ENDLESS,
} from './blocks';
import { whileConditionTruth, untilConditionTruth, countsToHuge, TRUTHY, FALSY } from './conditions';


// What an open bracket is, to tell table constructors from calls and groups.
const PAREN: u8 = 1;
const SQUARE: u8 = 2;
const BRACE: u8 = 3;
const INTERPOLATION: u8 = 4;

// Results of the last walk.
export let findingCount = 0;
export let funcCount = 0;
export let loopCount = 0;

let src: usize = 0;
let findings: usize = 0;
let funcs: usize = 0;
let loops: usize = 0;
/** What each open bracket is, innermost last. */
let brackets: usize = 0;
/** Block depths of `if` expressions still waiting for their `else`. */
let ifExpressions: usize = 0;
let ifExpressionCount = 0;

/**
 * By word id: 1 when the script defines a function of that name on a table
 * (`function obj:wait()`, `function M.clone()`, `obj.connect = function`,
 * `{ remove = function ... }`). A call of such a name is the script's own
 * method, not Roblox's legacy one, unless its receiver is rooted in a Roblox
 * global (see `receiverIsRoblox`).
 */
const DEFINED_METHODS: usize = memory.data(MAX_WORDS);
let definedMethods = false;

/** Notes that the script defines a method named like the word at token `name`, when that word is a legacy method. */
function defineMethod(name: i32): void {
  const w = wordAt(name);
  if (w == 0 || (load<u8>(WORD_ROLES + <usize>w) & ROLE_LEGACY_METHOD) == 0) return;
  store<u8>(DEFINED_METHODS + <usize>w, 1);
  definedMethods = true;
}

/** Whether the `length` bytes at `start` of the source spell a global that is a Roblox object: game, workspace, Workspace, script, plugin. */
function isRobloxGlobal(start: i32, length: i32): bool {
  const p = src + <usize>start;
  if (length == 4) return load<u8>(p) == 103 && load<u8>(p + 1) == 97 && load<u8>(p + 2) == 109 && load<u8>(p + 3) == 101; // game
  if (length == 6) {
    const c0 = load<u8>(p);
    if (c0 == 115) return load<u8>(p + 1) == 99 && load<u8>(p + 2) == 114 && load<u8>(p + 3) == 105 && load<u8>(p + 4) == 112 && load<u8>(p + 5) == 116; // script
    if (c0 == 112) return load<u8>(p + 1) == 108 && load<u8>(p + 2) == 117 && load<u8>(p + 3) == 103 && load<u8>(p + 4) == 105 && load<u8>(p + 5) == 110; // plugin
    return false;
  }
  if (length == 9) {
    const c0 = load<u8>(p);
    if (c0 != 119 && c0 != 87) return false; // w, W
    // orkspace
    return load<u8>(p + 1) == 111 && load<u8>(p + 2) == 114 && load<u8>(p + 3) == 107 && load<u8>(p + 4) == 115
      && load<u8>(p + 5) == 112 && load<u8>(p + 6) == 97 && load<u8>(p + 7) == 99 && load<u8>(p + 8) == 101;
  }
  return false;
}

/**
 * Whether the receiver of the method call whose name is token `name`
 * (`receiver:name(...)`) can be a Roblox object the script did not make: a
 * name chain rooted in a Roblox global (`game.Players:getPlayers()`,
 * `script.Parent:remove()`), or anything that is not a plain name chain (the
 * result of a call or an index: `x:FindFirstChild("h"):remove()`). A chain
 * rooted in a local or a parameter (`obj:wait()`, `self.signal:connect(f)`)
 * can be the script's own table.
 */
function receiverIsRoblox(name: i32): bool {
  let t = name - 2; // the token before the colon
  if (t < 0 || kindAt(t) != NAME) return true;
  while (t >= 2 && kindAt(t - 1) == DOT && kindAt(t - 2) == NAME) t -= 2;
  if (t >= 1 && (kindAt(t - 1) == DOT || kindAt(t - 1) == COLON)) return true;
  return isRobloxGlobal(startAt(t), endAt(t) - startAt(t));
}

/** Drops the legacy-method findings that call a method the script defines itself (see DEFINED_METHODS). */
function dropOwnMethodCalls(): void {
  let kept = 0;
  for (let f = 0; f < findingCount; f++) {
    const o = findings + <usize>f * (FINDING_FIELDS * 4);
    const code = load<i32>(o);
    const subject = load<i32>(o, 8);
    if (code == LEGACY_METHOD && load<u8>(DEFINED_METHODS + <usize>wordAt(subject)) != 0 && !receiverIsRoblox(subject)) continue;
    if (kept != f) {
      const to = findings + <usize>kept * (FINDING_FIELDS * 4);
      store<i32>(to, code);
      store<i32>(to, load<i32>(o, 4), 4);
      store<i32>(to, subject, 8);
    }
    kept++;
  }
  findingCount = kept;
  memory.fill(DEFINED_METHODS, 0, MAX_WORDS);
  definedMethods = false;
}

function addFinding(code: i32, line: i32, subject: i32): void {
  const o = findings + <usize>findingCount * (FINDING_FIELDS * 4);
  store<i32>(o, code);
  store<i32>(o, line, 4);
  store<i32>(o, subject, 8);
  findingCount++;
}

@inline function funcField(record: i32, field: i32): usize {
  return funcs + ((<usize>record * FUNC_FIELDS + <usize>field) << 2);
}

/** Tokens that start the arguments of a call: `f(...)`, `f "..."`, `f {...}`. */
@inline function isCallOpener(kind: i32): bool {
  return kind == LPAREN || kind == STRING || kind == LBRACE;
}

@inline function isKeyword(kind: i32): bool {
  return kind >= KW_AND && kind <= KW_WHILE;
}

/**
 * Tokens after which `if` starts an expression (`local x = if a then b else c`),
 * which has no `end`, rather than a statement.
 */
function startsExpression(kind: i32): bool {
  switch (kind) {
    case ASSIGN: case COMPOUND_ASSIGN: case LPAREN: case LBRACKET: case LBRACE: case COMMA: case KW_RETURN:
    case ARITH: case COMPARE: case CONCAT: case KW_AND: case KW_OR: case KW_NOT: case INTERP_BEGIN: case INTERP_MID:
    case KW_IN: case KW_UNTIL: case KW_WHILE: case KW_IF: case KW_ELSEIF:
      return true;
    default:
      return false;
  }
}

/** Closes the innermost block at token `at`, recording a finished function or a candidate loop. */
function closeInnermost(at: i32): void {
  const d = depth - 1;
  const blockKind = kindOf(d);
  const flags = flagsOf(d);
  if (blockKind == BLOCK_FUNCTION) {
    const record = funcOf(d);
    store<i32>(funcField(record, 3), at);
    store<i32>(funcField(record, 5), (flags & SEEN_YIELD) != 0 ? 1 : 0);
  } else if (isLoop(blockKind)
    && (flags & (LOOP_ENDLESS | SEEN_HEADER | SEEN_YIELD | SEEN_BREAK | SEEN_RETURN)) == LOOP_ENDLESS) {
    const o = loops + <usize>loopCount * (LOOP_FIELDS * 4);
    store<i32>(o, tokenOf(d));
    store<i32>(o, at, 4);
    store<i32>(o, funcOf(d), 8);
    loopCount++;
  }
  closeBlock();
  while (ifExpressionCount > 0 && load<i32>(ifExpressions + (<usize>(ifExpressionCount - 1) << 2)) > depth) ifExpressionCount--;
}

/**
 * Whether the call opener at `opener` follows `:SomethingAsync`: any such call
 * waits on the engine (a web or data request), so it yields. (Checked at the
 * opener, which is notable, rather than at the name, which is not.)
 */
function isAsyncCall(opener: i32): bool {
  const name = opener - 1;
  if (kindAt(name) != NAME || wordAt(name) != 0 || kindAt(name - 1) != COLON) return false;
  const end = endAt(name);
  if (end - startAt(name) <= 5) return false;
  const p = src + <usize>end;
  // A, s, y, n, c
  return load<u8>(p - 1) == 99 && load<u8>(p - 2) == 110 && load<u8>(p - 3) == 121 && load<u8>(p - 4) == 115 && load<u8>(p - 5) == 65;
}

@inline function bracketOnTop(bracketDepth: i32): u8 {
  return load<u8>(brackets + <usize>(bracketDepth - 1));
}

/**
 * Walks the `count` tokens (lexed from the bytes at `source`) once, visiting
 * the `notableCount` listed at `notable`. `localPlayerIsNil` says the script
 * runs on the server, where Players.LocalPlayer is nil. The regions have room
 * for an entry per notable token (findings for two; a token gives at most one).
 */
export function walk(
  source: usize, count: i32, notable: usize, notableCount: i32, localPlayerIsNil: bool,
  blockStack: usize, declaredStack: usize, bracketStack: usize, ifStack: usize,
  findingsOut: usize, funcsOut: usize, loopsOut: usize,
): void {
  src = source;
  findings = findingsOut;
  funcs = funcsOut;
  loops = loopsOut;
  brackets = bracketStack;
  ifExpressions = ifStack;
  ifExpressionCount = 0;
  findingCount = 0;
  funcCount = 0;
  loopCount = 0;
  resetBlocks(blockStack, declaredStack);

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
  /** The last token the `local` rule below was applied to. */
  let ruled = 0;

  for (let q = 0; q < notableCount; q++) {
    const i = load<i32>(notable + (<usize>q << 2));
    const k = kindAt(i);
    if (localDepth >= 0) {
      // A `local` statement's names end at its `=`, at a keyword, or at a new
      // line that does not continue the name list. Each token is ruled on once.
      for (let j = ruled + 1; j <= i; j++) {
        if (isKeyword(kindAt(j)) || (lineAt(j) != lineAt(j - 1) && kindAt(j - 1) != COMMA)) {
          localDepth = -1;
          break;
        }
      }
    }
    ruled = i;

    switch (k) {
      case NAME: {
        // Notable names are known words (w > 0).
        const w = wordAt(i);
        const prev = kindAt(i - 1);
        if (i <= functionNameEnd) break;
        const next = kindAt(i + 1);
        const roles = <i32>load<u8>(WORD_ROLES + <usize>w);

        if (prev == COLON) {
          if (!isCallOpener(next)) break; // a type annotation, not a method call
          if (w == wordWait || w == wordWaitUpper || w == wordInvokeServer || w == wordInvokeClient) markSeen(SEEN_YIELD);
          if (roles & ROLE_LEGACY_METHOD) addFinding(LEGACY_METHOD, lineAt(i), i);
          break;
        }
        if (prev == DOT) {
          if (w == wordLocalPlayer && localPlayerIsNil) addFinding(LOCAL_PLAYER_ON_SERVER, lineAt(i), i);
          if (roles & ROLE_PLATFORM_SERVICE) addFinding(PLATFORM_SERVICE, lineAt(i), i);
          if (isCallOpener(next) && kindAt(i - 2) == NAME && kindAt(i - 3) != DOT && kindAt(i - 3) != COLON) {
            const owner = wordAt(i - 2);
            if ((owner == wordTask && (w == wordWait || w == wordSynchronize || w == wordDesynchronize))
              || (owner == wordCoroutine && w == wordYield)) markSeen(SEEN_YIELD);
          }
          break;
        }
        if (prev == DOUBLE_COLON) break; // a type after `::`

        if (roles & ROLE_SHADOWABLE) {
          // Declarations and assignments name the word; they do not use the global.
          if ((localDepth == bracketDepth && (prev == KW_LOCAL || prev == COMMA))
            || (forNames && (prev == KW_FOR || prev == COMMA))
            || (paramDepth == bracketDepth && (prev == LPAREN || prev == COMMA))) {
            declareLocal(w);
            break;
          }
          if (next == ASSIGN) {
            if (bracketDepth == 0 || bracketOnTop(bracketDepth) != BRACE) defineGlobal(w); // else a table key
            break;
          }
          // `{ wait: number }` or `(wait: number) -> ()`: a field or parameter name in a type.
          if (next == COLON && !(kindAt(i + 2) == NAME && isCallOpener(kindAt(i + 3)))) break;
        }

        // A call to anything named wait yields, even a local alias (`local wait = task.wait`).
        if ((w == wordWait || w == wordWaitUpper) && isCallOpener(next)) markSeen(SEEN_YIELD);
        if ((roles & ROLE_SHADOWABLE) && !isRedefined(w)) {
          addFinding(roles & ROLE_DEPRECATED_GLOBAL ? DEPRECATED_GLOBAL : DYNAMIC_CODE, lineAt(i), i);
        }
        if (w == wordRequire && next == LPAREN && kindAt(i + 2) == NUMBER && kindAt(i + 3) == RPAREN) {
          addFinding(EXTERNAL_CODE, lineAt(i), i + 2);
        }
        break;
      }

      case STRING: {
        if (isAsyncCall(i)) markSeen(SEEN_YIELD);
        const start = startAt(i);
        const length = endAt(i) - start;
        if (length >= serviceNameMin && length <= serviceNameMax) {
          const w = lookupText(src + <usize>start, length);
          if (w != 0 && (load<u8>(WORD_ROLES + <usize>w) & ROLE_PLATFORM_SERVICE)) addFinding(PLATFORM_SERVICE, lineAt(i), i);
        }
        break;
      }

      case LPAREN:
        if (isAsyncCall(i)) markSeen(SEEN_YIELD);
        store<u8>(brackets + <usize>(bracketDepth++), PAREN);
        if (paramsPending) {
          paramsPending = false;
          paramDepth = bracketDepth;
        }
        break;
      case LBRACKET:
        store<u8>(brackets + <usize>(bracketDepth++), SQUARE);
        break;
      case LBRACE:
        if (isAsyncCall(i)) markSeen(SEEN_YIELD);
        store<u8>(brackets + <usize>(bracketDepth++), BRACE);
        break;
      case INTERP_BEGIN:
        store<u8>(brackets + <usize>(bracketDepth++), INTERPOLATION);
        break;
      case RPAREN:
      case RBRACKET:
      case RBRACE:
      case INTERP_END:
        if (bracketDepth > 0) bracketDepth--;
        if (bracketDepth < paramDepth) paramDepth = -1;
        break;

      case ASSIGN:
        if (localDepth == bracketDepth) localDepth = -1;
        forNames = false;
        break;
      case KW_IN:
        forNames = false;
        break;
      case KW_LOCAL:
        if (kindAt(i + 1) != KW_FUNCTION) localDepth = bracketDepth;
        break;

      case KW_FUNCTION: {
        let nameToken = -1;
        let lastNameToken = -1;
        const prev = kindAt(i - 1);
        if (kindAt(i + 1) == NAME) {
          // `local function f` or a function statement `function a.b:c`.
          let j = i + 1;
          if (prev != KW_LOCAL) {
            while ((kindAt(j + 1) == DOT || kindAt(j + 1) == COLON) && kindAt(j + 2) == NAME) j += 2;
          }
          lastNameToken = j;
          functionNameEnd = j;
          if (j > i + 1) defineMethod(j); // `function a.b:c`: a function on a table
          if (j == i + 1) {
            nameToken = j;
            const w = wordAt(j);
            if (w != 0 && (load<u8>(WORD_ROLES + <usize>w) & ROLE_SHADOWABLE)) {
              if (prev == KW_LOCAL) declareLocal(w);
              else defineGlobal(w);
            }
          }
        } else if (prev == ASSIGN && kindAt(i - 2) == NAME) {
          // `local f = function`, `f = function`, `t.f = function`, `{ f = function`.
          lastNameToken = i - 2;
          const before = kindAt(i - 3);
          if (before == KW_LOCAL
            || (before != DOT && before != COLON && (bracketDepth == 0 || bracketOnTop(bracketDepth) != BRACE))) {
            nameToken = i - 2;
          } else {
            defineMethod(i - 2); // `t.f = function` or `{ f = function`: a function on a table
          }
        }
        const record = funcCount++;
        store<i32>(funcField(record, 0), i);
        store<i32>(funcField(record, 1), nameToken);
        store<i32>(funcField(record, 2), lastNameToken);
        store<i32>(funcField(record, 3), count - 1);
        store<i32>(funcField(record, 4), innermostFunc());
        store<i32>(funcField(record, 5), 0);
        openBlock(BLOCK_FUNCTION, i, record, 0);
        paramsPending = true;
        break;
      }

      case KW_WHILE:
        openBlock(BLOCK_WHILE, i, innermostFunc(), SEEN_HEADER);
        break;
      case KW_FOR:
        openBlock(BLOCK_FOR, i, innermostFunc(), SEEN_HEADER);
        forNames = true;
        break;
      case KW_REPEAT:
        openBlock(BLOCK_REPEAT, i, innermostFunc(), 0);
        break;
      case KW_IF:
        if (startsExpression(kindAt(i - 1)) || expressionBranch == i - 1) {
          store<i32>(ifExpressions + (<usize>(ifExpressionCount++) << 2), depth);
        } else {
          openBlock(BLOCK_IF, i, innermostFunc(), 0);
        }
        break;
      case KW_THEN:
        if (ifExpressionCount > 0 && load<i32>(ifExpressions + (<usize>(ifExpressionCount - 1) << 2)) == depth) expressionBranch = i;
        break;
      case KW_DO: {
        forNames = false;
        const d = depth - 1;
        if (d >= 0 && (flagsOf(d) & SEEN_HEADER)) {
          // The `do` of a `while`/`for` header: the loop body starts here.
          let flags = flagsOf(d) & ~SEEN_HEADER;
          const endless = kindOf(d) == BLOCK_WHILE
            ? whileConditionTruth(tokenOf(d), i) == TRUTHY
            : countsToHuge(tokenOf(d), i);
          if (endless) flags |= LOOP_ENDLESS;
          setFlags(d, flags);
        } else {
          openBlock(BLOCK_DO, i, innermostFunc(), 0);
        }
        break;
      }
      case KW_UNTIL: {
        const d = depth - 1;
        if (d >= 0 && kindOf(d) == BLOCK_REPEAT) {
          if (untilConditionTruth(i) == FALSY) setFlags(d, flagsOf(d) | LOOP_ENDLESS);
          closeInnermost(i);
        }
        break;
      }
      case KW_END:
        // A stray `end` closes nothing; `end` cannot close a `repeat`.
        if (depth > 0 && kindOf(depth - 1) != BLOCK_REPEAT) closeInnermost(i);
        break;
      case KW_ELSE:
      case KW_ELSEIF:
        if (ifExpressionCount > 0 && load<i32>(ifExpressions + (<usize>(ifExpressionCount - 1) << 2)) == depth) {
          // A branch of an `if` expression; its `else` completes it.
          if (k == KW_ELSE) {
            ifExpressionCount--;
            expressionBranch = i;
          }
        } else if (depth > 0 && kindOf(depth - 1) == BLOCK_IF) {
          endBranchScope();
        }
        break;
      case KW_BREAK:
        markSeen(SEEN_BREAK);
        break;
      case KW_RETURN:
        markSeen(SEEN_RETURN);
        break;
      default:
        break;
    }
  }
  // Unterminated blocks end with the source.
  while (depth > 0) closeInnermost(count - 1);
  // A method may be defined after the calls to it: the calls are judged once the whole script is read.
  if (definedMethods) dropOwnMethodCalls();
}
