import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { decode } from '../src/parser/index.js';
import { getBytes, instances } from '../src/parser/dom.js';
import { encode } from '../src/parser/writer/index.js';
import { analyzeDom, buildProject, readMapScripts, scanMapScript, scanMapScripts, MAX_SCRIPTS_AT_RISK, MAX_WARNINGS, type Report } from '../src/project/index.js';
import { MAX_AT_RISK_CHARS, MAX_DOWNLOADED_ASSET_IDS, MAX_REPORT_CLASSES } from '../src/project/report.js';
import { MAX_NOT_IMPORTED_ENTRIES } from '../src/project/imported.js';
import { MAX_SHOWN_NAME_CHARS, shownName } from '../src/parser/warnings.js';
import { FINDING_CODES, isHangRisk } from '../src/scan/index.js';
import { handDom, part, type HandNode } from './support/hand-dom.js';
import { PLACES_DIR } from './support/paths.js';

const REPORT_FIELDS = [
  'scripts_total', 'format', 'file_name', 'file_size', 'instances_total', 'classes', 'parts_total', 'meshes_total',
  'unions_total', 'terrain', 'scripts', 'scripts_disabled', 'scripts_by_run_context', 'scripts_linked',
  'script_lines_total', 'scripts_flagged', 'script_findings', 'scripts_by_finding', 'scripts_at_risk', 'assets_total', 'assets',
  'assets_builtin', 'assets_other', 'bounds', 'imported', 'not_imported', 'warnings',
];

function script(className: string, name: string, source: string, props: HandNode['props'] = {}): HandNode {
  return { class: className, name, props: { Source: ['String', source], ...props } };
}

const OPTIONS = { fileName: 'hand.rbxl', fileSize: 99 };

/** The report's terrain fields when no voxel can be read. */
const NO_VOXELS = { chunks: 0, voxels_per_material: {}, solid_voxels: 0, water_voxels: 0, solid_volume: 0, water_volume: 0, bounds: null };

test('analyzeDom: exactly the report fields, with counts per class', () => {
  const dom = handDom([
    {
      class: 'Workspace',
      children: [
        part('A', [0, 0, 0], [1, 1, 1]),
        part('B', [0, 0, 0], [1, 1, 1], {}, 'SpawnLocation'),
        part('C', [0, 0, 0], [1, 1, 1], { MeshId: ['String', 'rbxassetid://1'] }, 'MeshPart'),
        part('D', [0, 0, 0], [1, 1, 1], { AssetId: ['String', 'rbxassetid://2'] }, 'UnionOperation'),
        part('E', [0, 0, 0], [1, 1, 1], {}, 'NegateOperation'),
        { ...part('F', [0, 0, 0], [1, 1, 1]), children: [
          { class: 'SpecialMesh', props: { MeshId: ['String', 'rbxassetid://3'] } },
          { class: 'SpecialMesh', props: { MeshId: ['String', ''] } },
        ] },
        { class: 'Terrain', props: { SmoothGrid: ['String', { base64: 'AQX/////' }], PhysicsGrid: ['String', '\u0002\u0003\u0000'] } },
      ],
    },
  ], 'xml', ['decoder said hello']);
  const { report, assets } = analyzeDom(dom, OPTIONS);
  assert.deepEqual(Object.keys(report), REPORT_FIELDS);
  assert.equal(report.format, 'xml');
  assert.equal(report.file_name, 'hand.rbxl');
  assert.equal(report.file_size, 99);
  assert.equal(report.instances_total, 10);
  assert.deepEqual(report.classes, {
    MeshPart: 1, NegateOperation: 1, Part: 2, SpawnLocation: 1, SpecialMesh: 2, Terrain: 1, UnionOperation: 1, Workspace: 1,
  });
  assert.equal(report.parts_total, 6); // Terrain is not a part here
  assert.equal(report.meshes_total, 2); // the MeshPart and the SpecialMesh that names a file
  assert.equal(report.unions_total, 2);
  // A SmoothGrid cut short after its header: terrain is there, but none of its voxels can be read.
  assert.deepEqual(report.terrain, { present: true, smooth_grid_bytes: 6, physics_grid_bytes: 3, ...NO_VOXELS });
  assert.deepEqual(report.warnings, [
    'decoder said hello',
    'terrain: the SmoothGrid cannot be read (truncated chunk header: 4 bytes left, a header is 12 (property Terrain.SmoothGrid, byte offset 2)); its voxels are not counted or drawn',
  ]);
  assert.equal(report.scripts_total, 0);
  assert.deepEqual(assets, [{ id: '1', kind: 'mesh' }, { id: '2', kind: 'union' }, { id: '3', kind: 'mesh' }]);
  assert.equal(report.assets_total, 3);
  assert.deepEqual(report.assets, { mesh: 2, image: 0, audio: 0, animation: 0, union: 1, other: 0 });
});

