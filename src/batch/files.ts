// The local checks of §2.1 and §8 made before any upload: a refused file never costs a request.
import { stat } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { InputError } from '../errors/index.js';
import { describeByteLimit, MAX_UPLOAD_BYTES } from '../schema/limits.js';

/** The extensions the batch endpoints take (§2.1). */
export const BATCH_FILE_EXTENSIONS = ['.aac', '.aiff', '.flac', '.mp3', '.mp4', '.mov', '.ogg', '.opus', '.wav', '.webm'] as const;

/** The upload limit of §8, 100 MB read as 100 000 000 bytes (defined in schema/limits.ts). */
export { MAX_UPLOAD_BYTES };

/** A file that passed the local checks. */
export interface CheckedFile {
  readonly path: string;
  /** The name sent as the part's filename (the service reads the extension from it). */
  readonly filename: string;
  readonly size: number;
}

/**
 * Check a file before upload: it exists and is a regular file, has an allowed extension, is
 * not empty and is at most MAX_UPLOAD_BYTES (100 000 000 bytes). Rejects with InputError (`file_not_found`,
 * `unsupported_format`, `empty_file`, `file_too_large`); reads no audio bytes.
 */
export async function checkUploadFile(path: string): Promise<CheckedFile> {
  if (typeof path !== 'string' || path.length === 0) {
    throw new InputError('invalid_argument', 'file path must be a non-empty string', { path: 'path' });
  }
  const ext = extname(path).toLowerCase();
  if (!(BATCH_FILE_EXTENSIONS as readonly string[]).includes(ext)) {
    throw new InputError('unsupported_format', `${path}: unsupported file format ${ext || '(no extension)'}; supported: ${BATCH_FILE_EXTENSIONS.join(', ')}`, { path });
  }
  let size: number;
  try {
    const s = await stat(path);
    if (!s.isFile()) throw new InputError('file_not_found', `${path}: not a regular file`, { path });
    size = s.size;
  } catch (err) {
    if (err instanceof InputError) throw err;
    throw new InputError('file_not_found', `${path}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`, { path, cause: err });
  }
  if (size === 0) throw new InputError('empty_file', `${path}: the file is empty`, { path });
  if (size > MAX_UPLOAD_BYTES) {
    throw new InputError('file_too_large', `${path}: ${size} bytes is over the upload limit of ${describeByteLimit(MAX_UPLOAD_BYTES)}`, { path });
  }
  return { path, filename: basename(path), size };
}
