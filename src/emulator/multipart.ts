// A small streaming multipart/form-data parser for the emulator's batch endpoints: file
// parts go straight to a temp file (never whole in memory), text fields are kept, bounded.
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';

/** A file part written to disk. */
export interface UploadedFile {
  /** The `filename` of the part's Content-Disposition (may be empty). */
  readonly filename: string;
  /** Where the bytes are, while the form is alive. */
  readonly path: string;
  /** Bytes received for this part (counted even past the limit). */
  readonly size: number;
  /** True when the part was larger than `maxFileBytes`; only the first bytes were kept. */
  readonly tooLarge: boolean;
}

export interface ParsedForm {
  readonly fields: ReadonlyMap<string, string>;
  readonly files: ReadonlyMap<string, UploadedFile>;
  /** Delete the temp files. Safe to call more than once. */
  cleanup(): Promise<void>;
}

export interface MultipartOptions {
  /** Bytes kept per file part; the rest is counted and discarded. */
  readonly maxFileBytes: number;
  /** Bytes kept per text field. Default 1 MiB. */
  readonly maxFieldBytes?: number | undefined;
}

/** The body is not a well-formed multipart body (the service answers `Invalid request.`). */
export class MultipartError extends Error {
  override readonly name = 'MultipartError';
}

/** The boundary of a multipart/form-data content type, or undefined for any other body. */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  if (!contentType || !/^multipart\/form-data\b/i.test(contentType)) return undefined;
  const m = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return m ? (m[1] ?? m[2]) : undefined;
}

interface PartHeaders {
  readonly name: string;
  readonly filename: string | undefined;
}

function parsePartHeaders(block: string): PartHeaders {
  let disposition: string | undefined;
  for (const line of block.split('\r\n')) {
    const i = line.indexOf(':');
    if (i > 0 && line.slice(0, i).trim().toLowerCase() === 'content-disposition') disposition = line.slice(i + 1).trim();
  }
  if (!disposition || !/^form-data\b/i.test(disposition)) throw new MultipartError('part without a form-data Content-Disposition');
  const param = (key: string): string | undefined => {
    const re = new RegExp(`;\\s*${key}=(?:"((?:[^"\\\\]|\\\\.)*)"|([^;]*))`, 'i');
    const m = re.exec(disposition!);
    if (!m) return undefined;
    return m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]!.trim();
  };
  const name = param('name');
  if (name === undefined) throw new MultipartError('part without a name');
  return { name, filename: param('filename') };
}

const MAX_HEADER_BYTES = 16 * 1024;

/**
 * Parse a multipart/form-data request body as it arrives. Resolves when the closing
 * delimiter has been read (the rest of the body is drained); rejects with MultipartError on a
 * malformed body and with the stream's error when the client goes away. Temp files of a
 * rejected parse are removed.
 */
