// A small streaming multipart/form-data parser for the emulator's batch endpoints: the file
// parts it is told to keep go straight to a temp file (never whole in memory); every other
// part is bounded: a cap on the number of parts and on the bytes of all other parts together.
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
  /** Bytes kept per spooled file part; the rest is counted and discarded. */
  readonly maxFileBytes: number;
  /** Names of the file parts written to disk (first occurrence of each). Default `['upload_file']`. */
  readonly spool?: readonly string[] | undefined;
  /** Most parts in one body; one more is a MultipartError. Default {@link DEFAULT_MAX_PARTS}. */
  readonly maxParts?: number | undefined;
  /**
   * Bytes of every text part (the fields, kept in memory), together; one more is a
   * MultipartError. Default {@link DEFAULT_MAX_FIELD_BYTES}. File parts that are not spooled
   * are discarded as they arrive, bounded together by `maxFileBytes`.
   */
  readonly maxFieldBytes?: number | undefined;
}

/** Parts per body by default: the batch endpoints take at most four. */
export const DEFAULT_MAX_PARTS = 32;
/** Bytes of all non-file parts together by default: room for a large BatchConfig. */
export const DEFAULT_MAX_FIELD_BYTES = 1 << 20;

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
 * Read a request body chunk by chunk, waiting for `onChunk` before the next one. Resolves at
 * the end of the body. When `onChunk` throws, reading stops where it is (the request is paused,
 * never drained or destroyed, so the caller can still answer) and the error is passed on; when
 * the client goes away first, rejects with a plain Error.
 */
export function consumeBody(req: IncomingMessage, onChunk: (chunk: Buffer) => void | Promise<void>): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    // The chunk being handled: 'end' may follow the last 'data' although the stream was paused.
    let busy: Promise<void> = Promise.resolve();
    const settle = (err?: unknown): void => {
      if (settled) return;
      settled = true;
      req.off('data', onData).off('end', onEnd).off('close', onClose).off('error', onError);
      if (err === undefined) return resolve();
      req.pause();
      reject(err);
    };
    const onData = (chunk: Buffer): void => {
      req.pause();
      busy = busy
        .then(() => onChunk(chunk))
        .then(() => {
          if (!settled) req.resume();
        }, settle);
    };
    const onEnd = (): void => void busy.then(() => settle());
    const onClose = (): void => {
      if (!req.complete) void busy.then(() => settle(new Error('the client closed the connection before the body ended')));
    };
    const onError = (err: Error): void => settle(err);
    req.on('data', onData).on('end', onEnd).on('close', onClose).on('error', onError);
  });
}

/**
 * Parse a multipart/form-data request body as it arrives. Resolves when the body has ended
 * (anything after the closing delimiter is discarded); rejects with MultipartError on a
 * malformed body or one over a cap (reading stops there: the caller answers without draining),
 * and with a plain Error when the client goes away. Temp files of a rejected parse are removed.
 */
export async function parseMultipart(req: IncomingMessage, boundary: string, options: MultipartOptions): Promise<ParsedForm> {
  const maxField = options.maxFieldBytes ?? DEFAULT_MAX_FIELD_BYTES;
  const maxParts = options.maxParts ?? DEFAULT_MAX_PARTS;
  const spool = new Set(options.spool ?? ['upload_file']);
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
  // A part is spooled to `file`, kept as `text`, or (a file part nobody asked for) only counted.
  let part: { headers: PartHeaders; file?: { out: WriteStream; path: string; size: number; kept: number }; text?: Buffer[] } | undefined;
  let fileCount = 0;
  let partCount = 0;
  /** Bytes of every text part, together. */
  let otherBytes = 0;
  /** Bytes of the file parts that are not spooled, together: counted, not kept. */
  let discardedBytes = 0;
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
    if (part.file) return writeFile(part.file, data);
    if (!part.text) {
      // A file part nobody reads (`-F file=@call.wav`): discarded as it arrives, never held,
      // so it costs no memory; its bytes together are bounded like an upload's.
      discardedBytes += data.length;
      if (discardedBytes > options.maxFileBytes) throw new MultipartError(`the file parts other than ${[...spool].join(', ')} exceed ${options.maxFileBytes} bytes`);
      return;
    }
    otherBytes += data.length;
    if (otherBytes > maxField) throw new MultipartError(`the parts other than ${[...spool].join(', ')} exceed ${maxField} bytes`);
    part.text?.push(Buffer.from(data));
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
    } else if (p.text && !fields.has(p.headers.name)) {
      fields.set(p.headers.name, Buffer.concat(p.text).toString('utf8'));
    }
  };
  const startPart = (headers: PartHeaders): void => {
    if (++partCount > maxParts) throw new MultipartError(`more than ${maxParts} parts`);
    if (headers.filename === undefined) {
      part = { headers, text: [] };
    } else if (spool.has(headers.name) && !files.has(headers.name)) {
      const path = join(dir, `part-${fileCount++}`);
      part = { headers, file: { out: createWriteStream(path), path, size: 0, kept: 0 } };
    } else {
      // A file part nobody reads (or a second one of the same name): counted, never written.
      part = { headers };
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
    await consumeBody(req, async (chunk) => {
      if (finished()) return; // discard the epilogue
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      await step(false);
    });
    await step(true);
  } catch (err) {
    if (part?.file) part.file.out.destroy();
    await cleanup();
    throw err;
  }
  return { fields, files, cleanup };
}
