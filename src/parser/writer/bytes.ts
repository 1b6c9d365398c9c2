/** A growable little-endian byte buffer for building one chunk's data. */
const encoder = new TextEncoder();

export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

export class ByteWriter {
  bytes: Uint8Array;
  private view: DataView;
  length = 0;

  constructor(capacity = 256) {
    this.bytes = new Uint8Array(capacity);
    this.view = new DataView(this.bytes.buffer);
  }

  /** Makes room for `n` more bytes and returns the offset they start at. */
  claim(n: number): number {
    const at = this.length;
    const needed = at + n;
    if (needed > this.bytes.length) {
      const grown = new Uint8Array(Math.max(needed, this.bytes.length * 2));
      grown.set(this.bytes.subarray(0, at));
      this.bytes = grown;
      this.view = new DataView(grown.buffer);
    }
    this.length = needed;
    return at;
  }

  u8(value: number): void {
    const at = this.claim(1);
    this.bytes[at] = value;
  }

  u16(value: number): void {
    const at = this.claim(2); // claim first: it may replace the view
    this.view.setUint16(at, value, true);
  }

  i16(value: number): void {
    const at = this.claim(2); // claim first: it may replace the view
    this.view.setInt16(at, value, true);
  }

  u32(value: number): void {
    const at = this.claim(4); // claim first: it may replace the view
    this.view.setUint32(at, value, true);
  }

  f32(value: number): void {
    const at = this.claim(4); // claim first: it may replace the view
    this.view.setFloat32(at, value, true);
  }

  f64(value: number): void {
    const at = this.claim(8); // claim first: it may replace the view
    this.view.setFloat64(at, value, true);
  }

  raw(data: Uint8Array): void {
    const at = this.claim(data.length);
    this.bytes.set(data, at);
  }

  /** The String layout: u32 byte length, then the bytes. */
  string(data: Uint8Array): void {
    this.u32(data.length);
    this.raw(data);
  }

  /** A String from text: UTF-8 written in place (ASCII byte by byte, the rest by encodeInto). */
  text(value: string): void {
    // UTF-8 needs at most 3 bytes per UTF-16 unit; long strings are measured instead of over-reserved.
    const at = this.claim(4 + (value.length > 4096 ? Buffer.byteLength(value, 'utf8') : value.length * 3));
    const b = this.bytes;
    let n = 0;
    for (; n < value.length; n++) {
      const code = value.charCodeAt(n);
      if (code >= 0x80) break;
      b[at + 4 + n] = code;
    }
    if (n < value.length) n += encoder.encodeInto(value.slice(n), b.subarray(at + 4 + n)).written;
    this.view.setUint32(at, n, true);
    this.length = at + 4 + n;
  }

  /** The bytes written so far (a view, not a copy). */
  finish(): Uint8Array {
    return this.bytes.subarray(0, this.length);
  }
}
