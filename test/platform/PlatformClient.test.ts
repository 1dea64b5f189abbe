// PlatformClient's submissions against the emulator: the three patterns, local refusals
// that send nothing, a failed middle upload, and the key kept out of every error.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { lastValueFrom } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, InputError } from '../../src/errors/index.js';
import { JobUploadError, PlatformClient, SINGLE_FILE_MAX_BYTES } from 'svc-stream/platform';
import { harness, type Harness } from './helpers.js';

const CALL = new URL('../../samples/call.wav', import.meta.url).pathname;
const MUSIC = new URL('../../samples/music-applause.wav', import.meta.url).pathname;
const fast = { intervalMs: 10, maxIntervalMs: 40, deadlineMs: 5000 };

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-platform-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let h: Harness | undefined;
afterEach(async () => {
  await h?.emu.close();
  h = undefined;
});
const posts = (x: Harness) => x.requests.filter((l) => l.startsWith('POST /platform/api_service'));

describe('PlatformClient configuration', () => {
  it('reads SVC_PLATFORM_URL, SVC_ACCOUNT_UUID, SVC_PLATFORM_API_KEY and never shows the key', () => {
    const key = 'pk-env-secret-123';
    const c = new PlatformClient({ env: { SVC_PLATFORM_URL: 'http://x/platform/', SVC_ACCOUNT_UUID: 'acc', SVC_PLATFORM_API_KEY: key } });
    expect(c.baseUrl).toBe('http://x/platform');
    expect(JSON.stringify(c)).not.toContain(key);
    expect(inspect(c, { depth: 5, showHidden: true })).not.toContain(key);
    expect(() => new PlatformClient({ env: {} })).toThrow(InputError);
  });
});

describe('PlatformClient submissions', () => {
  it('(a) submits a real-time job and returns realtime_url', async () => {
    h = await harness();
    const r = await h.client().submitRealtime();
    expect(r.realtime_url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/api\/svc-2-streaming$/);
    expect(r.job_id).toEqual(expect.any(String));
  });

  it('(b) submits one file and polls it to completed with per-file results', async () => {
    h = await harness();
    const client = h.client();
    const sub = await client.submitFile(CALL, { flags: { emotion_annotation: true } });
    expect(sub).toMatchObject({ job_id: expect.any(String), status: 'queued', api_calls_charged: 1 });
    const done = await lastValueFrom(client.pollJob(sub.job_id, fast));
    expect(done.status).toBe('completed');
    const files = (done['results'] as { files: { duration_ms: number; emotion_annotation?: unknown; demographics?: unknown }[] }).files;
    expect(files[0]!.duration_ms).toBeGreaterThan(38_000);
    expect(files[0]!.emotion_annotation).toBeDefined();
    expect(files[0]!.demographics).toBeUndefined();
  });

  it('(c) submits several files as one job, in order, finalizing only the last', async () => {
    h = await harness();
    const client = h.client();
    const sub = await client.submitFiles([CALL, MUSIC, { data: new Uint8Array(await import('node:fs/promises').then((f) => f.readFile(CALL))), filename: 'again.wav' }]);
    expect(sub.uploads).toHaveLength(3);
    expect(sub.uploads.map((u) => u.job_id)).toEqual([sub.job_id, sub.job_id, sub.job_id]);
    expect(sub.uploads.map((u) => u['status'])).toEqual(['uploading', 'uploading', 'queued']);
    expect(posts(h)).toHaveLength(3);
    const done = await lastValueFrom(client.pollJob(sub.job_id, fast));
    const files = (done['results'] as { files: { filename: string }[] }).files;
    expect(files.map((f) => f.filename)).toEqual(['call.wav', 'music-applause.wav', 'again.wav']);
  });

  it('(c) stops at a failed middle upload, names the file and index, and sends no finalize', async () => {
    h = await harness();
    const junk = join(dir, 'broken.wav');
    writeFileSync(junk, Buffer.from('RIFF but not really a wav file'));
    const err = await h.client().submitFiles([CALL, junk, MUSIC]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobUploadError);
    const e = err as JobUploadError;
    expect(e).toMatchObject({ fileIndex: 1, filename: 'broken.wav', uploaded: 1, status: 400, code: 'corrupt_audio' });
    expect(e.message).toMatch(/upload 2 of 3 \(index 1, "broken\.wav"\)/);
    expect(e.jobId).toEqual(expect.any(String));
    expect(posts(h)).toHaveLength(2);
    // The job stays open: nothing finalized it.
    expect((await h.client().getJob(e.jobId!)).status).toBe('uploading');
  });

  it('checks every file before the first upload', async () => {
    h = await harness();
    const err = await h.client().submitFiles([CALL, join(dir, 'missing.wav')]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).code).toBe('file_not_found');
    expect((err as InputError).path).toBe('files.1');
    expect(posts(h)).toHaveLength(0);
  });

  it('refuses a 6 MB single file locally with file_too_large and sends no request', async () => {
    h = await harness();
    const big = join(dir, 'big.wav');
    writeFileSync(big, Buffer.alloc(6 * 1024 * 1024));
    let fetched = 0;
    const counting: typeof fetch = (...args) => {
      fetched++;
      return fetch(...args);
    };
    const client = h.client({ fetch: counting });
    const err = await client.submitFile(big).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).code).toBe('file_too_large');
    const bytes = await client.submitFile({ data: new Uint8Array(SINGLE_FILE_MAX_BYTES + 1), filename: 'x.wav' }).catch((e: unknown) => e);
    expect((bytes as InputError).code).toBe('file_too_large');
    expect(fetched).toBe(0);
    expect(h.requests).toHaveLength(0);
  });

  it('keeps the platform key out of every error message', async () => {
    h = await harness();
    const key = 'platform-key-SECRET-4242';
    const client = h.client({ apiKey: key });
    const errors: unknown[] = [];
    errors.push(await client.submitFile(CALL).catch((e: unknown) => e));
    errors.push(await client.submitRealtime().catch((e: unknown) => e));
    errors.push(await client.getJob('nope').catch((e: unknown) => e));
    errors.push(await client.submitFiles([CALL, MUSIC]).catch((e: unknown) => e));
    errors.push(await lastValueFrom(client.pollJob('nope', fast)).catch((e: unknown) => e));
    const closed = new PlatformClient({ baseUrl: 'http://127.0.0.1:1/platform', accountUuid: 'a', apiKey: key, env: {} });
    errors.push(await closed.getJob('x').catch((e: unknown) => e));
    for (const e of errors) {
      expect(e).toBeInstanceOf(Error);
      expect((e as Error).message).not.toContain(key);
      expect(String(e)).not.toContain(key);
      expect(inspect(e, { depth: 6 })).not.toContain(key);
    }
    expect((errors[0] as ApiError).status).toBe(401);
    expect((errors[0] as ApiError).code).toBe('invalid_api_key');
    expect((errors[5] as ApiError).code).toBe('connection_failed');
  });
});
