/**
 * The words the scanner cares about, and the perfect-hash table that interns
 * them: the WebAssembly lexer (assembly/words.ts) looks each identifier up
 * once, by a key built from its length and bytes, so the walk compares
 * small integers. This file is the one list of words; wasm.ts copies the
 * table into the module. Word 0 means "an identifier of no interest".
 */

import {
  KW_AND, KW_BREAK, KW_DO, KW_ELSE, KW_ELSEIF, KW_END, KW_FALSE, KW_FOR, KW_FUNCTION, KW_IF, KW_IN,
  KW_LOCAL, KW_NIL, KW_NOT, KW_OR, KW_REPEAT, KW_RETURN, KW_THEN, KW_TRUE, KW_UNTIL, KW_WHILE,
  NAME,
} from './kinds.js';
import {
  ROLE_DEPRECATED_GLOBAL, ROLE_DYNAMIC, ROLE_LEGACY_METHOD, ROLE_PLATFORM_SERVICE, ROLE_SHADOWABLE,
} from './constants.js';

export { ROLE_DEPRECATED_GLOBAL, ROLE_DYNAMIC, ROLE_LEGACY_METHOD, ROLE_PLATFORM_SERVICE, ROLE_SHADOWABLE };

interface WordSpec {
  text: string;
  /** Token kind when the word is a reserved keyword (see tokenizer kinds); 0 otherwise. */
  keyword?: number;
  roles?: number;
  /** What to use instead of the global, for the finding's message. */
  instead?: string;
  /** What to use instead of the legacy method. */
  method?: string;
}


