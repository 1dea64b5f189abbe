// checkUploadFile: a file is checked before any upload (the size limit itself is
// test/schema/limits.test.ts's); no audio byte is read.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from 'svc-stream';
import { BATCH_FILE_EXTENSIONS, checkUploadFile } from 'svc-stream/batch';

const dir = mkdtempSync(join(tmpdir(), 'svc-batch-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const refusal = async (path: unknown): Promise<InputError> => {
  const e = await checkUploadFile(path as string).then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(InputError);
  return e as InputError;
};

describe('checkUploadFile', () => {
  it('accepts every extension of §2.1, in any case, with its name and size', async () => {
    for (const ext of BATCH_FILE_EXTENSIONS) {
      const path = join(dir, `a${ext.toUpperCase()}`);
      writeFileSync(path, 'abc');
      expect(await checkUploadFile(path)).toEqual({ path, filename: `a${ext.toUpperCase()}`, size: 3 });
    }
  });

  it('refuses, naming the file: no path, an unknown extension, a missing file, a folder, an empty file', async () => {
    expect(await refusal('')).toMatchObject({ code: 'invalid_argument', path: 'path' });
    expect(await refusal(join(dir, 'notes.txt'))).toMatchObject({ code: 'unsupported_format', message: expect.stringContaining('.txt; supported: .aac') });
    expect(await refusal(join(dir, 'none.wav'))).toMatchObject({ code: 'file_not_found', message: expect.stringContaining('no such file') });
    mkdirSync(join(dir, 'folder.wav'));
    expect(await refusal(join(dir, 'folder.wav'))).toMatchObject({ code: 'file_not_found', message: expect.stringContaining('not a regular file') });
    writeFileSync(join(dir, 'empty.mp3'), '');
    expect(await refusal(join(dir, 'empty.mp3'))).toMatchObject({ code: 'empty_file', path: join(dir, 'empty.mp3') });
  });
});
