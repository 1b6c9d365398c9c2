import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeXml } from '../src/parser/xml/index.js';
import { decodeBinary } from '../src/parser/binary.js';
import { instances, roots, type Dom, type InstanceView } from '../src/parser/dom.js';
import { DecodeError } from '../src/parser/errors.js';
import type { Property } from '../src/parser/values.js';
import { compareDoms, valuesEqual, walk, type Skip } from './support/compare-dom.js';
import { CORPUS_DIR, PLACES_DIR, TEST_FILES_DIR } from './support/paths.js';

function xmlFilesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...xmlFilesUnder(path));
    else if (/\.rbx[ml]x$/.test(entry.name)) out.push(path);
  }
  return out.sort();
}

const bytesOf = (text: string): Uint8Array => new TextEncoder().encode(text);

/** A one-Item model whose <Properties> hold `properties`. */
function model(properties: string, { className = 'Folder', extra = '' } = {}): Uint8Array {
  return bytesOf(`<roblox version="4"><Item class="${className}" referent="RBX1"><Properties>${properties}</Properties></Item>${extra}</roblox>`);
}

function onlyInstance(dom: Dom): InstanceView {
  assert.equal(dom.count, 1);
  return dom.instance(0);
}

function property(properties: string, name: string, options?: { className?: string; extra?: string }): Property | undefined {
  return onlyInstance(decodeXml(model(properties, options))).property(name);
}

function byName(dom: Dom, name: string): InstanceView {
  const found = [...instances(dom)].find((instance) => instance.name === name);
  assert.ok(found, `no instance named ${name}`);
  return found;
}

/** Asserts that decoding throws a DecodeError (never another error type) and returns it. */
function decodeError(bytes: Uint8Array, limits?: Parameters<typeof decodeXml>[1]): DecodeError {
  try {
    decodeXml(bytes, limits);
  } catch (error) {
    assert.ok(error instanceof DecodeError, `expected a DecodeError, got ${String(error)}`);
    assert.equal(error.chunk, 'xml');
    return error;
  }
  assert.fail('decoding succeeded');
}

const f32 = Math.fround;