export async function parseMultipart(req: IncomingMessage, boundary: string, options: MultipartOptions): Promise<ParsedForm> {
  const maxField = options.maxFieldBytes ?? 1 << 20;
  const dir = await mkdtemp(join(tmpdir(), 'svc-emulator-upload-'));
  const fields = new Map<string, string>();
  const files = new Map<string, UploadedFile>();
  let cleaned = false;
  const cleanup = async (): Promise<void> => {
    if (cleaned) return;
    cleaned = true;
    await rm(dir, { recursive: true, force: true });
  };

  // The first delimiter may open the body without a CRLF before it: pretend there was one.
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  let buf: Buffer = Buffer.from('\r\n');
  let state: 'preamble' | 'afterDelimiter' | 'headers' | 'body' | 'epilogue' = 'preamble';
  let part: { headers: PartHeaders; file?: { out: WriteStream; path: string; size: number; kept: number }; text?: Buffer[]; textSize: number } | undefined;
  let fileCount = 0;
  // A function, not a comparison, because `step` moves the state behind the compiler's back.
  const finished = (): boolean => state === 'epilogue';

  const writeFile = async (f: { out: WriteStream; size: number; kept: number }, data: Buffer): Promise<void> => {
    f.size += data.length;
    const room = options.maxFileBytes - f.kept;
    if (room <= 0) return;
    const slice = data.length > room ? data.subarray(0, room) : data;
    f.kept += slice.length;
    if (!f.out.write(slice)) await once(f.out, 'drain');
  };
  const emitData = async (data: Buffer): Promise<void> => {
    if (!part || data.length === 0) return;
    if (part.file) await writeFile(part.file, data);
    else {
      part.textSize += data.length;
      if (part.textSize <= maxField) part.text!.push(Buffer.from(data));
    }
  };
  const endPart = async (): Promise<void> => {
    if (!part) return;
    const p = part;
    part = undefined;
    if (p.file) {
      p.file.out.end();
      await once(p.file.out, 'close');
      if (!files.has(p.headers.name)) {
        files.set(p.headers.name, { filename: p.headers.filename ?? '', path: p.file.path, size: p.file.size, tooLarge: p.file.size > options.maxFileBytes });
      }
    } else if (!fields.has(p.headers.name)) {
      fields.set(p.headers.name, Buffer.concat(p.text!).toString('utf8'));
    }
  };
  const startPart = (headers: PartHeaders): void => {
    if (headers.filename !== undefined) {
      const path = join(dir, `part-${fileCount++}`);
      part = { headers, file: { out: createWriteStream(path), path, size: 0, kept: 0 }, textSize: 0 };
    } else {
      part = { headers, text: [], textSize: 0 };
    }
  };

  // Consume as much of `buf` as the state machine can; keeps an unfinished tail.
  const step = async (final: boolean): Promise<void> => {
    for (;;) {
      if (state === 'epilogue') {
        buf = Buffer.alloc(0);
        return;
      }
      if (state === 'preamble' || state === 'body') {
        const at = buf.indexOf(delimiter);
        if (at < 0) {
          // Everything but a possible partial delimiter at the end is data (or preamble).
          const safe = Math.max(0, buf.length - (delimiter.length - 1));
          if (state === 'body') await emitData(buf.subarray(0, safe));
          buf = buf.subarray(safe);
          if (final) throw new MultipartError('body ended before the closing delimiter');
          return;
        }
        if (state === 'body') {
          await emitData(buf.subarray(0, at));
          await endPart();
        }
        buf = buf.subarray(at + delimiter.length);
        state = 'afterDelimiter';
        continue;
      }
      if (state === 'afterDelimiter') {
        if (buf.length < 2) {
          if (final) throw new MultipartError('body ended inside a delimiter');
          return;
        }
        if (buf[0] === 0x2d && buf[1] === 0x2d) {
          state = 'epilogue';
          continue;
        }
        // Transport padding (spaces, tabs) may sit between the delimiter and its CRLF.
        const eol = buf.indexOf('\r\n');
        if (eol < 0) {
          if (buf.length > 256 || final) throw new MultipartError('malformed delimiter line');
          return;
        }
        if (buf.subarray(0, eol).toString('latin1').trim() !== '') throw new MultipartError('malformed delimiter line');
        buf = buf.subarray(eol + 2);
        state = 'headers';
        continue;
      }
      // headers
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) {
        if (buf.length > MAX_HEADER_BYTES || final) throw new MultipartError('part headers too long or unterminated');
        return;
      }
      startPart(parsePartHeaders(buf.subarray(0, end).toString('utf8')));
      buf = buf.subarray(end + 4);
      state = 'body';
    }
  };

  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      if (finished()) continue; // drain the epilogue
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      await step(false);
    }
    if (!req.complete) throw new MultipartError('the client closed the connection before the body ended');
    await step(true);
  } catch (err) {
    if (part?.file) part.file.out.destroy();
    req.resume();
    await cleanup();
    throw err;
  }
  return { fields, files, cleanup };
}