test('analyzeDom: an empty SmoothGrid is not terrain; no Terrain at all is not either', () => {
  const empty = analyzeDom(handDom([{ class: 'Workspace', children: [{ class: 'Terrain', props: { SmoothGrid: ['String', '\u0001\u0005'] } }] }]), OPTIONS);
  assert.deepEqual(empty.report.terrain, { present: false, smooth_grid_bytes: 2, physics_grid_bytes: 0, ...NO_VOXELS });
  const none = analyzeDom(handDom([{ class: 'Workspace' }]), OPTIONS);
  assert.deepEqual(none.report.terrain, { present: false, smooth_grid_bytes: 0, physics_grid_bytes: 0, ...NO_VOXELS });
  assert.equal(none.report.bounds, null);
});

test('analyzeDom: scripts by class, disabled, run context, linked, lines', () => {
  const dom = handDom([
    {
      class: 'Workspace',
      children: [
        script('Script', 'S1', 'print(1)\nprint(2)\n', { Disabled: ['Bool', true], RunContext: ['Enum', 0] }),
        script('Script', 'S2', 'print(1)', { Disabled: ['Bool', false], RunContext: ['Enum', 1] }),
        script('Script', 'S3', 'print(1)\n\nprint(3)', { RunContext: ['Enum', 2] }),
        script('LocalScript', 'L', 'local x = 1', { Disabled: ['Bool', false] }),
        script('ModuleScript', 'M1', '   \n', { LinkedSource: ['String', ''] }),
        script('ModuleScript', 'M2', 'return 1', { LinkedSource: ['Content', { Uri: 'rbxassetid://55' }] }),
        script('ModuleScript', 'M3', 'return 2', { LinkedSource: ['Content', 'None'] }),
        { class: 'Script', name: 'Bytes', props: { Source: ['String', { base64: Buffer.from([0x70, 0xff, 0x0a, 0x71]).toString('base64') }] } },
      ],
    },
  ]);
  const { report } = analyzeDom(dom, OPTIONS);
  assert.equal(report.scripts_total, 8);
  assert.deepEqual(report.scripts, { Script: 4, LocalScript: 1, ModuleScript: 3 });
  assert.equal(report.scripts_disabled, 1);
  assert.deepEqual(report.scripts_by_run_context, { Legacy: 6, Server: 1, Client: 1 });
  assert.equal(report.scripts_linked, 2); // blank M1, LinkedSource M2
  assert.equal(report.script_lines_total, 2 + 1 + 3 + 1 + 1 + 1 + 1 + 2);
  assert.equal(report.assets_total, 0); // a LinkedSource is not an asset
  assert.ok(report.warnings.some((w) => w.includes('Workspace.Bytes') && w.includes('UTF-8')));
  assert.equal(report.script_findings.external_code, 2);
  assert.equal(report.scripts_flagged, 2);
  assert.deepEqual(report.scripts_at_risk.map((r) => r.path).sort(), ['Workspace.M1', 'Workspace.M2']);
});

