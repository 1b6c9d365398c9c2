import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeChunks } from '../src/index.js';
import { CONFORMANCE_DIR } from './support/paths.js';
import { conformanceDiff } from './support/conformance.js';

const vectors = readdirSync(CONFORMANCE_DIR).filter((name) => name.endsWith('.json'));

test('there are conformance vectors to check', () => {
  assert.ok(vectors.length >= 30, `found ${vectors.length} vectors in ${CONFORMANCE_DIR}`);
});

for (const name of vectors) {
  test(`conformance: ${name}`, () => {
    const vector = JSON.parse(readFileSync(join(CONFORMANCE_DIR, name), 'utf8'));
    const bytes = readFileSync(join(CONFORMANCE_DIR, vector.file));
    const view = decodeChunks(bytes);
    const { file: _file, ...expected } = vector;
    const { warnings: _warnings, ...actual } = view;
    const diff = conformanceDiff(expected, actual);
    assert.equal(diff, null, diff ?? '');
  });
}

test('the comparison itself rejects a wrong value', () => {
  assert.notEqual(conformanceDiff({ values: [1.5] }, { values: [1.25] }), null);
  assert.notEqual(conformanceDiff(['Right'], ['Top']), null);
  assert.equal(conformanceDiff({ prop_type: 'Float32', values: [0.1] }, { prop_type: 'Float32', values: [Math.fround(0.1)] }), null);
});
