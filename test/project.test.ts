import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decode } from '../src/parser/index.js';
import {
  applyScriptsMode, buildProject, buildScene, packScript, packedSource, parseScriptsMode, patchScriptEnabled,
  projectTitle, readScriptMeta, ProjectError, analyzeDom,
  type ProjectScript, type ScriptCodes, type ScriptMeta, type ScenePart, type SceneNode, type SceneGroup,
} from '../src/project/index.js';
import type { AssetOutcome } from '../src/assets/download.js';
import { FINDING_CODES } from '../src/scan/index.js';
import { SCANNER_VERSION } from '../src/scan/version.js';
import { handDom, part } from './support/hand-dom.js';
import { PLACES_DIR } from './support/paths.js';

function meta(overrides: Partial<ScriptMeta> = {}): ScriptMeta {
  return { name: 'Main', class: 'Script', path: 'Workspace.Main', run_context: 'Legacy', enabled: true, findings: [], ...overrides };
}

function lines(code: string): string[] {
  return code.split('\n');
}

// ---------- packing ----------

test('packScript: three header lines, then the source byte for byte', () => {
  const source = 'print("hi")\r\n-- ]] not the end\nreturn 1';
  const code = packScript(meta(), source);
  const [l1, l2, l3] = lines(code);
  assert.equal(l1, '--[[');
  assert.deepEqual(JSON.parse(l2!), meta());
  assert.equal(l3, ']]');
  assert.equal(code.slice(l1.length + l2!.length + l3.length + 3), source);
  assert.equal(packedSource(code), source);
});

test('packScript: the bracket level outgrows any closing bracket in the metadata', () => {
  for (const [name, level] of [
    ['plain', 0],
    ['a]]b', 1],
    ['a]]b]=]c', 2],
    ['x]==]y]]z]=]', 3],
  ] as const) {
    const code = packScript(meta({ name, path: `Workspace.${name}` }), 'return 1');
    const [l1, l2, l3] = lines(code);
    const equals = '='.repeat(level);
    assert.equal(l1, `--[${equals}[`, name);
    assert.equal(l3, `]${equals}]`, name);
    assert.ok(!l2!.includes(`]${equals}]`), name);
    assert.equal(readScriptMeta(code).name, name);
  }
});

test('packScript: names with newlines and line separators stay on line 2', () => {
  const name = 'two\nlines\r\u2028\u2029end ]]';
  const code = packScript(meta({ name }), 'x = 1\n');
  const all = lines(code);
  assert.equal(all.length, 5); // header (3) + 'x = 1' + '' after the final newline
  assert.ok(!all[1]!.includes('\u2028') && !all[1]!.includes('\u2029'));
  assert.equal(readScriptMeta(code).name, name);
  assert.equal(packedSource(code), 'x = 1\n');
});

test('packScript: an empty source still has its three header lines', () => {
  const code = packScript(meta(), '');
  assert.equal(packedSource(code), '');
  assert.equal(readScriptMeta(code).enabled, true);
});

test('patchScriptEnabled: only line 2 changes; the source is identical', () => {
  const source = '--[[ user comment ]]\nwhile true do wait() end\n"enabled":true\n\u00e9\u{1F600}';
  const code = packScript(meta({ name: 'n]]', findings: ['loop_without_yield'] }), source);
  const patched = patchScriptEnabled(code, false);
  assert.notEqual(patched, code);
  const before = lines(code);
  const after = lines(patched);
  assert.equal(after[0], before[0]);
  assert.equal(after[2], before[2]);
  assert.deepEqual(after.slice(3), before.slice(3));
  assert.equal(packedSource(patched), source);
  assert.deepEqual(readScriptMeta(patched), { ...meta({ name: 'n]]', findings: ['loop_without_yield'] }), enabled: false });
  // already disabled: untouched; and back again restores the original text
  assert.equal(patchScriptEnabled(patched, false), patched);
  assert.equal(patchScriptEnabled(patched, true), code);
});

test('readScriptMeta: refuses code that is not a packed script', () => {
  for (const bad of ['print(1)', '--[[\n{"enabled":true}\n]=]\nx', '--[[\nnot json\n]]\n', '--[[\n[1]\n]]\n', '--[[\n{"name":"x"}\n]]\n', '--[x[\n{"enabled":true}\n]x]\n']) {
    assert.throws(() => readScriptMeta(bad), (error: unknown) => error instanceof ProjectError && error.code === 'bad_packed_script', bad);
  }
});