test('analyzeDom: Enabled stands in for a missing Disabled; RunContext Plugin gets its own count', () => {
  const dom = handDom([
    {
      class: 'Workspace',
      children: [
        script('Script', 'Off', 'print(1)', { Enabled: ['Bool', false] }),
        script('Script', 'On', 'print(1)', { Enabled: ['Bool', true] }),
        script('Script', 'Plug', 'print(1)', { RunContext: ['Enum', 3] }),
      ],
    },
  ]);
  const { report } = analyzeDom(dom, OPTIONS);
  assert.equal(report.scripts_disabled, 1);
  assert.deepEqual(report.scripts_by_run_context, { Legacy: 2, Server: 0, Client: 0, Plugin: 1 });
});

test('analyzeDom: scripts_at_risk puts hang risks first and stops at 200 distinct scripts', () => {
  const children: HandNode[] = [];
  for (let i = 0; i < 230; i++) children.push(script('Script', `Old${i}`, `wait(${i})\n`));
  children.push(script('Script', 'Hang', 'local n = 0\nwhile true do n += 1 end\n'));
  const { report } = analyzeDom(handDom([{ class: 'Workspace', children }]), OPTIONS);
  assert.equal(report.scripts_total, 231);
  assert.equal(report.scripts_flagged, 231);
  assert.equal(report.scripts_at_risk.length, MAX_SCRIPTS_AT_RISK);
  assert.equal(report.scripts_at_risk[0]!.path, 'Workspace.Hang');
  assert.equal(report.scripts_at_risk[0]!.class, 'Script');
  assert.deepEqual(report.scripts_at_risk[0]!.findings.map((f) => [f.code, f.line]), [['loop_without_yield', 2]]);
  assert.equal(report.scripts_at_risk[1]!.path, 'Workspace.Old0');
  assert.equal(report.script_findings.loop_without_yield, 1);
  assert.equal(report.script_findings.deprecated_global, 230);
  assert.deepEqual(Object.keys(report.script_findings), [...FINDING_CODES]);
  assert.deepEqual(report.scripts_by_finding.loop_without_yield, { scripts: 1, enabled: 1, most_severe: 1, most_severe_enabled: 1 });
  assert.deepEqual(report.scripts_by_finding.deprecated_global, { scripts: 230, enabled: 230, most_severe: 230, most_severe_enabled: 230 });
  assert.ok(report.warnings.some((w) => w.includes('200 of 231')));
});

test('analyzeDom: copies of one script are one scripts_at_risk entry with their count', () => {
  const children: HandNode[] = [];
  for (let i = 0; i < 300; i++) children.push(script('Script', `Copy${i}`, 'wait(1)\n', i % 3 === 0 ? { Disabled: ['Bool', true] } : {}));
  children.push(script('LocalScript', 'SameTextOtherClass', 'wait(1)\n'));
  children.push(script('Script', 'Other', 'local x = game:findFirstChild("x")\n'));
  const { report } = analyzeDom(handDom([{ class: 'Workspace', children }]), OPTIONS);
  assert.equal(report.scripts_flagged, 302);
  assert.equal(report.scripts_at_risk.length, 3, 'copies are listed once; another class is another script');
  const [copies, otherClass, other] = report.scripts_at_risk;
  assert.equal(copies!.path, 'Workspace.Copy0');
  assert.equal(copies!.copies, 300);
  assert.equal(copies!.disabled, 100);
  assert.deepEqual(copies!.copy_paths, Array.from({ length: 10 }, (_, i) => `Workspace.Copy${i + 1}`));
  assert.equal(otherClass!.copies, 1);
  assert.equal(other!.copies, 1);
  assert.deepEqual(other!.copy_paths, []);
  assert.deepEqual(report.scripts_by_finding.deprecated_global, { scripts: 301, enabled: 201, most_severe: 301, most_severe_enabled: 201 });
  // `Other` has only a legacy method; a script with both codes counts as most severe under deprecated_global.
  assert.deepEqual(report.scripts_by_finding.legacy_method, { scripts: 1, enabled: 1, most_severe: 1, most_severe_enabled: 1 });
  assert.ok(!report.warnings.some((w) => w.startsWith('scripts_at_risk')), 'nothing left out');
});