const SPECS: WordSpec[] = [
  { text: 'and', keyword: KW_AND },
  { text: 'break', keyword: KW_BREAK },
  { text: 'do', keyword: KW_DO },
  { text: 'else', keyword: KW_ELSE },
  { text: 'elseif', keyword: KW_ELSEIF },
  { text: 'end', keyword: KW_END },
  { text: 'false', keyword: KW_FALSE },
  { text: 'for', keyword: KW_FOR },
  { text: 'function', keyword: KW_FUNCTION },
  { text: 'if', keyword: KW_IF },
  { text: 'in', keyword: KW_IN },
  { text: 'local', keyword: KW_LOCAL },
  { text: 'nil', keyword: KW_NIL },
  { text: 'not', keyword: KW_NOT },
  { text: 'or', keyword: KW_OR },
  { text: 'repeat', keyword: KW_REPEAT },
  { text: 'return', keyword: KW_RETURN },
  { text: 'then', keyword: KW_THEN },
  { text: 'true', keyword: KW_TRUE },
  { text: 'until', keyword: KW_UNTIL },
  { text: 'while', keyword: KW_WHILE },

  // `wait` is both a deprecated global and, as `:wait()`, a legacy signal method.
  { text: 'wait', roles: ROLE_DEPRECATED_GLOBAL | ROLE_LEGACY_METHOD, instead: 'task.wait', method: 'Wait' },
  { text: 'Wait', roles: ROLE_DEPRECATED_GLOBAL, instead: 'task.wait' },
  { text: 'spawn', roles: ROLE_DEPRECATED_GLOBAL, instead: 'task.spawn' },
  { text: 'Spawn', roles: ROLE_DEPRECATED_GLOBAL, instead: 'task.spawn' },
  { text: 'delay', roles: ROLE_DEPRECATED_GLOBAL, instead: 'task.delay' },
  { text: 'Delay', roles: ROLE_DEPRECATED_GLOBAL, instead: 'task.delay' },
  { text: 'ypcall', roles: ROLE_DEPRECATED_GLOBAL, instead: 'pcall' },
  { text: 'elapsedTime', roles: ROLE_DEPRECATED_GLOBAL, instead: 'os.clock' },
  { text: 'ElapsedTime', roles: ROLE_DEPRECATED_GLOBAL, instead: 'os.clock' },
  { text: 'version', roles: ROLE_DEPRECATED_GLOBAL },
  { text: 'Version', roles: ROLE_DEPRECATED_GLOBAL },
  { text: 'stats', roles: ROLE_DEPRECATED_GLOBAL, instead: 'game:GetService("Stats")' },
  { text: 'Stats', roles: ROLE_DEPRECATED_GLOBAL, instead: 'game:GetService("Stats")' },
  { text: 'printidentity', roles: ROLE_DEPRECATED_GLOBAL },
  { text: 'LoadLibrary', roles: ROLE_DEPRECATED_GLOBAL },
  { text: 'Game', roles: ROLE_DEPRECATED_GLOBAL, instead: 'game' },
  { text: 'Workspace', roles: ROLE_DEPRECATED_GLOBAL, instead: 'workspace' },

  { text: 'loadstring', roles: ROLE_DYNAMIC },
  { text: 'getfenv', roles: ROLE_DYNAMIC },
  { text: 'setfenv', roles: ROLE_DYNAMIC },

  { text: 'connect', roles: ROLE_LEGACY_METHOD, method: 'Connect' },
  { text: 'disconnect', roles: ROLE_LEGACY_METHOD, method: 'Disconnect' },
  { text: 'findFirstChild', roles: ROLE_LEGACY_METHOD, method: 'FindFirstChild' },
  { text: 'getChildren', roles: ROLE_LEGACY_METHOD, method: 'GetChildren' },
  { text: 'children', roles: ROLE_LEGACY_METHOD, method: 'GetChildren' },
  { text: 'clone', roles: ROLE_LEGACY_METHOD, method: 'Clone' },
  { text: 'remove', roles: ROLE_LEGACY_METHOD, method: 'Destroy' },
  { text: 'isA', roles: ROLE_LEGACY_METHOD, method: 'IsA' },
  { text: 'isDescendantOf', roles: ROLE_LEGACY_METHOD, method: 'IsDescendantOf' },
  { text: 'service', roles: ROLE_LEGACY_METHOD, method: 'GetService' },
  { text: 'getService', roles: ROLE_LEGACY_METHOD, method: 'GetService' },
  { text: 'makeJoints', roles: ROLE_LEGACY_METHOD, method: 'MakeJoints' },
  { text: 'breakJoints', roles: ROLE_LEGACY_METHOD, method: 'BreakJoints' },
  { text: 'clearAllChildren', roles: ROLE_LEGACY_METHOD, method: 'ClearAllChildren' },
  { text: 'getPlayers', roles: ROLE_LEGACY_METHOD, method: 'GetPlayers' },
  { text: 'getPlayerFromCharacter', roles: ROLE_LEGACY_METHOD, method: 'GetPlayerFromCharacter' },
  { text: 'playerFromCharacter', roles: ROLE_LEGACY_METHOD, method: 'GetPlayerFromCharacter' },
  { text: 'getMass', roles: ROLE_LEGACY_METHOD, method: 'GetMass' },
  { text: 'moveTo', roles: ROLE_LEGACY_METHOD, method: 'MoveTo' },
  { text: 'loadAnimation', roles: ROLE_LEGACY_METHOD, method: 'LoadAnimation' },
  { text: 'takeDamage', roles: ROLE_LEGACY_METHOD, method: 'TakeDamage' },
  { text: 'lerp', roles: ROLE_LEGACY_METHOD, method: 'Lerp' },
  { text: 'inverse', roles: ROLE_LEGACY_METHOD, method: 'Inverse' },
  { text: 'toWorldSpace', roles: ROLE_LEGACY_METHOD, method: 'ToWorldSpace' },
  { text: 'toObjectSpace', roles: ROLE_LEGACY_METHOD, method: 'ToObjectSpace' },
  { text: 'pointToWorldSpace', roles: ROLE_LEGACY_METHOD, method: 'PointToWorldSpace' },
  { text: 'pointToObjectSpace', roles: ROLE_LEGACY_METHOD, method: 'PointToObjectSpace' },
  { text: 'vectorToWorldSpace', roles: ROLE_LEGACY_METHOD, method: 'VectorToWorldSpace' },
  { text: 'vectorToObjectSpace', roles: ROLE_LEGACY_METHOD, method: 'VectorToObjectSpace' },

  { text: 'HttpService', roles: ROLE_PLATFORM_SERVICE },
  { text: 'DataStoreService', roles: ROLE_PLATFORM_SERVICE },
  { text: 'MarketplaceService', roles: ROLE_PLATFORM_SERVICE },
  { text: 'MessagingService', roles: ROLE_PLATFORM_SERVICE },
  { text: 'TeleportService', roles: ROLE_PLATFORM_SERVICE },
  { text: 'MemoryStoreService', roles: ROLE_PLATFORM_SERVICE },
  { text: 'BadgeService', roles: ROLE_PLATFORM_SERVICE },

  // Names the checks recognise by position (task.wait, coroutine.yield, require(id), ...).
  { text: 'task' },
  { text: 'coroutine' },
  { text: 'yield' },
  { text: 'synchronize' },
  { text: 'desynchronize' },
  { text: 'require' },
  { text: 'LocalPlayer' },
  { text: 'math' },
  { text: 'huge' },
  { text: 'InvokeServer' },
  { text: 'InvokeClient' },
];