// ---------- script modes ----------

function sampleScripts(): ProjectScript[] {
  return [
    { id: '1', name: 'On', class: 'Script', path: 'W.On', code: packScript(meta({ id: '1', name: 'On' }), 'print(1)') },
    { id: '2', name: 'Off', class: 'Script', path: 'W.Off', code: packScript(meta({ id: '2', name: 'Off', enabled: false }), 'print(2)') },
    { id: '3', name: 'Mod', class: 'ModuleScript', path: 'W.Mod', code: packScript(meta({ id: '3', name: 'Mod', class: 'ModuleScript' }), 'return {}') },
  ];
}

test('applyScriptsMode: disabled sets enabled false everywhere and keeps every source', () => {
  const scripts = sampleScripts();
  const result = applyScriptsMode(scripts, 'disabled');
  assert.equal(result.length, 3);
  for (const [i, script] of result.entries()) {
    assert.equal(readScriptMeta(script.code).enabled, false);
    assert.equal(packedSource(script.code), packedSource(scripts[i]!.code));
    assert.equal(script.path, scripts[i]!.path);
  }
});

test('applyScriptsMode: enabled keeps each script as the map has it', () => {
  const result = applyScriptsMode(sampleScripts(), 'enabled');
  assert.deepEqual(result.map((s) => readScriptMeta(s.code).enabled), [true, false, true]);
  assert.deepEqual(result, sampleScripts());
});

test('applyScriptsMode: skip empties scripts[]', () => {
  assert.deepEqual(applyScriptsMode(sampleScripts(), 'skip'), []);
});

test('parseScriptsMode: default disabled, the three values, nothing else', () => {
  assert.equal(parseScriptsMode(undefined), 'disabled');
  for (const mode of ['disabled', 'enabled', 'skip']) assert.equal(parseScriptsMode(mode), mode);
  for (const bad of ['Disabled', '', null, 1, 'none']) {
    assert.throws(() => parseScriptsMode(bad), (error: unknown) => error instanceof ProjectError && error.code === 'bad_scripts_mode');
  }
  assert.throws(() => applyScriptsMode([], 'nope' as never), ProjectError);
});

test('projectTitle: blank title falls back to the file name without extension', () => {
  assert.equal(projectTitle('My Game', 'x.rbxl'), 'My Game');
  assert.equal(projectTitle('  ', 'Castle Siege.rbxl'), 'Castle Siege');
  assert.equal(projectTitle('', 'dir/sub\\place.v2.rbxlx'), 'place.v2');
  assert.equal(projectTitle('', '.rbxl'), 'Untitled');
  assert.equal(projectTitle('', 'dir/ .rbxm'), 'Untitled');
  assert.equal(projectTitle('', 'no extension'), 'no extension');
  assert.equal(projectTitle('', ''), 'Untitled');
});

// ---------- scene ----------

const ROTATED_90_Y: [[number, number, number], [number, number, number], [number, number, number]] = [[0, 0, 1], [0, 1, 0], [-1, 0, 0]];

function handPlace() {
  return handDom([
    {
      class: 'Workspace',
      children: [
        { class: 'Camera' , children: [part('CameraPart', [0, 0, 0], [1, 1, 1])] },
        { class: 'Terrain' },
        {
          class: 'Model',
          name: 'House',
          children: [
            {
              ...part('Wall', [1, 2, 3], [4, 5, 6], {
                Color3uint8: ['Color3uint8', [10, 20, 30]], Material: ['Enum', 848], Transparency: ['Float32', 0.30000001192092896],
                Anchored: ['Bool', true], CanCollide: ['Bool', false], shape: ['Enum', 1],
              }, 'Part', ROTATED_90_Y),
              children: [
                { class: 'Decal', props: { Texture: ['String', 'rbxassetid://21'], Face: ['Enum', 5] } },
                { class: 'Weld', children: [part('Nested', [0, 0, 0], [1, 1, 1])] },
              ],
            },
            { class: 'Script', props: { Source: ['String', 'print(1)'] } },
            { class: 'Folder', name: 'Empty' },
          ],
        },
        part('Ball', [0, 10, 0], [2, 2, 2], { shape: ['Enum', 0], BrickColor: ['BrickColor', 21] }),
        part('Mesh', [0, 0, 0], [1, 1, 1], { MeshId: ['String', 'http://www.roblox.com/asset/?id=22'], TextureID: ['String', 'rbxasset://textures/x.png'] }, 'MeshPart'),
        part('Union', [0, 0, 0], [1, 1, 1], { AssetId: ['String', 'rbxassetid://23'] }, 'UnionOperation'),
        {
          ...part('Head', [0, 0, 0], [1, 1, 1]),
          children: [{ class: 'SpecialMesh', props: { MeshType: ['Enum', 5], MeshId: ['String', 'rbxassetid://24'], TextureId: ['String', 'rbxassetid://25'], Scale: ['Vector3', [2, 2, 2]] } }],
        },
        part('Wedge', [0, 0, 0], [1, 1, 1], {}, 'WedgePart'),
      ],
    },
    { class: 'ServerStorage', children: [part('Stored', [0, 0, 0], [1, 1, 1])] },
  ]);
}

