/**
 * The script decision, read from an analysis report: what the findings mean for the
 * choice of script mode (hang risks apart from what may fail and from old style), the
 * mode to recommend and why, and the flagged scripts grouped by finding. Pure functions
 * over the report's JSON; the import page and the CLI show the same decision.
 */

export type FindingGroup = 'hang' | 'break' | 'style';

export interface FindingInfo {
  group: FindingGroup;
  /** A short name for a heading. */
  label: string;
  /** What it means for the game, in one sentence. */
  meaning: string;
}

/** Every finding code the scanner gives, in its priority order. */
export const FINDINGS: Record<string, FindingInfo> = {
  loop_without_yield: {
    group: 'hang',
    label: 'Loops that never pause',
    meaning: 'A loop with no wait, no break and no return runs forever and freezes the game the moment the script starts.',
  },
  external_code: {
    group: 'break',
    label: 'Code that is not in the file',
    meaning: 'The script loads a model by asset id (require(id)) or its source is linked or empty; that code does not come with the map.',
  },
  dynamic_code: {
    group: 'break',
    label: 'Code built while the game runs',
    meaning: 'loadstring, getfenv or setfenv: what runs cannot be checked beforehand.',
  },
  local_player_on_server: {
    group: 'break',
    label: 'LocalPlayer in a server script',
    meaning: 'Players.LocalPlayer is nil in a server Script, so that code errors when it runs.',
  },
  platform_service: {
    group: 'break',
    label: 'Roblox-only services',
    meaning: 'Data stores, purchases, teleports and other Roblox cloud services fail outside Roblox; the calls error.',
  },
  deprecated_global: {
    group: 'style',
    label: 'Old globals',
    meaning: 'wait(), spawn(), delay() and similar: old style with newer replacements (task.wait, task.spawn).',
  },
  legacy_method: {
    group: 'style',
    label: 'Old lowercase methods',
    meaning: ':connect, :clone, :findFirstChild and similar: old spellings of current methods.',
  },
};

export const GROUPS: Record<FindingGroup, { title: string; summary: string }> = {
  hang: { title: 'Can freeze the game', summary: 'scripts can freeze the game' },
  break: { title: 'May fail outside Roblox', summary: 'scripts may fail outside Roblox (they stop with an error; the game keeps running)' },
  style: { title: 'Old style only', summary: 'scripts use only old style that is not a risk' },
};

export interface CodeCount {
  code: string;
  info: FindingInfo;
  /** Scripts with at least one finding of this code (copies counted). */
  scripts: number;
  /** Of those, how many the map leaves enabled. */
  enabled: number;
  /** Findings of this code over all scripts. */
  findings: number;
}

export interface RiskEntry {
  path: string;
  class: string;
  copies: number;
  /** Copies the map disables. */
  disabled: number;
  copyPaths: string[];
  /** This entry's findings of the group's code. */
  findings: { line: number; message: string }[];
}

export interface ScriptDecision {
  scriptsTotal: number;
  /** Already switched off in the map (Disabled): `enabled` keeps them off. */
  disabledInMap: number;
  /** Code not in the file (LinkedSource, or blank). */
  linked: number;
  runContexts: Record<string, number>;
  flagged: number;
  /** Per code, in priority order, codes with no finding left out. */
  codes: CodeCount[];
  /** Per group: scripts (lower bound when a script has two codes of a group and the list is incomplete) and enabled ones. */
  groups: Record<FindingGroup, { scripts: number; enabled: number }>;
  /** Null when the map has no scripts (no choice is offered). */
  recommended: 'disabled' | 'enabled' | 'skip' | null;
  reason: string;
  /** The flagged scripts by code (a script under each code it has), copies listed once. */
  atRisk: { code: string; info: FindingInfo; entries: RiskEntry[] }[];
  /** `atRisk` lists every flagged script (the report's list was not cut). */
  complete: boolean;
}

type Json = Record<string, unknown>;
const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const plural = (n: number, one: string, many = `${one}s`): string => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

export function decideScripts(report: Json): ScriptDecision {
  const scriptsTotal = num(report.scripts_total);
  const disabledInMap = num(report.scripts_disabled);
  const byFinding = (report.scripts_by_finding ?? {}) as Record<string, { scripts?: unknown; enabled?: unknown; most_severe?: unknown; most_severe_enabled?: unknown }>;
  const findingCounts = (report.script_findings ?? {}) as Record<string, unknown>;
  const entries = Array.isArray(report.scripts_at_risk) ? (report.scripts_at_risk as Json[]) : [];
  const copiesListed = entries.reduce((total, entry) => total + Math.max(1, num(entry.copies)), 0);
  const complete = copiesListed >= num(report.scripts_flagged);

  const codes: CodeCount[] = [];
  for (const [code, info] of Object.entries(FINDINGS)) {
    const counted = byFinding[code];
    let scripts = num(counted?.scripts);
    let enabled = num(counted?.enabled);
    if (counted === undefined) {
      // A report from before scripts_by_finding: count from the list (a lower bound when it was cut).
      for (const entry of entries) {
        if (!findingsOf(entry).some((f) => f.code === code)) continue;
        const copies = Math.max(1, num(entry.copies));
        scripts += copies;
        enabled += copies - num(entry.disabled);
      }
    }
    const findings = num(findingCounts[code]);
    if (scripts > 0 || findings > 0) codes.push({ code, info, scripts, enabled, findings });
  }

  const groups = groupCounts(byFinding, codes, entries, complete);
  const { recommended, reason } = recommend(scriptsTotal, disabledInMap, groups, num(report.scripts_linked));
  return {
    scriptsTotal,
    disabledInMap,
    linked: num(report.scripts_linked),
    runContexts: Object.fromEntries(Object.entries((report.scripts_by_run_context ?? {}) as Json).map(([k, v]) => [k, num(v)])),
    flagged: num(report.scripts_flagged),
    codes,
    groups,
    recommended,
    reason,
    atRisk: byCode(entries),
    complete,
  };
}

