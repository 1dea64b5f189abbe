// A multipart/form-data request body that streams its file from disk. undici's FormData
// reads a file-backed Blob whole before sending (measured by bench/upload), so the body is
// built here: text fields, then the file in 64 KiB reads pulled by the socket, then the end.
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';

export interface MultipartFile {
  readonly field: string;
  readonly path: string;
  readonly filename: string;
  /** Size in bytes, for the exact Content-Length. */
  readonly size: number;
  readonly contentType?: string | undefined;
}

export interface MultipartBody {
  /** Each iteration reads the file anew, with the same boundary and length. */
  readonly body: AsyncIterable<Uint8Array>;
  readonly contentType: string;
  readonly contentLength: number;
}

/** A header value safe inside a quoted-string: no quotes, backslashes or line breaks. */
function quoted(value: string): string {
  return value.replace(/[\r\n]/g, ' ').replace(/["\\]/g, (c) => encodeURIComponent(c));
}

/** Text fields and one file as a streamed multipart body with its type and exact length. */
export function multipartBody(fields: Readonly<Record<string, string>>, file: MultipartFile): MultipartBody {
  const boundary = `----svc-stream-${randomBytes(12).toString('hex')}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${quoted(name)}"\r\n\r\n${value}\r\n`, 'utf8'));
  }
  const head = Buffer.concat([
    ...parts,
    Buffer.from(
      `--${boundary}\r\ncontent-disposition: form-data; name="${quoted(file.field)}"; filename="${quoted(file.filename)}"\r\n` +
        `content-type: ${file.contentType ?? 'application/octet-stream'}\r\n\r\n`,
      'utf8',
    ),
  ]);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`, 'utf8');
  async function* body(): AsyncGenerator<Uint8Array> {
    yield head;
    let sent = 0;
    for await (const chunk of createReadStream(file.path, { highWaterMark: 64 * 1024 })) {
      sent += (chunk as Buffer).length;
      yield chunk as Buffer;
    }
    // A file that changed size after it was checked would make the length a lie.
    if (sent !== file.size) throw new Error(`${file.filename} changed size while uploading (${file.size} → ${sent} bytes)`);
    yield tail;
  }
  return { body: { [Symbol.asyncIterator]: body }, contentType: `multipart/form-data; boundary=${boundary}`, contentLength: head.length + file.size + tail.length };
}
