/**
 * The WebAssembly scanner's exports: the host (wasm.ts) configures the word
 * table once, then per script writes the source's bytes at `reserve(n)` and
 * calls `scan`, and reads the results through `results()`.
 *
 * Memory: fixed tables in static data (tables.ts, blocks.ts), then one
 * script's regions from __heap_base: its source, the token stream and the
 * walk's stacks and outputs. Memory grows for a large script and never
 * shrinks; the host drops the instance when it has grown large.
 */
import {
  buildCharTables, WORD_SLOTS, WORD_KIND, WORD_ROLES, WORD_HEAD, WORD_TAIL, WORD_LENGTH, WORD_LONG_OFFSET,
  WORD_LONG_CHARS, HEAD_MASK, TAIL_MASK, MAX_WORDS, MAX_LONG_CHARS, MAX_KEYED_LENGTH, WORD_TABLE_BITS,
} from './tables';
import { setWordTable } from './words';
import { setWordIds } from './word-ids';
import { lex, SOURCE_PADDING, tokenCount, notableCount, truncated, lastLine } from './lexer';
import { TOKEN_BYTES, TOKEN_PADDING, useTokens } from './token';
import { walk, findingCount, funcCount, loopCount } from './walk';
import {
  FINDING_FIELDS, FUNC_FIELDS, LOOP_FIELDS,
  TABLE_WORD_SLOTS, TABLE_WORD_KIND, TABLE_WORD_ROLES, TABLE_WORD_HEAD, TABLE_WORD_TAIL, TABLE_WORD_LENGTH, TABLE_WORD_LONG_OFFSET,
  TABLE_WORD_LONG_CHARS, TABLE_HEAD_MASK, TABLE_TAIL_MASK, TABLE_WORD_IDS, TABLE_MAX_WORDS, TABLE_MAX_LONG_CHARS, TABLE_MAX_KEYED_LENGTH,
  TABLE_BITS_SLOT, TABLE_MAX_TOKENS, TABLE_SLOT_COUNT,
  RESULT_TOKEN_COUNT, RESULT_NOTABLE_COUNT, RESULT_TRUNCATED, RESULT_LAST_LINE, RESULT_TOKENS, RESULT_NOTABLE, RESULT_FINDINGS,
  RESULT_FINDING_COUNT, RESULT_FUNCS, RESULT_FUNC_COUNT, RESULT_LOOPS, RESULT_LOOP_COUNT,
} from '../constants';

/** At most this many tokens of one source are read (a Luau source of several megabytes); the rest is not scanned. */
export const MAX_TOKENS: i32 = 1 << 20;

buildCharTables();

/** Results of the last scan, in the RESULT_* slots of constants.ts (wasm.ts reads them); `tables` lists its pointers here first. */
const RESULTS: usize = memory.data(TABLE_SLOT_COUNT << 2, 16); // RESULT_SLOT_COUNT is smaller: the results reuse it
/** Word ids and service name lengths passed by the host (setWordIds). */
const IDS: usize = memory.data(64, 16);

const HEAP: usize = (__heap_base + 15) & ~15;

@inline function align(p: usize): usize {
  return (p + 15) & ~15;
}

/** Grows memory so that it reaches at least `end`. */
function ensure(end: usize): void {
  const have = <usize>memory.size() << 16;
  if (end > have) {
    const pages = <i32>((end - have + 0xffff) >> 16);
    if (memory.grow(pages) < 0) unreachable();
  }
}

/** Pointers to the tables the host fills and the module's limits, in the TABLE_* slots of constants.ts. */
export function tables(): usize {
  const list = RESULTS;
  store<u32>(list, <u32>WORD_SLOTS, TABLE_WORD_SLOTS << 2);
  store<u32>(list, <u32>WORD_KIND, TABLE_WORD_KIND << 2);
  store<u32>(list, <u32>WORD_ROLES, TABLE_WORD_ROLES << 2);
  store<u32>(list, <u32>WORD_HEAD, TABLE_WORD_HEAD << 2);
  store<u32>(list, <u32>WORD_TAIL, TABLE_WORD_TAIL << 2);
  store<u32>(list, <u32>WORD_LENGTH, TABLE_WORD_LENGTH << 2);
  store<u32>(list, <u32>WORD_LONG_OFFSET, TABLE_WORD_LONG_OFFSET << 2);
  store<u32>(list, <u32>WORD_LONG_CHARS, TABLE_WORD_LONG_CHARS << 2);
  store<u32>(list, <u32>HEAD_MASK, TABLE_HEAD_MASK << 2);
  store<u32>(list, <u32>TAIL_MASK, TABLE_TAIL_MASK << 2);
  store<u32>(list, <u32>IDS, TABLE_WORD_IDS << 2);
  store<i32>(list, MAX_WORDS, TABLE_MAX_WORDS << 2);
  store<i32>(list, MAX_LONG_CHARS, TABLE_MAX_LONG_CHARS << 2);
  store<i32>(list, MAX_KEYED_LENGTH, TABLE_MAX_KEYED_LENGTH << 2);
  store<i32>(list, WORD_TABLE_BITS, TABLE_BITS_SLOT << 2);
  store<i32>(list, MAX_TOKENS, TABLE_MAX_TOKENS << 2);
  return list;
}