describe('XML corpus files', () => {
  const files = xmlFilesUnder(CORPUS_DIR);

  it('finds the XML files of the corpus', () => {
    assert.ok(files.length >= 40, `only ${files.length} XML files`);
    assert.ok(files.includes(join(PLACES_DIR, 'roblox-dialog-system.rbxlx')));
  });

  for (const file of files) {
    it(`decodes ${file.slice(CORPUS_DIR.length + 1)}`, () => {
      const bytes = readFileSync(file);
      const dom = decodeXml(bytes);
      const text = bytes.toString('utf8');
      assert.equal(dom.format, 'xml');
      assert.equal(dom.count, text.match(/<Item /g)?.length ?? 0);
      assert.ok(dom.count > 0);
      assert.equal([...instances(dom)].filter((instance) => !instance.parent).length, roots(dom).length);
      assert.equal(dom.sharedStrings.length, text.match(/<SharedString md5=/g)?.length ?? 0);
      for (const instance of instances(dom)) {
        assert.equal(instance.referent, instance.row);
        assert.equal(dom.rowOf(instance.row), instance.row);
        assert.equal(instance.name, instance.get('Name') ?? '');
      }
      if (!file.endsWith('xml-unknown-type.rbxmx')) assert.deepEqual(dom.warnings, []);
    });
  }

  it('reads the dialog-system place: referents, scripts, SharedStrings, wide integers', () => {
    const bytes = readFileSync(join(PLACES_DIR, 'roblox-dialog-system.rbxlx'));
    const text = bytes.toString('utf8');
    const dom = decodeXml(bytes);
    assert.equal(dom.count, 631);
    assert.ok(roots(dom).map((root) => dom.className(root)).includes('Workspace'));

    const workspace = dom.instance(roots(dom).find((root) => dom.className(root) === 'Workspace')!);
    const camera = workspace.property('CurrentCamera');
    assert.equal(camera?.type, 'Ref');
    assert.equal(dom.className(dom.rowOf(camera.value as number)), 'Camera');
    assert.equal(dom.xmlReferents[camera.value as number], 'RBX9169facd800e4e04933a1b562d36b11e');

    const scripts = [...instances(dom)].filter((instance) => /^(Script|LocalScript|ModuleScript)$/.test(instance.className));
    assert.equal(scripts.length, 17);
    const source = scripts.find((script) => (script.get('Source') as string).includes('Tuneable settings'))!.property('Source');
    assert.equal(source?.type, 'String');
    assert.ok((source.value as string).startsWith('--!strict\n-- Tuneable settings for the dialog system.\n\n'));

    // Tags point at a SharedString; its bytes are the definition's base64.
    const tags = workspace.property('Tags')!;
    assert.equal(tags.type, 'SharedString');
    const key = text.match(/<SharedString name="Tags">([^<]+)<\/SharedString>/)![1]!;
    const definition = new RegExp(`<SharedString md5="${key.replace(/[+/=]/g, '\\$&')}">([^<]*)</SharedString>`).exec(text)![1]!;
    assert.deepEqual(Buffer.from(dom.sharedStrings[tags.value as number]!), Buffer.from(definition, 'base64'));

    const withAssetId = [...instances(dom)].find((instance) => instance.get('SourceAssetId') === 112106911797100);
    assert.ok(withAssetId, 'int64 112106911797100 read as a number');
    assert.equal(workspace.property('UniqueId')?.value, '766756f93d4eb92d0a015d70000007f9');
    assert.deepEqual(workspace.property('Capabilities'), { type: 'SecurityCapabilities', value: 0 });
  });

  it('keeps unknown property types as warnings (xml-unknown-type)', () => {
    const dom = decodeXml(readFileSync(join(TEST_FILES_DIR, 'xml-unknown-type.rbxmx')));
    const value = onlyInstance(dom);
    assert.equal(value.name, 'A NumberValue');
    assert.equal(value.property('hello'), undefined);
    assert.deepEqual(dom.warnings, ['property of unknown type <Baloney> skipped: NumberValue.hello']);
    assert.deepEqual(dom.metadata, [['ExplicitAutoJoints', 'true']]);
  });

  it('reads infinities and NaN in CFrames (cframe-case-mixture)', () => {
    const dom = decodeXml(readFileSync(join(TEST_FILES_DIR, 'cframe-case-mixture.rbxmx')));
    const value = dom.instance(1).property('Value')!;
    assert.equal(value.type, 'CFrame');
    assert.ok(valuesEqual(value.value, {
      position: [0.15625, -0.15625, f32(0.100000001)],
      orientation: [[f32(-0.100000001), 0, 0], [1337, -1337, Infinity], [-Infinity, NaN, NaN]],
    }));
    assert.deepEqual(dom.instance(0).property('Value')?.value, { position: [0, 0, 0], orientation: [[1, 0, 0], [0, 0, -1], [0, 1, 0]] });
  });

  it('reads an empty <Font> as the default font (empty-font)', () => {
    const label = onlyInstance(decodeXml(readFileSync(join(TEST_FILES_DIR, 'empty-font.rbxmx'))));
    assert.deepEqual(label.property('FontFace'), {
      type: 'Font',
      value: { family: 'rbxasset://fonts/families/SourceSansPro.json', weight: 'Regular', style: 'Normal', cachedFaceId: null },
    });
  });

  it('resolves Refs to earlier and later Items (ref-child, ref-parent)', () => {
    for (const name of ['ref-child', 'ref-parent']) {
      const dom = decodeXml(readFileSync(join(TEST_FILES_DIR, `${name}.rbxmx`)));
      const objectValue = [...instances(dom)].find((instance) => instance.className === 'ObjectValue')!;
      const target = dom.rowOf(objectValue.get('Value') as number);
      assert.equal(dom.className(target), 'Folder', name);
    }
  });

  it('reads new-style Content and BrickColor ints with the types binary files use', () => {
    const images = [...instances(decodeXml(readFileSync(join(TEST_FILES_DIR, 'imagelabel-content.rbxmx'))))];
    assert.deepEqual(images.map((image) => image.property('ImageContent')), [
      { type: 'Content', value: { Uri: 'rbxasset://textures/ui/GuiImagePlaceholder.png' } },
      { type: 'Content', value: { Uri: 'rbxasset://textures/SpawnLocation.png' } },
      { type: 'Content', value: 'None' },
    ]);
    const bricks = [...instances(decodeXml(readFileSync(join(TEST_FILES_DIR, 'three-brickcolorvalues.rbxmx'))))];
    assert.deepEqual(bricks.map((brick) => brick.property('Value')?.type), ['BrickColor', 'BrickColor', 'BrickColor']);
    const colors = [...instances(decodeXml(readFileSync(join(TEST_FILES_DIR, 'three-color3values.rbxmx'))))];
    assert.deepEqual(colors[1]!.property('Value'), { type: 'Color3', value: [1, f32(0.70588237), f32(0.0784313753)] });
    const number = onlyInstance(decodeXml(readFileSync(join(TEST_FILES_DIR, 'funny-numbervalue.rbxmx'))));
    assert.deepEqual(number.property('Value'), { type: 'Float64', value: 1.2345600000000001017 });
  });
});

