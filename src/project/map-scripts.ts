/**
 * The scripts of a decoded place, read once into plain records that the report and
 * the project document share: source text, enabled state, run context, linked code.
 */
import { Buffer, isUtf8 } from 'node:buffer';
import { getBytes, getValue, type Dom } from '../parser/dom.js';
import type { Value } from '../parser/values.js';
import { uriOf } from '../assets/refs.js';
import { countSourceLines } from '../scan/wasm.js';
import { isScriptClass, RUN_CONTEXTS, type ScriptClass } from './classes.js';
import type { RunContextName } from './scripts.js';

export interface MapScript {
  /** The script's row in the DOM. */
  row: number;
  className: ScriptClass;
  name: string;
  /** Full name in the tree (GetFullName), shortened past MAX_SCRIPT_PATH_CHARS (scriptPaths); made when first read. */
  readonly path: string;
  /**
   * The source as text. Non-UTF-8 bytes (rare) are decoded with U+FFFD
   * replacements. Read from a binary file, it is decoded on first use: the
   * analysis scans `bytes` and never needs it.
   */
  readonly source: string;
  /** The source's bytes as a binary file holds them (a view into the decoded chunk), or undefined for XML files. */
  bytes: Uint8Array | undefined;
  /** The file held the source as bytes that are not valid UTF-8. */
  nonUtf8: boolean;
  /** The map's own state: false when `Disabled` is true (or `Enabled` false). ModuleScripts are always enabled. */
  enabled: boolean;
  /** `RunContext` (Enum: 0 Legacy, 1 Server, 2 Client, 3 Plugin); Legacy when absent, as for ModuleScripts. */
  runContext: RunContextName;
  /** The `LinkedSource` reference, when there is one. */
  linkedSource: string | undefined;
  /** Code held outside the file: a LinkedSource, or a blank Source. */
  linked: boolean;
  /** Number of lines of `source` (0 when empty); from a binary file, counted when first read (the document never reads it). */
  readonly lines: number;
}

/** Every Script, LocalScript and ModuleScript of the DOM, in DOM order. */
export function readMapScripts(dom: Dom): MapScript[] {
  const scriptTables = dom.tables.map(({ className }) => isScriptClass(className));
  const scripts: MapScript[] = [];
  const pathOf = scriptPaths(dom);
  for (let row = 0; row < dom.count; row++) {
    if (scriptTables[dom.tableOf(row)]) scripts.push(readMapScript(dom, row, dom.className(row) as ScriptClass, pathOf));
  }
  return scripts;
}

/**
 * Most characters of a script's `path`. A path is a label (the script's `id` is what
 * locates it), and full names grow with depth: a 2.5 KB file nesting 20,000 scripts
 * made paths of up to 20,000 names, 9 s of analysis and an 806 MB document.
 */
export const MAX_SCRIPT_PATH_CHARS = 1_000;
/** A top ancestor longer than this is left out of a shortened path. */
const MAX_TOP_NAME_CHARS = 100;
const ELLIPSIS = '\u2026';

/**
 * The paths of scripts by row: GetFullName() when it has at most MAX_SCRIPT_PATH_CHARS
 * characters; else the top ancestor's name, "…", and the names nearest the script that
 * fit, whole (`Workspace.….Folder.Script`; `Workspace.…` when not even the script's own
 * name fits). A path walks up only as far as its names fit; the top ancestors are
 * found once per DOM, the first time a path is shortened.
 */
export function scriptPaths(dom: Dom): (row: number) => string {
  let tops: Int32Array | undefined;
  const names: string[] = [];
  return (row) => {
    names.length = 0;
    let chars = -1;
    let at = row;
    for (; at !== -1; at = dom.parent(at)) {
      const name = dom.name(at);
      chars += name.length + 1;
      if (chars > MAX_SCRIPT_PATH_CHARS) break;
      names.push(name);
    }
    if (at === -1) return names.reverse().join('.');
    tops ??= topAncestors(dom);
    const top = dom.name(tops[row]!);
    const head = top.length <= MAX_TOP_NAME_CHARS ? `${top}.${ELLIPSIS}` : ELLIPSIS;
    let length = head.length;
    let kept = 0;
    while (kept < names.length && length + 1 + names[kept]!.length <= MAX_SCRIPT_PATH_CHARS) length += 1 + names[kept++]!.length;
    names.length = kept;
    names.push(head);
    return names.reverse().join('.');
  };
}

/** Each row's top ancestor (a root: itself): every root's subtree in one pre-order walk. */
function topAncestors(dom: Dom): Int32Array {
  const tops = new Int32Array(dom.count);
  for (let root = dom.firstRoot; root !== -1; root = dom.nextSibling(root)) {
    for (let row = root; row !== -1; row = dom.next(row, root)) tops[row] = root;
  }
  return tops;
}

