/**
 * Binary glTF (GLB) output: a 12-byte header, a JSON chunk and a BIN chunk, every
 * chunk padded to 4 bytes. The output is a list of byte pieces (header, JSON in
 * blocks of nodes, each buffer view as the geometry's own bytes, padding) whose total
 * length is known before the first byte is written, so it can be streamed to a file
 * or a socket without ever joining a map into one string or one buffer.
 */
import { Buffer } from 'node:buffer';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { GltfDocument } from './document.js';

const GLB_MAGIC = 0x46546c67; // "glTF"
const JSON_CHUNK = 0x4e4f534a; // "JSON"
const BIN_CHUNK = 0x004e4942; // "BIN\0"
/** Nodes per JSON piece. */
const NODES_PER_PIECE = 2048;

export interface GlbPieces {
  byteLength: number;
  pieces: Uint8Array[];
}

export function glbPieces(doc: GltfDocument): GlbPieces {
  // BIN: each view 4-byte aligned.
  const views: Record<string, unknown>[] = [];
  const binPieces: Uint8Array[] = [];
  let binLength = 0;
  for (const view of doc.views) {
    const json: Record<string, unknown> = { buffer: 0, byteOffset: binLength, byteLength: view.piece.byteLength };
    if (view.target !== undefined) json.target = view.target;
    views.push(json);
    binPieces.push(view.piece);
    binLength += view.piece.byteLength;
    const pad = (4 - (binLength % 4)) % 4;
    if (pad) {
      binPieces.push(new Uint8Array(pad));
      binLength += pad;
    }
  }

  // JSON: everything but the nodes as one object, the nodes spliced in as pieces.
  const top: Record<string, unknown> = {
    asset: { version: '2.0', generator: 'rbxl-import' },
    scene: 0,
    // A scene's `nodes` may not be empty (glTF 2.0: minItems 1): a map with nothing to draw has a scene without it.
    scenes: [doc.roots.length ? { nodes: doc.roots } : {}],
  };
  if (doc.extras) (top.asset as Record<string, unknown>).extras = doc.extras;
  const rest: Record<string, unknown> = {};
  if (doc.meshes.length) rest.meshes = doc.meshes;
  if (doc.materials.length) rest.materials = '__MATERIALS__';
  if (doc.skins.length) rest.skins = doc.skins;
  if (doc.textures.length) {
    rest.textures = doc.textures;
    rest.images = doc.images;
    rest.samplers = [{ magFilter: 9729, minFilter: 9987, wrapS: 10497, wrapT: 10497 }];
  }
  if (doc.accessors.length) rest.accessors = doc.accessors;
  if (views.length) rest.bufferViews = views;
  if (binLength) rest.buffers = [{ byteLength: binLength }];
  const head = JSON.stringify(top).slice(0, -1) + (doc.nodes.length ? ',"nodes":[' : '');
  let tail = JSON.stringify(rest).slice(1);
  tail = tail.replace('"__MATERIALS__"', `[${doc.materials.join(',')}]`);
  const jsonPieces: Uint8Array[] = [Buffer.from(head)];
  for (let from = 0; from < doc.nodes.length; from += NODES_PER_PIECE) {
    const to = Math.min(doc.nodes.length, from + NODES_PER_PIECE);
    const parts: string[] = [];
    for (let i = from; i < to; i++) {
      const children = doc.children.get(i);
      const node = doc.nodes[i]!;
      parts.push(children ? `${node.slice(0, -1)}${node.length > 2 ? ',' : ''}"children":[${children.join(',')}]}` : node);
    }
    jsonPieces.push(Buffer.from((from > 0 ? ',' : '') + parts.join(',')));
  }
  jsonPieces.push(Buffer.from((doc.nodes.length ? ']' : '') + (tail === '}' ? '}' : `,${tail}`)));
  let jsonLength = 0;
  for (const piece of jsonPieces) jsonLength += piece.byteLength;
  const jsonPad = (4 - (jsonLength % 4)) % 4;
  if (jsonPad) jsonPieces.push(Buffer.from(' '.repeat(jsonPad)));
  jsonLength += jsonPad;

  const byteLength = 12 + 8 + jsonLength + (binLength ? 8 + binLength : 0);
  const header = new Uint8Array(20);
  const view = new DataView(header.buffer);
  view.setUint32(0, GLB_MAGIC, true);
  view.setUint32(4, 2, true);
  view.setUint32(8, byteLength, true);
  view.setUint32(12, jsonLength, true);
  view.setUint32(16, JSON_CHUNK, true);
  const pieces = [header, ...jsonPieces];
  if (binLength) {
    const binHeader = new Uint8Array(8);
    new DataView(binHeader.buffer).setUint32(0, binLength, true);
    new DataView(binHeader.buffer).setUint32(4, BIN_CHUNK, true);
    pieces.push(binHeader, ...binPieces);
  }
  if (byteLength > 0xffffffff) throw new RangeError(`the GLB would be ${byteLength} bytes; the format's limit is 4 GiB`);
  return { byteLength, pieces };
}

/** The whole GLB in one buffer (tests, small scenes). */
export function glbBytes(doc: GltfDocument): Uint8Array {
  const { byteLength, pieces } = glbPieces(doc);
  const out = new Uint8Array(byteLength);
  let at = 0;
  for (const piece of pieces) {
    out.set(piece, at);
    at += piece.byteLength;
  }
  return out;
}

/** Streams the GLB to a file, piece by piece; resolves with its length. */
export async function writeGlbFile(doc: GltfDocument, path: string | Buffer): Promise<number> {
  const { byteLength, pieces } = glbPieces(doc);
  const stream = createWriteStream(path);
  try {
    for (const piece of pieces) {
      if (!stream.write(piece)) await once(stream, 'drain');
    }
    stream.end();
    await once(stream, 'finish');
  } catch (error) {
    stream.destroy();
    throw error;
  }
  return byteLength;
}