/** Names with both a binary and an XML copy in rbx-test-files. */
function pairs(): { name: string; binary: string; xml: string }[] {
  const names = readdirSync(TEST_FILES_DIR);
  return names
    .filter((file) => /\.rbx[ml]$/.test(file) && names.includes(`${file}x`))
    .map((file) => ({ name: file.replace(/\.rbx[ml]$/, ''), binary: join(TEST_FILES_DIR, file), xml: join(TEST_FILES_DIR, `${file}x`) }));
}

/**
 * Differences inherent to how the copies were written, each as narrow as possible:
 * - Studio's XML writer prints NumberSequence/ColorSequence numbers with 6 significant
 *   digits (two-particleemitters: "0.0803674" where the binary float is 0.080367394),
 *   so their keypoints agree to a relative 1e-5, not exactly.
 * - default-inserted-part: the two copies were saved with the part at different
 *   positions, so Part.CFrame differs in that file only.
 */
function allowInherent(fileName: string) {
  return (className: string, propertyName: string, a: Property, b: Property): boolean | undefined => {
    if (fileName === 'default-inserted-part' && className === 'Part' && propertyName === 'CFrame') return true;
    if (a.type === b.type && (a.type === 'NumberSequence' || a.type === 'ColorSequence')) return closeTo(a.value, b.value, 1e-5);
    return undefined;
  };
}

function closeTo(a: unknown, b: unknown, relative: number): boolean {
  if (typeof a === 'number' && typeof b === 'number') return a === b || Math.abs(a - b) <= relative * Math.max(Math.abs(a), Math.abs(b));
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return a === b;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length &&
    keys.every((key) => closeTo((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], relative));
}

/** Binary copies of places also hold Studio's root-level "FilteredSelection" Instances, which XML copies leave out. */
const skipStudioSelection: Skip = (dom, row) =>
  dom.parent(row) === -1 && dom.className(row) === 'Instance' && dom.name(row) === 'FilteredSelection';

describe('binary and XML copies decode to the same DOM', () => {
  const found = pairs();

  it('finds the pairs', () => assert.ok(found.length >= 38, `only ${found.length} pairs`));

  for (const { name, binary, xml } of found) {
    it(name, () => {
      const fromBinary = decodeBinary(readFileSync(binary));
      const fromXml = decodeXml(readFileSync(xml));
      assert.deepEqual(compareDoms(fromBinary, fromXml, { skip: skipStudioSelection, allow: allowInherent(name) }), []);
      // Both sides carry the same property names, so the comparison above covered every property.
      const names = (dom: Dom): string[] =>
        walk(dom, skipStudioSelection).map((row) => dom.instance(row).propertyNames().map((p) => `${dom.className(row)}.${p}`).sort().join(','));
      assert.deepEqual(names(fromXml), names(fromBinary));
    });
  }

  it('the comparison sees a changed value, a changed name and a missing child', () => {
    const original = decodeXml(readFileSync(join(TEST_FILES_DIR, 'three-nested-folders.rbxmx')));
    const text = readFileSync(join(TEST_FILES_DIR, 'three-nested-folders.rbxmx'), 'utf8');
    const renamed = decodeXml(bytesOf(text.replace(/(<string name="Name">)[^<]*/, '$1Other')));
    assert.ok(compareDoms(original, renamed).length > 0);
    const rays = decodeXml(readFileSync(join(TEST_FILES_DIR, 'two-ray-values.rbxmx')));
    const raysText = readFileSync(join(TEST_FILES_DIR, 'two-ray-values.rbxmx'), 'utf8');
    const moved = decodeXml(bytesOf(raysText.replace(/<X>[^<]*<\/X>/, '<X>12345</X>')));
    assert.equal(compareDoms(rays, moved).length, 1);
    const lastItem = text.lastIndexOf('<Item ');
    const pruned = decodeXml(bytesOf(text.slice(0, lastItem) + text.slice(text.indexOf('</Item>', lastItem) + 7)));
    assert.ok(compareDoms(original, pruned).length > 0);
  });
});

