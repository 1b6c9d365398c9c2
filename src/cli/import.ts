/**
 * `rbxl-import import FILE...`: analyses the files (several at once, with an upload
 * progress line), then takes them one at a time, in the order given: shows what the map
 * holds, what arrives and the script decision (with a recommended mode), settles the
 * mode (flag, question, or the contract's default), creates the project with a progress
 * bar fed by the service, and reports the outcome, asset failures grouped by reason with
 * what to do. One file failing does not stop the others, but makes the exit code 1.
 * Usage errors exit 2.
 */
import { basename } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import type { Readable, Writable } from 'node:stream';
import {
  SCRIPTS_MODES,
  createClient,
  decideScripts,
  describeAssetReason,
  describeFailure,
  developmentToken,
  newCreateId,
  type AnalyzeResult,
  type Client,
  type CreateProgress,
  type CreateResult,
  type Report,
  type ScriptDecision,
  type ScriptsMode,
} from '../client/index.js';
import { MAX_USER_ID_LENGTH, USER_ID_PATTERN } from '../client/auth.js';
import { uploadFromPath } from '../client/node.js';
import { DEFAULT_BASE_URL, DEFAULT_CONCURRENCY, commandHelp, findCommand } from './help.js';
import { AlikeArgumentsError, argumentPath } from './paths.js';
import { terminalSafe } from './terminal-text.js';

export { terminalSafe };

export { DEFAULT_BASE_URL, DEFAULT_CONCURRENCY };
export const USAGE = commandHelp(findCommand('import')!);
/** How often a running create's progress is asked for. */
const PROGRESS_POLL_MS = 250;

export interface ImportIO {
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean; columns?: number };
  env: Record<string, string | undefined>;
}

interface ImportOptions {
  files: string[];
  /** Each file's path as it is opened (paths.ts: by its bytes when its name is not UTF-8). */
  paths: (string | Buffer)[];
  baseUrl: string;
  token: string;
  title: string;
  scriptsMode: ScriptsMode | null;
  concurrency: number;
  json: boolean;
}

type Stage = 'read' | 'analyze' | 'create';

/** One file's outcome; with --json, everything the service answered is in it. */
export type FileResult =
  | ({
      file: string;
      ok: true;
      preview_hash: string;
      report: Report;
      scripts_mode: ScriptsMode;
      /** `redirect` resolved against the base URL. */
      url: string;
    } & CreateResult & { asset_failures?: { id: string; reason: string }[] })
  | {
      file: string;
      ok: false;
      stage: Stage;
      /** The client's message (the contract's `<operation> failed (<status>): <body>`). */
      error: string;
      /** The same, for people: what happened and what to do. */
      message: string;
      action: string;
      /** The service's error code, when it answered with one. */
      code?: string;
      /** HTTP status of the refusal, when the service answered. */
      status?: number;
      preview_hash?: string;
      report?: Report;
    };

class UsageError extends Error {}

export async function runImport(argv: string[], io: Partial<ImportIO> = {}): Promise<number> {
  const streams: ImportIO = {
    stdin: io.stdin ?? process.stdin,
    stdout: io.stdout ?? process.stdout,
    stderr: io.stderr ?? process.stderr,
    env: io.env ?? process.env,
  };
  let options: ImportOptions | 'help';
  try {
    options = parseOptions(argv, streams.env);
  } catch (error) {
    if (!(error instanceof UsageError) && !isParseArgsError(error)) throw error;
    streams.stderr.write(`rbxl-import import: ${(error as Error).message} (see rbxl-import import --help)\n`);
    return 2;
  }
  if (options === 'help') {
    streams.stdout.write(USAGE);
    return 0;
  }

  const client = createClient({ baseUrl: options.baseUrl, token: options.token });
  const terminal = createTerminal(streams);
  const settings = options;
  try {
    // Uploads and analyses run ahead, up to --concurrency at once; each file is then taken in turn.
    const limit = limiter(settings.concurrency);
    const analyses = settings.files.map((file, index) => limit(() => analyseFile(file, settings.paths[index]!, client, terminal)));
    const results: FileResult[] = [];
    for (const [index, file] of settings.files.entries()) {
      const analysed = await analyses[index]!;
      try {
        results.push('ok' in analysed ? reportFailure(analysed, terminal) : await settleFile(file, analysed, settings, client, terminal));
      } catch (error) {
        // An answer of a shape this client cannot read fails its file, not the run.
        const unreadable = new Error(`the service's answer has a shape this client cannot read (${(error as Error)?.message ?? String(error)})`);
        results.push(reportFailure(failure(file, 'analyze', unreadable), terminal));
      }
    }
    if (settings.json) {
      terminal.say('stdout', `${JSON.stringify({ base_url: settings.baseUrl, results }, null, 2)}\n`);
    } else if (results.length > 1) {
      const failed = results.filter((result) => !result.ok).length;
      terminal.say('stdout', `${results.length - failed} of ${results.length} files imported${failed ? `, ${failed} failed` : ''}\n`);
    }
    return results.every((result) => result.ok) ? 0 : 1;
  } finally {
    terminal.close();
  }
}

