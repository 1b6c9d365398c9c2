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

/** The dump's JSON as UTF-8 chunks of about `chunkBytes` bytes, ending with a newline. */
export function* dumpJson(dom: Dom, chunkBytes = 1 << 16): Generator<Buffer> {
  const tree = new InstanceTree(dom, {
    refId: (referent) => {
      const row = dom.rowOf(referent);
      return row === -1 ? null : instanceId(row);
    },
  });
  const w = new JsonWriter(chunkBytes);
  w.text(`{"format":${JSON.stringify(dom.format)},"classes":${tree.classesJson()},"shared_strings":`);
  yield* sharedStringsJson(w, dom);
  w.ascii(',"instances":');
  yield* instancesJson(w, tree);
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
