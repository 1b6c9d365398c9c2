/**
 * XML inputs that once cost far more than their size, and the text values read as raw
 * slices (stop nodes) that fixed the largest of them: the same values as the parser's
 * own reading, in a bounded heap.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { decodeXml } from '../src/parser/xml/index.js';
import { DecodeError } from '../src/parser/errors.js';
import type { Property } from '../src/parser/values.js';

const bytesOf = (text: string): Uint8Array => new TextEncoder().encode(text);
const model = (properties: string, extra = ''): Uint8Array =>
  bytesOf(`<roblox version="4"><Item class="Folder" referent="RBX1"><Properties>${properties}</Properties></Item>${extra}</roblox>`);

function property(properties: string, name: string, extra?: string): Property | undefined {
  const dom = decodeXml(model(properties, extra));
  return dom.instance(0).property(name);
}

function decodeError(bytes: Uint8Array, limits?: Parameters<typeof decodeXml>[1]): DecodeError {
  try {
    decodeXml(bytes, limits);
  } catch (error) {
    assert.ok(error instanceof DecodeError, `expected a DecodeError, got ${String(error)}`);
    return error;
  }
  assert.fail('decoding succeeded');
}

const XML_DECODER = fileURLToPath(new URL('../src/parser/xml/index.js', import.meta.url));

/**
 * Decodes, in a child with a small V8 heap, a place whose one property `element` makes
 * from `megabytes` of filler (`filler` repeated); its stdout is the instance count, or the error's message.
 */
function decodeInSmallHeap(element: (filler: string) => string, filler: string, megabytes: number): ReturnType<typeof spawnSync> {
  const script = `
    import { decodeXml } from ${JSON.stringify(XML_DECODER)};
    const filler = ${JSON.stringify(filler)}.repeat(Math.ceil((${megabytes} * 2 ** 20) / ${filler.length}));
    const element = ${element.toString()};
    const text = '<roblox version="4"><Item class="Terrain" referent="RBX1"><Properties>' + element(filler) + '</Properties></Item></roblox>';
    try { process.stdout.write(String(decodeXml(new TextEncoder().encode(text)).count)); } catch (error) { process.stdout.write(error.message); }`;
  return spawnSync(process.execPath, ['--max-old-space-size=96', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 120_000 });
}

