#!/usr/bin/env node
/**
 * The `rbxl-import` command: `dump` decodes a file to JSON, `project` writes the
 * project document of a file offline, `gltf` writes a map as scene.glb, `mesh`
 * decodes a mesh or union blob (or converts it to glTF), `import`
 * uploads maps to a running service, `serve` runs the service, `help` explains them
 * (help.ts; every command also takes --help).
 * Bad input ends with exit code 2 and one line on stderr, never a stack trace.
 */
import { lstat, readFile, rm, writeFile } from 'node:fs/promises';
import { decode, decodeChunks } from '../parser/index.js';
import { jsonReplacer } from '../parser/values.js';
import { JSON_CHUNK_CHARS, jsonChunks } from '../project/json-stream.js';
import { DecodeError } from '../parser/errors.js';
import { MeshDecodeError } from '../mesh/errors.js';
import { dumpPieces, DumpUsageError, parseDumpArgs } from './dump.js';
import { commandHelp, findCommand, overviewHelp } from './help.js';
import { AlikeArgumentsError, argumentPath } from './paths.js';
import { terminalLine } from './terminal-text.js';

class UsageError extends Error {
  constructor(message: string, readonly command?: string) {
    super(message);
  }
}

const wantsHelp = (args: string[]): boolean => args.includes('--help') || args.includes('-h');

/** One FILE and the flags a command knows; anything else is a usage error. */
function fileAndFlags(command: string, args: string[], known: string[]): { file: string; flags: Set<string> } {
  const flags = new Set(args.filter((arg) => known.includes(arg)));
  const files = args.filter((arg) => !known.includes(arg));
  const unknown = files.find((arg) => arg.startsWith('-'));
  if (unknown) throw new UsageError(`unknown option ${unknown}`, command);
  if (files.length !== 1) throw new UsageError(`${command} takes exactly one FILE`, command);
  return { file: files[0]!, flags };
}

async function dump(args: string[]): Promise<number> {
  let options;
  try {
    options = parseDumpArgs(args);
  } catch (error) {
    if (error instanceof DumpUsageError) throw new UsageError(error.message, 'dump');
    throw error;
  }
  if (options === 'help') return help('dump');
  const bytes = await readInput(options.file);
  if (options.chunks) {
    // Piece by piece: the view as one string can pass the longest string V8 makes (a 95 MB text value of control characters).
    for (const piece of jsonChunks(decodeChunks(bytes), JSON_CHUNK_CHARS, jsonReplacer)) await writeOut(piece);
    await writeOut('\n');
    return 0;
  }
  // The DOM is written instance by instance, waiting for stdout to drain.
  for (const piece of dumpPieces(decode(bytes), options)) await writeOut(piece);
  return 0;
}

/** `project FILE [--scripts MODE]`: the version 2 document, streamed, every asset marked not downloaded. */
async function project(args: string[]): Promise<number> {
  const { parseProjectArgs, projectPieces, ProjectUsageError } = await import('./project.js');
  let options;
  try {
    options = parseProjectArgs(args);
  } catch (error) {
    if (error instanceof ProjectUsageError) throw new UsageError(error.message, 'project');
    throw error;
  }
  if (options === 'help') return help('project');
  const bytes = await readInput(options.file);
  for (const piece of projectPieces(decode(bytes), bytes, options)) await writeOut(piece);
  return 0;
}

function help(command?: string): number {
  if (command === undefined) {
    process.stdout.write(overviewHelp());
    return 0;
  }
  const entry = findCommand(command);
  if (!entry) throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  process.stdout.write(commandHelp(entry));
  return 0;
}

/** `gltf FILE OUT.glb`: the map offline (nothing downloaded: meshes are placeholder boxes, unions their MeshData model or else their hulls). */
async function gltf(args: string[]): Promise<number> {
  if (wantsHelp(args)) return help('gltf');
  const files = args.filter((arg) => !arg.startsWith('-'));
  const unknown = args.find((arg) => arg.startsWith('-'));
  if (unknown) throw new UsageError(`unknown option ${unknown}`, 'gltf');
  if (files.length !== 2) throw new UsageError('gltf takes FILE and OUT.glb', 'gltf');
  const [file, out] = files as [string, string];
  const dom = decode(await readInput(file));
  const { assembleScene, writeSceneGlbFile } = await import('../scene/index.js');
  let undecoded = 0;
  const { bytes, stats } = await writeOutput(out, (path) => {
    const assembly = assembleScene(dom);
    undecoded = assembly.modelBudget.unionsUndecoded;
    return writeSceneGlbFile(assembly, path);
  });
  const placeholders = Object.entries(stats.placeholders).map(([reason, count]) => `${count} ${reason}`);
  const terrain = stats.terrain ? `, terrain ${stats.terrain.solid + stats.terrain.water} triangles (step ${stats.terrain.step}${stats.terrain.sampling === 'point' ? ', one voxel a sample' : ''})` : '';
  const models = undecoded > 0 ? `; ${undecoded} unions' models (MeshData) past the place's limit, drawn as their hulls or boxes` : '';
  await writeOut(`${out}: ${stats.parts} parts, ${stats.nodes} nodes${terrain}, ${bytes} bytes${placeholders.length ? `; placeholders: ${placeholders.join(', ')}` : ''}${models}\n`);
  return 0;
}