/** Takes the word table and ids the host wrote into `tables()`. */
export function configure(seed: i32, longestWord: i32): void {
  setWordTable(seed, longestWord);
  setWordIds(IDS);
}

export function results(): usize {
  return RESULTS;
}

/** Room for a source of up to `n` bytes and its padding; returns where to write it. */
export function reserve(n: i32): usize {
  ensure(HEAP + <usize>n + SOURCE_PADDING);
  return HEAP;
}

/** Lexes and walks the `n` bytes written at `reserve` (with room for at least `n`). */
export function scan(n: i32, localPlayerIsNil: bool): void {
  const source = HEAP;
  // The padding goes right after the bytes scanned: what lies beyond is an earlier script's.
  memory.fill(source + <usize>n, 0, SOURCE_PADDING);
  // Every token takes at least one byte: n + 1 real slots at most, plus the sentinel and padding.
  const capacity = min(n + 2 + TOKEN_PADDING, MAX_TOKENS);
  const tokens = align(source + <usize>n + SOURCE_PADDING);
  const notable = align(tokens + <usize>capacity * TOKEN_BYTES);
  const braces = align(notable + (<usize>capacity << 2));
  ensure(braces + <usize>capacity);
  lex(source, n, tokens, notable, capacity, braces);

  // The walk's regions: every entry (block, local, bracket, `if` expression,
  // function, loop, finding) comes from a notable token it visits.
  const count = notableCount + TOKEN_PADDING;
  const blocks = align(braces + <usize>capacity);
  const declared = align(blocks + <usize>count * 20);
  const brackets = align(declared + (<usize>count << 2));
  const ifs = align(brackets + <usize>count);
  const findings = align(ifs + (<usize>count << 2));
  const funcs = align(findings + <usize>count * 2 * FINDING_FIELDS * 4);
  const loops = align(funcs + <usize>count * FUNC_FIELDS * 4);
  ensure(loops + <usize>count * LOOP_FIELDS * 4);
  useTokens(tokens);
  walk(source, tokenCount, notable, notableCount, localPlayerIsNil, blocks, declared, brackets, ifs, findings, funcs, loops);

  store<i32>(RESULTS, tokenCount, RESULT_TOKEN_COUNT << 2);
  store<i32>(RESULTS, notableCount, RESULT_NOTABLE_COUNT << 2);
  store<i32>(RESULTS, truncated ? 1 : 0, RESULT_TRUNCATED << 2);
  store<i32>(RESULTS, lastLine, RESULT_LAST_LINE << 2);
  store<u32>(RESULTS, <u32>tokens, RESULT_TOKENS << 2);
  store<u32>(RESULTS, <u32>notable, RESULT_NOTABLE << 2);
  store<u32>(RESULTS, <u32>findings, RESULT_FINDINGS << 2);
  store<i32>(RESULTS, findingCount, RESULT_FINDING_COUNT << 2);
  store<u32>(RESULTS, <u32>funcs, RESULT_FUNCS << 2);
  store<i32>(RESULTS, funcCount, RESULT_FUNC_COUNT << 2);
  store<u32>(RESULTS, <u32>loops, RESULT_LOOPS << 2);
  store<i32>(RESULTS, loopCount, RESULT_LOOP_COUNT << 2);
}

/** How many `\n` bytes the `n` bytes written at `reserve(n)` hold, sixteen at a time. */
export function countNewlines(n: i32): i32 {
  const newline = i8x16.splat(10);
  const end = HEAP + <usize>n;
  let p = HEAP;
  let count = 0;
  while (p + 16 <= end) {
    count += <i32>popcnt(i8x16.bitmask(i8x16.eq(v128.load(p), newline)));
    p += 16;
  }
  while (p < end) {
    if (load<u8>(p) == 10) count++;
    p++;
  }
  return count;
}
