/** Shared bits of the benchmarks: corpus inputs, generated places, table printing. */
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encode } from '../src/parser/writer/index.js';
import { generatePlace } from './generate.js';

export const REPO_ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const SHARED = process.env.RBXL_SHARED_DIR ?? join(REPO_ROOT, '..', 'shared');

export interface Input {
  name: string;
  bytes: Uint8Array;
}

/** The real places and rbx-dom's benchmark inputs. */
export function corpusInputs(): Input[] {
  const dirs = [join(SHARED, 'corpus', 'places'), join(SHARED, 'corpus', 'rbx-dom-bench')];
  return dirs.flatMap((dir) => readdirSync(dir)
    .filter((name) => /\.rbx[lm]x?$/.test(name))
    .sort()
    .map((name) => ({ name, bytes: readFileSync(join(dir, name)) })));
}

/** The real places only (../shared/corpus/places). */
export function placeInputs(): Input[] {
  return corpusInputs().filter((input) => readdirSync(join(SHARED, 'corpus', 'places')).includes(input.name));
}

/** A synthetic place of `parts` parts (with a script per 50 parts and an asset per 10). */
export function generatedInput(parts: number, scripts = Math.max(1, Math.round(parts / 50))): Input {
  const dom = generatePlace({ parts, scripts, uniqueAssets: Math.max(1, Math.round(parts / 10)), seed: parts });
  return { name: `generated-${parts >= 1000 ? `${parts / 1000}k` : parts}-parts`, bytes: encode(dom) };
}

export function machine(): string {
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  return `${cpus().length} × ${cpu}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

/** Prints rows as a Markdown table (what README.md records). */
export function table(header: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

export const fmt = (value: number, digits = 1): string => value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
