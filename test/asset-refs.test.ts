import { test } from 'node:test';
import assert from 'node:assert/strict';
import { collectAssetRefs, parseAssetUri, propertyAssetKind } from '../src/assets/refs.js';
import { handDom } from './support/hand-dom.js';

const ID_CASES: [string, string][] = [
  ['rbxassetid://123', '123'],
  ['RBXASSETID://123', '123'],
  ['  rbxassetid://123  ', '123'],
  ['rbxassetid://000123', '123'],
  ['rbxassetid://123?version=2', '123'],
  ['http://www.roblox.com/asset/?id=123', '123'],
  ['https://www.roblox.com/asset/?id=123', '123'],
  ['http://www.roblox.com/asset?id=123', '123'],
  ['HTTP://WWW.ROBLOX.COM/Asset/?ID=123', '123'],
  ['http://www.roblox.com/asset/?id=123&version=4', '123'],
  ['http://www.roblox.com/asset/?version=1&id=123', '123'],
  ['https://www.roblox.com//asset/?id=1375078988', '1375078988'],
  ['http://www.roblox.com/asset/?id=101813597   ', '101813597'],
  ['http://roblox.com/asset/?id=123', '123'],
  ['http://assetgame.roblox.com/asset/?id=123', '123'],
  ['https://assetdelivery.roblox.com/v1/asset/?id=123', '123'],
  ['https://assetdelivery.roblox.com/v1/asset?id=123&version=1', '123'],
  ['https://assetdelivery.roblox.com/v1/assetId/123', '123'],
  ['rbxassetid://9223372036854775807', '9223372036854775807'],
];

const OTHER_CASES: string[] = [
  'rbxthumb://type=Asset&id=123&w=150&h=150',
  'rbxassetid://',
  'rbxassetid://0',
  'rbxassetid://12a',
  'rbxassetid://-5',
  'rbxassetid://9223372036854775808',
  'rbxassetid://12345678901234567890',
  'http://evil.example/asset/?id=123',
  'http://www.roblox.com.evil.example/asset/?id=123',
  'http://evil@www.roblox.com/asset/?id=123',
  'http://www.roblox.com:8080/asset/?id=123',
  'http://www.roblox.com/asset/?id=',
  'http://www.roblox.com/asset/?id=12x',
  'http://www.roblox.com/asset/?assetversionid=123',
  'http://www.roblox.com/thumbs/asset.ashx?assetid=123',
  'https://www.roblox.com/library/123/name',
  'ftp://www.roblox.com/asset/?id=123',
  '123',
  'rbxhttp://asset/?id=1',
  'rbxasset://',
];

test('parseAssetUri: downloadable ids in every accepted spelling', () => {
  for (const [uri, id] of ID_CASES) {
    assert.deepEqual(parseAssetUri(uri), { kind: 'id', id }, uri);
  }
});

test('parseAssetUri: built-ins keep their path; everything else is other, never an id', () => {
  assert.deepEqual(parseAssetUri('rbxasset://textures/face.png'), { kind: 'builtin', path: 'textures/face.png' });
  assert.deepEqual(parseAssetUri(' RBXASSET://Textures/Wall.png '), { kind: 'builtin', path: 'Textures/Wall.png' });
  for (const uri of OTHER_CASES) {
    assert.deepEqual(parseAssetUri(uri), { kind: 'other', uri: uri.trim() }, uri);
  }
});

test('parseAssetUri: empty and blank are no reference', () => {
  assert.equal(parseAssetUri(''), null);
  assert.equal(parseAssetUri('   \t'), null);
});

test('propertyAssetKind: kinds per property, union only on CSG classes', () => {
  assert.equal(propertyAssetKind('MeshPart', 'MeshId', false), 'mesh');
  assert.equal(propertyAssetKind('MeshPart', 'MeshContent', true), 'mesh');
  assert.equal(propertyAssetKind('Decal', 'Texture', false), 'image');
  assert.equal(propertyAssetKind('Sound', 'SoundId', false), 'audio');
  assert.equal(propertyAssetKind('Animation', 'AnimationId', false), 'animation');
  assert.equal(propertyAssetKind('UnionOperation', 'AssetId', false), 'union');
  assert.equal(propertyAssetKind('PartOperation', 'Content', true), 'union');
  assert.equal(propertyAssetKind('Sky', 'SkyboxBk', false), 'image');
  assert.equal(propertyAssetKind('Folder', 'AssetId', false), null);
  assert.equal(propertyAssetKind('StringValue', 'Value', false), null);
  assert.equal(propertyAssetKind('Script', 'LinkedSource', true), null);
  assert.equal(propertyAssetKind('Whatever', 'SomeNewContent', true), 'other');
});