test('analyzeDom: findings in an entry are ordered by priority, then line', () => {
  const source = 'wait(1)\nlocal x = game:findFirstChild("x")\nwhile true do end\n';
  const { report } = analyzeDom(handDom([{ class: 'Workspace', children: [script('Script', 'Mixed', source)] }]), OPTIONS);
  const codes = report.scripts_at_risk[0]!.findings.map((f) => f.code);
  assert.equal(codes[0], 'loop_without_yield');
  const ranks = codes.map((code) => FINDING_CODES.indexOf(code));
  assert.deepEqual(ranks, [...ranks].sort((a, b) => a - b));
});

test('analyzeDom: bounds hold the rotated corners of every Workspace part', () => {
  const s = Math.SQRT1_2;
  const dom = handDom([
    {
      class: 'Workspace',
      children: [
        // 90° about Y: a 4 x 2 x 10 box spans 10 along world X and 4 along world Z
        part('Turned', [0, 0, 0], [4, 2, 10], {}, 'Part', [[0, 0, 1], [0, 1, 0], [-1, 0, 0]]),
        // 45° about Z: a 2 x 2 x 2 cube reaches sqrt(2) along X and Y
        part('Tilted', [100, 50, 0], [2, 2, 2], {}, 'WedgePart', [[s, -s, 0], [s, s, 0], [0, 0, 1]]),
        { class: 'Model', children: [part('Deep', [0, -20, 0], [2, 2, 2])] },
        part('Broken', [NaN, 0, 0], [1, 1, 1]),
      ],
    },
    { class: 'ServerStorage', children: [part('FarAway', [1e6, 1e6, 1e6], [1, 1, 1])] },
  ]);
  const { report } = analyzeDom(dom, OPTIONS);
  assert.equal(report.parts_total, 5);
  const { min, max } = report.bounds!;
  assert.deepEqual(min.map((x) => +x.toFixed(6)), [-5, -21, -2]);
  assert.deepEqual(max.map((x) => +x.toFixed(6)), [+(100 + Math.SQRT2).toFixed(6), +(50 + Math.SQRT2).toFixed(6), 2]);
  assert.ok(report.warnings.some((w) => w.startsWith('bounds: 1 part')));
});

test('analyzeDom: a model file (no Workspace) bounds all its parts', () => {
  const { report } = analyzeDom(handDom([{ class: 'Model', children: [part('P', [10, 0, 0], [2, 2, 2])] }]), OPTIONS);
  assert.deepEqual(report.bounds, { min: [9, -1, -1], max: [11, 1, 1] });
});

test('analyzeDom: warnings are capped', () => {
  const many = Array.from({ length: 120 }, (_, i) => `w${i}`);
  const { report } = analyzeDom(handDom([{ class: 'Workspace' }], 'binary', many), OPTIONS);
  assert.equal(report.warnings.length, MAX_WARNINGS + 1);
  assert.equal(report.warnings.at(-1), `… and ${120 - MAX_WARNINGS} more warnings`);
});

// ---------- the real corpus ----------