/** log2 of the slot count; the WebAssembly scanner's table has the same size (assembly/tables.ts). */
export const TABLE_BITS = 11;

const table = new Uint8Array(1 << TABLE_BITS);
/** By word id (index 0 unused): text, token kind, roles, replacement. */
export const WORD_TEXT: string[] = [''];
export const WORD_KEYWORD = new Uint8Array(SPECS.length + 1);
export const WORD_ROLES: number[] = [0];
export const WORD_INSTEAD: (string | undefined)[] = [undefined];
export const WORD_METHOD_INSTEAD: (string | undefined)[] = [undefined];

/** The longest word: longer identifiers are not looked up at all. */
export const MAX_WORD_LENGTH = Math.max(...SPECS.map((spec) => spec.text.length));

/**
 * A word is found by its length and its first eight characters, one byte
 * each, as two little-endian 32-bit integers (`head` holds characters 0-3,
 * `tail` 4-7): the scanner reads each with one unaligned load and masks off
 * what lies past the identifier's end by its length. For words of up to
 * eight characters (every keyword) the key is the whole text, so a match
 * needs no character loop; longer words compare their remaining characters.
 */
const HEAD_MASK = new Int32Array(MAX_WORD_LENGTH + 1);
const TAIL_MASK = new Int32Array(MAX_WORD_LENGTH + 1);
for (let length = 0; length <= MAX_WORD_LENGTH; length++) {
  HEAD_MASK[length] = byteMask(Math.min(length, 4));
  TAIL_MASK[length] = byteMask(Math.max(0, Math.min(length, 8) - 4));
}
/** The low `bytes` bytes of an i32 set. */
function byteMask(bytes: number): number {
  return bytes >= 4 ? -1 : (1 << (8 * bytes)) - 1;
}
const wordHead = new Int32Array(SPECS.length + 1);
const wordTail = new Int32Array(SPECS.length + 1);
const wordLength = new Int32Array(SPECS.length + 1);
/** The characters after the eighth of each longer word, back to back. */
const longChars = new Uint16Array(SPECS.reduce((sum, spec) => sum + Math.max(0, spec.text.length - 8), 0));
const longOffset = new Int32Array(SPECS.length + 1);

/** Characters a key is built from (the lexer's source padding lets it read this many from any identifier start). */
const KEY_CHARS = 8;

function slotOf(head: number, tail: number, length: number, seed: number): number {
  return Math.imul(head ^ Math.imul(tail, 0x01000193) ^ length, seed) >>> (32 - TABLE_BITS);
}

if (SPECS.length >= 256) throw new Error('scan word ids must fit in a byte');
let filled = 0;
for (const spec of SPECS) {
  const id = WORD_TEXT.length;
  const text = spec.text;
  const codes = new Uint16Array(KEY_CHARS + text.length);
  for (let i = 0; i < text.length; i++) codes[i] = text.charCodeAt(i);
  WORD_TEXT.push(text);
  WORD_KEYWORD[id] = spec.keyword ?? 0;
  WORD_ROLES.push(spec.roles ?? 0);
  WORD_INSTEAD.push(spec.instead);
  WORD_METHOD_INSTEAD.push(spec.method);
  wordHead[id] = packHead(codes, 0, text.length);
  wordTail[id] = packTail(codes, 0, text.length);
  wordLength[id] = text.length;
  longOffset[id] = filled;
  for (let i = KEY_CHARS; i < text.length; i++) longChars[filled++] = codes[i]!; // i < text.length < codes.length
}
// Slot 0's empty entry must match no identifier.
wordLength[0] = -1;

