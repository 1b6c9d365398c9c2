/**
 * Numbers the JavaScript side and the WebAssembly scanner (assembly/) share,
 * beside the token kinds (kinds.ts). Constants only: both compilers read this file.
 */

// Finding codes by their index in FINDING_CODES (findings.ts), most severe first.
export const LOOP_WITHOUT_YIELD = 0;
export const EXTERNAL_CODE = 1;
export const DYNAMIC_CODE = 2;
export const LOCAL_PLAYER_ON_SERVER = 3;
export const PLATFORM_SERVICE = 4;
export const DEPRECATED_GLOBAL = 5;
export const LEGACY_METHOD = 6;

// Word roles (words.ts), bits of a word's entry in the word table.
/** A global that Roblox deprecated (or removed); a local of the same name shadows it. */
export const ROLE_DEPRECATED_GLOBAL = 1;
/** A global that runs or rewrites code at run time; shadowable like the above. */
export const ROLE_DYNAMIC = 2;
/** A lowercase method name from Roblox's early API (`:connect`, `:clone`, ...). */
export const ROLE_LEGACY_METHOD = 4;
/** A service backed by Roblox's cloud, which works only on Roblox servers. */
export const ROLE_PLATFORM_SERVICE = 8;
/** Roles of globals that a local, parameter or user definition of the same name hides. */
export const ROLE_SHADOWABLE = 3; // ROLE_DEPRECATED_GLOBAL | ROLE_DYNAMIC

// The walk's output records, as i32s each (assembly/walk.ts writes them, wasm.ts reads them).
/** A finding: code index, line, subject token. */
export const FINDING_FIELDS = 3;
/** A function: `function` token, name token, last name token, closing token, parent record, yields. */
export const FUNC_FIELDS = 6;
/** A candidate loop: keyword token, closing token, function record. */
export const LOOP_FIELDS = 3;

// The module's exchange areas, as i32 slots (assembly/index.ts writes them, wasm.ts reads them).
/** `tables()`: where the host writes the word table, and the module's limits. */
export const TABLE_WORD_SLOTS = 0;
export const TABLE_WORD_KIND = 1;
export const TABLE_WORD_ROLES = 2;
export const TABLE_WORD_HEAD = 3;
export const TABLE_WORD_TAIL = 4;
export const TABLE_WORD_LENGTH = 5;
export const TABLE_WORD_LONG_OFFSET = 6;
export const TABLE_WORD_LONG_CHARS = 7;
export const TABLE_HEAD_MASK = 8;
export const TABLE_TAIL_MASK = 9;
export const TABLE_WORD_IDS = 10;
export const TABLE_MAX_WORDS = 11;
export const TABLE_MAX_LONG_CHARS = 12;
export const TABLE_MAX_KEYED_LENGTH = 13;
export const TABLE_BITS_SLOT = 14;
export const TABLE_MAX_TOKENS = 15;
/** Slots in the `tables()` list. */
export const TABLE_SLOT_COUNT = 16;
/** `results()`: what one scan found, and where its outputs lie. */
export const RESULT_TOKEN_COUNT = 0;
export const RESULT_NOTABLE_COUNT = 1;
export const RESULT_TRUNCATED = 2;
export const RESULT_LAST_LINE = 3;
export const RESULT_TOKENS = 4;
export const RESULT_NOTABLE = 5;
export const RESULT_FINDINGS = 6;
export const RESULT_FINDING_COUNT = 7;
export const RESULT_FUNCS = 8;
export const RESULT_FUNC_COUNT = 9;
export const RESULT_LOOPS = 10;
export const RESULT_LOOP_COUNT = 11;
/** Slots in the results area. */
export const RESULT_SLOT_COUNT = 12;