test('collectAssetRefs: both generations, unique ids, counts, first kind wins', () => {
  const dom = handDom([
    {
      class: 'Workspace',
      children: [
        { class: 'MeshPart', props: { MeshId: ['String', 'rbxassetid://10'], TextureID: ['String', 'http://www.roblox.com/asset/?id=11'] } },
        { class: 'MeshPart', props: { MeshContent: ['Content', { Uri: 'rbxassetid://10' }], TextureContent: ['Content', 'None'] } },
        { class: 'UnionOperation', props: { AssetId: ['String', 'https://www.roblox.com//asset/?id=12'] } },
        { class: 'Decal', props: { Texture: ['String', 'rbxasset://textures/face.png'] } },
        { class: 'Decal', props: { Texture: ['String', 'rbxasset://textures/face.png'] } },
        { class: 'ImageLabel', props: { ImageContent: ['Content', { Uri: 'rbxthumb://type=Asset&id=5&w=150&h=150' }] } },
        { class: 'ImageLabel', props: { ImageContent: ['Content', { Object: 3 }] } },
        { class: 'Sound', props: { SoundId: ['String', 'rbxassetid://13'] } },
        // id 11 again, now as audio: the first kind (image) is kept
        { class: 'Sound', props: { SoundId: ['String', 'rbxassetid://11'] } },
        { class: 'Animation', props: { AnimationId: ['String', 'rbxassetid://14'] } },
        { class: 'Sky', props: { SkyboxBk: ['String', 'rbxassetid://15'], SunTextureId: ['String', 'rbxasset://sky/sun.jpg'] } },
        { class: 'Script', props: { LinkedSource: ['Content', { Uri: 'rbxassetid://99' }], Source: ['String', ''] } },
        { class: 'StringValue', props: { Value: ['String', 'rbxassetid://98'] } },
        { class: 'Thing', props: { FancyContent: ['Content', { Uri: 'rbxassetid://16' }] } },
        { class: 'CharacterMesh', props: { MeshId: ['Int64', 17], BaseTextureId: ['Int64', 0] } },
      ],
    },
  ]);
  const refs = collectAssetRefs(dom);
  assert.deepEqual(refs.ids, [
    { id: '10', kind: 'mesh', count: 2 },
    { id: '11', kind: 'image', count: 2 },
    { id: '12', kind: 'union', count: 1 },
    { id: '13', kind: 'audio', count: 1 },
    { id: '14', kind: 'animation', count: 1 },
    { id: '15', kind: 'image', count: 1 },
    { id: '16', kind: 'other', count: 1 },
    { id: '17', kind: 'mesh', count: 1 },
  ]);
  assert.equal(refs.builtin, 2); // textures/face.png (twice), sky/sun.jpg
  assert.equal(refs.other, 1); // the rbxthumb
  assert.deepEqual(refs.byKind, { mesh: 2, image: 2, audio: 1, animation: 1, union: 1, other: 1 });
  assert.equal(Object.values(refs.byKind).reduce((a, b) => a + b, 0), refs.ids.length);
  assert.deepEqual(refs.kindConflicts, ['11 (image/audio)']);
});

test('collectAssetRefs: never yields a URL, only digit ids', () => {
  const dom = handDom([
    { class: 'Decal', props: { Texture: ['String', 'http://127.0.0.1:9/asset/?id=5'] } },
    { class: 'Decal', props: { Texture: ['String', 'https://evil.example/?id=6'] } },
  ]);
  const refs = collectAssetRefs(dom);
  assert.deepEqual(refs.ids, []);
  assert.equal(refs.other, 2);
});