function checkConsistent(file: string, report: Report, assetsLength: number): void {
  const sum = (o: Record<string, number | undefined>) => Object.values(o).reduce<number>((a, b) => a + (b ?? 0), 0);
  assert.equal(report.scripts_total, sum(report.scripts), `${file}: per class`);
  assert.equal(report.scripts_total, sum(report.scripts_by_run_context), `${file}: by run context`);
  assert.ok(report.scripts_flagged <= report.scripts_total, `${file}: flagged`);
  assert.ok(report.scripts_disabled <= report.scripts_total && report.scripts_linked <= report.scripts_total, file);
  assert.equal(report.instances_total, sum(report.classes), `${file}: classes`);
  assert.equal(report.assets_total, assetsLength, `${file}: ids`);
  assert.equal(report.assets_total, sum(report.assets), `${file}: per kind`);
  assert.ok(report.scripts_at_risk.length <= MAX_SCRIPTS_AT_RISK);
  if (report.scripts_at_risk.length < MAX_SCRIPTS_AT_RISK) {
    const copies = report.scripts_at_risk.reduce((total, entry) => total + entry.copies, 0);
    assert.equal(copies, report.scripts_flagged, `${file}: at risk, copies counted`);
    const counted: Record<string, number> = Object.fromEntries(FINDING_CODES.map((code) => [code, 0]));
    const scriptsWith: Record<string, number> = Object.fromEntries(FINDING_CODES.map((code) => [code, 0]));
    for (const entry of report.scripts_at_risk) {
      for (const f of entry.findings) counted[f.code]! += entry.copies;
      for (const code of new Set(entry.findings.map((f) => f.code))) scriptsWith[code]! += entry.copies;
    }
    assert.deepEqual(counted, report.script_findings, `${file}: per code`);
    assert.deepEqual(Object.fromEntries(Object.entries(report.scripts_by_finding).map(([code, n]) => [code, n.scripts])), scriptsWith, `${file}: scripts per code`);
  }
  for (const { scripts, enabled, most_severe, most_severe_enabled } of Object.values(report.scripts_by_finding)) {
    assert.ok(enabled <= scripts && scripts <= report.scripts_flagged && most_severe <= scripts && most_severe_enabled <= most_severe, file);
  }
  const severest = Object.values(report.scripts_by_finding).reduce((total, n) => total + n.most_severe, 0);
  assert.equal(severest, report.scripts_flagged, `${file}: every flagged script has one most severe code`);
  // hang risks first
  let seenOther = false;
  for (const entry of report.scripts_at_risk) {
    const hang = entry.findings.some((f) => isHangRisk(f.code));
    assert.ok(!(hang && seenOther), `${file}: hang risk after a lesser entry`);
    if (!hang) seenOther = true;
  }
  if (report.bounds) for (let i = 0; i < 3; i++) assert.ok(report.bounds.min[i]! <= report.bounds.max[i]!);
  assert.doesNotThrow(() => JSON.stringify(report));
}

test('analyzeDom over every real place: numbers add up', async () => {
  const files = (await readdir(PLACES_DIR)).filter((f) => /\.rbx[lm]x?$/.test(f));
  assert.ok(files.length >= 8);
  for (const file of files) {
    const bytes = await readFile(join(PLACES_DIR, file));
    const { report, assets } = analyzeDom(decode(bytes), { fileName: file, fileSize: bytes.length });
    assert.equal(report.file_size, bytes.length);
    checkConsistent(file, report, assets.length);
  }
});

test('analyzeDom over the real places agrees with the corpus README', async () => {
  const expected: Record<string, { scripts: number; format: 'binary' | 'xml'; check?: (r: Report) => void }> = {
    'booga.rbxl': {
      scripts: 29,
      format: 'binary',
      check: (r) => {
        assert.equal(r.terrain.present, true);
        assert.ok(r.terrain.smooth_grid_bytes > 1_300_000 && r.terrain.smooth_grid_bytes < 1_400_000, String(r.terrain.smooth_grid_bytes));
        assert.ok(r.terrain.physics_grid_bytes > 0);
        assert.ok(r.unions_total >= 1250 && r.unions_total < 1400, String(r.unions_total)); // "1.3k unions"
      },
    },
    'grow-a-slime.rbxl': { scripts: 189, format: 'binary' },
    'roblox-statemachine-demo.rbxl': { scripts: 19, format: 'binary', check: (r) => assert.equal(r.classes.MeshPart, 19) },
    'rocket-arena-2006.rbxl': {
      scripts: 15,
      format: 'binary',
      check: (r) => {
        assert.ok(r.parts_total >= 1700 && r.parts_total < 1900, String(r.parts_total)); // "~1.8k parts"
        assert.equal(r.terrain.present, false);
      },
    },
    'slime-defense.rbxl': { scripts: 81, format: 'binary', check: (r) => assert.equal(r.classes.MeshPart, 19) },
    'roblox-multiblaster.rbxm': { scripts: 0, format: 'binary', check: (r) => assert.equal(r.meshes_total, 10) },
    'roblox-dialog-system.rbxlx': {
      scripts: 17,
      format: 'xml',
      check: (r) => {
        assert.equal(r.scripts.Script, 2);
        assert.equal(r.scripts.ModuleScript, 15);
        assert.deepEqual(r.scripts_by_run_context, { Legacy: 15, Server: 1, Client: 1 });
        assert.ok(r.assets_total > 0);
      },
    },
  };
  for (const [file, { scripts, format, check }] of Object.entries(expected)) {
    const bytes = await readFile(join(PLACES_DIR, file));
    const { report } = analyzeDom(decode(bytes), { fileName: file, fileSize: bytes.length });
    assert.equal(report.scripts_total, scripts, file);
    assert.equal(report.format, format, file);
    check?.(report);
  }
});

