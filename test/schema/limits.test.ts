// The contract's size limits: one decimal reading per limit, the exact byte count in every
// message, and the client and the emulator on the same number (issue 19).
import { mkdtempSync, openSync, closeSync, ftruncateSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_UPLOAD_BYTES as CLIENT_UPLOAD, checkUploadFile } from 'svc-stream/batch';
import { SINGLE_FILE_MAX_BYTES as CLIENT_SINGLE } from 'svc-stream/platform';
import { MAX_UPLOAD_BYTES, SINGLE_FILE_MAX_BYTES, describeByteLimit } from '../../src/schema/limits.js';
import { MAX_UPLOAD_BYTES as EMULATOR_UPLOAD, BATCH_DETAILS } from '../../src/emulator/batchRoutes.js';
import { SINGLE_FILE_MAX_BYTES as EMULATOR_SINGLE } from '../../src/emulator/jobs.js';
import { InputError } from '../../src/errors/index.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-limits-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A sparse file of `size` bytes: no disk used. */
function sparse(name: string, size: number): string {
  const path = join(dir, name);
  const fd = openSync(path, 'w');
  ftruncateSync(fd, size);
  closeSync(fd);
  return path;
}

describe('limits', () => {
  it('reads every "MB" as 1 000 000 bytes, the smaller reading', () => {
    expect(MAX_UPLOAD_BYTES).toBe(100_000_000);
    expect(SINGLE_FILE_MAX_BYTES).toBe(5_000_000);
  });

  it('is one number for the client and the emulator', () => {
    expect(CLIENT_UPLOAD).toBe(MAX_UPLOAD_BYTES);
    expect(EMULATOR_UPLOAD).toBe(MAX_UPLOAD_BYTES);
    expect(CLIENT_SINGLE).toBe(SINGLE_FILE_MAX_BYTES);
    expect(EMULATOR_SINGLE).toBe(SINGLE_FILE_MAX_BYTES);
    expect(BATCH_DETAILS.tooLarge).toContain('100,000,000 bytes');
  });

  it('describes a limit by its exact byte count', () => {
    expect(describeByteLimit(100_000_000)).toBe('100,000,000 bytes (100 MB)');
    expect(describeByteLimit(5_000_000)).toBe('5,000,000 bytes (5 MB)');
    expect(describeByteLimit(1234)).toBe('1,234 bytes');
  });
});

describe('checkUploadFile and the batch upload limit', () => {
  it('accepts exactly 100 000 000 bytes', async () => {
    await expect(checkUploadFile(sparse('limit.wav', 100_000_000))).resolves.toMatchObject({ size: 100_000_000 });
  });

  it('refuses 100 000 001 bytes, which the binary reading let through, naming sizes in bytes', async () => {
    const path = sparse('over.wav', 100_000_001);
    const err = await checkUploadFile(path).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect(err).toMatchObject({ code: 'file_too_large', message: `${path}: 100000001 bytes is over the upload limit of 100,000,000 bytes (100 MB)` });
  });
});