describe('large text values in XML', () => {
  it('decodes 10 MB of base64 in a 96 MB heap (it took ~40 bytes a character, 400 MB)', () => {
    for (const element of [
      (text: string) => `<BinaryString name="SmoothGrid">${text}</BinaryString>`,
      (text: string) => `<string name="Big">${text}</string>`,
    ]) {
      const child = decodeInSmallHeap(element, 'QUJD', 10);
      assert.equal(child.status, 0, `${element.toString()}: ${String(child.stderr).slice(-300)}`);
      assert.equal(child.stdout, '1');
    }
  });

  it('reads a raw text value as the parser reads text: entities, CDATA, comments and processing instructions', () => {
    assert.deepEqual(property('<string name="S">a&amp;<![CDATA[<b>&amp;]]>&#x41;</string>', 'S'), { type: 'String', value: 'a&<b>&amp;A' });
    // A comment is dropped and the text around it is one run; a processing instruction ends a run.
    assert.deepEqual(property('<string name="S">&am<!-- <x> -->p;</string>', 'S'), { type: 'String', value: '&' });
    assert.deepEqual(property('<string name="S">&am<?pi <x>?>p;</string>', 'S'), { type: 'String', value: '&amp;' });
    assert.deepEqual(property('<ProtectedString name="Source">x\r\ny\rz<![CDATA[\r\n]]></ProtectedString>', 'Source'), { type: 'String', value: 'x\ny\nz\n' });
    assert.deepEqual(property('<BinaryString name="B">Um9q<!-- c -->byBp\ncyBjb29sIQ==</BinaryString>', 'B'), { type: 'String', value: 'Rojo is cool!' });
    assert.deepEqual(property('<SharedString name="S">k<!---->1</SharedString>', 'S', '<SharedStrings><SharedString md5="k1"><![CDATA[AAEC]]></SharedString></SharedStrings>'), { type: 'SharedString', value: 0 });
    assert.deepEqual(property('<string name="S"/>', 'S'), { type: 'String', value: '' });
  });

  it('refuses an element inside a text value, as the reference decoder does', () => {
    for (const value of ['a<b>c</b>d', '<b/>', 'x<string>y</string>']) {
      assert.match(decodeError(model(`<string name="S">${value}</string>`)).message, /holds an element/, value);
    }
    // An unclosed section inside a text value is malformed too.
    decodeError(model('<string name="S"><![CDATA[x</string>'));
    assert.doesNotMatch(decodeError(model('<string name="S"><![CDATA[x</string>')).message, /truncated/);
  });

  it('says a document cut inside a text value is truncated, as one cut anywhere else', () => {
    const whole = model('<ProtectedString name="Source"><![CDATA[print(1)]]></ProtectedString><string name="Name">a&amp;b</string><BinaryString name="B">QUJD</BinaryString>');
    const text = new TextDecoder().decode(whole);
    for (const at of ['print(', ']]></Pro', '</ProtectedStr', 'a&am', '</string', 'QU', '</Bina']) {
      const cut = whole.subarray(0, text.indexOf(at) + at.length);
      const error = decodeError(cut);
      assert.match(error.message, /^the document ends before <\/roblox>: it is truncated \(/, at);
      assert.equal(error.offset, cut.length, at);
    }
  });
});

describe('legacy content ids', () => {
  it('reads <binary> and <hash> as an empty content id, as rbx-dom\'s spec says', () => {
    for (const tag of ['binary', 'hash']) {
      assert.deepEqual(property(`<Content name="Texture"><${tag}>AAAA</${tag}></Content>`, 'Texture'), { type: 'String', value: '' });
      assert.deepEqual(property(`<ContentId name="MeshId"><${tag}/></ContentId>`, 'MeshId'), { type: 'String', value: '' });
    }
    // Still skipped: what no Roblox version wrote.
    assert.equal(property('<Content name="Texture"><other>x</other></Content>', 'Texture'), undefined);
  });
});

describe('number lists in XML', () => {
  it('refuses a sequence past maxSequenceLength before splitting all of it', () => {
    // 6 million numbers (in CDATA, which the parser reads as one slice): split whole, they took the heap past 96 MB.
    const child = decodeInSmallHeap((text: string) => `<NumberSequence name="N"><![CDATA[${text}]]></NumberSequence>`, '0 ', 12);
    assert.equal(child.status, 0, String(child.stderr).slice(-300));
    assert.match(String(child.stdout), /more than 1048576 keypoints \(maxSequenceLength\)/);
    assert.equal(decodeError(model(`<NumberSequence name="N">${'0 '.repeat(100)}</NumberSequence>`), { maxSequenceLength: 10 }).limit, 'maxSequenceLength');
    assert.match(decodeError(model('<ColorSequence name="C">0 1 1 1 0 1 1 1 1 0 0</ColorSequence>'), { maxSequenceLength: 2 }).message, /more than 2 keypoints/);
    assert.equal(decodeXml(model('<ColorSequence name="C">0 1 1 1 0 1 1 1 1 0</ColorSequence>'), { maxSequenceLength: 2 }).count, 1);
    assert.match(decodeError(model(`<NumberRange name="R">${'0 '.repeat(1000)}</NumberRange>`)).message, /not a NumberRange/);
    assert.deepEqual(property('<NumberRange name="R"> 1 2 </NumberRange>', 'R'), { type: 'NumberRange', value: [1, 2] });
    assert.match(decodeError(model('<NumberSequence name="N">0 1 0 1</NumberSequence>')).message, /4 numbers, not a multiple of 3/);
  });
});