test('analyzeDom: scripts read as bytes from a binary file report as the same scripts read as text', () => {
  const sources = [
    'print(1)\nprint(2)\n', '', '   \n\t', 'while true do end\n-- é ü 😀\nwait(1)', 'game.Players.LocalPlayer:connect()\n\n',
    'local s = "HttpService"\rgame:GetService(s)', 'x = [[\n\n]] spawn(f)',
  ];
  const children: HandNode[] = sources.map((source, i) => script(i % 2 ? 'Script' : 'LocalScript', `S${i}`, source));
  children.push({ class: 'Script', name: 'Bytes', props: { Source: ['String', { base64: Buffer.from([0x70, 0xff, 0x0a, 0x77, 0x61, 0x69, 0x74, 0x28, 0x29]).toString('base64') }] } });
  const dom = handDom([{ class: 'Workspace', children }]);
  const fromText = analyzeDom(dom, OPTIONS).report;
  const decoded = decode(encode(dom));
  assert.ok(getBytes(decoded, [...instances(decoded)].find((i) => i.name === 'S0')!.row, 'Source'), 'the binary decoder keeps the source bytes');
  const fromBytes = analyzeDom(decoded, OPTIONS).report;
  for (const key of ['scripts_total', 'scripts_linked', 'script_lines_total', 'scripts_flagged', 'script_findings'] as const) {
    assert.deepEqual(fromBytes[key], fromText[key], key);
  }
  // A binary file stores instances by class, so DOM order (the order within a rank) differs.
  const byPath = (report: Report) => [...report.scripts_at_risk].sort((a, b) => a.path.localeCompare(b.path));
  assert.deepEqual(byPath(fromBytes), byPath(fromText));
  assert.deepEqual([...fromBytes.warnings].sort(), [...fromText.warnings].sort());
  assert.ok(fromText.scripts_flagged >= 5 && fromText.script_lines_total > 10, 'the sources exercise the checks');
});

test('scanMapScripts: copies of a script share one scan; any difference in source or options scans again', () => {
  const killBrick = 'script.Parent.Touched:connect(function(hit)\n\twait(1)\nend)\nlocal p = game.Players.LocalPlayer\n';
  // Same length as killBrick, without the deprecated `wait`.
  const nearCopy = killBrick.replace('wait(1)', 'tick(1)');
  const children: HandNode[] = [
    script('Script', 'A', killBrick),
    script('Script', 'B', killBrick),
    script('Script', 'C', nearCopy),
    script('LocalScript', 'D', killBrick), // LocalPlayer is fine in a LocalScript
    script('Script', 'E', killBrick, { RunContext: ['Enum', 2] }), // a client Script: likewise
    script('Script', 'F', killBrick, { LinkedSource: ['Content', { Uri: 'rbxassetid://7' }] }),
    script('Script', 'G', killBrick),
  ];
  for (const dom of [handDom([{ class: 'Workspace', children }]), decode(encode(handDom([{ class: 'Workspace', children }])))]) {
    const scripts = readMapScripts(dom);
    const byName = new Map(scripts.map((s, i) => [s.name, i]));
    const shared = scanMapScripts(scripts);
    // Every script gets what scanning it alone gives.
    scripts.forEach((s, i) => assert.deepEqual(shared[i], scanMapScript(s), s.name));
    const of = (name: string) => shared[byName.get(name)!]!;
    assert.equal(of('B'), of('A'), 'an exact copy shares the first scan');
    assert.equal(of('G'), of('A'));
    for (const other of ['C', 'D', 'E', 'F']) assert.notEqual(of(other), of('A'), `${other} is scanned on its own`);
    assert.ok(of('A').some((f) => f.code === 'local_player_on_server'));
    assert.ok(!of('D').some((f) => f.code === 'local_player_on_server'));
    assert.ok(!of('E').some((f) => f.code === 'local_player_on_server'));
    assert.ok(of('F').some((f) => f.code === 'external_code'));
    assert.ok(of('A').some((f) => f.code === 'deprecated_global'));
    assert.ok(!of('C').some((f) => f.code === 'deprecated_global'), 'the near copy has its own findings');
  }
});