type Analysed = { analysis: AnalyzeResult } | Extract<FileResult, { ok: false }>;

/** Reads and uploads one file; failures are values, reported when the file's turn comes. */
async function analyseFile(file: string, path: string | Buffer, client: Client, terminal: Terminal): Promise<Analysed> {
  let upload;
  try {
    upload = await uploadFromPath(path);
  } catch (error) {
    const message = `cannot read file: ${(error as Error).message}`;
    return { file, ok: false, stage: 'read', error: message, message: `${basename(file)} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}).`, action: 'Check the path and that the file is readable.' };
  }
  terminal.progress.upload(file, 0, upload.data.size);
  try {
    return { analysis: await client.analyze(upload, { onProgress: (sent, total) => terminal.progress.upload(file, sent, total) }) };
  } catch (error) {
    return failure(file, 'analyze', error);
  } finally {
    terminal.progress.uploaded(file);
  }
}

function failure(file: string, stage: Stage, error: unknown, extra: { preview_hash?: string; report?: Report } = {}): Extract<FileResult, { ok: false }> {
  const described = describeFailure(error, stage);
  return {
    file, ok: false, stage, error: described.details, message: described.message, action: described.action,
    ...(described.code !== null ? { code: described.code } : {}),
    ...(described.status > 0 ? { status: described.status } : {}),
    ...extra,
  };
}

/** A failure, written when its file's turn comes. */
function reportFailure(result: Extract<FileResult, { ok: false }>, terminal: Terminal): FileResult {
  terminal.say('stderr', describeFailureLines(result));
  return result;
}

export function describeFailureLines(result: Extract<FileResult, { ok: false }>): string {
  let text = `${result.file}: ${result.message}\n`;
  if (result.action) text += `  ${result.action}\n`;
  if (result.error && result.error !== result.message) {
    const flat = result.error.replace(/\s+/g, ' ');
    const details = flat.length > SHOWN_DETAILS_CHARS ? `${flat.slice(0, SHOWN_DETAILS_CHARS)}… (${count(flat.length - SHOWN_DETAILS_CHARS, 'more character')})` : flat;
    text += `  details: ${details}\n`;
  }
  return text;
}

async function settleFile(file: string, analysed: { analysis: AnalyzeResult }, options: ImportOptions, client: Client, terminal: Terminal): Promise<FileResult> {
  const { preview_hash, report } = analysed.analysis;
  const decision = decideScripts(report);
  if (!options.json) terminal.say('stdout', describeReport(file, report, decision));

  const scriptsMode = options.scriptsMode ?? (await chooseScriptsMode(file, decision, terminal));
  const createId = newCreateId();
  const watch = watchCreate(client, createId, (progress) => terminal.progress.create(file, progress));
  let created: CreateResult;
  try {
    created = await client.create(preview_hash, { title: options.title, scriptsMode, createId });
  } catch (error) {
    const result = failure(file, 'create', error, { preview_hash, report });
    terminal.say('stderr', describeFailureLines(result));
    return result;
  } finally {
    watch.stop();
    terminal.progress.created(file);
  }
  const url = resolveRedirect(created.redirect, options.baseUrl);
  if (!options.json) terminal.say('stdout', describeCreated(file, created, scriptsMode, url));
  return { ...created, file, ok: true, preview_hash, report, scripts_mode: scriptsMode, url };
}

