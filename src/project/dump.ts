/**
 * The `rbxl-import dump` JSON: the DOM in the project document's instance encoding
 * (instances.ts, encoding.ts), nothing left out (script sources and every other
 * property stay properties), written instance by instance:
 *
 *   {"format": "binary"|"xml", "classes": {...}, "shared_strings": [base64...],
 *    "instances": [{"id", "class", "name", "parent", "properties"}, ...]}
 *
 * Instances come parents first (pre-order); ids are DOM rows (ids.ts). The chunk
 * view (`dump --chunks`) keeps the conformance shape (parser/dump.ts).
 */
import type { Dom } from '../parser/dom.js';
import { instanceId } from './ids.js';
import { InstanceTree, instancesJson } from './instances.js';
import { JsonWriter } from './json-writer.js';

/**
 * The dump's JSON as UTF-8 chunks of about `chunkBytes` bytes, ending with a newline.
 * With `selected` (1 = keep, by DOM row) only those instances are written, in the same
 * order, and `classes` only has their classes; each kept instance is written exactly as
 * in the whole dump (class tables and defaults are those of the whole file), so a
 * filtered dump is a subset of the whole one.
 */
export function* dumpJson(dom: Dom, chunkBytes = 1 << 16, selected?: Uint8Array): Generator<Buffer> {
  const tree = new InstanceTree(dom, {
    refId: (referent) => {
      const row = dom.rowOf(referent);
      return row === -1 ? null : instanceId(row);
    },
  });
  const w = new JsonWriter(chunkBytes);
  let classes: Set<string> | undefined;
  if (selected) {
    classes = new Set();
    for (let row = 0; row < dom.count; row++) if (selected[row]) classes.add(dom.className(row));
  }
  w.text(`{"format":${JSON.stringify(dom.format)},"classes":${tree.classesJson(classes)},"shared_strings":`);
  yield* sharedStringsJson(w, dom);
  w.ascii(',"instances":');
  if (selected) {
    w.byte(0x5b);
    let first = true;
    for (const row of tree.rows()) {
      if (!selected[row]) continue;
      if (!first) w.byte(0x2c);
      first = false;
      tree.writeInstance(w, row);
      if (w.ready) yield* w.take();
    }
    w.byte(0x5d);
  } else {
    yield* instancesJson(w, tree);
  }
  w.ascii('}\n');
  yield* w.flush();
}

/** `shared_strings`: the file's SharedStrings in order, base64; SharedString values index it. */
export function* sharedStringsJson(w: JsonWriter, dom: Dom): Generator<Buffer> {
  w.byte(0x5b);
  for (let i = 0; i < dom.sharedStrings.length; i++) {
    const bytes = dom.sharedStrings[i]!;
    if (i) w.byte(0x2c);
    w.byte(0x22);
    w.ascii(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64'));
    w.byte(0x22);
    if (w.ready) yield* w.take();
  }
  w.byte(0x5d);
}