test('buildScene: groups, parts, nesting through non-part instances, Camera and Terrain left out', () => {
  const scene = buildScene(handPlace());
  assert.equal(scene.root, 'Workspace');
  assert.equal(scene.parts, 7); // Wall, Nested, Ball, Mesh, Union, Head, Wedge
  assert.equal(scene.groups, 2); // House, Empty
  assert.deepEqual(scene.children.map((n) => n.name), ['House', 'Ball', 'Mesh', 'Union', 'Head', 'Wedge']);
  const house = scene.children[0] as SceneGroup;
  assert.equal(house.type, 'group');
  assert.deepEqual(house.children.map((n) => `${n.type}:${n.name}`), ['part:Wall', 'group:Empty']);
  const wall = house.children[0] as ScenePart;
  assert.deepEqual(wall.children?.map((n: SceneNode) => n.name), ['Nested']);
});

test('buildScene: part fields', () => {
  const scene = buildScene(handPlace());
  const byName = new Map<string, ScenePart>();
  const stack: SceneNode[] = [...scene.children];
  while (stack.length) {
    const node = stack.pop()!;
    if (node.type === 'part') byName.set(node.name, node);
    stack.push(...(node.children ?? []));
  }
  const wall = byName.get('Wall')!;
  assert.deepEqual(wall.position, [1, 2, 3]);
  assert.deepEqual(wall.rotation, ROTATED_90_Y);
  assert.deepEqual(wall.size, [4, 5, 6]);
  assert.equal(wall.shape, 'Block');
  assert.deepEqual(wall.color, [10, 20, 30]);
  assert.deepEqual(wall.material, { value: 848, name: 'Brick' });
  assert.equal(wall.transparency, 0.3);
  assert.equal(wall.anchored, true);
  assert.equal(wall.can_collide, false);
  assert.deepEqual(wall.textures, [{ id: '21', class: 'Decal', property: 'Texture', face: 'Front' }]);
  assert.equal(wall.mesh, undefined);

  const ball = byName.get('Ball')!;
  assert.equal(ball.shape, 'Ball');
  assert.deepEqual(ball.color, [196, 40, 28]); // BrickColor 21, Bright red
  assert.equal(ball.can_collide, true);
  assert.equal(ball.anchored, false);
  assert.equal(ball.textures, undefined);

  const mesh = byName.get('Mesh')!;
  assert.equal(mesh.shape, 'Mesh');
  assert.deepEqual(mesh.mesh, { id: '22' });
  assert.deepEqual(mesh.textures, [{ builtin: 'textures/x.png', class: 'MeshPart', property: 'TextureID' }]);
  assert.deepEqual(mesh.color, [163, 162, 165]);

  assert.deepEqual(byName.get('Union')!.mesh, { id: '23' });
  assert.equal(byName.get('Union')!.shape, 'Union');
  assert.deepEqual(byName.get('Head')!.mesh, { id: '24', mesh_type: 'FileMesh', scale: [2, 2, 2] });
  assert.deepEqual(byName.get('Head')!.textures, [{ id: '25', class: 'SpecialMesh', property: 'TextureId' }]);
  assert.equal(byName.get('Wedge')!.shape, 'Wedge');
  assert.equal(byName.has('Stored'), false);
  assert.equal(byName.has('CameraPart'), false);
});

test('buildScene: a model file puts its top-level instances in the scene', () => {
  const scene = buildScene(handDom([{ class: 'Model', name: 'Gun', children: [part('Barrel', [0, 0, 0], [1, 1, 1])] }]));
  assert.equal(scene.root, null);
  assert.equal(scene.parts, 1);
  assert.equal((scene.children[0] as SceneGroup).children[0]!.name, 'Barrel');
});