describe('property types', () => {
  it('reads strings with entities, CDATA and whitespace kept', () => {
    assert.deepEqual(property('<string name="S">  a &lt;b&gt; &amp; &quot;c&quot; &#x41;&#66;&#13; </string>', 'S'), { type: 'String', value: '  a <b> & "c" AB\r ' });
    assert.deepEqual(property('<ProtectedString name="Source"><![CDATA[print("&lt;")\n]]>-- &amp;<![CDATA[]]></ProtectedString>', 'Source'), { type: 'String', value: 'print("&lt;")\n-- &' });
    assert.deepEqual(property('<string name="S"></string>', 'S'), { type: 'String', value: '' });
    assert.deepEqual(property('<string name="S"/>', 'S'), { type: 'String', value: '' });
    assert.deepEqual(property('<string name="S">&unknown;</string>', 'S'), { type: 'String', value: '&unknown;' });
    // References to what is not a character stay as written: NUL, a surrogate on its own, past U+10FFFF.
    assert.deepEqual(
      property('<string name="S">&#0;&#xD800; &#xdfff;&#55296;&#x110000;&#x10FFFF;&#xD7FF;&#xE000;&#xDE00;&#xD83D;</string>', 'S'),
      { type: 'String', value: '&#0;&#xD800; &#xdfff;&#55296;&#x110000;\u{10FFFF}\uD7FF\uE000&#xDE00;&#xD83D;' },
    );
    // A high and a low surrogate's references in a row are the character they make, hex or decimal.
    assert.deepEqual(
      property('<string name="S">a&#xD83D;&#xDE00;b &#55357;&#56832;&#xD83D;x&#xDE00;</string>', 'S'),
      { type: 'String', value: 'a\u{1F600}b \u{1F600}&#xD83D;x&#xDE00;' },
    );
  });

  it('reads BinaryString as text when it is UTF-8, else as base64', () => {
    assert.deepEqual(property('<BinaryString name="B">Um9qbyBpcyBjb29sIQ==</BinaryString>', 'B'), { type: 'String', value: 'Rojo is cool!' });
    assert.deepEqual(property('<BinaryString name="B"><![CDATA[Um9qbyBp\ncyBjb29sIQ==]]></BinaryString>', 'B'), { type: 'String', value: 'Rojo is cool!' });
    assert.deepEqual(property('<BinaryString name="B">/w D/\n</BinaryString>', 'B'), { type: 'String', value: { base64: '/wD/' } });
    assert.deepEqual(property('<BinaryString name="B"></BinaryString>', 'B'), { type: 'String', value: '' });
    assert.match(decodeError(model('<BinaryString name="B">not*base64</BinaryString>')).message, /not base64.*property Folder\.B/);
  });

  it('reads numbers of every width', () => {
    assert.deepEqual(property('<int name="I">-2147483648</int>', 'I'), { type: 'Int32', value: -2147483648 });
    assert.deepEqual(property('<int name="I">-0</int>', 'I'), { type: 'Int32', value: 0 });
    assert.deepEqual(property('<int64 name="L">-559038737</int64>', 'L'), { type: 'Int64', value: -559038737 });
    assert.deepEqual(property('<int64 name="L">9223372036854775807</int64>', 'L'), { type: 'Int64', value: '9223372036854775807' });
    assert.deepEqual(property('<int64 name="L">-9007199254740991</int64>', 'L'), { type: 'Int64', value: -9007199254740991 });
    assert.deepEqual(property('<int64 name="L">-9007199254740992</int64>', 'L'), { type: 'Int64', value: '-9007199254740992' });
    assert.deepEqual(property('<float name="F">0.1</float>', 'F'), { type: 'Float32', value: f32(0.1) });
    assert.deepEqual(property('<float name="F">13e37</float>', 'F'), { type: 'Float32', value: f32(13e37) });
    assert.deepEqual(property('<double name="D">0.1</double>', 'D'), { type: 'Float64', value: 0.1 });
    assert.deepEqual(property('<float name="F">INF</float>', 'F'), { type: 'Float32', value: Infinity });
    assert.deepEqual(property('<float name="F">+INF</float>', 'F'), { type: 'Float32', value: Infinity });
    assert.deepEqual(property('<double name="D">-INF</double>', 'D'), { type: 'Float64', value: -Infinity });
    assert.ok(Number.isNaN(property('<float name="F">NAN</float>', 'F')!.value));
    assert.ok(Number.isNaN(property('<double name="D">nan</double>', 'D')!.value));
    assert.ok(Object.is(property('<float name="F">-0</float>', 'F')!.value, -0));
    assert.deepEqual(property('<token name="E">3</token>', 'E'), { type: 'Enum', value: 3 });
    assert.deepEqual(property('<bool name="B">TRUE</bool>', 'B'), { type: 'Bool', value: true });
    assert.deepEqual(property('<SecurityCapabilities name="C">18446744073709551615</SecurityCapabilities>', 'C'), { type: 'SecurityCapabilities', value: '18446744073709551615' });
    assert.deepEqual(property('<SecurityCapabilities name="C">4096</SecurityCapabilities>', 'C'), { type: 'SecurityCapabilities', value: 4096 });
  });

  it('types BrickColor ints as BrickColor', () => {
    assert.deepEqual(property('<int name="Value">194</int>', 'Value', { className: 'BrickColorValue' }), { type: 'BrickColor', value: 194 });
    assert.deepEqual(property('<int name="TeamColor">1</int>', 'TeamColor', { className: 'Team' }), { type: 'BrickColor', value: 1 });
    assert.deepEqual(property('<int name="Value">194</int>', 'Value', { className: 'IntValue' }), { type: 'Int32', value: 194 });
  });

  it('reads vectors, CFrames, UDims, Rect, Ray, Faces and Axes', () => {
    assert.deepEqual(property('<Vector2 name="V"><X>INF</X><Y>1337</Y></Vector2>', 'V'), { type: 'Vector2', value: [Infinity, 1337] });
    assert.deepEqual(property('<Vector3 name="V"><Z>-1337</Z><X>-INF</X><Y>0.15625</Y></Vector3>', 'V'), { type: 'Vector3', value: [-Infinity, 0.15625, -1337] });
    assert.deepEqual(property('<Vector3int16 name="V"><X>1337</X><Y>0</Y><Z>-1337</Z></Vector3int16>', 'V'), { type: 'Vector3int16', value: [1337, 0, -1337] });
    const cframe = '<X>1</X><Y>2</Y><Z>3</Z><R00>1</R00><R01>0</R01><R02>0</R02><R10>0</R10><R11>0</R11><R12>-1</R12><R20>0</R20><R21>1</R21><R22>0</R22>';
    const expected = { position: [1, 2, 3], orientation: [[1, 0, 0], [0, 0, -1], [0, 1, 0]] };
    assert.deepEqual(property(`<CoordinateFrame name="C">${cframe}</CoordinateFrame>`, 'C'), { type: 'CFrame', value: expected });
    assert.deepEqual(property(`<OptionalCoordinateFrame name="C"><CFrame>${cframe}</CFrame></OptionalCoordinateFrame>`, 'C'), { type: 'OptionalCFrame', value: expected });
    assert.deepEqual(property('<OptionalCoordinateFrame name="C"></OptionalCoordinateFrame>', 'C'), { type: 'OptionalCFrame', value: null });
    assert.deepEqual(property('<UDim name="U"><S>0.15625</S><O>1337</O></UDim>', 'U'), { type: 'UDim', value: [0.15625, 1337] });
    assert.deepEqual(property('<UDim2 name="U"><XS>0.15625</XS><XO>1337</XO><YS>-123</YS><YO>456</YO></UDim2>', 'U'), { type: 'UDim2', value: [[0.15625, 1337], [-123, 456]] });
    assert.deepEqual(property('<Rect2D name="R"><min><X>1</X><Y>2</Y></min><max><X>3</X><Y>4</Y></max></Rect2D>', 'R'), { type: 'Rect', value: [[1, 2], [3, 4]] });
    assert.deepEqual(property('<Ray name="R"><origin><X>1</X><Y>2</Y><Z>3</Z></origin><direction><X>-1</X><Y>-2</Y><Z>-3</Z></direction></Ray>', 'R'), { type: 'Ray', value: { origin: [1, 2, 3], direction: [-1, -2, -3] } });
    assert.deepEqual(property('<Faces name="F"><faces>42</faces></Faces>', 'F'), { type: 'Faces', value: ['Top', 'Left', 'Front'] });
    assert.deepEqual(property('<Axes name="A"><axes>5</axes></Axes>', 'A'), { type: 'Axes', value: ['X', 'Z'] });
  });

  it('reads colors, ranges, sequences and physical properties', () => {
    assert.deepEqual(property('<Color3 name="C"><R>INF</R><G>1337</G><B>0.15625</B></Color3>', 'C'), { type: 'Color3', value: [Infinity, 1337, 0.15625] });
    assert.deepEqual(property('<Color3 name="C">4284497952</Color3>', 'C'), { type: 'Color3', value: [f32(96 / 255), f32(64 / 255), f32(32 / 255)] });
    assert.deepEqual(property('<Color3uint8 name="C">4284497952</Color3uint8>', 'C'), { type: 'Color3uint8', value: [96, 64, 32] });
    assert.deepEqual(property('<NumberRange name="N">0.15625 1337 </NumberRange>', 'N'), { type: 'NumberRange', value: [0.15625, 1337] });
    assert.deepEqual(property('<NumberSequence name="N">0 6 3 1 4 2 </NumberSequence>', 'N'), {
      type: 'NumberSequence', value: { keypoints: [{ time: 0, value: 6, envelope: 3 }, { time: 1, value: 4, envelope: 2 }] },
    });
    assert.deepEqual(property('<ColorSequence name="C">0 0.5 0.25 0.125 0 1 1 1 1 0 </ColorSequence>', 'C'), {
      type: 'ColorSequence', value: { keypoints: [{ time: 0, color: [0.5, 0.25, 0.125] }, { time: 1, color: [1, 1, 1] }] },
    });
    assert.deepEqual(property('<PhysicalProperties name="P"><CustomPhysics>false</CustomPhysics></PhysicalProperties>', 'P'), { type: 'PhysicalProperties', value: 'Default' });
    assert.deepEqual(property('<PhysicalProperties name="P"><CustomPhysics>true</CustomPhysics><Density>1</Density><Friction>2</Friction><Elasticity>1</Elasticity><FrictionWeight>0.15625</FrictionWeight><ElasticityWeight>1.25</ElasticityWeight></PhysicalProperties>', 'P'), {
      type: 'PhysicalProperties',
      value: { density: 1, friction: 2, elasticity: 1, frictionWeight: 0.15625, elasticityWeight: 1.25, acousticAbsorption: 1 },
    });
    assert.match(decodeError(model('<NumberSequence name="N">0 1 </NumberSequence>')).message, /not a multiple of 3/);
  });

  it('reads content ids, Content, Font and UniqueId', () => {
    assert.deepEqual(property('<Content name="Texture"><url>rbxassetid://1</url></Content>', 'Texture'), { type: 'String', value: 'rbxassetid://1' });
    assert.deepEqual(property('<Content name="Texture"><null></null></Content>', 'Texture'), { type: 'String', value: '' });
    assert.deepEqual(property('<ContentId name="Texture"><url>rbxassetid://2</url></ContentId>', 'Texture'), { type: 'String', value: 'rbxassetid://2' });
    assert.deepEqual(property('<Content name="TextureContent"><null></null></Content>', 'TextureContent'), { type: 'Content', value: 'None' });
    assert.deepEqual(property('<Content name="TextureContent"><uri>rbxassetid://3</uri></Content>', 'TextureContent'), { type: 'Content', value: { Uri: 'rbxassetid://3' } });
    assert.deepEqual(property('<Content name="TextureContent"><Object>RBX1</Object></Content>', 'TextureContent'), { type: 'Content', value: { Object: 0 } });
    assert.deepEqual(property('<Font name="F"><Family><url>rbxasset://fonts/families/Arial.json</url></Family><Weight>700</Weight><Style>Italic</Style><CachedFaceId><url>rbxasset://fonts/arialbd.ttf</url></CachedFaceId></Font>', 'F'), {
      type: 'Font', value: { family: 'rbxasset://fonts/families/Arial.json', weight: 'Bold', style: 'Italic', cachedFaceId: 'rbxasset://fonts/arialbd.ttf' },
    });
    assert.deepEqual(property('<UniqueId name="U">44B188DACE632B4702E9C68D004815FC</UniqueId>', 'U'), { type: 'UniqueId', value: '44b188dace632b4702e9c68d004815fc' });
  });

  it('resolves Ref, SharedString and NetAssetRef through the file', () => {
    const shared = '<SharedStrings><SharedString md5="a2V5">aGVsbG8=</SharedString><SharedString md5="b3RoZXI=">AP8=</SharedString></SharedStrings>';
    const text = `<roblox version="4"><Meta name="ExplicitAutoJoints">true</Meta>
      <Item class="ObjectValue" referent="A"><Properties><string name="Name">a</string><Ref name="Value">B</Ref><Ref name="Empty">null</Ref><Ref name="Lost">RBXnowhere</Ref>
        <SharedString name="S">b3RoZXI=</SharedString><NetAssetRef name="N">a2V5</NetAssetRef><SharedString name="Missing">bm9wZQ==</SharedString></Properties>
        <Item class="Folder" referent="B"><Properties><string name="Name">b</string></Properties></Item></Item>
      ${shared}</roblox>`;
    const dom = decodeXml(bytesOf(text));
    const a = byName(dom, 'a');
    assert.deepEqual(a.property('Value'), { type: 'Ref', value: byName(dom, 'b').referent });
    assert.deepEqual(a.property('Empty'), { type: 'Ref', value: -1 });
    assert.deepEqual(a.property('Lost'), { type: 'Ref', value: -1 });
    assert.deepEqual(a.property('S'), { type: 'SharedString', value: 1 });
    assert.deepEqual(a.property('N'), { type: 'SharedString', value: 0 });
    assert.equal(a.property('Missing'), undefined);
    assert.deepEqual(dom.sharedStrings.map((bytes) => [...bytes]), [[...Buffer.from('hello')], [0, 255]]);
    assert.deepEqual(dom.metadata, [['ExplicitAutoJoints', 'true']]);
    assert.equal(dom.warnings.length, 2);
    assert.match(dom.warnings.join('\n'), /Ref to a referent no Item has.*ObjectValue\.Lost/);
    assert.match(dom.warnings.join('\n'), /SharedString key with no definition.*ObjectValue\.Missing/);
  });

  it('numbers Items in document order and links parents', () => {
    const text = `<roblox version="4">
      <Item class="Model" referent="r0"><Properties><string name="Name">m</string></Properties>
        <Item class="Part" referent="r1"><Properties><string name="Name">p1</string></Properties>
          <Item class="Decal" referent="r2"><Properties><string name="Name">d</string></Properties></Item></Item>
        <Item class="Part" referent="r3"><Properties><string name="Name">p2</string></Properties></Item></Item>
      <Item class="Folder" referent="r4"><Properties/></Item></roblox>`;
    const dom = decodeXml(bytesOf(text));
    assert.deepEqual([...instances(dom)].map((i) => [i.referent, i.className, i.name, i.parent?.referent ?? null]), [
      [0, 'Model', 'm', null], [1, 'Part', 'p1', 0], [2, 'Decal', 'd', 1], [3, 'Part', 'p2', 0], [4, 'Folder', '', null],
    ]);
    assert.deepEqual(roots(dom).map((root) => dom.referent(root)), [0, 4]);
    assert.deepEqual(dom.instance(0).children.map((child) => child.name), ['p1', 'p2']);
    assert.deepEqual(dom.xmlReferents, ['r0', 'r1', 'r2', 'r3', 'r4']);
  });

  it('fails on bad numbers in known tags, naming the property and its offset', () => {
    const bytes = model('<string name="Name">é</string><float name="Speed">fast</float>', { className: 'Part' });
    const error = decodeError(bytes);
    assert.equal(error.property, 'Part.Speed');
    assert.equal(Buffer.from(bytes).subarray(error.offset).toString('utf8', 0, 6), '<float');
    assert.match(error.message, /"fast" is not a float/);
    const crlf = bytesOf('<roblox version="4">\r\n<Item class="Part">\r\n<Properties>\r\n<float name="Speed">fast</float>\r\n</Properties></Item></roblox>');
    assert.equal(Buffer.from(crlf).subarray(decodeError(crlf).offset).toString('utf8', 0, 19), '<float name="Speed"');
    const unclosed = bytesOf('<roblox version="4">\r\n<Item class="Part">\r\n<Properties>\r\n<float name="Speed"');
    const tagError = decodeError(unclosed);
    assert.match(tagError.message, /^malformed XML: a tag is not closed/);
    assert.equal(Buffer.from(unclosed).subarray(tagError.offset).toString('utf8'), '<float name="Speed"');
    for (const bad of [
      '<int name="I">2147483648</int>', '<int name="I">1.5</int>', '<int64 name="L">9223372036854775808</int64>',
      '<int64 name="L">' + '9'.repeat(100_000) + '</int64>', '<bool name="B">yes</bool>', '<token name="E">-</token>',
      '<Vector3 name="V"><X>1</X><Y>2</Y></Vector3>', '<UniqueId name="U">xyz</UniqueId>', '<Vector3int16 name="V"><X>40000</X><Y>0</Y><Z>0</Z></Vector3int16>',
      '<SecurityCapabilities name="C">-1</SecurityCapabilities>', '<NumberRange name="N">1</NumberRange>',
    ]) {
      decodeError(model(bad));
    }
  });
});

