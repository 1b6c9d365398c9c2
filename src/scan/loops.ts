/**
 * Which endless, non-yielding loops to report. Two things the single walk
 * cannot know until the whole script is read:
 *
 * - whether the loop can run at all: a loop inside a function that is only
 *   defined (its name is never used again) never runs;
 * - whether the loop calls one of the script's own functions that yields
 *   (`while true do step() end` where `step` calls task.wait).
 *
 * Only candidate loops pay for these checks, and the work is capped so a
 * pathological script stays linear.
 */
import { type TokenStream, kindAt, startAt, endAt } from './lexer.js';
import { NAME, DOT, COLON, KW_FUNCTION, LPAREN, STRING, LBRACE } from './kinds.js';
import type { FunctionRecord, LoopCandidate } from './checks.js';

/** Name-use searches (each a pass over the tokens) one script may do. */
const MAX_REFERENCE_SEARCHES = 32;

export function confirmLoops(t: TokenStream, funcs: FunctionRecord[], candidates: LoopCandidate[]): LoopCandidate[] {
  if (candidates.length === 0) return candidates;
  const reachability = new Int8Array(funcs.length); // 0 unknown, 1 can run, 2 only defined
  let searches = 0;

  const canRun = (index: number): boolean => {
    const seen: number[] = [];
    let result = true;
    for (let f = index; f >= 0; f = funcs[f].parent) {
      if (reachability[f] !== 0) {
        result = reachability[f] === 1;
        break;
      }
      seen.push(f);
      const record = funcs[f];
      if (record.nameToken >= 0 && searches < MAX_REFERENCE_SEARCHES) {
        searches++;
        if (!isUsedElsewhere(t, record)) {
          result = false;
          break;
        }
      }
    }
    // Every function on the walked chain shares the answer of its outermost unknown link.
    for (const f of seen) reachability[f] = result ? 1 : 2;
    return result;
  };

  const helpers = yieldingHelperNames(t, funcs);
  const funcByToken = new Map<number, FunctionRecord>();
  if (helpers.size > 0) for (const record of funcs) funcByToken.set(record.token, record);
  // Tokens the helper-call search may read in all, to stay linear with nested candidates.
  let budget = 4 * t.count;

  return candidates.filter((loop) => {
    if (loop.func >= 0 && !canRun(loop.func)) return false;
    if (helpers.size === 0) return true;
    const { data, source } = t;
    for (let j = loop.token + 1; j < loop.endToken && budget > 0; j++, budget--) {
      if (kindAt(data, j) === KW_FUNCTION) {
        // A nested function's body runs some other time: its calls do not yield this loop.
        j = funcByToken.get(j)?.endToken ?? j;
      } else if (kindAt(data, j) === NAME && isCallOpener(kindAt(data, j + 1)) && helpers.has(source.slice(startAt(data, j), endAt(data, j)))) {
        return false;
      }
    }
    return true;
  });
}

function isCallOpener(kind: number): boolean {
  return kind === LPAREN || kind === STRING || kind === LBRACE;
}

/** Last name segments of the script's own functions whose bodies yield. */
function yieldingHelperNames(t: TokenStream, funcs: FunctionRecord[]): Set<string> {
  const names = new Set<string>();
  for (const record of funcs) {
    if (record.yields && record.lastNameToken >= 0) {
      names.add(t.source.slice(startAt(t.data, record.lastNameToken), endAt(t.data, record.lastNameToken)));
    }
  }
  return names;
}

/** Whether the function's name appears anywhere outside its own definition. */
function isUsedElsewhere(t: TokenStream, record: FunctionRecord): boolean {
  const { data, source } = t;
  const nameStart = startAt(data, record.nameToken);
  const nameLength = endAt(data, record.nameToken) - nameStart;
  const name = source.slice(nameStart, nameStart + nameLength);
  const skipFrom = Math.min(record.token, record.nameToken);
  for (let j = 1; j < t.count; j++) {
    if (j === skipFrom) {
      j = record.endToken;
      continue;
    }
    if (kindAt(data, j) === NAME && endAt(data, j) - startAt(data, j) === nameLength && kindAt(data, j - 1) !== DOT && kindAt(data, j - 1) !== COLON
      && source.startsWith(name, startAt(data, j))) return true;
  }
  return false;
}
