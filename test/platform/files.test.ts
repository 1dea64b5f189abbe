// Files for submission, checked before any request and read only when their upload is due.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from 'svc-stream';
import { prepareFile, toBase64 } from '../../src/platform/files.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-platform-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function refusal(p: Promise<unknown>): Promise<InputError> {
  const e = await p.then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(InputError);
  return e as InputError;
}

describe('prepareFile', () => {
  it('checks a path without reading it, then reads it when asked', async () => {
    const file = join(dir, 'Call.WAV');
    writeFileSync(file, 'RIFF');
    const f = await prepareFile(file, 'files.0');
    expect(f).toMatchObject({ filename: 'Call.WAV', fileExtension: 'wav', size: 4 });
    expect(Buffer.from(await f.read()).toString()).toBe('RIFF');
  });

  it('takes bytes with a name, the extension from the name or given', async () => {
    expect(await prepareFile({ data: new Uint8Array(3), filename: 'x.mp3' }, 'f')).toMatchObject({ fileExtension: 'mp3', size: 3 });
    expect(await prepareFile({ data: new Uint8Array(3), filename: 'x', fileExtension: '.OGG' }, 'f')).toMatchObject({ fileExtension: 'ogg' });
  });

  it('refuses, naming the input: an unknown format, a missing file, a folder, an empty file', async () => {
    expect(await refusal(prepareFile({ data: new Uint8Array(1), filename: 'x.txt' }, 'files.1'))).toMatchObject({ code: 'unsupported_format', path: 'files.1' });
    expect(await refusal(prepareFile(join(dir, 'none.wav'), 'f'))).toMatchObject({ code: 'file_not_found' });
    mkdirSync(join(dir, 'folder.wav'));
    expect(await refusal(prepareFile(join(dir, 'folder.wav'), 'f'))).toMatchObject({ code: 'invalid_argument' });
    writeFileSync(join(dir, 'empty.wav'), '');
    expect(await refusal(prepareFile(join(dir, 'empty.wav'), 'f'))).toMatchObject({ code: 'empty_file' });
  });
});

describe('toBase64', () => {
  it('encodes a view of a larger buffer as its own bytes', () => {
    const bytes = Buffer.from('xxhello');
    expect(toBase64(bytes.subarray(2))).toBe(Buffer.from('hello').toString('base64'));
  });
});