/**
 * A perfect hash: tries multipliers until every word has a slot of its own,
 * so a lookup reads one slot and compares once, without probing. With ~100
 * words in 2048 slots a few dozen tries find one; this runs once at load.
 * Returns the multiplier (kept in a `const`, which the compiler folds into
 * the lookup).
 */
function fillTable(): number {
  let seed = 0x9e3779b1;
  for (let attempt = 0; attempt < 100_000; attempt++) {
    table.fill(0);
    let collided = false;
    for (let id = 1; id < WORD_TEXT.length && !collided; id++) {
      // The per-word arrays have SPECS.length + 1 = WORD_TEXT.length entries; slotOf is below table.length.
      const slot = slotOf(wordHead[id]!, wordTail[id]!, wordLength[id]!, seed);
      if (table[slot] !== 0) collided = true;
      else table[slot] = id;
    }
    if (!collided) return seed;
    seed = (seed + 0x6d2b79f6) | 1;
  }
  throw new Error('scan word table: no collision-free hash found');
}
const SEED = fillTable();

export const WORD_COUNT = WORD_TEXT.length;

// Callers give KEY_CHARS characters from start and a length of at most MAX_WORD_LENGTH.
function packHead(chars: Uint16Array, start: number, length: number): number {
  return (chars[start]! | (chars[start + 1]! << 8) | (chars[start + 2]! << 16) | (chars[start + 3]! << 24)) & HEAD_MASK[length]!;
}

function packTail(chars: Uint16Array, start: number, length: number): number {
  return (chars[start + 4]! | (chars[start + 5]! << 8) | (chars[start + 6]! << 16) | (chars[start + 7]! << 24)) & TAIL_MASK[length]!;
}

function idOf(text: string): number {
  const id = WORD_TEXT.indexOf(text);
  if (id <= 0) throw new Error(`scan word table has no entry for ${text}`);
  return id;
}

export const W_WAIT = idOf('wait');
export const W_WAIT_UPPER = idOf('Wait');
export const W_TASK = idOf('task');
export const W_COROUTINE = idOf('coroutine');
export const W_YIELD = idOf('yield');
export const W_SYNCHRONIZE = idOf('synchronize');
export const W_DESYNCHRONIZE = idOf('desynchronize');
export const W_REQUIRE = idOf('require');
export const W_LOCAL_PLAYER = idOf('LocalPlayer');
export const W_MATH = idOf('math');
export const W_HUGE = idOf('huge');
export const W_INVOKE_SERVER = idOf('InvokeServer');
export const W_INVOKE_CLIENT = idOf('InvokeClient');

/** Shortest and longest platform service names, so string literals are looked up only when they could match. */
export const SERVICE_NAME_MIN = Math.min(...SPECS.filter((s) => (s.roles ?? 0) & ROLE_PLATFORM_SERVICE).map((s) => s.text.length));
export const SERVICE_NAME_MAX = Math.max(...SPECS.filter((s) => (s.roles ?? 0) & ROLE_PLATFORM_SERVICE).map((s) => s.text.length));

/** Word ids the WebAssembly scanner recognises by position, in the order assembly/word-ids.ts reads them, then the service name lengths. */
export const POSITIONAL_WORD_IDS = [
  W_WAIT, W_WAIT_UPPER, W_TASK, W_COROUTINE, W_YIELD, W_SYNCHRONIZE, W_DESYNCHRONIZE, W_REQUIRE, W_LOCAL_PLAYER,
  W_MATH, W_HUGE, W_INVOKE_SERVER, W_INVOKE_CLIENT, SERVICE_NAME_MIN, SERVICE_NAME_MAX,
];

/**
 * The word table as the WebAssembly scanner takes it (wasm.ts copies it in
 * once): slots, per-word kind, roles and key, the characters of longer
 * words, the key masks and the hash multiplier.
 */
export const WORD_TABLE = {
  slots: table,
  kind: Uint8Array.from(WORD_KEYWORD, (keyword) => keyword || NAME),
  roles: Uint8Array.from(WORD_ROLES),
  head: wordHead,
  tail: wordTail,
  length: wordLength,
  longOffset,
  longChars: Uint8Array.from(longChars),
  headMask: HEAD_MASK,
  tailMask: TAIL_MASK,
  seed: SEED | 0,
  longest: MAX_WORD_LENGTH,
};
