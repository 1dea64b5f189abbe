// The multipart body of an upload: text fields, then the file streamed from disk, with an
// exact Content-Length, read anew on each iteration; a file that changes size is refused.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { multipartBody } from '../../src/batch/multipartBody.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-multipart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function bytesOf(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const p of body) parts.push(p);
  return Buffer.concat(parts);
}

describe('multipartBody', () => {
  it('is the fields, then the file, framed by one boundary, as long as it says', async () => {
    const file = join(dir, 'a.wav');
    const data = Buffer.alloc(200_000, 7); // more than one 64 KiB read
    writeFileSync(file, data);
    const m = multipartBody({ config: '{"a":1}' }, { field: 'upload_file', path: file, filename: 'a.wav', size: data.length });
    const boundary = /boundary=(.+)$/.exec(m.contentType)![1]!;
    const body = await bytesOf(m.body);
    expect(body.length).toBe(m.contentLength);
    const text = body.toString('latin1');
    expect(text.startsWith(`--${boundary}\r\ncontent-disposition: form-data; name="config"\r\n\r\n{"a":1}\r\n`)).toBe(true);
    expect(text).toContain(`--${boundary}\r\ncontent-disposition: form-data; name="upload_file"; filename="a.wav"\r\ncontent-type: application/octet-stream\r\n\r\n`);
    expect(text.endsWith(`\r\n--${boundary}--\r\n`)).toBe(true);
    expect(body.subarray(body.length - data.length - `\r\n--${boundary}--\r\n`.length, body.length - `\r\n--${boundary}--\r\n`.length).equals(data)).toBe(true);
    // Read again (a redirect followed): the same bytes.
    expect((await bytesOf(m.body)).equals(body)).toBe(true);
  });

  it('keeps quotes and line breaks out of the header values', async () => {
    const file = join(dir, 'b.wav');
    writeFileSync(file, 'x');
    const m = multipartBody({}, { field: 'f', path: file, filename: 'a"b\\c\r\nd.wav', size: 1 });
    const text = (await bytesOf(m.body)).toString('latin1');
    expect(text).toContain('filename="a%22b%5Cc  d.wav"');
  });

  it('refuses a file whose size changed since it was checked', async () => {
    const file = join(dir, 'c.wav');
    writeFileSync(file, 'abc');
    const m = multipartBody({}, { field: 'f', path: file, filename: 'c.wav', size: 10 });
    await expect(bytesOf(m.body)).rejects.toThrow(/changed size while uploading \(10 → 3 bytes\)/);
  });
});
