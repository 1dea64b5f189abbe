// ws hands a message's payload as a Buffer, an array of Buffers (fragmented) or an ArrayBuffer,
// depending on `binaryType`: one place turns it into bytes or text.
import type { RawData } from 'ws';

/** A ws message's payload as one Buffer (no copy when it already is one). */
export function rawDataBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

/** A ws message's payload decoded as UTF-8. */
export function rawDataText(data: RawData): string {
  return rawDataBuffer(data).toString('utf8');
}