test('analyzeDom: a binary file and its XML twin give the same counts', async () => {
  const { TEST_FILES_DIR } = await import('./support/paths.js');
  for (const name of ['baseplate-566', 'two-imagebuttons', 'imagelabel-content', 'two-particleemitters', 'default-inserted-modulescript', 'three-unique-parts']) {
    const ext = name.startsWith('baseplate') ? ['rbxl', 'rbxlx'] : ['rbxm', 'rbxmx'];
    const reports = await Promise.all(ext.map(async (e) => {
      const bytes = await readFile(join(TEST_FILES_DIR, `${name}.${e}`));
      return analyzeDom(decode(bytes), { fileName: name, fileSize: 0 }).report;
    }));
    const [binary, xml] = reports as [Report, Report];
    for (const key of [
      'scripts_total', 'parts_total', 'assets_total', 'assets', 'assets_builtin', 'assets_other', 'scripts_by_run_context', 'bounds', 'terrain',
      'script_lines_total', 'scripts_linked', 'scripts_flagged', 'script_findings', 'scripts_at_risk',
    ] as const) {
      assert.deepEqual(xml[key], binary[key], `${name}: ${key}`);
    }
  }
});

test('names from the file are shown bounded: a 100,000-character class with 256 unknown properties makes a small report', () => {
  const longClass = 'C'.repeat(100_000);
  const props = Array.from({ length: 256 }, (_, i) => `<Zt name="p${i}">1</Zt>`).join('');
  const bytes = Buffer.from(`<roblox version="4"><Item class="${longClass}" referent="A"><Properties>${props}</Properties></Item></roblox>`);
  const { report } = analyzeDom(decode(bytes), { fileName: 'long.rbxlx', fileSize: bytes.length });
  assert.ok(JSON.stringify(report).length < bytes.length, `a ${bytes.length}-byte file made a ${JSON.stringify(report).length}-byte report`);
  assert.equal(report.not_imported.length, 256, 'each unknown property is still named');
  for (const entry of report.not_imported) {
    assert.equal(entry.class.length, MAX_SHOWN_NAME_CHARS);
    assert.ok(entry.class.startsWith('CCC') && entry.class.endsWith('\u2026'));
  }
  assert.deepEqual(Object.keys(report.classes).map((name) => name.length), [MAX_SHOWN_NAME_CHARS]);
  for (const line of report.warnings) assert.ok(line.length <= 3 * MAX_SHOWN_NAME_CHARS + 40, line.slice(0, 80));
  // A cut never splits a surrogate pair.
  assert.equal(shownName('a'.repeat(MAX_SHOWN_NAME_CHARS - 2) + '😀'.repeat(5)), 'a'.repeat(MAX_SHOWN_NAME_CHARS - 2) + '\u2026');
});

