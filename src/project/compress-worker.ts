/**
 * The document compressor's thread (compress-thread.ts): Brotli streams driven by this
 * thread's own event loop, one per document being written, told apart by id. Each JSON
 * chunk is acknowledged once compressed (`consumed`, its memory moved back), each
 * compressed piece sent back as it comes (`data`), then `end`, or `error` with the
 * stream's message.
 */
import { parentPort } from 'node:worker_threads';
import type { BrotliCompress } from 'node:zlib';
import { documentCompressor } from './compression.js';
import type { FromCompressor, ToCompressor } from './compress-thread.js';

const port = parentPort!;
const streams = new Map<number, BrotliCompress>();
const send = (message: FromCompressor, transfer?: ArrayBuffer[]): void => port.postMessage(message, transfer);

port.on('message', (message: ToCompressor) => {
  const { id } = message;
  switch (message.type) {
    case 'open': {
      const stream = documentCompressor(message.fileBytes);
      streams.set(id, stream);
      stream.on('data', (piece: Buffer) => {
        const bytes = new Uint8Array(piece);
        send({ type: 'data', id, bytes }, [bytes.buffer]);
      });
      stream.once('end', () => { streams.delete(id); send({ type: 'end', id }); });
      stream.once('error', (error) => { streams.delete(id); send({ type: 'error', id, message: error.message }); });
      break;
    }
    case 'chunk': {
      const { bytes } = message;
      // Compressed: its memory goes back to the writer for the next chunk (freed here, it waited for this thread's rare collections).
      streams.get(id)?.write(bytes, () => send({ type: 'consumed', id, bytes: bytes.length, buffer: bytes.buffer as ArrayBuffer }, [bytes.buffer as ArrayBuffer]));
      break;
    }
    case 'end':
      streams.get(id)?.end();
      break;
    case 'destroy':
      streams.get(id)?.destroy();
      streams.delete(id);
      break;
  }
});
