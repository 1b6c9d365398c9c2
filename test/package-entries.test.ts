/**
 * What README shows as the package's API can be imported from the package, by its own
 * name (Node resolves a package's self-reference through its `exports`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './support/paths.js';

const ENTRIES = ['rbxl-import', 'rbxl-import/terrain', 'rbxl-import/geometry', 'rbxl-import/gltf', 'rbxl-import/render', 'rbxl-import/scene'];

test('every function README\'s DOM and Geometry sections name is exported by one of the package\'s entries', async () => {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const exported = new Set<string>();
  for (const entry of ENTRIES) for (const name of Object.keys(await import(entry) as object)) exported.add(name);
  const section = (heading: string): string => {
    const start = readme.indexOf(heading);
    assert.ok(start >= 0, heading);
    const end = readme.indexOf('\n## ', start + heading.length);
    return readme.slice(start, end < 0 ? undefined : end);
  };
  const named = new Set<string>();
  // Geometry: every `name(` opening a code span is a function of its modules.
  for (const match of section('## Geometry: terrain, part shapes, glTF and the preview picture').matchAll(/`([A-Za-z_][A-Za-z0-9_]*)\(/g)) named.add(match[1]!);
  // The DOM table: the functions taking the DOM (its methods, `dom.x(`, and the builder's are not free functions).
  for (const match of section('| call | gives |').matchAll(/`([A-Za-z_][A-Za-z0-9_]*)\(dom\b/g)) named.add(match[1]!);
  named.add('DomBuilder');
  assert.ok(named.size > 20, [...named].join(' '));
  assert.deepEqual([...named].filter((name) => !exported.has(name)), []);
  assert.ok(exported.has('BASE_PART_CLASSES'), 'the DOM example\'s set of part classes');
});
