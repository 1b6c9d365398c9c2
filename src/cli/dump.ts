/**
 * `rbxl-import dump`: which instances to print (--class, --path) and how to lay the JSON
 * out (--pretty), written as a stream that waits for the output to drain. How the DOM
 * becomes JSON is the project document's instance encoding (src/project/dump.ts); this
 * file only picks rows and lays the text out, so the two can change apart.
 */
import { parseArgs } from 'node:util';
import { type Dom } from '../parser/dom.js';
import { dumpJson } from '../project/dump.js';

export interface DumpOptions {
  file: string;
  chunks: boolean;
  pretty: boolean;
  classes: string[];
  paths: string[];
}

export class DumpUsageError extends Error {}

export function parseDumpArgs(argv: string[]): DumpOptions | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        chunks: { type: 'boolean', default: false },
        pretty: { type: 'boolean', default: false },
        class: { type: 'string', multiple: true },
        path: { type: 'string', multiple: true },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    throw new DumpUsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) return 'help';
  if (positionals.length !== 1) throw new DumpUsageError('dump takes exactly one FILE');
  const classes = values.class ?? [];
  const paths = values.path ?? [];
  if (values.chunks && (classes.length || paths.length || values.pretty)) {
    throw new DumpUsageError('--chunks prints the chunk view; --class, --path and --pretty apply to the instance dump');
  }
  for (const value of [...classes, ...paths]) if (value === '') throw new DumpUsageError('--class and --path need a value');
  return { file: positionals[0]!, chunks: values.chunks ?? false, pretty: values.pretty ?? false, classes, paths };
}

/** The rows that pass every filter (1 = selected, by DOM row), or undefined when there is no filter. */
export function selectRows(dom: Dom, { classes, paths }: Pick<DumpOptions, 'classes' | 'paths'>): Uint8Array | undefined {
  if (classes.length === 0 && paths.length === 0) return undefined;
  const classSet = classes.length ? new Set(classes) : null;
  const onPath = paths.length ? rowsUnderPaths(dom, paths) : null;
  const selected = new Uint8Array(dom.count);
  for (let row = 0; row < dom.count; row++) {
    if (classSet && !classSet.has(dom.className(row))) continue;
    if (onPath && !onPath[row]) continue;
    selected[row] = 1;
  }
  return selected;
}

/**
 * Rows whose full name is one of `prefixes` or starts with one and a dot, in one walk,
 * parents first: a row's name is its parent's and its own, made only while it is no
 * longer than the longest prefix (past that, a row matches only below a row that did),
 * so a 20,000-deep tree costs one name per row instead of one per ancestor.
 */
function rowsUnderPaths(dom: Dom, prefixes: readonly string[]): Uint8Array {
  const longest = Math.max(...prefixes.map((prefix) => prefix.length));
  const matches = (name: string) => prefixes.some((prefix) => name === prefix || name.startsWith(`${prefix}.`));
  const under = new Uint8Array(dom.count);
  const names: (string | null)[] = new Array<string | null>(dom.count).fill(null);
  for (let row = dom.firstRoot; row !== -1; row = dom.next(row)) {
    const parent = dom.parent(row);
    if (parent !== -1 && under[parent]) { under[row] = 1; continue; }
    const base = parent === -1 ? '' : names[parent];
    if (base === null) continue; // the parent's name is longer than any prefix, and did not match
    const name = parent === -1 ? dom.name(row) : `${base}.${dom.name(row)}`;
    if (matches(name)) under[row] = 1;
    else if (name.length <= longest) names[row] = name;
  }
  return under;
}

/**
 * The dump as UTF-8 pieces of about `pieceBytes` bytes: the selected instances in the
 * document encoding (parents first), indented like JSON.stringify(value, null, 2) with
 * --pretty, without ever holding it whole.
 */
export function* dumpPieces(dom: Dom, options: Pick<DumpOptions, 'pretty' | 'classes' | 'paths'>, pieceBytes = 1 << 16): Generator<Buffer> {
  const pieces = dumpJson(dom, pieceBytes, selectRows(dom, options));
  yield* options.pretty ? indentJson(pieces, pieceBytes) : pieces;
}

const SPACE = 0x20;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Compact JSON text in pieces (split anywhere, even inside a UTF-8 character) laid out
 * as JSON.stringify(JSON.parse(text), null, 2) would, without parsing it: numbers and
 * strings keep their exact text. Structural characters are ASCII and never occur inside
 * a multi-byte character, so the text is walked byte by byte.
 */
export function* indentJson(pieces: Iterable<Uint8Array>, pieceBytes = 1 << 16): Generator<Buffer> {
  let out = Buffer.allocUnsafe(pieceBytes);
  let at = 0;
  const put = (byte: number): void => {
    if (at === out.length) {
      const full = out;
      out = Buffer.allocUnsafe(pieceBytes);
      at = 0;
      ready.push(full);
    }
    out[at++] = byte;
  };
  const ready: Buffer[] = [];
  let depth = 0;
  const newline = (): void => {
    put(0x0a);
    for (let i = 0; i < depth * 2; i++) put(SPACE);
  };
  let inString = false;
  let escaped = false;
  let open = 0; // a `{` or `[` not yet known to be empty
  for (const piece of pieces) {
    for (let i = 0; i < piece.length; i++) {
      const byte = piece[i]!;
      if (inString) {
        put(byte);
        if (escaped) escaped = false;
        else if (byte === BACKSLASH) escaped = true;
        else if (byte === QUOTE) inString = false;
        continue;
      }
      if (byte === SPACE || byte === 0x0a || byte === 0x0d || byte === 0x09) continue;
      if (open !== 0) {
        const empty = (open === 0x7b && byte === 0x7d) || (open === 0x5b && byte === 0x5d);
        open = 0;
        if (empty) { put(byte); continue; }
        depth++;
        newline();
      }
      switch (byte) {
        case QUOTE: inString = true; put(byte); break;
        case 0x7b: case 0x5b: put(byte); open = byte; break;
        case 0x7d: case 0x5d: depth--; newline(); put(byte); break;
        case 0x2c: put(byte); newline(); break;
        case 0x3a: put(byte); put(SPACE); break;
        default: put(byte);
      }
    }
    if (ready.length) yield* ready.splice(0);
  }
  put(0x0a);
  yield* ready.splice(0);
  yield out.subarray(0, at);
}
