/**
 * JSON text of the decoder's own shapes (the chunk view of `rbxl-import dump --chunks`,
 * ../shared/conformance's shape): non-finite floats as "NaN"/"Infinity" strings,
 * BigInts as decimal strings. The DOM dump (instances in the project document's
 * encoding) is src/project/dump.ts.
 */
import { jsonReplacer } from './values.js';

export function stringifyDump(value: unknown, indent?: number): string {
  return JSON.stringify(value, jsonReplacer, indent);
}
