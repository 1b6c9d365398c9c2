/**
 * Which endless, non-yielding loops to report. The walk (assembly/walk.ts)
 * collects candidates; two things it cannot know until the whole script is
 * read are decided here:
 *
 * - whether the loop can run at all: a loop inside a function that is only
 *   defined (its name is never used again) never runs;
 * - whether the loop calls one of the script's own functions that yields
 *   (`while true do step() end` where `step` calls task.wait).
 *
 * Only scripts with candidate loops get here (few do), and the work is
 * capped so a pathological script stays linear.
 */
import { type ScanOutput, kindAt, startAt, endAt, FUNC_STRIDE, LOOP_STRIDE } from './wasm.js';
import { NAME, DOT, COLON, KW_FUNCTION, LPAREN, STRING, LBRACE } from './kinds.js';

/** Name-use searches (each a pass over the tokens) one script may do. */
const MAX_REFERENCE_SEARCHES = 32;

/** A function body as the walk recorded it. */
interface FunctionRecord {
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

function readFunctions(funcs: Int32Array): FunctionRecord[] {
  const records: FunctionRecord[] = [];
  for (let o = 0; o + FUNC_STRIDE <= funcs.length; o += FUNC_STRIDE) {
    records.push({
      token: funcs[o]!, nameToken: funcs[o + 1]!, lastNameToken: funcs[o + 2]!, endToken: funcs[o + 3]!, parent: funcs[o + 4]!,
      yields: funcs[o + 5] !== 0,
    });
  }
  return records;
}

/** The keyword tokens of the candidate loops that can run and call nothing of the script's own that yields. */
export function confirmLoops(t: ScanOutput): number[] {
  if (t.loops.length === 0) return [];
  const funcs = readFunctions(t.funcs);
  const reachability = new Int8Array(funcs.length); // 0 unknown, 1 can run, 2 only defined
  let searches = 0;

  const canRun = (index: number): boolean => {
    const seen: number[] = [];
    let result = true;
    // reachability has one entry per record, so past the check below f < funcs.length.
    for (let f = index; f >= 0; f = funcs[f]!.parent) {
      if (reachability[f] !== 0) {
        result = reachability[f] === 1;
        break;
      }
      seen.push(f);
      const record = funcs[f]!;
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
  const { tokens } = t;

  const confirmed: number[] = [];
  for (let o = 0; o + LOOP_STRIDE <= t.loops.length; o += LOOP_STRIDE) {
    const [token, endToken, func] = [t.loops[o]!, t.loops[o + 1]!, t.loops[o + 2]!];
    if (func >= 0 && !canRun(func)) continue;
    let callsHelper = false;
    for (let j = token + 1; helpers.size > 0 && j < endToken && budget > 0; j++, budget--) {
      if (kindAt(tokens, j) === KW_FUNCTION) {
        // A nested function's body runs some other time: its calls do not yield this loop.
        j = funcByToken.get(j)?.endToken ?? j;
      } else if (kindAt(tokens, j) === NAME && isCallOpener(kindAt(tokens, j + 1)) && helpers.has(tokenText(t, j))) {
        callsHelper = true;
        break;
      }
    }
    if (!callsHelper) confirmed.push(token);
  }
  return confirmed;
}

function isCallOpener(kind: number): boolean {
  return kind === LPAREN || kind === STRING || kind === LBRACE;
}

/** A name token's text (identifiers are ASCII). */
function tokenText(t: ScanOutput, token: number): string {
  return t.bytes.toString('latin1', startAt(t.tokens, token), endAt(t.tokens, token));
}

/** Last name segments of the script's own functions whose bodies yield. */
function yieldingHelperNames(t: ScanOutput, funcs: FunctionRecord[]): Set<string> {
  const names = new Set<string>();
  for (const record of funcs) {
    if (record.yields && record.lastNameToken >= 0) names.add(tokenText(t, record.lastNameToken));
  }
  return names;
}

/** Whether the function's name appears anywhere outside its own definition. */
function isUsedElsewhere(t: ScanOutput, record: FunctionRecord): boolean {
  const { tokens, bytes } = t;
  const nameStart = startAt(tokens, record.nameToken);
  const nameLength = endAt(tokens, record.nameToken) - nameStart;
  const skipFrom = Math.min(record.token, record.nameToken);
  for (let j = 1; j < t.count; j++) {
    if (j === skipFrom) {
      j = record.endToken;
      continue;
    }
    const start = startAt(tokens, j);
    if (kindAt(tokens, j) === NAME && endAt(tokens, j) - start === nameLength && kindAt(tokens, j - 1) !== DOT && kindAt(tokens, j - 1) !== COLON
      && bytes.compare(bytes, nameStart, nameStart + nameLength, start, start + nameLength) === 0) return true;
  }
  return false;
}
