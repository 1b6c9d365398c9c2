/**
 * Help for every `rbxl-import` command, in one table: `rbxl-import help` (and no
 * arguments) lists every command with its options; `rbxl-import help CMD` and
 * `rbxl-import CMD --help` show one. A command added to the CLI adds its entry here.
 */

export interface CommandHelp {
  name: string;
  /** Arguments after the command's name. */
  synopsis: string;
  /** One line. */
  summary: string;
  /** More lines, shown by the command's own help. */
  details?: string;
  /** [flag, meaning] */
  options: [string, string][];
}

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';
export const DEFAULT_CONCURRENCY = 4;

export const COMMANDS: CommandHelp[] = [
  {
    name: 'import',
    synopsis: 'FILE... [options]',
    summary: 'upload maps to a running service, show each analysis, and create projects',
    details:
      'Uploads each map file (.rbxl, .rbxlx, .rbxm, .rbxmx) to the import service and shows what it holds,\n'
      + 'what arrives and what its scripts risk; asks how to import the scripts (at a terminal) and creates\n'
      + 'the project, with a progress bar while assets download. Several files are analysed at once, but\n'
      + 'asked about and reported one at a time, in the order given. Exit code 1 when any file failed.',
    options: [
      ['--base-url URL', `service address (default: $RBXL_IMPORT_URL or ${DEFAULT_BASE_URL})`],
      ['--token T', 'access token (default: $RBXL_IMPORT_TOKEN)'],
      ['--dev-user ID', 'sign in as ID on a development service (an unsigned development token; AUTH_MODE=development only)'],
      ['--title T', 'project title (default: the file name)'],
      ['--scripts MODE', 'disabled | enabled | skip; asked when scripts exist and stdin is a terminal (Enter takes the recommended mode), otherwise disabled'],
      ['--concurrency N', `files analysed at once (default: ${DEFAULT_CONCURRENCY})`],
      ['--json', 'print one JSON document with everything the service answered for every file'],
      ['-h, --help', 'show this help'],
    ],
  },
  {
    name: 'dump',
    synopsis: 'FILE [--pretty] [--class NAME] [--path PREFIX] | --chunks FILE',
    summary: 'print a map\'s instances and properties as JSON, streamed instance by instance',
    details:
      'Prints {"format", "classes", "shared_strings", "instances": [...]} in the project document\'s encoding\n'
      + '(README, "The project document"), every property included; filters keep the instances that pass all\n'
      + 'of them, parents before children, each written as in the whole dump.',
    options: [
      ['--pretty', 'indent the JSON (two spaces)'],
      ['--class NAME', 'only instances of class NAME (may be given more than once)'],
      ['--path PREFIX', 'only the instance whose full name (Workspace.Model.Part) is PREFIX and its descendants (may be given more than once)'],
      ['--chunks', 'the binary chunk view instead (../shared/conformance\'s shape)'],
      ['-h, --help', 'show this help'],
    ],
  },
  {
    name: 'gltf',
    synopsis: 'FILE OUT.glb',
    summary: 'write a map\'s Workspace and terrain as one binary glTF file (scene.glb), offline',
    details:
      'Every BasePart with its shape, colour and material, unions from the model stored in the file\n'
      + '(MeshData) or else their collision hulls, terrain and water; nothing is downloaded, so MeshParts\n'
      + 'and meshes are boxes of their size marked as placeholders (a project\'s scene.glb from the service\n'
      + 'has the converted meshes). Studs, +Y up; each node\'s extras.id is the instance\'s id in the project\n'
      + 'document. Prints the part, node and terrain triangle counts.',
    options: [['-h, --help', 'show this help']],
  },
  {
    name: 'project',
    synopsis: 'FILE [--scripts MODE]',
    summary: 'print the project document (version 2) the service would store for a map, offline',
    details:
      'Writes the whole document as a stream (redirect it: rbxl-import project map.rbxl > doc.json). Nothing is\n'
      + 'downloaded: every asset is listed as not_downloaded. The document is plain JSON here; the service stores\n'
      + 'it Brotli-compressed.',
    options: [
      ['--scripts MODE', 'disabled | enabled | skip, as the create request\'s scripts_mode (default: disabled)'],
      ['-h, --help', 'show this help'],
    ],
  },
  {
    name: 'mesh',
    synopsis: 'FILE [--json | --gltf OUT.glb]',
    summary: 'decode a Roblox mesh (1.00 to 7.00), CSGMDL, CSGPHS or CSGK file, or convert it to glTF',
    details:
      'Without options prints a one-line summary; a file that cannot be decoded exits 2 with the reason.',
    options: [
      ['--json', 'every position and the counts, as JSON (default: a one-line summary)'],
      ['--gltf OUT.glb', 'write the mesh as binary glTF (what create stores for scene.glb): LOD 0, normals, UVs, vertex colours, bones'],
      ['-h, --help', 'show this help'],
    ],
  },
  {
    name: 'serve',
    synopsis: '',
    summary: 'start the service (configuration from the environment; same as npm start)',
    details: 'Prints the import page\'s address once it listens. README lists every environment variable.',
    options: [['-h, --help', 'show this help']],
  },
  {
    name: 'help',
    synopsis: '[COMMAND]',
    summary: 'show this overview, or one command\'s help',
    options: [],
  },
];

export function findCommand(name: string): CommandHelp | undefined {
  return COMMANDS.find((command) => command.name === name);
}

function optionLines(options: [string, string][], indent: string): string {
  const width = Math.max(0, ...options.map(([flag]) => flag.length));
  return options.map(([flag, meaning]) => `${indent}${flag.padEnd(width)}  ${meaning}\n`).join('');
}

/** One command's help: usage, what it does, its options. */
export function commandHelp(command: CommandHelp): string {
  let text = `Usage: rbxl-import ${command.name}${command.synopsis ? ` ${command.synopsis}` : ''}\n\n${command.summary[0]!.toUpperCase()}${command.summary.slice(1)}.\n`;
  if (command.details) text += `${command.details}\n`;
  if (command.options.length) text += `\nOptions:\n${optionLines(command.options, '  ')}`;
  return text;
}

/** Every command with its options. */
export function overviewHelp(): string {
  let text = 'Usage: rbxl-import COMMAND [options]\n\nCommands:\n';
  for (const command of COMMANDS) {
    text += `\n  rbxl-import ${command.name}${command.synopsis ? ` ${command.synopsis}` : ''}\n      ${command.summary}\n`;
    const options = command.options.filter(([flag]) => flag !== '-h, --help');
    if (options.length) text += optionLines(options, '      ');
  }
  text += '\nEvery command takes --help. Bad input exits 2 with one line on stderr.\n';
  return text;
}
