/**
 * Finding codes, their priority and messages, and the collector that keeps
 * one finding per (code, line), sorts them by line and caps how many one
 * script can produce.
 */

export type FindingCode =
  | 'loop_without_yield'
  | 'deprecated_global'
  | 'legacy_method'
  | 'local_player_on_server'
  | 'external_code'
  | 'dynamic_code'
  | 'platform_service';

export interface Finding {
  code: FindingCode;
  /** 1-based line of the source the finding is about. */
  line: number;
  /** One line saying what was found and why it matters. */
  message: string;
}

export interface ScanOptions {
  /** The script's class: 'Script', 'LocalScript', 'ModuleScript'. */
  className?: string;
  /** The script's RunContext: 'Legacy' (the default), 'Server', 'Client' or 'Plugin'. */
  runContext?: string;
  /** The script's LinkedSource property; non-empty means its code lives elsewhere. */
  linkedSource?: string;
}

/**
 * Every code, most severe first: what can hang the game, then what cannot run
 * here at all, then what breaks at run time, then old-API deprecations.
 */
export const FINDING_CODES: readonly FindingCode[] = Object.freeze([
  'loop_without_yield',
  'external_code',
  'dynamic_code',
  'local_player_on_server',
  'platform_service',
  'deprecated_global',
  'legacy_method',
] as const);

/** Whether a finding means the script may freeze the game (a loop that never yields). */
export function isHangRisk(code: FindingCode): boolean {
  return code === 'loop_without_yield';
}

/** A script full of one pattern gives at most this many findings (the first ones by line). */
export const MAX_FINDINGS_PER_SCRIPT = 100;

export {
  LOOP_WITHOUT_YIELD, EXTERNAL_CODE, DYNAMIC_CODE, LOCAL_PLAYER_ON_SERVER, PLATFORM_SERVICE, DEPRECATED_GLOBAL, LEGACY_METHOD,
} from './constants.js';

/** Codes fit in 3 bits of the key: key = line * 8 + code index, so keys sort by line then priority. */
const KEY_SPAN = 8;

/** Findings as they are found: key → a number the describer turns into the message (a token index). */
export type FindingSink = Map<number, number>;

export function newSink(): FindingSink {
  return new Map();
}

/** Records a finding (`code` is an index in FINDING_CODES) unless this (code, line) already has one; the first subject wins. */
export function addFinding(sink: FindingSink, code: number, line: number, subject: number): void {
  const key = line * KEY_SPAN + code;
  if (!sink.has(key)) sink.set(key, subject);
}

/** The findings sorted by line (then priority), capped, each with its message. */
export function finishFindings(
  sink: FindingSink,
  describe: (code: number, subject: number) => string,
): Finding[] {
  if (sink.size === 0) return [];
  const keys = Array.from(sink.keys()).sort((a, b) => a - b);
  const kept = keys.length > MAX_FINDINGS_PER_SCRIPT ? keys.slice(0, MAX_FINDINGS_PER_SCRIPT) : keys;
  return kept.map((key) => {
    const code = key % KEY_SPAN;
    const line = Math.floor(key / KEY_SPAN);
    const name = FINDING_CODES[code];
    if (name === undefined) throw new Error(`scan: finding code ${code} has no name`);
    return { code: name, line, message: describe(code, sink.get(key) as number) };
  });
}

const LOOP_HEADERS: Record<string, string> = {
  while: '`while` loop with an always-true condition',
  repeat: '`repeat … until` loop with an always-false condition',
  for: '`for` loop counting to math.huge',
};

/** Keeps text quoted into a message on one short line. */
function quote(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

export function loopMessage(keyword: string): string {
  const header = LOOP_HEADERS[keyword] ?? LOOP_HEADERS.while;
  return `${header} never yields (no task.wait, wait or :Wait()) and never breaks or returns: it can freeze the game`;
}

export function deprecatedGlobalMessage(name: string, instead: string | undefined): string {
  if (name === 'LoadLibrary') return '`LoadLibrary` was removed: the libraries it loaded (RbxUtility, RbxGui, ...) no longer exist';
  if (instead) return `\`${name}\` is a deprecated global; use ${instead}`;
  return `\`${name}\` is a deprecated global`;
}

export function legacyMethodMessage(name: string, instead: string | undefined): string {
  return `\`:${name}\` is a legacy lowercase method${instead ? `; use :${instead}` : ''}`;
}

export function localPlayerMessage(): string {
  return '`LocalPlayer` is nil in a server Script; this code works only in a LocalScript or with RunContext Client';
}

export function requireByIdMessage(id: string): string {
  return `\`require(${quote(id, 24)})\` loads a model by asset id at run time; its code is not in this file`;
}

export function linkedSourceMessage(linkedSource: string): string {
  return `The source is linked from \`${quote(linkedSource)}\` (LinkedSource); its code is not in this file`;
}

export function emptySourceMessage(): string {
  return "The script's source is empty; its code is not in this file";
}

export function dynamicCodeMessage(name: string): string {
  return name === 'loadstring'
    ? '`loadstring` compiles code at run time; what it runs cannot be checked in advance'
    : `\`${name}\` reads or rewrites function environments; what runs cannot be checked in advance`;
}

export function platformServiceMessage(name: string): string {
  return `\`${name}\` works only on Roblox servers; calls to it fail elsewhere`;
}
