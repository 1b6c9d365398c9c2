/**
 * Packed script code, and the script modes of the contract (interface.md 2.4).
 *
 * A packed script is:
 *
 *     --[==[                      line 1: opens a Luau long comment
 *     {"name":...,"enabled":true} line 2: the metadata, one line of JSON
 *     ]==]                        line 3: closes the comment
 *     <the source, byte for byte>
 *
 * The bracket level (the number of `=`) is the smallest whose closing bracket does
 * not occur in the JSON line, so no name or path can end the comment early, and the
 * whole text stays valid Luau. Patching rewrites line 2 (and the brackets, should
 * the new JSON ever need another level); the source after line 3 is never touched.
 */
import { ProjectError } from './errors.js';

export type RunContextName = 'Legacy' | 'Server' | 'Client' | 'Plugin';

export interface ScriptMeta {
  /** The script instance's id in the document's `instances` (version 2). */
  id?: string;
  name: string;
  class: string;
  /** Full name in the tree (GetFullName). */
  path: string;
  run_context: RunContextName;
  /** Whether the runtime may run the script. */
  enabled: boolean;
  /** The script scanner's finding codes, unique, hang risks first. */
  findings: string[];
  /** Further members are kept as they are by patching. */
  [member: string]: unknown;
}

/** One entry of the project document's `scripts[]`. */
export interface ProjectScript {
  /** The script instance's id in `instances`. */
  id: string;
  name: string;
  class: string;
  path: string;
  /** The packed code. */
  code: string;
}

export type ScriptsMode = 'disabled' | 'enabled' | 'skip';

export const SCRIPTS_MODES: readonly ScriptsMode[] = ['disabled', 'enabled', 'skip'];

/** The contract's default when `scripts_mode` is omitted. */
export const DEFAULT_SCRIPTS_MODE: ScriptsMode = 'disabled';

export function packScript(meta: ScriptMeta, source: string): string {
  return header(meta) + source;
}

/** The three header lines packed code begins with (`packScript` is this and the source). */
export function packedHeader(meta: ScriptMeta): string {
  return header(meta);
}

/** The metadata on line 2 of packed code. Throws `bad_packed_script` when the header is not ours. */
export function readScriptMeta(code: string): ScriptMeta {
  return readHeader(code).meta;
}

/** The source after the three header lines. */
export function packedSource(code: string): string {
  return code.slice(readHeader(code).sourceStart);
}

/**
 * The same packed code with `enabled` set. Only the header changes; when `enabled`
 * already has that value the code is returned as it is.
 */
export function patchScriptEnabled(code: string, enabled: boolean): string {
  const { meta, sourceStart } = readHeader(code);
  if (meta.enabled === enabled) return code;
  return header({ ...meta, enabled }) + code.slice(sourceStart);
}

/**
 * The contract's script modes: `disabled` patches every script's metadata to
 * `enabled: false`; `enabled` keeps each script as the map has it (a script disabled
 * in the map stays disabled); `skip` imports no scripts at all.
 */
export function applyScriptsMode(scripts: readonly ProjectScript[], mode: ScriptsMode): ProjectScript[] {
  switch (mode) {
    case 'skip':
      return [];
    case 'enabled':
      return scripts.slice();
    case 'disabled':
      return scripts.map((script) => ({ ...script, code: patchScriptEnabled(script.code, false) }));
    default:
      throw new ProjectError('bad_scripts_mode', `unknown scripts_mode ${JSON.stringify(mode)}`);
  }
}

/** A request's `scripts_mode`: omitted (undefined) means `disabled`; anything else must be one of the three. */
export function parseScriptsMode(value: unknown): ScriptsMode {
  if (value === undefined) return DEFAULT_SCRIPTS_MODE;
  if (typeof value === 'string' && (SCRIPTS_MODES as readonly string[]).includes(value)) return value as ScriptsMode;
  throw new ProjectError(
    'bad_scripts_mode',
    `scripts_mode must be one of ${SCRIPTS_MODES.map((mode) => `"${mode}"`).join(', ')}; got ${describe(value)}`,
  );
}

function describe(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? text.slice(0, 40) + '…' : text;
}

function header(meta: ScriptMeta): string {
  const json = metadataLine(meta);
  let equals = '';
  while (json.includes(']' + equals + ']')) equals += '=';
  return `--[${equals}[\n${json}\n]${equals}]\n`;
}

/**
 * JSON on one line. JSON.stringify already escapes CR and LF; U+2028/U+2029 are
 * escaped too, so no editor splitting on Unicode line separators sees a line break.
 */
function metadataLine(meta: ScriptMeta): string {
  return JSON.stringify(meta).replace(/[\u2028\u2029]/g, (c) => (c === '\u2028' ? '\\u2028' : '\\u2029'));
}

function readHeader(code: string): { meta: ScriptMeta; sourceStart: number } {
  const end1 = code.indexOf('\n');
  const end2 = end1 === -1 ? -1 : code.indexOf('\n', end1 + 1);
  const end3 = end2 === -1 ? -1 : code.indexOf('\n', end2 + 1);
  if (end3 === -1) throw bad('fewer than three header lines');

  const open = code.slice(0, end1);
  const equals = open.slice(3, -1);
  if (!open.startsWith('--[') || !open.endsWith('[') || !/^=*$/.test(equals)) {
    throw bad('line 1 does not open a long comment');
  }
  if (code.slice(end2 + 1, end3) !== `]${equals}]`) throw bad('line 3 does not close the comment of line 1');

  let meta: unknown;
  try {
    meta = JSON.parse(code.slice(end1 + 1, end2));
  } catch {
    throw bad('line 2 is not JSON');
  }
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) throw bad('line 2 is not a JSON object');
  if (typeof (meta as ScriptMeta).enabled !== 'boolean') throw bad('the metadata has no boolean "enabled"');
  return { meta: meta as ScriptMeta, sourceStart: end3 + 1 };
}

function bad(reason: string): ProjectError {
  return new ProjectError('bad_packed_script', `packed script: ${reason}`);
}