describe('malformed XML', () => {
  it('rejects what is not a Roblox XML document', () => {
    assert.match(decodeError(new Uint8Array()).message, /no <roblox> element/);
    assert.match(decodeError(bytesOf('<html><body/></html>')).message, /root element is <html>/);
    assert.match(decodeError(bytesOf('<roblox version="4"></roblox><roblox/>')).message, /more than one root/);
    assert.match(decodeError(bytesOf('hello world')).message, /no <roblox> element/);
    decodeError(Uint8Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256));
    assert.match(decodeError(bytesOf('<roblox version="4"><Item referent="a"><Properties/></Item></roblox>')).message, /no class attribute/);
    assert.match(decodeError(bytesOf('<roblox version="4"><Item class="A" referent="x"/><Item class="B" referent="x"/></roblox>')).message, /used by two Items/);
  });

  it('rejects every corpus file truncated before its end', () => {
    const files = xmlFilesUnder(CORPUS_DIR);
    for (const file of files) {
      const bytes = readFileSync(file);
      const end = bytes.lastIndexOf('</roblox>') + '</roblox>'.length;
      const text = bytes.toString('latin1');
      const points = new Set<number>([0, 1, end - 1, text.indexOf('<![CDATA[') + 12, text.indexOf('referent="') + 5, text.indexOf('&') + 1]);
      const evenCuts = bytes.length > 200_000 ? 8 : 48;
      for (let i = 1; i < evenCuts; i++) points.add(Math.floor((end * i) / evenCuts));
      for (const point of points) {
        if (point <= 0 || point >= end) continue;
        const error = decodeError(bytes.subarray(0, point));
        assert.ok(error.message.length > 0, `${file} cut at ${point}`);
      }
      assert.ok(decodeXml(bytes.subarray(0, end)).count > 0, `${file} cut right after </roblox>`);
    }
  });

  it('gives a DOM or a DecodeError for seeded random byte flips', () => {
    let seed = 0x2545f491;
    const random = (): number => {
      seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5;
      return (seed >>> 0) / 2 ** 32;
    };
    for (const name of ['baseplate-566.rbxlx', 'two-particleemitters.rbxmx', 'text-label-with-font.rbxmx', 'attributes.rbxmx']) {
      const original = readFileSync(join(TEST_FILES_DIR, name));
      for (let round = 0; round < 40; round++) {
        const bytes = Uint8Array.from(original);
        for (let flips = 1 + Math.floor(random() * 8); flips > 0; flips--) {
          bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 256);
        }
        try {
          const dom = decodeXml(bytes);
          assert.ok(dom.count >= 0);
        } catch (error) {
          assert.ok(error instanceof DecodeError, `${name} round ${round}: ${String(error)}`);
        }
      }
    }
  });

  it('stops nesting bombs at maxXmlDepth', () => {
    const deepItems = `<roblox version="4">${'<Item class="Folder">'.repeat(200_000)}`;
    assert.match(decodeError(bytesOf(deepItems)).message, /deeper than 2000 levels/);
    const deepTags = `<roblox version="4">${'<a>'.repeat(1_000_000)}${'</a>'.repeat(1_000_000)}</roblox>`;
    const deep = decodeError(bytesOf(deepTags));
    assert.match(deep.message, /maxXmlDepth/);
    assert.equal(deep.limit, 'maxXmlDepth', 'a refusal past a cap names it');
    const fine = `<roblox version="4">${'<Item class="Folder"><Properties/>'.repeat(40)}${'</Item>'.repeat(40)}</roblox>`;
    assert.equal(decodeXml(bytesOf(fine), { maxXmlDepth: 100 }).count, 40);
    decodeError(bytesOf(fine), { maxXmlDepth: 30 });
  });

  it('never expands DOCTYPE entities (billion laughs)', () => {
    const entities = ['<!ENTITY lol0 "lol">'];
    for (let i = 1; i < 10; i++) entities.push(`<!ENTITY lol${i} "${`&lol${i - 1};`.repeat(10)}">`);
    const text = `<?xml version="1.0"?><!DOCTYPE roblox [${entities.join('')}]><roblox version="4"><Item class="Folder" referent="a"><Properties><string name="Name">&lol9;</string></Properties></Item></roblox>`;
    const dom = decodeXml(bytesOf(text));
    assert.equal(onlyInstance(dom).name, '&lol9;');
  });

  it('holds declared sizes to the limits', () => {
    const items = `<roblox version="4">${'<Item class="Folder" referent="x"><Properties/></Item>'.replace('referent="x"', '').repeat(11)}</roblox>`;
    // Each refusal names the cap it passed in `limit` (the service answers 413 for those, 422 for the rest).
    const refused = (error: DecodeError, limit: string, message: RegExp) => { assert.match(error.message, message); assert.equal(error.limit, limit, error.message); };
    refused(decodeError(bytesOf(items), { maxInstances: 10 }), 'maxInstances', /maxInstances/);
    assert.equal(decodeXml(bytesOf(items), { maxInstances: 11 }).count, 11);
    const big = Buffer.alloc(3000, 1).toString('base64');
    refused(decodeError(model('', { extra: `<SharedStrings><SharedString md5="k">${big}</SharedString></SharedStrings>` }), { maxStringBytes: 2048 }), 'maxStringBytes', /maxStringBytes/);
    refused(decodeError(model(`<string name="S">${'x'.repeat(5000)}</string>`), { maxStringBytes: 4096 }), 'maxStringBytes', /maxStringBytes/);
    refused(decodeError(model(`<BinaryString name="B">${big}</BinaryString>`), { maxStringBytes: 2048 }), 'maxStringBytes', /maxStringBytes/);
    refused(decodeError(model(`<NumberSequence name="N">${'0 1 0 '.repeat(50)}</NumberSequence>`), { maxSequenceLength: 20 }), 'maxSequenceLength', /maxSequenceLength/);
    refused(decodeError(model(''), { maxTotalBytes: 10 }), 'maxTotalBytes', /larger than 10 bytes/);
    // A malformed value is not a refusal past a cap.
    assert.equal(decodeError(model('<NumberSequence name="N">0 1</NumberSequence>')).limit, undefined);
  });

  it('warns instead of failing on what it does not know', () => {
    const dom = decodeXml(bytesOf('<roblox version="5"><Widget/><Item class="Folder" referent="a"><Properties><Vector2int16 name="V"><X>1</X><Y>2</Y></Vector2int16><string>no name</string></Properties><Extra/></Item></roblox>'));
    assert.equal(dom.count, 1);
    assert.equal(dom.warnings.length, 5);
    assert.match(dom.warnings.join('\n'), /unknown type <Vector2int16>/);
  });
});
