/**
 * The scene's text shortcuts give the text of the values they stand for: a binary
 * file's usual references (rbxassetid://N, the roblox.com asset URL) read straight
 * from the column's bytes must give linkOf's links for every form near the fast one;
 * kept rotation and colour texts must keep -0 and every other number as formatted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decode } from '../src/parser/index.js';
import { encode } from '../src/parser/writer/index.js';
import { buildScene, linkOf, type SceneNode, type ScenePart } from '../src/project/scene.js';
import { handDom, part, type HandNode } from './support/hand-dom.js';

const REFERENCES = [
  'rbxassetid://123', 'RBXASSETID://123', 'rbxAssetId://0123', 'rbxassetid://0', 'rbxassetid://000', 'rbxassetid://',
  'rbxassetid://123456789012345678', 'rbxassetid://1234567890123456789', 'rbxassetid://9223372036854775807',
  'rbxassetid://9223372036854775808', 'rbxassetid://00000000000000000000000042', 'rbxassetid://12a', 'rbxassetid://12?x=1',
  ' rbxassetid://12', 'rbxassetid://12 ', 'rbxassetid:\x0f\x0f12', 'rbxassetid://12\n', 'rbxassetid://٣',
  'http://www.roblox.com/asset/?id=5', 'HTTP://WWW.ROBLOX.COM/ASSET/?ID=5', 'https://www.roblox.com/asset/?id=007',
  'http://www.roblox.com/asset/?id=', 'http://www.roblox.com/asset/?id=0', 'http://www.roblox.com/asset/?id=5&version=2',
  'http://www.roblox.com//asset/?id=5', 'http://www.roblox.com/asset?id=5', 'https://assetdelivery.roblox.com/v1/asset/?id=6',
  'rbxasset://textures/a.png', 'rbxasset://textures/"quoted"\\.png', 'rbxthumb://type=Asset&id=1', 'None', '', 'x',
];

/** A Workspace of MeshParts (name: the reference's index) showing each reference as mesh and image, and Parts with a Decal of it. */
function place(): HandNode[] {
  const parts = REFERENCES.flatMap((reference, i): HandNode[] => [
    part(`mesh${i}`, [0, 0, 0], [1, 1, 1], { MeshId: ['String', reference], TextureID: ['String', reference] }, 'MeshPart'),
    { ...part(`decal${i}`, [0, 0, 0], [1, 1, 1]), children: [{ class: 'Decal', props: { Texture: ['String', reference], Face: ['Enum', i % 6] } }] },
  ]);
  return [{ class: 'Workspace', children: parts }];
}

/** The scene's parts by name, node ids cleared (rows differ between the two DOMs). */
function partsByName(nodes: SceneNode[]): Map<string, ScenePart> {
  const byName = new Map<string, ScenePart>();
  for (const node of nodes) {
    node.id = '';
    if (node.type === 'part') byName.set(node.name, node);
  }
  return byName;
}

test('scene links: a binary file\'s references read from their bytes give linkOf\'s links, in JSON.stringify\'s text', () => {
  const hand = handDom(place());
  const binary = decode(encode(hand));
  const fromValues = partsByName(buildScene(hand).children);
  const fromBytes = partsByName(buildScene(binary).children);
  assert.equal(fromBytes.size, REFERENCES.length * 2);
  REFERENCES.forEach((reference, i) => {
    const link = linkOf(reference);
    const mesh = fromBytes.get(`mesh${i}`)!;
    assert.deepEqual(mesh.mesh, link ?? undefined, reference);
    assert.deepEqual(mesh.textures, link ? [{ ...link, class: 'MeshPart', property: 'TextureID' }] : undefined, reference);
    const decal = fromBytes.get(`decal${i}`)!;
    assert.deepEqual(decal.textures, link ? [{ ...link, class: 'Decal', property: 'Texture', face: ['Right', 'Top', 'Back', 'Left', 'Bottom', 'Front'][i % 6] }] : undefined, reference);
    // The same text, key order included, as the values' path (array columns, linkOf).
    assert.equal(JSON.stringify(mesh), JSON.stringify(fromValues.get(`mesh${i}`)), reference);
    assert.equal(JSON.stringify(decal), JSON.stringify(fromValues.get(`decal${i}`)), reference);
  });
  // The fast forms were there to be read.
  assert.deepEqual(fromBytes.get('mesh1')!.mesh, { id: '123' });
  assert.deepEqual(fromBytes.get('mesh10')!.mesh, { id: '42' });
  assert.deepEqual(fromBytes.get('mesh20')!.mesh, { id: '7' });
});

test('scene text: kept quarter-turn rotations and colours are the numbers\' text, -0 included', () => {
  const turns: [number, number, number][][] = [
    [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
    [[-0, 0, 1], [0, 1, 0], [-1, 0, -0]],
    [[0, 0, 1], [0, 1, 0], [-1, 0, 0]],
    [[0.5, 0, 1], [0, 1, 0], [-1, 0, 0]],
    [[-0, 0, 1], [0, 1, 0], [-1, 0, -0]],
  ];
  const colors: [number, number, number][] = [[0, 0, 0], [255, 255, 255], [1, 2, 3], [255, 255, 255]];
  const nodes = turns.flatMap((orientation, i) => colors.map((color, j) =>
    part(`p${i}.${j}`, [0, 0, 0], [1, 1, 1], { Color3uint8: ['Color3uint8', color] }, 'Part', orientation as [[number, number, number], [number, number, number], [number, number, number]])));
  // Twice: the second scene reads the kept texts.
  for (let pass = 0; pass < 2; pass++) {
    const parts = partsByName(buildScene(handDom([{ class: 'Workspace', children: nodes }])).children);
    turns.forEach((orientation, i) => colors.forEach((color, j) => {
      const scenePart = parts.get(`p${i}.${j}`)!;
      assert.deepEqual(scenePart.rotation, orientation);
      assert.deepEqual(scenePart.color, color);
    }));
  }
});

test('scene text: transparency 0 with the flags after it, -0 and others formatted; shape numbers out of the enum are Blocks', () => {
  const looks: [number, number][] = [[0, 1], [-0, 0], [0.5, 4], [1, 1.5], [0, 7], [0, -1], [0, 2]];
  const nodes = looks.map(([transparency, shape], i) => part(`p${i}`, [0, 0, 0], [1, 1, 1], {
    Transparency: ['Float32', transparency], shape: ['Enum', shape], Anchored: ['Bool', i % 2 === 0], CanCollide: ['Bool', i % 3 === 0],
  }));
  const parts = partsByName(buildScene(handDom([{ class: 'Workspace', children: nodes }])).children);
  looks.forEach(([transparency, shape], i) => {
    const scenePart = parts.get(`p${i}`)!;
    assert.equal(scenePart.transparency, transparency);
    assert.equal(scenePart.shape, ['Ball', 'Block', 'Cylinder', 'Wedge', 'CornerWedge'][shape] ?? 'Block');
    assert.equal(scenePart.anchored, i % 2 === 0);
    assert.equal(scenePart.can_collide, i % 3 === 0);
  });
});