/**
 * Polls a create's progress until stopped; a missed poll is not a failed create. Stopping
 * ends a poll still waiting for its answer: one the service never answers would otherwise
 * keep the process running after the import has finished.
 */
function watchCreate(client: Client, createId: string, show: (progress: CreateProgress) => void): { stop(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  const polls = new AbortController();
  const poll = async (): Promise<void> => {
    try {
      const progress = await client.createProgress(createId, { signal: polls.signal });
      if (progress && !stopped) show(progress);
    } catch {
      // the create's own answer decides
    }
    if (!stopped) timer = setTimeout(() => void poll(), PROGRESS_POLL_MS);
  };
  timer = setTimeout(() => void poll(), 50);
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      polls.abort();
    },
  };
}

/**
 * The contract: the choice is offered only when the map has scripts; here, only to a
 * person at a terminal. Enter (or the end of input) takes the recommended mode.
 */
async function chooseScriptsMode(file: string, decision: ScriptDecision, terminal: Terminal): Promise<ScriptsMode> {
  if (!(decision.scriptsTotal > 0) || !terminal.interactive) return 'disabled';
  const recommended: ScriptsMode = decision.recommended === 'enabled' ? 'enabled' : 'disabled';
  const mark = (mode: ScriptsMode) => (mode === recommended ? ' (recommended)' : '');
  const intro =
    `How should the ${count(decision.scriptsTotal, 'script')} of ${file} be imported?\n` +
    `  enabled   as the map has them; scripts it switches off stay off${mark('enabled')}\n` +
    `  disabled  imported switched off, readable in the hierarchy${mark('disabled')}\n` +
    '  skip      not imported; geometry and assets only\n';
  return terminal.ask(intro, `Script mode for ${file} [enabled/disabled/skip, Enter: ${recommended}]: `, (answer) => parseScriptsModeAnswer(answer, recommended));
}

/** '' means `fallback`; any unambiguous prefix of a mode counts. Null asks again. */
export function parseScriptsModeAnswer(answer: string, fallback: ScriptsMode = 'disabled'): ScriptsMode | null {
  const text = answer.trim().toLowerCase();
  if (text === '') return fallback;
  return SCRIPTS_MODES.find((mode) => mode.startsWith(text)) ?? null;
}

