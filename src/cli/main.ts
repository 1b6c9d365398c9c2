#!/usr/bin/env node
/**
 * The `rbxl-import` command: `dump` decodes a file to JSON, `project` writes the
 * project document of a file offline, `mesh` decodes a mesh or union blob, `import`
 * uploads maps to a running service, `serve` runs the service. Bad input ends with
 * exit code 2 and one line on stderr, never a stack trace.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { decode, decodeChunks } from '../parser/index.js';
import { stringifyDump } from '../parser/dump.js';
import { dumpJson } from '../project/dump.js';
import { DecodeError } from '../parser/errors.js';
import { MeshDecodeError } from '../mesh/errors.js';

const USAGE = `usage:
  rbxl-import dump [--chunks] FILE     print the DOM (or, with --chunks, the binary chunk view) as JSON
  rbxl-import project FILE [--scripts disabled|enabled|skip]
                                       print the project document the service would store (offline: no asset is downloaded)
  rbxl-import mesh FILE [--json]       decode a Roblox mesh, CSGMDL, CSGPHS or CSGK file (--json: every position and the counts)
  rbxl-import import FILE... [options] analyse and import maps through a running service (see --help)
  rbxl-import serve                    start the service (configuration from the environment)`;

class UsageError extends Error {}

/** One FILE and the flags a command knows; anything else is a usage error. */
function fileAndFlags(command: string, args: string[], known: string[]): { file: string; flags: Set<string> } {
  const flags = new Set(args.filter((arg) => known.includes(arg)));
  const files = args.filter((arg) => !known.includes(arg));
  const unknown = files.find((arg) => arg.startsWith('-'));
  if (unknown) throw new UsageError(`unknown option ${unknown}`);
  if (files.length !== 1) throw new UsageError(`${command} takes exactly one FILE`);
  return { file: files[0]!, flags };
}

async function dump(args: string[]): Promise<number> {
  const { file, flags } = fileAndFlags('dump', args, ['--chunks']);
  const bytes = await readInput(file);
  if (flags.has('--chunks')) {
    await writeOut(stringifyDump(decodeChunks(bytes)) + '\n');
    return 0;
  }
  // The DOM is written instance by instance, waiting for stdout to drain.
  for (const chunk of dumpJson(decode(bytes))) await writeOut(chunk);
  return 0;
}

/** `project FILE [--scripts MODE]`: the version 2 document, streamed, every asset marked not downloaded. */
async function project(args: string[]): Promise<number> {
  let mode = 'disabled';
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--scripts') mode = args[++i] ?? '';
    else if (arg.startsWith('--scripts=')) mode = arg.slice('--scripts='.length);
    else rest.push(arg);
  }
  const { file } = fileAndFlags('project', rest, []);
  const { parseScriptsMode, isProjectError } = await import('../project/index.js');
  let scriptsMode;
  try {
    scriptsMode = parseScriptsMode(mode);
  } catch (error) {
    if (isProjectError(error)) throw new UsageError(error.message);
    throw error;
  }
  const bytes = await readInput(file);
  const dom = decode(bytes);
  const { collectAssetRefs } = await import('../assets/refs.js');
  const { projectJson } = await import('../project/document.js');
  const assets = collectAssetRefs(dom).ids.map(({ id, kind }) => ({ id, kind, ok: false as const, reason: 'not_downloaded' as const }));
  const name = basename(file);
  const chunks = projectJson(dom, {
    title: '', owner: '', createdAt: new Date(), previewHash: createHash('sha256').update(bytes).digest('hex'),
    fileName: name, fileSize: bytes.length, scriptsMode, assets,
  });
  for (const chunk of chunks) await writeOut(chunk);
  await writeOut('\n');
  return 0;
}

async function mesh(args: string[]): Promise<number> {
  const { file, flags } = fileAndFlags('mesh', args, ['--json']);
  const json = flags.has('--json');
  const bytes = await readInput(file);
  const { decodeMeshAsset } = await import('../mesh/index.js');
  const { summarizeMeshAsset } = await import('../mesh/summary.js');
  const summary = summarizeMeshAsset(decodeMeshAsset(bytes));
  if (json) {
    await writeOut(JSON.stringify(summary) + '\n');
  } else {
    const { positions: _positions, kind, version, vertices, faces, ...details } = summary;
    const counts = Object.entries(details).filter(([, v]) => typeof v === 'number' || typeof v === 'boolean').map(([k, v]) => `${k} ${v}`);
    await writeOut(`${kind} ${version}: ${vertices} vertices, ${faces} faces${counts.length ? `, ${counts.join(', ')}` : ''}\n`);
  }
  return 0;
}

async function readInput(file: string): Promise<Uint8Array> {
  try {
    return await readFile(file);
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

function writeOut(text: string | Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => process.stdout.write(text, (error) => (error ? reject(error) : resolve())));
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  try {
    switch (command) {
      case 'dump': return await dump(args);
      case 'project': return await project(args);
      case 'mesh': return await mesh(args);
      case 'import': {
        const { runImport } = await import('./import.js');
        return await runImport(args);
      }
      case 'serve': {
        const { serve } = await import('../main.js');
        await serve();
        return 0;
      }
      case undefined: case '-h': case '--help': case 'help':
        process.stdout.write(USAGE + '\n');
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}`);
    }
  } catch (error) {
    if (error instanceof DecodeError || error instanceof MeshDecodeError) {
      process.stderr.write(`rbxl-import: ${error.message}\n`);
      return 2;
    }
    if (error instanceof UsageError) {
      process.stderr.write(`rbxl-import: ${error.message}\n${USAGE}\n`);
      return 2;
    }
    process.stderr.write(`rbxl-import: ${(error as Error)?.message ?? String(error)}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