test('the report lists at most MAX_REPORT_CLASSES classes and MAX_NOT_IMPORTED_ENTRIES entries; the rest are counted', () => {
  const extra = 500;
  const classes = Array.from({ length: MAX_REPORT_CLASSES + extra }, (_, i) => `<Item class="K${i}" referent="I${i}"><Properties><string name="Name">n</string><Zt name="z">1</Zt></Properties></Item>`).join('');
  const bytes = Buffer.from(`<roblox version="4">${classes}</roblox>`);
  const { report } = analyzeDom(decode(bytes), { fileName: 'wide.rbxlx', fileSize: bytes.length });
  assert.equal(Object.keys(report.classes).length, MAX_REPORT_CLASSES);
  assert.ok(report.warnings.includes(`classes: ${extra} more classes (${extra} instances) not listed`), report.warnings.join('\n'));
  // One unknown property per class: the decoder names 256 class/property pairs and sums the rest in one entry.
  assert.ok(report.not_imported.length <= MAX_NOT_IMPORTED_ENTRIES);
  assert.equal(report.not_imported.reduce((sum, entry) => sum + entry.count, 0), MAX_REPORT_CLASSES + extra);
  // Entries the report gathers itself (a class per left-out script's child) are bounded too.
  const children = Array.from({ length: 400 }, (_, i) => `<Item class="Inner${i}" referent="C${i}"><Properties><string name="Name">c</string></Properties></Item>`).join('');
  const skipped = Buffer.from(`<roblox version="4"><Item class="Script" referent="S"><Properties><string name="Name">s</string><ProtectedString name="Source">x</ProtectedString></Properties>${children}</Item></roblox>`);
  const doc = buildProject(decode(skipped), { title: '', owner: 'o', createdAt: '2026-01-01T00:00:00.000Z', previewHash: '0'.repeat(64), fileName: 'skip.rbxlx', fileSize: skipped.length, scriptsMode: 'skip', assets: [] });
  assert.equal(doc.import.not_imported.length, MAX_NOT_IMPORTED_ENTRIES);
  assert.equal(doc.import.not_imported.reduce((sum, entry) => sum + entry.count, 0), 401);
  assert.match(doc.import.not_imported.at(-1)!.reason, /^102 more entries of other classes and properties, not listed$/);
});

test('a create downloads at most the first MAX_DOWNLOADED_ASSET_IDS asset ids; the report counts them all and says so', async () => {
  const bytes = await readFile(join(PLACES_DIR, 'rocket-arena-2006.rbxl')); // 18 asset ids
  const all = analyzeDom(decode(bytes), { fileName: 'arena.rbxl', fileSize: bytes.length });
  assert.equal(all.assets.length, 18);
  assert.ok(MAX_DOWNLOADED_ASSET_IDS >= 100 * 267, 'far above a real place\'s (booga: 267)');
  const capped = analyzeDom(decode(bytes), { fileName: 'arena.rbxl', fileSize: bytes.length, maxAssetIds: 10 });
  assert.deepEqual(capped.assets, all.assets.slice(0, 10));
  assert.equal(capped.report.assets_total, 18);
  assert.ok(capped.report.warnings.includes('assets: 8 asset ids past the first 10 are not downloaded'), capped.report.warnings.join('\n'));
});

test('scripts_at_risk holds at most MAX_AT_RISK_CHARS of JSON: 200 flagged scripts with long paths and many findings do not make a report of megabytes', () => {
  const body = Array.from({ length: 100 }, () => 'loadstring(s)()').join('\n');
  const scripts: HandNode[] = [];
  for (let i = 0; i < 200; i++) for (let c = 0; c < 11; c++) scripts.push({ class: 'Script', name: 's', props: { Source: ['String', `${body}\n--${i}`] } });
  const bytes = Buffer.from(encode(handDom([{ class: 'Workspace', name: 'Workspace', children: [{ class: 'Folder', name: 'F'.repeat(990), children: scripts }] }])));
  const { report } = analyzeDom(decode(bytes), { fileName: 'deep.rbxl', fileSize: bytes.length });
  const listed = report.scripts_at_risk.length;
  assert.ok(listed > 0 && listed < 200, `${listed} listed`);
  assert.ok(JSON.stringify(report.scripts_at_risk).length <= MAX_AT_RISK_CHARS, `${JSON.stringify(report.scripts_at_risk).length} characters`);
  assert.ok(report.warnings.some((line) => new RegExp(`^scripts_at_risk lists ${listed} of \\d+ distinct flagged scripts \\(2200 with copies\\)$`).test(line)), report.warnings.join('\n'));
});
