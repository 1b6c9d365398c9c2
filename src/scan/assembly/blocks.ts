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
import { MAX_WORDS } from './tables';

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

/** How many locals currently hide each word. */
const SHADOWS: usize = memory.data(MAX_WORDS * 4, 4);
/** Words the script defines as its own globals (`function wait()`, `wait = f`). */
const USER_GLOBALS: usize = memory.data(MAX_WORDS);

// Open blocks, innermost last, five i32s each: kind, flags, opening token,
// innermost function record (-1 at the top level), and the length of
// `declared` when the block opened (its locals are above that).
const BLOCK_BYTES = 20;
let stack: usize = 0;
export let depth = 0;
/** Word ids of shadowing locals in declaration order. */
let declared: usize = 0;
let declaredCount = 0;

@inline function block(d: i32): usize {
  return stack + <usize>d * BLOCK_BYTES;
}

@inline export function isLoop(kind: i32): bool {
  return kind == BLOCK_WHILE || kind == BLOCK_FOR || kind == BLOCK_REPEAT;
}

/** Empties the stack for the next script, over regions with room for `capacity` blocks and locals. */
export function resetBlocks(blockStack: usize, declaredStack: usize): void {
  stack = blockStack;
  declared = declaredStack;
  depth = 0;
  declaredCount = 0;
  memory.fill(SHADOWS, 0, MAX_WORDS * 4);
  memory.fill(USER_GLOBALS, 0, MAX_WORDS);
}

export function openBlock(kind: i32, token: i32, func: i32, flags: i32): void {
  const b = block(depth++);
  store<i32>(b, kind);
  store<i32>(b, flags, 4);
  store<i32>(b, token, 8);
  store<i32>(b, func, 12);
  store<i32>(b, declaredCount, 16);
}

@inline export function kindOf(d: i32): i32 {
  return load<i32>(block(d));
}

@inline export function flagsOf(d: i32): i32 {
  return load<i32>(block(d), 4);
}

@inline export function setFlags(d: i32, flags: i32): void {
  store<i32>(block(d), flags, 4);
}

@inline export function tokenOf(d: i32): i32 {
  return load<i32>(block(d), 8);
}

@inline export function funcOf(d: i32): i32 {
  return load<i32>(block(d), 12);
}

/** Closes the innermost block: drops its locals and passes what it saw to its parent. */
export function closeBlock(): void {
  endBranchScope();
  const d = --depth;
  if (d == 0) return;
  const kind = kindOf(d);
  if (kind == BLOCK_FUNCTION) return;
  const flags = flagsOf(d);
  let passed = flags & (SEEN_YIELD | SEEN_RETURN);
  if (!isLoop(kind)) passed |= flags & SEEN_BREAK;
  setFlags(d - 1, flagsOf(d - 1) | passed);
}

/** `else`/`elseif` start a new scope in the same `if`: the previous branch's locals end. */
export function endBranchScope(): void {
  if (depth == 0) return;
  const base = load<i32>(block(depth - 1), 16);
  while (declaredCount > base) {
    const word = <usize>load<i32>(declared + (<usize>(--declaredCount) << 2));
    const slot = SHADOWS + (word << 2);
    store<i32>(slot, load<i32>(slot) - 1);
  }
}

/** Marks something seen in the innermost block (nothing to mark at the top level). */
export function markSeen(flag: i32): void {
  if (depth > 0) setFlags(depth - 1, flagsOf(depth - 1) | flag);
}

export function innermostFunc(): i32 {
  return depth > 0 ? funcOf(depth - 1) : -1;
}

/** A local (or parameter, or loop variable) named `word` is in scope from here to its block's end. */
export function declareLocal(word: i32): void {
  const slot = SHADOWS + (<usize>word << 2);
  store<i32>(slot, load<i32>(slot) + 1);
  store<i32>(declared + (<usize>(declaredCount++) << 2), word);
}

/** The script defines `word` itself (`function wait()`, `wait = f`). */
export function defineGlobal(word: i32): void {
  store<u8>(USER_GLOBALS + <usize>word, 1);
}

/** Whether `word` here means something the script defined rather than the Roblox global. */
export function isRedefined(word: i32): bool {
  return load<i32>(SHADOWS + (<usize>word << 2)) > 0 || load<u8>(USER_GLOBALS + <usize>word) != 0;
}