function parseOptions(argv: string[], env: Record<string, string | undefined>): ImportOptions | 'help' {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      'base-url': { type: 'string' },
      token: { type: 'string' },
      'dev-user': { type: 'string' },
      title: { type: 'string' },
      scripts: { type: 'string' },
      concurrency: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return 'help';
  if (positionals.length === 0) throw new UsageError('no FILE given');

  const baseUrl = values['base-url'] ?? nonEmpty(env.RBXL_IMPORT_URL) ?? DEFAULT_BASE_URL;
  let parsed: URL;
  try {
    parsed = new URL(baseUrl);
  } catch {
    throw new UsageError(`--base-url must be an http(s) URL, got ${JSON.stringify(baseUrl)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new UsageError(`--base-url must be an http(s) URL, got ${JSON.stringify(baseUrl)}`);
  }
  // fetch refuses a URL with credentials, and the paths are appended to the URL as given: both failed every file
  // as "The service could not be reached" (or asked another path) instead of saying what is wrong with the address.
  if (parsed.username !== '' || parsed.password !== '') {
    throw new UsageError('--base-url must not carry a user name or password (sign in with --token or --dev-user)');
  }
  const port = parsed.port === '' ? null : Number(parsed.port);
  if (port !== null && FETCH_BAD_PORTS.has(port)) {
    throw new UsageError(`--base-url uses port ${port}, which fetch (here and in browsers) refuses to connect to; run the service on another port (PORT)`);
  }
  if (parsed.search !== '' || parsed.hash !== '' || /[?#]/.test(baseUrl)) {
    throw new UsageError(`--base-url must be the service's address without ?query or #fragment, got ${JSON.stringify(baseUrl)}`);
  }

  const scripts = values.scripts;
  if (scripts !== undefined && !(SCRIPTS_MODES as readonly string[]).includes(scripts)) {
    throw new UsageError(`--scripts must be one of ${SCRIPTS_MODES.join(', ')}, got ${JSON.stringify(scripts)}`);
  }

  const concurrencyText = values.concurrency ?? String(DEFAULT_CONCURRENCY);
  if (!/^[1-9]\d{0,3}$/.test(concurrencyText)) {
    throw new UsageError(`--concurrency must be an integer from 1 to 9999, got ${JSON.stringify(concurrencyText)}`);
  }
  const devUser = values['dev-user'];
  if (devUser !== undefined && !USER_ID_PATTERN.test(devUser)) {
    throw new UsageError(`--dev-user must be 1 to ${MAX_USER_ID_LENGTH} printable ASCII characters, spaces only inside, got ${JSON.stringify(devUser)}`);
  }
  if (devUser !== undefined && values.token !== undefined) throw new UsageError('give --token or --dev-user, not both');
  const token = devUser !== undefined ? developmentToken(devUser) : values.token ?? env.RBXL_IMPORT_TOKEN ?? '';
  // The token goes in a header as held: a character a header cannot carry (a line break, anything past
  // U+00FF) made fetch refuse every request, said as "The service could not be reached".
  if (!sendableAsHeader(token)) {
    throw new UsageError(`${values.token !== undefined ? '--token' : 'RBXL_IMPORT_TOKEN'} cannot be sent as a header (line breaks and characters past U+00FF cannot)`);
  }

  let paths: (string | Buffer)[];
  try {
    paths = positionals.map(argumentPath);
  } catch (error) {
    if (error instanceof AlikeArgumentsError) throw new UsageError(error.message);
    throw error;
  }

  return {
    files: positionals,
    paths,
    baseUrl,
    token,
    title: values.title ?? '',
    scriptsMode: (scripts as ScriptsMode | undefined) ?? null,
    concurrency: Number(concurrencyText),
    json: values.json ?? false,
  };
}

/**
 * The ports the Fetch standard blocks (https://fetch.spec.whatwg.org/#port-blocking): Node's fetch
 * and browsers refuse them, so a service on PORT=6000 failed every file as "could not be reached (bad port)".
 */
const FETCH_BAD_PORTS = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113,
  115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556,
  563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667,
  6668, 6669, 6679, 6697, 10080,
]);

