// Audio files for submission: checked locally (exists, not empty, a known format, size)
// before any request, and read only when their upload is due.
import { readFile, stat } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { InputError } from '../errors/index.js';
import { SINGLE_FILE_MAX_BYTES } from '../schema/limits.js';

/** A path, or bytes with the name to report. */
export type AudioFileInput = string | { readonly data: Uint8Array; readonly filename: string; readonly fileExtension?: string };

/** §2.1's formats, without the dot. */
export const SUBMISSION_EXTENSIONS = ['aac', 'aiff', 'flac', 'mp3', 'mp4', 'mov', 'ogg', 'opus', 'wav', 'webm'] as const;

/**
 * §8: a single-file submission carries at most 5 MB. Read as 5 000 000 bytes, the stricter
 * of the decimal and binary readings, so a file accepted here is accepted by either
 * (defined in schema/limits.ts, with the schemas, for the client and the emulator).
 */
export { SINGLE_FILE_MAX_BYTES };

export interface PreparedFile {
  readonly filename: string;
  /** Without the dot, lower case, e.g. `wav`. */
  readonly fileExtension: string;
  readonly size: number;
  read(): Promise<Uint8Array>;
}

/** Check one input without reading it; `path` names it in errors (e.g. `files.2`). */
export async function prepareFile(input: AudioFileInput, path: string): Promise<PreparedFile> {
  const filename = typeof input === 'string' ? basename(input) : input.filename;
  const ext = (typeof input === 'string' ? extname(input) : input.fileExtension ?? extname(input.filename)).replace(/^\./, '').toLowerCase();
  if (!(SUBMISSION_EXTENSIONS as readonly string[]).includes(ext)) {
    throw new InputError('unsupported_format', `"${filename}" has ${ext ? `extension .${ext}` : 'no extension'}; supported: ${SUBMISSION_EXTENSIONS.map((e) => `.${e}`).join(' ')}`, { path });
  }
  let size: number;
  let read: () => Promise<Uint8Array>;
  if (typeof input === 'string') {
    try {
      const s = await stat(input);
      if (!s.isFile()) throw new InputError('invalid_argument', `"${input}" is not a file`, { path });
      size = s.size;
    } catch (err) {
      if (err instanceof InputError) throw err;
      throw new InputError('file_not_found', `audio file not found: ${input}`, { path, cause: err });
    }
    read = () => readFile(input);
  } else {
    size = input.data.byteLength;
    read = async () => input.data;
  }
  if (size === 0) throw new InputError('empty_file', `"${filename}" is empty`, { path });
  return { filename, fileExtension: ext, size, read };
}

export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}
