/**
 * Script findings: what in a script may hang the game, cannot run outside
 * Roblox, or uses old API. `scanScript` is synchronous and never throws on
 * any source text. The source's bytes are lexed and their tokens walked once
 * in WebAssembly (assembly/, run by wasm.ts); the few loops that look endless
 * are then confirmed (loops.ts) and the findings described here.
 */
import { type ScanOutput, scanText, scanBytes, releaseLargeMemory, kindAt, wordAt, startAt, endAt, lineAt, FINDING_STRIDE } from './wasm.js';
import { KW_WHILE, KW_REPEAT, KW_FOR } from './kinds.js';
import { confirmLoops } from './loops.js';
import { WORD_INSTEAD, WORD_METHOD_INSTEAD, WORD_TEXT, WORD_COUNT } from './words.js';
import {
  type Finding, type ScanOptions, newSink, addFinding, finishFindings, FINDING_CODES,
  LOOP_WITHOUT_YIELD, EXTERNAL_CODE, DYNAMIC_CODE, LOCAL_PLAYER_ON_SERVER, PLATFORM_SERVICE, DEPRECATED_GLOBAL, LEGACY_METHOD,
  loopMessage, deprecatedGlobalMessage, legacyMethodMessage, localPlayerMessage, requireByIdMessage,
  linkedSourceMessage, emptySourceMessage, dynamicCodeMessage, platformServiceMessage,
} from './findings.js';

export type { Finding, FindingCode, ScanOptions } from './findings.js';
export { FINDING_CODES, isHangRisk, MAX_FINDINGS_PER_SCRIPT } from './findings.js';

// Subjects of findings that do not point at a token.
const SUBJECT_LINKED_SOURCE = -1;
const SUBJECT_EMPTY_SOURCE = -2;

/** Whether Players.LocalPlayer is nil where the script runs: a Script on the server. */
function runsOnServer(options: ScanOptions): boolean {
  if (options.className !== 'Script') return false;
  const runContext = options.runContext;
  // The names the map reader gives, without string work per script.
  if (runContext === undefined || runContext === 'Legacy' || runContext === 'Server') return true;
  if (runContext === 'Client' || runContext === 'Plugin') return false;
  // Other spellings: any case, padded, or an enum path such as 'Enum.RunContext.Server'.
  const context = runContext.trim().toLowerCase().split('.').pop();
  return context === '' || context === 'legacy' || context === 'server';
}

/**
 * Messages about a known word depend only on the code and the word (a word
 * token's text is the word's text), so each is built once per process.
 */
const wordMessages: (string | undefined)[] = new Array<string | undefined>(FINDING_CODES.length * WORD_COUNT);

function wordMessage(code: number, word: number): string {
  const slot = code * WORD_COUNT + word;
  let message = wordMessages[slot];
  if (message === undefined) {
    message = describeWord(code, WORD_TEXT[word] ?? '', word);
    wordMessages[slot] = message;
  }
  return message;
}

/** The message of a finding about the token (or word) whose text is `text`. */
function describeWord(code: number, text: string, word: number): string {
  switch (code) {
    case DEPRECATED_GLOBAL:
      return deprecatedGlobalMessage(text, WORD_INSTEAD[word]);
    case LEGACY_METHOD:
      return legacyMethodMessage(text, WORD_METHOD_INSTEAD[word]);
    case LOCAL_PLAYER_ON_SERVER:
      return localPlayerMessage();
    case EXTERNAL_CODE:
      return requireByIdMessage(text);
    case DYNAMIC_CODE:
      return dynamicCodeMessage(text);
    case PLATFORM_SERVICE:
    default:
      return platformServiceMessage(text);
  }
}

export function scanScript(source: string, options?: ScanOptions): Finding[] {
  options ??= {};
  const text = typeof source === 'string' ? source : '';
  return scanWith(isBlank(text), options, (localPlayerIsNil) => scanText(text, localPlayerIsNil));
}

/**
 * `scanScript` over a source's UTF-8 bytes as a file holds them, without
 * making a string of them first: the analysis reads every script this way.
 * The findings are the same as for the decoded text.
 */
export function scanScriptBytes(source: Uint8Array, options?: ScanOptions): Finding[] {
  options ??= {};
  const bytes = source instanceof Uint8Array ? source : new Uint8Array(0);
  return scanWith(isBlankBytes(bytes), options, (localPlayerIsNil) => scanBytes(bytes, localPlayerIsNil));
}

function scanWith(blank: boolean, options: ScanOptions, scan: (localPlayerIsNil: boolean) => ScanOutput): Finding[] {
  const linkedSource = typeof options.linkedSource === 'string' ? options.linkedSource.trim() : '';
  const sink = newSink();

  if (linkedSource !== '') addFinding(sink, EXTERNAL_CODE, 1, SUBJECT_LINKED_SOURCE);
  if (blank) {
    addFinding(sink, EXTERNAL_CODE, 1, SUBJECT_EMPTY_SOURCE);
    return finishFindings(sink, (_code, subject) => describeWithoutTokens(subject, linkedSource));
  }

  const t = scan(runsOnServer(options));
  const found = t.findings;
  for (let o = 0; o + FINDING_STRIDE <= found.length; o += FINDING_STRIDE) addFinding(sink, found[o]!, found[o + 1]!, found[o + 2]!);
  const tokens = t.tokens;
  for (const loop of confirmLoops(t)) addFinding(sink, LOOP_WITHOUT_YIELD, lineAt(tokens, loop), loop);

  const findings = finishFindings(sink, (code: number, subject: number): string => {
    if (subject < 0) return describeWithoutTokens(subject, linkedSource);
    if (code === LOOP_WITHOUT_YIELD) {
      const keyword = kindAt(tokens, subject);
      return loopMessage(keyword === KW_REPEAT ? 'repeat' : keyword === KW_FOR ? 'for' : keyword === KW_WHILE ? 'while' : '');
    }
    const word = wordAt(tokens, subject);
    if (word !== 0) return wordMessage(code, word);
    // A string naming a service, or the number in `require(<number>)`.
    return describeWord(code, t.bytes.toString('utf8', startAt(tokens, subject), endAt(tokens, subject)), 0);
  });
  releaseLargeMemory();
  return findings;
}

function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13 && c !== 11 && c !== 12 && c !== 0xfeff && c !== 0xa0) return false;
  }
  return true;
}

/** Blank as UTF-8: ASCII whitespace, U+FEFF (EF BB BF) and U+00A0 (C2 A0). */
function isBlankBytes(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (c === 32 || c === 9 || c === 10 || c === 13 || c === 11 || c === 12) continue;
    if (c === 0xef && bytes[i + 1] === 0xbb && bytes[i + 2] === 0xbf) i += 2;
    else if (c === 0xc2 && bytes[i + 1] === 0xa0) i += 1;
    else return false;
  }
  return true;
}

function describeWithoutTokens(subject: number, linkedSource: string): string {
  return subject === SUBJECT_LINKED_SOURCE ? linkedSourceMessage(linkedSource) : emptySourceMessage();
}