/** Whether fetch can send `value` as a header's value (the same check it makes). */
function sendableAsHeader(value: string): boolean {
  try {
    new Headers({ Authorization: value });
    return true;
  } catch {
    return false;
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

function isParseArgsError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_');
}

// ---------------------------------------------------------------------------------------
// Output: the analysis and the outcome in words

const IMPORTED_LABELS: Record<string, string> = {
  parts_in_workspace: 'parts in the Workspace', parts_in_storage: 'parts in storage', joints_generated: 'joints made from surfaces',
  sky_and_effects: 'sky and effects', body_movers: 'body movers', guis: 'GUI objects', values: 'value objects',
};
/** Flagged scripts named per finding, and warnings, in the summary (--json has every one). */
const LISTED_PER_FINDING = 3;
const SHOWN_WARNINGS = 3;

export function describeReport(file: string, report: Report, decision: ScriptDecision = decideScripts(report)): string {
  const facts: string[] = [];
  if (typeof report.instances_total === 'number') facts.push(`instances ${number(report.instances_total)}`);
  if (typeof report.parts_total === 'number') facts.push(`parts ${number(report.parts_total)}`);
  facts.push(`scripts ${number(report.scripts_total)}${breakdown(report.scripts)}`);
  if (typeof report.assets_total === 'number') facts.push(`assets ${number(report.assets_total)}${breakdown(report.assets)}`);
  const header = [file, typeof report.file_size === 'number' ? bytes(report.file_size) : null, report.format ?? null]
    .filter((part) => part !== null)
    .join(', ');
  let text = `${header}\n  ${facts.join(' · ')}\n`;
  const imported = report.imported as Record<string, unknown> | undefined;
  if (imported && typeof imported === 'object') {
    const arrives = Object.entries(imported)
      .filter(([key, value]) => typeof value === 'number' && value > 0 && key !== 'instances' && !key.startsWith('unanchored') && key !== 'instances_inside_scripts')
      .map(([key, value]) => `${IMPORTED_LABELS[key] ?? key.replaceAll('_', ' ')} ${number(value as number)}`);
    if (imported.terrain === true) arrives.push('terrain');
    text += `  arrives: ${arrives.join(' · ') || 'the map\'s instances'}\n`;
  }
  if (Array.isArray(report.not_imported) && report.not_imported.length) {
    const left = (report.not_imported as { class?: string; property?: string; count?: number; reason?: string }[])
      .map((entry) => `${entry.class ?? '?'}${entry.property ? `.${entry.property}` : ''} ×${number(entry.count ?? 0)} (${entry.reason ?? ''})`);
    const more = left.length > SHOWN_LEFT_OUT ? `; … and ${count(left.length - SHOWN_LEFT_OUT, 'more')} (--json has them all)` : '';
    text += `  left out: ${left.slice(0, SHOWN_LEFT_OUT).join('; ')}${more}\n`;
  }
  if (decision.scriptsTotal > 0) text += describeDecision(decision);
  const warnings = Array.isArray(report.warnings) ? report.warnings.map(String) : [];
  for (const warning of warnings.slice(0, SHOWN_WARNINGS)) text += `  warning: ${warning}\n`;
  if (warnings.length > SHOWN_WARNINGS) text += `  … and ${count(warnings.length - SHOWN_WARNINGS, 'more warning')} (--json has them all)\n`;
  return text;
}

function describeDecision(decision: ScriptDecision): string {
  const contexts = Object.entries(decision.runContexts).filter(([, n]) => n > 0).map(([name, n]) => `${name} ${number(n)}`).join(', ');
  let text = `  scripts: ${number(decision.scriptsTotal)} · ${number(decision.disabledInMap)} already switched off in the map · ${number(decision.linked)} linked${contexts ? ` · run contexts: ${contexts}` : ''}\n`;
  const rows: [string, 'hang' | 'break' | 'style'][] = [['can freeze the game', 'hang'], ['may fail outside Roblox', 'break'], ['old style only', 'style']];
  for (const [title, group] of rows) {
    const { scripts, enabled } = decision.groups[group];
    const codes = decision.codes.filter((code) => code.info.group === group).map((code) => `${code.info.label} ${number(code.scripts)}`);
    const off = scripts > enabled ? `, ${number(scripts - enabled)} already off` : '';
    text += `    ${title.padEnd(24)} ${number(scripts).padStart(7)}${off}${codes.length ? `  (scripts with: ${codes.join(', ')})` : ''}\n`;
  }
  text += `  recommended: ${decision.recommended} — ${decision.reason}\n`;
  if (decision.atRisk.length) {
    text += `  scripts to look at, by finding (up to ${LISTED_PER_FINDING} each; --json has every one):\n`;
    for (const group of decision.atRisk) {
      const scripts = group.entries.reduce((total, entry) => total + entry.copies, 0);
      text += `    ${group.info.label} (${count(scripts, 'script')}):\n`;
      for (const entry of group.entries.slice(0, LISTED_PER_FINDING)) {
        const copies = entry.copies > 1 ? ` × ${number(entry.copies)} copies` : '';
        const lines = entry.findings.map((finding) => finding.line).slice(0, 5).join(', ');
        text += `      ${entry.path} (${entry.class})${copies}: line${entry.findings.length > 1 ? 's' : ''} ${lines}${entry.findings.length > 5 ? ', …' : ''}\n`;
      }
      if (group.entries.length > LISTED_PER_FINDING) text += `      … and ${number(group.entries.length - LISTED_PER_FINDING)} more\n`;
    }
  }
  return text;
}

/**
 * The created project in words. It never throws: the project exists once create answered, and a
 * field of a type the contract leaves open (`assets_downloaded: null`, an `asset_failures` entry that
 * is not an object) made the file count as failed, said as "try again", which made a second project.
 */
function describeCreated(file: string, created: CreateResult, mode: ScriptsMode, url: string): string {
  let text =
    `${file}: created project ${created.project_id} (scripts ${mode})\n` +
    `  assets: ${shownCount(created.assets_downloaded)} downloaded, ${shownCount(created.assets_failed)} failed\n`;
  const failures = Array.isArray(created.asset_failures) ? (created.asset_failures as unknown[]) : [];
  const byReason = new Map<string, unknown[]>();
  for (const entry of failures) {
    const { id, reason } = (typeof entry === 'object' && entry !== null ? entry : {}) as { id?: unknown; reason?: unknown };
    const key = typeof reason === 'string' ? reason : 'unknown';
    byReason.set(key, [...(byReason.get(key) ?? []), id]);
  }
  for (const [reason, ids] of [...byReason].sort((a, b) => b[1].length - a[1].length)) {
    const advice = describeAssetReason(reason);
    text += `    ${count(ids.length, 'asset')} ${reason}: ${advice.label}\n      what to do: ${advice.action}\n`;
  }
  return text + `  open: ${url}\n`;
}

function resolveRedirect(redirect: string, baseUrl: string): string {
  try {
    return new URL(redirect, baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`).href;
  } catch {
    return redirect;
  }
}

function breakdown(counts: Record<string, number> | undefined): string {
  if (!counts || typeof counts !== 'object') return '';
  const parts = Object.entries(counts)
    .filter(([, value]) => typeof value === 'number' && value > 0)
    .map(([key, value]) => `${key} ${number(value)}`);
  return parts.length ? ` (${parts.join(', ')})` : '';
}

const number = (value: number) => value.toLocaleString('en-US');
/** A count the service gave, whatever its type: a number as a number, anything else as its JSON. */
const shownCount = (value: unknown): string => (typeof value === 'number' ? number(value) : JSON.stringify(value) ?? 'none');
const count = (value: number, noun: string) => `${number(value)} ${noun}${value === 1 ? '' : 's'}`;

export function bytes(value: number): string {
  if (value < 1024) return `${value} B`;
  const units = ['KB', 'MB', 'GB'];
  let scaled = value / 1024;
  let unit = 0;
  while (scaled >= 1024 && unit < units.length - 1) {
    scaled /= 1024;
    unit++;
  }
  return `${scaled.toFixed(scaled < 10 ? 1 : 0)} ${units[unit]}`;
}

// ---------------------------------------------------------------------------------------
// The terminal: one progress line (uploads and the running create), questions one at a time

interface Terminal {
  /** stdin is a terminal: questions may be asked. */
  interactive: boolean;
  progress: {
    upload(key: string, sent: number, total: number): void;
    uploaded(key: string): void;
    create(key: string, progress: CreateProgress): void;
    created(key: string): void;
  };
  /** Writes whole lines, clearing the progress line first so they do not interleave. */
  say(stream: 'stdout' | 'stderr', text: string): void;
  /** Asks until `parse` accepts an answer; questions are asked one at a time. End of input means ''. */
  ask<T>(intro: string, prompt: string, parse: (answer: string) => T | null): Promise<T>;
  close(): void;
}

const BAR_WIDTH = 24;
const bar = (fraction: number): string => {
  const filled = Math.round(Math.min(1, Math.max(0, fraction)) * BAR_WIDTH);
  return `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${Math.floor(Math.min(1, fraction) * 100)}%`;
};

/** Lines of a list a person reads in the terminal (`--json` has them all). */
const SHOWN_LEFT_OUT = 20;
/** Characters of a failure's details shown in the terminal (`--json` has them all). */
const SHOWN_DETAILS_CHARS = 500;

function createTerminal(io: ImportIO): Terminal {
  const showProgress = io.stderr.isTTY === true;
  const uploads = new Map<string, { sent: number; total: number }>();
  const creates = new Map<string, CreateProgress>();
  let drawn = false;
  let lastDraw = 0;
  let asking = false;
  // Lines other files produce while a question waits for its answer, shown after it.
  let held: ['stdout' | 'stderr', string][] = [];

  const clear = () => {
    if (drawn) io.stderr.write('\r\x1b[2K');
    drawn = false;
  };
  const createLine = (key: string, progress: CreateProgress): string => {
    const { phase, assets_done: done, assets_total: total, assets_failed: failed } = progress;
    const name = basename(key);
    if (phase === 'assets') return `creating ${name} ${bar(total > 0 ? (done / total) * 0.85 : 0.85)} assets ${number(done)}/${number(total)}${failed ? ` (${number(failed)} failed)` : ''}`;
    if (phase === 'converting') return `creating ${name} ${bar(0.87)} converting meshes`;
    if (phase === 'building') return `creating ${name} ${bar(0.9)} building the project`;
    if (phase === 'storing') return `creating ${name} ${bar(0.97)} saving`;
    return `creating ${name} ${bar(0)} starting`;
  };
  const uploadLine = (): string => {
    let sent = 0;
    let total = 0;
    for (const upload of uploads.values()) {
      sent += upload.sent;
      total += upload.total;
    }
    const fraction = total > 0 ? Math.min(1, sent / total) : 1;
    const what = uploads.size === 1 ? basename([...uploads.keys()][0]!) : `${uploads.size} files`;
    return `${fraction >= 1 ? 'analysing' : 'uploading'} ${what} ${bar(fraction)} ${bytes(sent)}/${bytes(total)}`;
  };
  const draw = (force: boolean) => {
    if (!showProgress || asking || (uploads.size === 0 && creates.size === 0)) return;
    const now = Date.now();
    if (!force && now - lastDraw < 100) return;
    lastDraw = now;
    const pieces = [...creates].map(([key, progress]) => createLine(key, progress));
    if (uploads.size) pieces.push(uploadLine());
    const line = pieces.join(' · ');
    // Keep to one terminal row, or the carriage return cannot rewrite it (some terminals report no width).
    const columns = io.stderr.columns && io.stderr.columns >= 20 ? io.stderr.columns : 80;
    const safe = terminalSafe(line);
    io.stderr.write(`\r\x1b[2K${safe.length >= columns ? `${safe.slice(0, columns - 2)}…` : safe}`);
    drawn = true;
  };

  // One line reader for the whole run, created on the first question.
  let reader: { next(): Promise<string | null>; close(): void } | null = null;
  let questions: Promise<unknown> = Promise.resolve();

  return {
    interactive: io.stdin.isTTY === true,
    progress: {
      upload(key, sent, total) {
        const first = !uploads.has(key);
        uploads.set(key, { sent, total });
        draw(first || sent >= total);
      },
      uploaded(key) {
        uploads.delete(key);
        clear();
        draw(true);
      },
      create(key, progress) {
        const before = creates.get(key);
        creates.set(key, progress);
        draw(before?.phase !== progress.phase);
      },
      created(key) {
        creates.delete(key);
        clear();
        draw(true);
      },
    },
    say(stream, text) {
      if (asking) {
        held.push([stream, terminalSafe(text)]);
        return;
      }
      clear();
      io[stream].write(terminalSafe(text));
      draw(true);
    },
    ask(intro, prompt, parse) {
      const turn = questions.then(async () => {
        asking = true;
        clear();
        reader ??= lineReader(io.stdin);
        io.stderr.write(terminalSafe(intro));
        try {
          for (;;) {
            io.stderr.write(prompt);
            const line = await reader.next();
            const answer = parse(line ?? '');
            if (answer !== null) return answer;
            if (line === null) throw new Error('no answer and no default');
            io.stderr.write('Please answer enabled, disabled or skip.\n');
          }
        } finally {
          asking = false;
          for (const [stream, text] of held) io[stream].write(text);
          held = [];
          draw(true);
        }
      });
      questions = turn.catch(() => undefined);
      return turn;
    },
    close() {
      clear();
      reader?.close();
    },
  };
}

function lineReader(input: Readable): { next(): Promise<string | null>; close(): void } {
  const lines = createInterface({ input, terminal: false });
  const queued: string[] = [];
  let waiting: ((line: string | null) => void) | null = null;
  let ended = false;
  lines.on('line', (line) => {
    if (waiting) {
      const resolve = waiting;
      waiting = null;
      resolve(line);
    } else {
      queued.push(line);
    }
  });
  lines.on('close', () => {
    ended = true;
    waiting?.(null);
    waiting = null;
  });
  return {
    next() {
      if (queued.length > 0) return Promise.resolve(queued.shift()!);
      if (ended) return Promise.resolve(null);
      return new Promise((resolve) => (waiting = resolve));
    },
    close() {
      lines.close();
    },
  };
}

/** Runs at most `limit` of the tasks given to it at once, in the order given. */
function limiter(limit: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    // A finished task hands its slot straight to the next waiting one.
    if (active >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    else active++;
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  };
}
