/**
 * Script findings: what in a script may hang the game, cannot run outside
 * Roblox, or uses old API. `scanScript` is synchronous, never throws on any
 * source text, and reads the source once (tokenize, one walk over the
 * tokens, then a check of the few loops that look endless).
 */
import { tokenize, releaseLargeTokenBuffers, KW_WHILE, KW_REPEAT, KW_FOR } from './tokenizer.js';
import { walkTokens } from './checks.js';
import { confirmLoops } from './loops.js';
import { WORD_INSTEAD, WORD_METHOD_INSTEAD } from './words.js';
import {
  type Finding, type FindingCode, type ScanOptions, newSink, addFinding, finishFindings,
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
  // 'Server', or an enum path such as 'Enum.RunContext.Server'.
  const context = (options.runContext ?? '').trim().toLowerCase().split('.').pop();
  return context === '' || context === 'legacy' || context === 'server';
}

export function scanScript(source: string, options?: ScanOptions): Finding[] {
  options ??= {};
  const text = typeof source === 'string' ? source : '';
  const linkedSource = typeof options.linkedSource === 'string' ? options.linkedSource.trim() : '';
  const sink = newSink();

  if (linkedSource !== '') addFinding(sink, 'external_code', 1, SUBJECT_LINKED_SOURCE);
  if (isBlank(text)) {
    addFinding(sink, 'external_code', 1, SUBJECT_EMPTY_SOURCE);
    return finishFindings(sink, (_code, subject) => describeWithoutTokens(subject, linkedSource));
  }

  const tokens = tokenize(text);
  const { funcs, loops } = walkTokens(tokens, sink, runsOnServer(options));
  for (const loop of confirmLoops(tokens, funcs, loops)) {
    addFinding(sink, 'loop_without_yield', tokens.line[loop.token], loop.token);
  }

  const tokenText = (index: number): string => text.slice(tokens.start[index], tokens.end[index]);
  const findings = finishFindings(sink, (code: FindingCode, subject: number): string => {
    if (subject < 0) return describeWithoutTokens(subject, linkedSource);
    const word = tokens.word[subject];
    switch (code) {
      case 'loop_without_yield': {
        const keyword = tokens.kind[subject];
        return loopMessage(keyword === KW_REPEAT ? 'repeat' : keyword === KW_FOR ? 'for' : keyword === KW_WHILE ? 'while' : '');
      }
      case 'deprecated_global':
        return deprecatedGlobalMessage(tokenText(subject), WORD_INSTEAD[word]);
      case 'legacy_method':
        return legacyMethodMessage(tokenText(subject), WORD_METHOD_INSTEAD[word]);
      case 'local_player_on_server':
        return localPlayerMessage();
      case 'external_code':
        return requireByIdMessage(tokenText(subject));
      case 'dynamic_code':
        return dynamicCodeMessage(tokenText(subject));
      case 'platform_service':
        return platformServiceMessage(tokenText(subject));
    }
  });
  releaseLargeTokenBuffers();
  return findings;
}

function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13 && c !== 11 && c !== 12 && c !== 0xfeff && c !== 0xa0) return false;
  }
  return true;
}

function describeWithoutTokens(subject: number, linkedSource: string): string {
  return subject === SUBJECT_LINKED_SOURCE ? linkedSourceMessage(linkedSource) : emptySourceMessage();
}