function findingsOf(entry: Json): { code: string; line: number; message: string }[] {
  return Array.isArray(entry.findings)
    ? (entry.findings as Json[]).map((f) => ({ code: text(f.code), line: num(f.line), message: text(f.message) }))
    : [];
}

/**
 * Scripts per group, each script in its most serious group only ("old style only" means
 * nothing worse): exact from the report's `most_severe` counts, or from the list when it
 * is complete; otherwise the largest code's count (a lower bound).
 */
function groupCounts(
  byFinding: Record<string, { most_severe?: unknown; most_severe_enabled?: unknown }>, codes: CodeCount[], entries: Json[], complete: boolean,
): Record<FindingGroup, { scripts: number; enabled: number }> {
  const groups: Record<FindingGroup, { scripts: number; enabled: number }> = {
    hang: { scripts: 0, enabled: 0 }, break: { scripts: 0, enabled: 0 }, style: { scripts: 0, enabled: 0 },
  };
  if (Object.values(byFinding).some((counts) => typeof counts?.most_severe === 'number')) {
    for (const [code, counts] of Object.entries(byFinding)) {
      const info = FINDINGS[code];
      if (!info) continue;
      groups[info.group].scripts += num(counts.most_severe);
      groups[info.group].enabled += num(counts.most_severe_enabled);
    }
    return groups;
  }
  if (complete) {
    for (const entry of entries) {
      const copies = Math.max(1, num(entry.copies));
      const enabled = copies - num(entry.disabled);
      const kinds = new Set(findingsOf(entry).map((f) => FINDINGS[f.code]?.group).filter((g): g is FindingGroup => g !== undefined));
      const worst = kinds.has('hang') ? 'hang' : kinds.has('break') ? 'break' : kinds.has('style') ? 'style' : null;
      if (worst === null) continue;
      groups[worst].scripts += copies;
      groups[worst].enabled += enabled;
    }
    return groups;
  }
  for (const count of codes) {
    const group = groups[count.info.group];
    group.scripts = Math.max(group.scripts, count.scripts);
    group.enabled = Math.max(group.enabled, count.enabled);
  }
  return groups;
}

function recommend(
  total: number, disabledInMap: number, groups: Record<FindingGroup, { scripts: number; enabled: number }>, linked: number,
): { recommended: ScriptDecision['recommended']; reason: string } {
  if (total === 0) return { recommended: null, reason: 'The map has no scripts: only its geometry and assets are imported.' };
  const hang = groups.hang;
  if (hang.enabled > 0) {
    return {
      recommended: 'disabled',
      reason: `${plural(hang.enabled, 'script')} the map runs ${hang.enabled === 1 ? 'has a loop' : 'have loops'} that never pause${hang.enabled === 1 ? 's' : ''} and can freeze the game. `
        + 'Import the scripts switched off, fix those loops, then switch the scripts on.',
    };
  }
  const notes: string[] = [];
  if (hang.scripts > 0) notes.push(`the ${plural(hang.scripts, 'script')} with a loop that could freeze the game ${hang.scripts === 1 ? 'is' : 'are'} already switched off in the map, and Enabled keeps ${hang.scripts === 1 ? 'it' : 'them'} off`);
  else notes.push('no script has a loop that can freeze the game');
  if (groups.break.enabled > 0) notes.push(`${plural(groups.break.enabled, 'script')} may stop with an error where ${groups.break.enabled === 1 ? 'it uses' : 'they use'} something only Roblox has`);
  if (linked > 0) notes.push(`${plural(linked, 'script')} ${linked === 1 ? 'has' : 'have'} no code in the file`);
  if (disabledInMap > 0 && disabledInMap < total) notes.push(`${plural(disabledInMap, 'script')} the map switches off stay${disabledInMap === 1 ? 's' : ''} off`);
  const sentence = notes.join('; ');
  return { recommended: 'enabled', reason: `${sentence.charAt(0).toUpperCase()}${sentence.slice(1)}. Enabled imports each script as the map has it, so the game runs as it did.` };
}

function byCode(entries: Json[]): ScriptDecision['atRisk'] {
  const groups: ScriptDecision['atRisk'] = [];
  for (const [code, info] of Object.entries(FINDINGS)) {
    const list: RiskEntry[] = [];
    for (const entry of entries) {
      const findings = findingsOf(entry).filter((f) => f.code === code).map(({ line, message }) => ({ line, message }));
      if (findings.length === 0) continue;
      list.push({
        path: text(entry.path),
        class: text(entry.class),
        copies: Math.max(1, num(entry.copies)),
        disabled: num(entry.disabled),
        copyPaths: Array.isArray(entry.copy_paths) ? entry.copy_paths.map(String) : [],
        findings,
      });
    }
    if (list.length > 0) groups.push({ code, info, entries: list });
  }
  return groups;
}