/**
 * Writes through `write`. A failed write removes the file only when this write created
 * it: whatever was at `path` before (a file that may not be written, a folder) stays as it
 * was, and what is not a regular file (a pipe, `/dev/stdout`, a symlink to one) is written
 * as a shell's redirect would write it.
 */
async function writeOutput<T>(out: string, write: (path: string | Buffer) => Promise<T>): Promise<T> {
  const path = fsPath(out);
  const existed = await lstat(path).then(() => true, () => false);
  try {
    return await write(path);
  } catch (error) {
    if (!existed) await rm(path, { force: true }).catch(() => {});
    if ((error as NodeJS.ErrnoException).code) throw new UsageError(`cannot write ${out}: ${(error as NodeJS.ErrnoException).code}`);
    throw error;
  }
}

async function mesh(args: string[]): Promise<number> {
  if (wantsHelp(args)) return help('mesh');
  const gltfAt = args.indexOf('--gltf');
  if (gltfAt !== -1) {
    const out = args[gltfAt + 1];
    if (!out || out.startsWith('-')) throw new UsageError('--gltf needs an output file', 'mesh');
    const { file } = fileAndFlags('mesh', [...args.slice(0, gltfAt), ...args.slice(gltfAt + 2)], []);
    const { convertMeshAsset } = await import('../scene/convert.js');
    const converted = convertMeshAsset(await readInput(file));
    if (!converted.ok) {
      process.stderr.write(`rbxl-import: not converted (${converted.reason}): ${terminalLine(converted.message)}\n`);
      return 2;
    }
    await writeOutput(out, (path) => writeFile(path, converted.glb));
    const { format, vertices, triangles, bones } = converted.info;
    await writeOut(`${out}: ${format}, ${vertices} vertices, ${triangles} triangles${bones ? `, ${bones} bones` : ''}, ${converted.glb.length} bytes\n`);
    return 0;
  }
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
    const counts = Object.entries(details).filter(([, v]) => typeof v === 'number' || typeof v === 'boolean').map(([k, v]) => `${k} ${String(v)}`);
    await writeOut(`${kind} ${version}: ${vertices} vertices, ${faces} faces${counts.length ? `, ${counts.join(', ')}` : ''}\n`);
  }
  return 0;
}

async function readInput(file: string): Promise<Uint8Array> {
  try {
    return await readFile(fsPath(file));
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

/** The path an argument names (paths.ts: a name that is not UTF-8 by its bytes). */
function fsPath(arg: string): string | Buffer {
  try {
    return argumentPath(arg);
  } catch (error) {
    if (error instanceof AlikeArgumentsError) throw new UsageError(error.message);
    throw error;
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
      case 'gltf': return await gltf(args);
      case 'project': return await project(args);
      case 'mesh': return await mesh(args);
      case 'import': {
        const { runImport } = await import('./import.js');
        return await runImport(args);
      }
      case 'serve': {
        if (wantsHelp(args)) return help('serve');
        if (args.length) throw new UsageError(`serve takes no arguments (configuration comes from the environment), got ${args[0]}`, 'serve');
        const { serve } = await import('../main.js');
        // Started, it serves until a signal; a configuration it cannot use exits 2, as `npm start` does.
        return (await serve()) ? 0 : 2;
      }
      case 'help':
        if (args.length > 1) throw new UsageError('help takes at most one COMMAND', 'help');
        return help(args[0]);
      case '-h': case '--help':
        return help();
      case undefined:
        process.stderr.write(overviewHelp());
        return 2;
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)} (rbxl-import help lists them)`);
    }
  } catch (error) {
    if (error instanceof DecodeError || error instanceof MeshDecodeError) {
      process.stderr.write(`rbxl-import: ${terminalLine(error.message)}\n`);
      return 2;
    }
    if (error instanceof UsageError) {
      const see = error.command ? `rbxl-import ${error.command} --help` : 'rbxl-import help';
      process.stderr.write(`rbxl-import${error.command ? ` ${error.command}` : ''}: ${terminalLine(error.message)} (see ${see})\n`);
      return 2;
    }
    process.stderr.write(`rbxl-import: ${terminalLine((error as Error)?.message ?? String(error))}\n`);
    return 1;
  }
}

/** A write to a reader that has gone (`rbxl-import dump FILE | head`). */
const isClosedPipe = (error: unknown): boolean => (error as NodeJS.ErrnoException | null)?.code === 'EPIPE';

// A reader that stops early is not an error for a command that writes output: it stops
// quietly, as Unix tools do. Not for `serve`, whose stdout is its log: a service must not
// stop, and stop reporting success, because its log reader went away.
if (process.argv[2] !== 'serve') {
  process.stdout.on('error', (error: Error) => {
    if (!isClosedPipe(error)) process.stderr.write(`rbxl-import: cannot write the output: ${terminalLine(error.message)}\n`);
    process.exit(isClosedPipe(error) ? 0 : 1);
  });
}

process.exitCode = await main(process.argv.slice(2));
