/**
 * `rbxl-import dump`: which instances to print (--class, --path) and how to lay the JSON
 * out (--pretty), written as a stream that waits for the output to drain. How one
 * instance becomes JSON is the decoder's (src/parser/dump.ts `dumpInstance`); this file
 * only picks rows and frames them, so the two can change apart.
 */
import { parseArgs } from 'node:util';
import { fullName, type Dom } from '../parser/dom.js';
import { dumpInstance, dumpJson, stringifyDump } from '../parser/dump.js';

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

/** The rows that pass every filter, in file order. */
export function* selectRows(dom: Dom, { classes, paths }: Pick<DumpOptions, 'classes' | 'paths'>): Generator<number> {
  const classSet = classes.length ? new Set(classes) : null;
  for (let row = 0; row < dom.count; row++) {
    if (classSet && !classSet.has(dom.className(row))) continue;
    if (paths.length) {
      const name = fullName(dom, row);
      if (!paths.some((prefix) => name === prefix || name.startsWith(`${prefix}.`))) continue;
    }
    yield row;
  }
}

/**
 * The dump as pieces of text of about `pieceBytes` characters: exactly
 * JSON.stringify({format, instances}, replacer, pretty ? 2 : undefined) + '\n' of the
 * selected instances, without ever holding it whole.
 */
export function* dumpPieces(dom: Dom, options: Pick<DumpOptions, 'pretty' | 'classes' | 'paths'>, pieceBytes = 1 << 20): Generator<string> {
  const filtered = options.classes.length > 0 || options.paths.length > 0;
  if (!options.pretty && !filtered) {
    yield* dumpJson(dom, pieceBytes);
    return;
  }
  const indent = options.pretty ? 2 : undefined;
  const pad = (text: string, spaces: string) => text.replaceAll('\n', `\n${spaces}`);
  let piece = options.pretty ? `{\n  "format": ${JSON.stringify(dom.format)},\n  "instances": [` : `{"format":${JSON.stringify(dom.format)},"instances":[`;
  let first = true;
  for (const row of selectRows(dom, options)) {
    const json = stringifyDump(dumpInstance(dom, row), indent);
    piece += options.pretty ? `${first ? '' : ','}\n    ${pad(json, '    ')}` : `${first ? '' : ','}${json}`;
    first = false;
    if (piece.length >= pieceBytes) {
      yield piece;
      piece = '';
    }
  }
  yield piece + (options.pretty ? (first ? ']\n}\n' : '\n  ]\n}\n') : ']}\n');
}
