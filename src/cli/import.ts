/**
 * `rbxl-import import FILE...`: analyses each file, shows upload progress and a summary of
 * the report, settles the script mode (flag, question, or the contract's default), creates
 * the project and prints where it lives. Files import concurrently; one failing does not
 * stop the others, but makes the exit code 1. Usage errors exit 2.
 */
import { basename } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import type { Readable, Writable } from 'node:stream';
import {
  SCRIPTS_MODES,
  createClient,
  type AnalyzeResult,
  type Client,
  type CreateResult,
  type Report,
  type ScriptsMode,
} from '../client/index.js';
import { uploadFromPath } from '../client/node.js';

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';
export const DEFAULT_CONCURRENCY = 4;

export const USAGE = `Usage: rbxl-import import FILE... [options]

Uploads each map file (.rbxl, .rbxlx, .rbxm, .rbxmx) to the import service, shows its
analysis, and creates a project from it.

Options:
  --base-url URL       service address (default: $RBXL_IMPORT_URL or ${DEFAULT_BASE_URL})
  --token T            access token (default: $RBXL_IMPORT_TOKEN)
  --title T            project title (default: the service uses the file name)
  --scripts MODE       disabled | enabled | skip; asked when scripts exist and stdin is a
                       terminal, otherwise disabled
  --concurrency N      files imported at once (default: ${DEFAULT_CONCURRENCY})
  --json               print one JSON document with every file's result
  -h, --help           show this help
`;

export interface ImportIO {
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean; columns?: number };
  env: Record<string, string | undefined>;
}

interface ImportOptions {
  files: string[];
  baseUrl: string;
  token: string;
  title: string;
  scriptsMode: ScriptsMode | null;
  concurrency: number;
  json: boolean;
}

type Stage = 'read' | 'analyze' | 'create';

export type FileResult =
  | {
      file: string;
      ok: true;
      preview_hash: string;
      report: Report;
      scripts_mode: ScriptsMode;
      project_id: string;
      redirect: string;
      /** `redirect` resolved against the base URL. */
      url: string;
      assets_downloaded: number;
      assets_failed: number;
    }
  | {
      file: string;
      ok: false;
      stage: Stage;
      error: string;
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
  try {
    const results = await mapConcurrently(options.files, options.concurrency, (file) =>
      importFile(file, options, client, terminal),
    );
    if (options.json) {
      streams.stdout.write(`${JSON.stringify({ base_url: options.baseUrl, results }, null, 2)}\n`);
    } else if (results.length > 1) {
      const failed = results.filter((result) => !result.ok).length;
      terminal.say('stdout', `${results.length - failed} of ${results.length} files imported${failed ? `, ${failed} failed` : ''}\n`);
    }
    return results.every((result) => result.ok) ? 0 : 1;
  } finally {
    terminal.close();
  }
}

async function importFile(file: string, options: ImportOptions, client: Client, terminal: Terminal): Promise<FileResult> {
  const fail = (stage: Stage, error: unknown, extra: Partial<FileResult> = {}): FileResult => {
    const message = error instanceof Error ? error.message : String(error);
    const status = (error as { status?: unknown }).status;
    terminal.say('stderr', `${file}: ${message}\n`);
    return { file, ok: false, stage, error: message, ...(typeof status === 'number' && status > 0 ? { status } : {}), ...extra } as FileResult;
  };

  let upload;
  try {
    upload = await uploadFromPath(file);
  } catch (error) {
    return fail('read', new Error(`cannot read file: ${(error as Error).message}`));
  }

  let analysis: AnalyzeResult;
  terminal.progress.start(file, upload.data.size);
  try {
    analysis = await client.analyze(upload, { onProgress: (sent, total) => terminal.progress.update(file, sent, total) });
  } catch (error) {
    return fail('analyze', error);
  } finally {
    terminal.progress.finish(file);
  }
  const { preview_hash, report } = analysis;
  if (!options.json) terminal.say('stdout', describeReport(file, report));

  const scriptsMode = options.scriptsMode ?? (await chooseScriptsMode(file, report, terminal));
  let created: CreateResult;
  try {
    created = await client.create(preview_hash, { title: options.title, scriptsMode });
  } catch (error) {
    return fail('create', error, { preview_hash, report });
  }
  const url = resolveRedirect(created.redirect, options.baseUrl);
  if (!options.json) terminal.say('stdout', describeCreated(file, created, scriptsMode, url));
  return {
    file,
    ok: true,
    preview_hash,
    report,
    scripts_mode: scriptsMode,
    project_id: created.project_id,
    redirect: created.redirect,
    url,
    assets_downloaded: created.assets_downloaded,
    assets_failed: created.assets_failed,
  };
}