// ---------- the document ----------

const OUTCOMES: AssetOutcome[] = [
  { id: '21', kind: 'image', ok: true, sha256: 'a'.repeat(64), size: 10, contentType: 'image/png', cached: false },
  { id: '22', kind: 'mesh', ok: false, reason: 'not_found', status: 404 },
  { id: '23', kind: 'union', ok: false, reason: 'no_credentials' },
];

function scriptedDom() {
  return handDom([
    {
      class: 'Workspace',
      children: [
        { class: 'Script', name: 'Loop', props: { Source: ['String', 'while true do end\n'], Disabled: ['Bool', false], RunContext: ['Enum', 1] } },
        { class: 'Script', name: 'Off', props: { Source: ['String', 'print(1)'], Disabled: ['Bool', true] } },
        part('P', [0, 0, 0], [1, 1, 1]),
      ],
    },
    { class: 'ReplicatedStorage', children: [{ class: 'ModuleScript', name: 'M', props: { Source: ['String', 'return {}'] } }] },
  ]);
}

function options(scriptsMode: 'disabled' | 'enabled' | 'skip') {
  return {
    title: '', owner: 'u1', createdAt: new Date(Date.UTC(2025, 0, 2, 3, 4, 5)), previewHash: 'f'.repeat(64),
    fileName: 'My Place.rbxl', fileSize: 1234, scriptsMode, assets: OUTCOMES,
  };
}

test('buildProject: the versioned document, JSON-serialisable', () => {
  const doc = buildProject(scriptedDom(), options('enabled'));
  assert.equal(doc.format, 'rbxl-import/project');
  assert.equal(doc.version, 2);
  assert.equal(doc.title, 'My Place');
  assert.equal(doc.owner, 'u1');
  assert.equal(doc.created_at, '2025-01-02T03:04:05.000Z');
  assert.deepEqual(doc.source, { preview_hash: 'f'.repeat(64), file_name: 'My Place.rbxl', format: 'binary', size: 1234 });
  assert.equal(doc.scene.parts, 1);
  assert.deepEqual(doc.assets, [
    { id: '21', kind: 'image', ok: true, sha256: 'a'.repeat(64), size: 10, content_type: 'image/png' },
    { id: '22', kind: 'mesh', ok: false, reason: 'not_found', status: 404 },
    { id: '23', kind: 'union', ok: false, reason: 'no_credentials' },
  ]);
  assert.deepEqual(JSON.parse(JSON.stringify(doc)), doc);

  assert.deepEqual(doc.scripts.map((s) => [s.name, s.class, s.path]), [
    ['Loop', 'Script', 'Workspace.Loop'],
    ['Off', 'Script', 'Workspace.Off'],
    ['M', 'ModuleScript', 'ReplicatedStorage.M'],
  ]);
  // Each entry names its instance, in the entry and in the metadata line.
  const byId = new Map(doc.instances.map((i) => [i.id, i]));
  for (const script of doc.scripts) {
    assert.equal(byId.get(script.id)?.class, script.class);
    assert.equal(byId.get(script.id)?.name, script.name);
    assert.equal(readScriptMeta(script.code).id, script.id);
  }
  const loop = readScriptMeta(doc.scripts[0]!.code);
  assert.equal(loop.run_context, 'Server');
  assert.equal(loop.enabled, true);
  assert.deepEqual(loop.findings, ['loop_without_yield']);
  assert.equal(packedSource(doc.scripts[0]!.code), 'while true do end\n');
  assert.equal(readScriptMeta(doc.scripts[1]!.code).enabled, false);
  assert.equal(readScriptMeta(doc.scripts[2]!.code).enabled, true);
});

test('buildProject: the three script modes', () => {
  const disabled = buildProject(scriptedDom(), options('disabled'));
  assert.equal(disabled.scripts_mode, 'disabled');
  assert.deepEqual(disabled.scripts.map((s) => readScriptMeta(s.code).enabled), [false, false, false]);
  assert.equal(packedSource(disabled.scripts[0]!.code), 'while true do end\n');

  const enabled = buildProject(scriptedDom(), options('enabled'));
  assert.deepEqual(enabled.scripts.map((s) => readScriptMeta(s.code).enabled), [true, false, true]);

  const skipped = buildProject(scriptedDom(), { ...options('skip'), title: 'Named' });
  assert.deepEqual(skipped.scripts, []);
  assert.equal(skipped.title, 'Named');
  assert.equal(skipped.scene.parts, 1);
  // skip: script instances are left out of the tree too, and named.
  assert.deepEqual(skipped.instances.filter((i) => /Script$/.test(i.class)), []);
  assert.deepEqual(skipped.import.not_imported.map((e) => [e.class, e.count]).sort(), [['ModuleScript', 1], ['Script', 2]]);
});