function readMapScript(dom: Dom, row: number, className: ScriptClass, pathOf: (row: number) => string): MapScript {
  const value = (name: string) => getValue(dom, row, name);
  const linkedUri = uriOf(value('LinkedSource'))?.trim();
  const linkedSource = linkedUri ? linkedUri : undefined;
  const common = {
    row,
    className,
    name: dom.name(row),
    enabled: className === 'ModuleScript' ? true : readEnabled(value),
    runContext: readRunContext(value),
    linkedSource,
  };
  const bytes = getBytes(dom, row, 'Source');
  if (bytes !== undefined) {
    return new BinaryMapScript(common, pathOf, bytes, linkedSource !== undefined || isBlankBytes(bytes));
  }
  const { text: source, nonUtf8 } = textOf(value('Source'));
  let path: string | undefined;
  return {
    ...common,
    get path() { return (path ??= pathOf(row)); },
    source,
    bytes: undefined,
    nonUtf8,
    linked: linkedSource !== undefined || isBlank(source),
    lines: countLines(source),
  };
}

type ScriptFields = Pick<MapScript, 'row' | 'className' | 'name' | 'enabled' | 'runContext' | 'linkedSource'>;

/**
 * A script read from a binary file: its source stays bytes until something
 * asks for the text or the lines (a class, so the lazy getters live on one
 * prototype rather than on every record).
 */
class BinaryMapScript implements MapScript {
  readonly row: number;
  readonly className: ScriptClass;
  readonly name: string;
  readonly enabled: boolean;
  readonly runContext: RunContextName;
  readonly linkedSource: string | undefined;
  readonly bytes: Uint8Array;
  readonly nonUtf8: boolean;
  readonly linked: boolean;
  #lines = -1;
  #text: string | undefined;
  #path: string | undefined;
  readonly #pathOf: (row: number) => string;

  constructor(fields: ScriptFields, pathOf: (row: number) => string, bytes: Uint8Array, linked: boolean) {
    this.row = fields.row;
    this.className = fields.className;
    this.name = fields.name;
    this.#pathOf = pathOf;
    this.enabled = fields.enabled;
    this.runContext = fields.runContext;
    this.linkedSource = fields.linkedSource;
    this.bytes = bytes;
    this.nonUtf8 = !isUtf8(bytes);
    this.linked = linked;
  }

  get lines(): number {
    if (this.#lines === -1) this.#lines = countSourceLines(this.bytes);
    return this.#lines;
  }

  get path(): string {
    return (this.#path ??= this.#pathOf(this.row));
  }

  get source(): string {
    this.#text ??= Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.bytes.length).toString('utf8');
    return this.#text;
  }
}

type ValueOf = (name: string) => Value | undefined;

function readEnabled(value: ValueOf): boolean {
  const disabled = value('Disabled');
  if (typeof disabled === 'boolean') return !disabled;
  const enabled = value('Enabled');
  if (typeof enabled === 'boolean') return enabled;
  return true;
}

function readRunContext(value: ValueOf): RunContextName {
  const context = value('RunContext');
  return typeof context === 'number' ? (RUN_CONTEXTS[context] ?? 'Legacy') : 'Legacy';
}

/** A String value as text: valid UTF-8 is already a string; other bytes arrive as base64. */
export function textOf(value: Value | undefined): { text: string; nonUtf8: boolean } {
  if (typeof value === 'string') return { text: value, nonUtf8: false };
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && 'base64' in value && typeof value.base64 === 'string') {
    return { text: Buffer.from(value.base64, 'base64').toString('utf8'), nonUtf8: true };
  }
  return { text: '', nonUtf8: false };
}

/** Byte length of a String value without decoding it (base64 length arithmetic). */
export function stringByteLength(value: Value | undefined): number {
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && 'base64' in value && typeof value.base64 === 'string') {
    const b64 = value.base64;
    const padding = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
    return Math.floor((b64.length * 3) / 4) - padding;
  }
  return 0;
}

/** Lines as an editor counts them: a final line without a newline counts, an empty source has none. */
export function countLines(source: string): number {
  if (source.length === 0) return 0;
  let lines = 1;
  for (let at = source.indexOf('\n'); at !== -1; at = source.indexOf('\n', at + 1)) lines++;
  return source.endsWith('\n') ? lines - 1 : lines;
}

function isBlankBytes(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13 && c !== 12 && c !== 11) return false;
  }
  return true;
}

function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13 && c !== 12 && c !== 11) return false;
  }
  return true;
}
