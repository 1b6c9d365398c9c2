/**
 * Instance ids in the project document and everything derived from it (the scene
 * list, scene.glb's node extras, scripts[]): one rule, kept here so every writer
 * agrees. An instance's id is its DOM row in decimal ("0", "1", ...): unique in the
 * document, the same for every decode of the same file, and cheap to write. Instances
 * the import adds (joints computed from surface types) take "g" + a counter, so they
 * can never collide with a map's own.
 */
import type { JsonWriter } from './json-writer.js';

export function instanceId(row: number): string {
  return String(row);
}

/** Writes a map instance's id as a JSON string, digits straight into the writer. */
export function writeId(w: JsonWriter, row: number): void {
  w.quotedInt(row);
}

export function generatedId(index: number): string {
  return 'g' + index;
}

/** The DOM row of a map instance's id; -1 for a generated or malformed id. */
export function rowOfId(id: string): number {
  return /^(0|[1-9][0-9]{0,9})$/.test(id) ? Number(id) : -1;
}
