/**
 * The words the scanner cares about, interned at tokenization time: an
 * identifier's characters are hashed as they are read and looked up here, so
 * the checks compare small integers instead of slicing a string per token.
 * Word 0 means "an identifier of no interest".
 */

/** A global that Roblox deprecated (or removed); a local of the same name shadows it. */
export const ROLE_DEPRECATED_GLOBAL = 1;
/** A global that runs or rewrites code at run time; shadowable like the above. */
export const ROLE_DYNAMIC = 2;
/** A lowercase method name from Roblox's early API (`:connect`, `:clone`, ...). */
export const ROLE_LEGACY_METHOD = 4;
/** A service backed by Roblox's cloud, which works only on Roblox servers. */
export const ROLE_PLATFORM_SERVICE = 8;
/** Roles of globals that a local, parameter or user definition of the same name hides. */
export const ROLE_SHADOWABLE = ROLE_DEPRECATED_GLOBAL | ROLE_DYNAMIC;

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

// Keyword token kinds. They live here (not in tokenizer.ts) because the word
// table is built from them; tokenizer.ts re-exports them with the other kinds.
export const KW_AND = 10;
export const KW_BREAK = 11;
export const KW_DO = 12;
export const KW_ELSE = 13;
export const KW_ELSEIF = 14;
export const KW_END = 15;
export const KW_FALSE = 16;
export const KW_FOR = 17;
export const KW_FUNCTION = 18;
export const KW_IF = 19;
export const KW_IN = 20;
export const KW_LOCAL = 21;
export const KW_NIL = 22;
export const KW_NOT = 23;
export const KW_OR = 24;
export const KW_REPEAT = 25;
export const KW_RETURN = 26;
export const KW_THEN = 27;
export const KW_TRUE = 28;
export const KW_UNTIL = 29;
export const KW_WHILE = 30;

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

const TABLE_SIZE = 1024; // power of two, well above SPECS.length so probes stay short
const TABLE_MASK = TABLE_SIZE - 1;

const table = new Uint16Array(TABLE_SIZE);
/** By word id (index 0 unused): text, hash, token kind, roles, replacement. */
export const WORD_TEXT: string[] = [''];
const wordHash: number[] = [0];
export const WORD_KEYWORD: number[] = [0];
export const WORD_ROLES: number[] = [0];
export const WORD_INSTEAD: (string | undefined)[] = [undefined];
export const WORD_METHOD_INSTEAD: (string | undefined)[] = [undefined];

/** The running hash the tokenizer computes over an identifier's characters. */
export function hashStep(hash: number, charCode: number): number {
  return (Math.imul(hash, 31) + charCode) | 0;
}

function hashText(text: string): number {
  let hash = 0;
  for (let i = 0; i < text.length; i++) hash = hashStep(hash, text.charCodeAt(i));
  return hash;
}

function slotOf(hash: number): number {
  return (hash ^ (hash >>> 11) ^ (hash >>> 22)) & TABLE_MASK;
}

for (const spec of SPECS) {
  const id = WORD_TEXT.length;
  const hash = hashText(spec.text);
  WORD_TEXT.push(spec.text);
  wordHash.push(hash);
  WORD_KEYWORD.push(spec.keyword ?? 0);
  WORD_ROLES.push(spec.roles ?? 0);
  WORD_INSTEAD.push(spec.instead);
  WORD_METHOD_INSTEAD.push(spec.method);
  let slot = slotOf(hash);
  while (table[slot] !== 0) slot = (slot + 1) & TABLE_MASK;
  table[slot] = id;
}

export const WORD_COUNT = WORD_TEXT.length;

/** The id of `source[start, end)` given its hash, or 0 when it is not a known word. */
export function lookupWord(hash: number, source: string, start: number, end: number): number {
  const length = end - start;
  let slot = slotOf(hash);
  for (;;) {
    const id = table[slot];
    if (id === 0) return 0;
    if (wordHash[id] === hash) {
      const text = WORD_TEXT[id];
      if (text.length === length && source.startsWith(text, start)) return id;
    }
    slot = (slot + 1) & TABLE_MASK;
  }
}

/** The id of an arbitrary slice (string contents); hashes it first. */
export function lookupSlice(source: string, start: number, end: number): number {
  let hash = 0;
  for (let i = start; i < end; i++) hash = hashStep(hash, source.charCodeAt(i));
  return lookupWord(hash, source, start, end);
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

/** Shortest and longest platform service names, so string literals are hashed only when they could match. */
export const SERVICE_NAME_MIN = Math.min(...SPECS.filter((s) => (s.roles ?? 0) & ROLE_PLATFORM_SERVICE).map((s) => s.text.length));
export const SERVICE_NAME_MAX = Math.max(...SPECS.filter((s) => (s.roles ?? 0) & ROLE_PLATFORM_SERVICE).map((s) => s.text.length));
