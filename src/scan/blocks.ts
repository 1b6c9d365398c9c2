/**
 * The block structure of a script, kept as a stack while its tokens are
 * walked once: `function`, `while`/`for` (opened by their keyword, whose body
 * starts at `do`), `repeat` (closed by `until`), `if` and `do`, each closed by
 * `end`. Each open block carries what was seen in it, and closing a block
 * hands that to its parent:
 *
 * - a yield or a `return` reaches every enclosing block up to the nearest
 *   function (a nested function's body runs some other time);
 * - a `break` reaches enclosing blocks up to the nearest loop, which it ends.
 *
 * The stack also tracks local scopes, so a local named like a deprecated
 * global (`local wait = task.wait`) hides it until its block ends.
 */
import { WORD_COUNT } from './words.js';

export const BLOCK_FUNCTION = 1;
export const BLOCK_WHILE = 2;
export const BLOCK_FOR = 3;
export const BLOCK_REPEAT = 4;
export const BLOCK_IF = 5;
export const BLOCK_DO = 6;

/** A `while`/`for` whose `do` has not been seen yet (its header is still being read). */
export const SEEN_HEADER = 1;
export const SEEN_YIELD = 2;
export const SEEN_BREAK = 4;
export const SEEN_RETURN = 8;
/** A loop whose condition is constant (it can only end by break, return or error). */
export const LOOP_ENDLESS = 16;

export function isLoop(kind: number): boolean {
  return kind === BLOCK_WHILE || kind === BLOCK_FOR || kind === BLOCK_REPEAT;
}

export interface Blocks {
  /** Open blocks, innermost last; `depth` of them are valid. */
  depth: number;
  kind: number[];
  flags: number[];
  /** Token that opened the block. */
  token: number[];
  /** Innermost function record (see checks.ts) the block is in, or -1 at the top level. */
  func: number[];
  /** Length of `declared` when the block opened: its locals are above that. */
  declaredBase: number[];
  /** Word ids of shadowing locals in declaration order. */
  declared: number[];
  /** How many locals currently hide each word. */
  shadows: Int32Array;
  /** Words the script defines as its own globals (`function wait()`, `wait = f`). */
  userGlobals: Uint8Array;
}

export function newBlocks(): Blocks {
  return {
    depth: 0,
    kind: [],
    flags: [],
    token: [],
    func: [],
    declaredBase: [],
    declared: [],
    shadows: new Int32Array(WORD_COUNT),
    userGlobals: new Uint8Array(WORD_COUNT),
  };
}

/** Empties `b` for the next script, keeping its arrays. */
export function resetBlocks(b: Blocks): void {
  b.depth = 0;
  b.declared.length = 0;
  b.shadows.fill(0);
  b.userGlobals.fill(0);
}

export function openBlock(b: Blocks, kind: number, token: number, func: number, flags = 0): void {
  const d = b.depth++;
  b.kind[d] = kind;
  b.flags[d] = flags;
  b.token[d] = token;
  b.func[d] = func;
  b.declaredBase[d] = b.declared.length;
}

/** Closes the innermost block: drops its locals and passes what it saw to its parent. */
export function closeBlock(b: Blocks): void {
  endBranchScope(b);
  const d = --b.depth;
  if (d === 0) return;
  const kind = b.kind[d];
  if (kind === BLOCK_FUNCTION) return;
  const flags = b.flags[d];
  let passed = flags & (SEEN_YIELD | SEEN_RETURN);
  if (!isLoop(kind)) passed |= flags & SEEN_BREAK;
  b.flags[d - 1] |= passed;
}

/** `else`/`elseif` start a new scope in the same `if`: the previous branch's locals end. */
export function endBranchScope(b: Blocks): void {
  if (b.depth === 0) return;
  const base = b.declaredBase[b.depth - 1];
  while (b.declared.length > base) b.shadows[b.declared.pop() as number]--;
}

/** Marks something seen in the innermost block (nothing to mark at the top level). */
export function markSeen(b: Blocks, flag: number): void {
  if (b.depth > 0) b.flags[b.depth - 1] |= flag;
}

export function innermostFunc(b: Blocks): number {
  return b.depth > 0 ? b.func[b.depth - 1] : -1;
}

/** A local (or parameter, or loop variable) named `word` is in scope from here to its block's end. */
export function declareLocal(b: Blocks, word: number): void {
  b.shadows[word]++;
  b.declared.push(word);
}

/** Whether `word` here means something the script defined rather than the Roblox global. */
export function isRedefined(b: Blocks, word: number): boolean {
  return b.shadows[word] > 0 || b.userGlobals[word] !== 0;
}