test('buildProject: finding codes come from the analysis when this scanner found them and they fit the map; otherwise scripts are scanned', () => {
  const dom = scriptedDom();
  const { scriptCodes } = analyzeDom(dom, { fileName: 'p.rbxl', fileSize: 1 });
  assert.equal(scriptCodes.bits.length, 3);
  assert.equal(scriptCodes.scanner, SCANNER_VERSION);
  const findingsOf = (codes?: unknown) =>
    buildProject(dom, { ...options('enabled'), ...(codes === undefined ? {} : { scriptCodes: codes as ScriptCodes }) })
      .scripts.map((s) => readScriptMeta(s.code).findings);
  const withBits = (bits: unknown) => ({ scanner: SCANNER_VERSION, bits });
  const scanned = findingsOf();
  assert.deepEqual(scanned[0], ['loop_without_yield']);
  assert.deepEqual(findingsOf(scriptCodes), scanned);
  // Several codes come back in the order a scan gives them: hang risks first, then by priority.
  const bits = (codes: string[]) => codes.reduce((sum, code) => sum | (1 << FINDING_CODES.indexOf(code as never)), 0);
  const marked = [bits(['legacy_method', 'platform_service', 'loop_without_yield']), 0, 0];
  assert.deepEqual(findingsOf(withBits(marked))[0], ['loop_without_yield', 'platform_service', 'legacy_method']);
  // Codes another scanner found (a deploy since the analysis) are not used.
  assert.deepEqual(findingsOf({ scanner: 'an-older-scanner', bits: marked }), scanned);
  const wrongBits = [[0, 0], [0, 0, 0, 0], [-1, 0, 0], [0.5, 0, 0], [1 << FINDING_CODES.length, 0, 0], [2 ** 32, 0, 0], ['0', 0, 0], null];
  for (const wrong of [...wrongBits.map(withBits), marked, null, 'x']) {
    assert.deepEqual(findingsOf(wrong), scanned, JSON.stringify(wrong));
  }
});

// ---------- real places ----------

test('buildProject over the real places: scene and scripts agree with the report', async () => {
  for (const file of ['booga.rbxl', 'rocket-arena-2006.rbxl', 'roblox-statemachine-demo.rbxl', 'roblox-dialog-system.rbxlx', 'roblox-multiblaster.rbxm']) {
    const bytes = await readFile(join(PLACES_DIR, file));
    const dom = decode(bytes);
    const { report, assets } = analyzeDom(dom, { fileName: file, fileSize: bytes.length });
    const outcomes: AssetOutcome[] = assets.map(({ id, kind }) => ({ id, kind, ok: false, reason: 'no_credentials' }));
    const doc = buildProject(dom, { ...options('disabled'), fileName: file, fileSize: bytes.length, assets: outcomes });
    assert.equal(doc.scripts.length, report.scripts_total, file);
    assert.ok(doc.scripts.every((s) => readScriptMeta(s.code).enabled === false), file);
    assert.ok(doc.scene.parts <= report.parts_total, file);
    assert.ok(doc.scene.parts > 0, file);
    assert.equal(doc.assets.length, report.assets_total, file);
    // every mesh/texture id the scene links to is one of the document's assets
    const ids = new Set(doc.assets.map((a) => a.id));
    const stack: SceneNode[] = [...doc.scene.children];
    while (stack.length) {
      const node = stack.pop()!;
      if (node.type === 'part') {
        if (node.mesh?.id) assert.ok(ids.has(node.mesh.id), `${file}: mesh ${node.mesh.id}`);
        for (const t of node.textures ?? []) if ('id' in t) assert.ok(ids.has(t.id), `${file}: texture ${t.id}`);
      }
      stack.push(...(node.children ?? []));
    }
    const json = JSON.stringify(doc);
    assert.deepEqual(JSON.parse(json).scripts.length, report.scripts_total);
  }
});