/** The contract: the choice is offered only when the map has scripts; here, only to a person at a terminal. */
async function chooseScriptsMode(file: string, report: Report, terminal: Terminal): Promise<ScriptsMode> {
  if (!(report.scripts_total > 0) || !terminal.interactive) return 'disabled';
  const flagged = typeof report.scripts_flagged === 'number' && report.scripts_flagged > 0
    ? `; ${number(report.scripts_flagged)} may hang or break` : '';
  const intro =
    `${file} contains ${count(report.scripts_total, 'script')}${flagged}. How should they be imported?\n` +
    '  disabled  imported switched off, readable in the hierarchy (default)\n' +
    '  enabled   imported active; old-pattern scripts may hang the game\n' +
    '  skip      not imported; geometry only\n';
  return terminal.ask(intro, `Script mode for ${file} [disabled/enabled/skip]: `, parseScriptsModeAnswer);
}

/** '' means the default; any unambiguous prefix of a mode counts. Null asks again. */
export function parseScriptsModeAnswer(answer: string): ScriptsMode | null {
  const text = answer.trim().toLowerCase();
  if (text === '') return 'disabled';
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

  const scripts = values.scripts;
  if (scripts !== undefined && !(SCRIPTS_MODES as readonly string[]).includes(scripts)) {
    throw new UsageError(`--scripts must be one of ${SCRIPTS_MODES.join(', ')}, got ${JSON.stringify(scripts)}`);
  }

  const concurrencyText = values.concurrency ?? String(DEFAULT_CONCURRENCY);
  if (!/^[1-9]\d{0,3}$/.test(concurrencyText)) {
    throw new UsageError(`--concurrency must be an integer from 1 to 9999, got ${JSON.stringify(concurrencyText)}`);
  }

  return {
    files: positionals,
    baseUrl,
    token: values.token ?? env.RBXL_IMPORT_TOKEN ?? '',
    title: values.title ?? '',
    scriptsMode: (scripts as ScriptsMode | undefined) ?? null,
    concurrency: Number(concurrencyText),
    json: values.json ?? false,
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

function isParseArgsError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_');
}

// ---------------------------------------------------------------------------------------
// Output: summaries, and a terminal that keeps the progress line and questions apart.

export function describeReport(file: string, report: Report): string {
  const facts: string[] = [];
  if (typeof report.instances_total === 'number') facts.push(`instances ${number(report.instances_total)}`);
  if (typeof report.parts_total === 'number') facts.push(`parts ${number(report.parts_total)}`);
  facts.push(`scripts ${number(report.scripts_total)}${breakdown(report.scripts)}`);
  if (typeof report.assets_total === 'number') facts.push(`assets ${number(report.assets_total)}${breakdown(report.assets)}`);
  const header = [file, typeof report.file_size === 'number' ? bytes(report.file_size) : null, report.format ?? null]
    .filter((part) => part !== null)
    .join(', ');
  let text = `${header}\n  ${facts.join(' · ')}\n`;
  for (const warning of Array.isArray(report.warnings) ? report.warnings : []) text += `  warning: ${String(warning)}\n`;
  const atRisk = Array.isArray(report.scripts_at_risk) ? report.scripts_at_risk : [];
  if (typeof report.scripts_flagged === 'number' && report.scripts_flagged > 0) {
    text += `  ${count(report.scripts_flagged, 'script')} flagged:\n`;
    const shown = atRisk.slice(0, 10);
    for (const script of shown) {
      const codes = [...new Set((script.findings ?? []).map((finding) => finding.code))].join(', ');
      text += `    ${script.path} (${script.class}): ${codes}\n`;
    }
    if (report.scripts_flagged > shown.length) text += `    … and ${report.scripts_flagged - shown.length} more\n`;
  }
  return text;
}

function describeCreated(file: string, created: CreateResult, mode: ScriptsMode, url: string): string {
  return (
    `${file}: created project ${created.project_id} (scripts ${mode})\n` +
    `  assets: ${number(created.assets_downloaded)} downloaded, ${number(created.assets_failed)} failed\n` +
    `  open: ${url}\n`
  );
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

interface Terminal {
  /** stdin is a terminal: questions may be asked. */
  interactive: boolean;
  progress: { start(key: string, total: number): void; update(key: string, sent: number, total: number): void; finish(key: string): void };
  /** Writes whole lines, clearing the progress line first so they do not interleave. */
  say(stream: 'stdout' | 'stderr', text: string): void;
  /** Asks until `parse` accepts an answer; questions are asked one at a time. End of input means ''. */
  ask<T>(intro: string, prompt: string, parse: (answer: string) => T | null): Promise<T>;
  close(): void;
}

function createTerminal(io: ImportIO): Terminal {
  const showProgress = io.stderr.isTTY === true;
  const uploads = new Map<string, { sent: number; total: number }>();
  let drawn = false;
  let lastDraw = 0;
  let asking = false;
  // Lines other files produce while a question waits for its answer, shown after it.
  let held: ['stdout' | 'stderr', string][] = [];

  const clear = () => {
    if (drawn) io.stderr.write('\r\x1b[2K');
    drawn = false;
  };
  const draw = (force: boolean) => {
    if (!showProgress || asking || uploads.size === 0) return;
    const now = Date.now();
    if (!force && now - lastDraw < 100) return;
    lastDraw = now;
    let sent = 0;
    let total = 0;
    for (const upload of uploads.values()) {
      sent += upload.sent;
      total += upload.total;
    }
    const fraction = total > 0 ? Math.min(1, sent / total) : 1;
    const width = 24;
    const filled = Math.round(fraction * width);
    const what = uploads.size === 1 ? basename([...uploads.keys()][0]!) : `${uploads.size} files`;
    const state = fraction >= 1 ? 'analysing' : 'uploading';
    const line = `${state} ${what} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${Math.floor(fraction * 100)}% ${bytes(sent)}/${bytes(total)}`;
    // Keep to one terminal row, or the carriage return cannot rewrite it (some terminals report no width).
    const columns = io.stderr.columns && io.stderr.columns >= 20 ? io.stderr.columns : 80;
    io.stderr.write(`\r\x1b[2K${line.length >= columns ? `${line.slice(0, columns - 2)}…` : line}`);
    drawn = true;
  };

  // One line reader for the whole run, created on the first question.
  let reader: { next(): Promise<string | null>; close(): void } | null = null;
  let questions: Promise<unknown> = Promise.resolve();

  return {
    interactive: io.stdin.isTTY === true,
    progress: {
      start(key, total) {
        uploads.set(key, { sent: 0, total });
        draw(true);
      },
      update(key, sent, total) {
        uploads.set(key, { sent, total });
        draw(sent >= total);
      },
      finish(key) {
        uploads.delete(key);
        clear();
        draw(true);
      },
    },
    say(stream, text) {
      if (asking) {
        held.push([stream, text]);
        return;
      }
      clear();
      io[stream].write(text);
      draw(true);
    },
    ask(intro, prompt, parse) {
      const turn = questions.then(async () => {
        asking = true;
        clear();
        reader ??= lineReader(io.stdin);
        io.stderr.write(intro);
        try {
          for (;;) {
            io.stderr.write(prompt);
            const line = await reader.next();
            const answer = parse(line ?? '');
            if (answer !== null) return answer;
            if (line === null) throw new Error('no answer and no default');
            io.stderr.write('Please answer disabled, enabled or skip.\n');
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

async function mapConcurrently<T, R>(items: T[], limit: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
