// The batch calls against the emulator: results, local refusals (no request made), and every
// service answer classified by its detail.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import { ApiError, InputError, SvcError } from 'svc-stream';
import { AudioEventResultSchema, EmotionResultSchema } from 'svc-stream/schema';
import { analyzeConversationFile, detectAudioEvents, detectAudioEventsAsync, detectEmotionAsync, detectSyntheticVoice, listPresetsAsync, redactPiiPhi, transcribeFile } from 'svc-stream/batch';
import { audioDir, loggedEmulator, type AudioDir, type LoggedEmulator } from './fixtures.js';

let emu: LoggedEmulator;
let files: AudioDir;
let tone: string;
const AE = '/api/svc-2-audio-event-classifier';

beforeAll(async () => {
  files = audioDir();
  tone = files.tone('tone.wav', 1);
  emu = await loggedEmulator({
    organizations: [
      { id: 'main', keys: ['k'], concurrency: 2 },
      { id: 'blocked', keys: ['blocked'], models: [] },
      { id: 'events-only', keys: ['events-only'], models: ['audio-event'] },
      { id: 'broke', keys: ['broke'], credits: 0 },
      { id: 'quota', keys: ['quota'], monthlyUsageQuotaMs: { 'audio-event': 1 } },
      { id: 'capped', keys: ['capped'], monthlyCreditLimit: 0.5 },
      { id: 'one', keys: ['one'], concurrency: 1 },
    ],
  });
});
afterAll(async () => {
  await emu?.close();
  files?.remove();
});

const opts = (apiKey = 'k') => ({ baseUrl: emu.baseUrl, apiKey, retry: false as const });

async function failure(p: Promise<unknown>): Promise<SvcError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(SvcError);
  return err as SvcError;
}

describe('results', () => {
  it('detectAudioEvents emits one validated result per subscription (cold)', async () => {
    const call$ = detectAudioEvents('samples/music-applause.wav', opts());
    const before = emu.posts(AE);
    const a = await lastValueFrom(call$.pipe(toArray()));
    const b = await firstValueFrom(call$);
    expect(emu.posts(AE) - before).toBe(2);
    expect(a).toHaveLength(1);
    expect(AudioEventResultSchema.parse(a[0])).toEqual(b);
    expect(b.probs.Applause).toBeGreaterThan(0.5);
    expect(b.duration_ms).toBe(9340);
  });

  it('detectEmotion: 15 s consecutive windows with the optional fields sent', async () => {
    const r = await detectEmotionAsync('samples/call.mp4', { ...opts(), trainingPermitted: false, useEnsemble: true });
    expect(EmotionResultSchema.safeParse(r).success).toBe(true);
    expect(r.time_series.map((w) => w.start_ms)).toEqual([0, 15_000]);
  });

  it('the other paths keep their JSON as sent', async () => {
    const stt = await firstValueFrom(transcribeFile(tone, { ...opts(), variant: 'english-vfast' }));
    expect(stt).toMatchObject({ duration_ms: 1000 });
    expect(await firstValueFrom(redactPiiPhi(tone, opts()))).toMatchObject({ duration_ms: 1000 });
    expect(await firstValueFrom(detectSyntheticVoice(tone, opts()))).toMatchObject({ deepfake_score: expect.any(Number) });
    const conv = await firstValueFrom(analyzeConversationFile(tone, { ...opts(), config: { behaviors: ['preset:empathy'] } }));
    expect(conv).toMatchObject({ duration_ms: 1000, clips: expect.any(Array) });
    expect(emu.posts('/api/svc-2-stt-batch-english-vfast')).toBe(1);
  });

  it('listPresets from both paths, consuming no usage', async () => {
    const used = emu.accounts.find('k')!.creditsSpent;
    const batch = await listPresetsAsync(opts());
    const streaming = await listPresetsAsync({ ...opts(), from: 'streaming' });
    expect(batch.map((p) => p.identifier)).toContain('empathy');
    expect(streaming).toEqual(batch);
    expect(emu.accounts.find('k')!.creditsSpent).toBe(used);
  });
});

describe('refused locally, no request made', () => {
  it.each([
    ['an empty file', () => files.bytes('empty.wav', ''), 'empty_file'],
    ['a 101 MB file', () => files.sparse('huge.wav', 101 * 1024 * 1024), 'file_too_large'],
    ['an unsupported extension', () => files.bytes('notes.txt', 'x'), 'unsupported_format'],
    ['a missing file', () => `${files.dir}/nope.wav`, 'file_not_found'],
    ['a directory named like audio', () => { const d = join(files.dir, 'folder.wav'); mkdirSync(d, { recursive: true }); return d; }, 'file_not_found'],
  ])('%s', async (_name, make, code) => {
    const before = emu.requests.length;
    const err = await failure(detectAudioEventsAsync(make(), opts()));
    expect(err).toBeInstanceOf(InputError);
    expect(err.code).toBe(code);
    expect(emu.requests.length).toBe(before);
  });

  it('an invalid config and missing credentials', async () => {
    const before = emu.requests.length;
    const bad = await failure(firstValueFrom(analyzeConversationFile(tone, { ...opts(), config: { produce_topics: 'yes' } as never })));
    expect(bad.code).toBe('invalid_config');
    const noKey = await failure(detectAudioEventsAsync(tone, { baseUrl: emu.baseUrl, apiKey: '' }));
    expect(noKey.code).toBe('invalid_argument');
    expect(emu.requests.length).toBe(before);
  });
});

describe('service answers, classified by detail', () => {
  it('a corrupt file yields the 400 with its detail', async () => {
    const err = await failure(detectAudioEventsAsync(files.bytes('corrupt.mp3', 'ID3 but then nothing decodable at all'), opts()));
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 'corrupt_audio', status: 400, retryable: false });
    expect(err.detail).toMatch(/could not be processed/);
  });

  it.each([
    ['nope', 'invalid_api_key', 401],
    ['blocked', 'not_permitted', 403],
    ['broke', 'insufficient_credits', 429],
  ])('key %s → %s', async (key, code, status) => {
    expect(await failure(detectAudioEventsAsync(tone, opts(key)))).toMatchObject({ code, status });
  });

  it('no access to the model → 403 no_model_access', async () => {
    expect(await failure(detectEmotionAsync(tone, opts('events-only')))).toMatchObject({ code: 'no_model_access', status: 403 });
  });

  it('monthly quota and monthly credit limit → 429 with their own codes, never retried', async () => {
    await detectAudioEventsAsync(tone, opts('quota'));
    await detectAudioEventsAsync(tone, opts('capped'));
    const before = emu.posts(AE);
    const retries: unknown[] = [];
    const withRetry = { retry: { concurrencyDelayMs: 1, transientDelayMs: 1 }, onRetry: (e: unknown) => retries.push(e) };
    expect(await failure(detectAudioEventsAsync(tone, { ...opts('quota'), ...withRetry }))).toMatchObject({ code: 'monthly_usage_limit', status: 429, retryable: false });
    expect(await failure(detectAudioEventsAsync(tone, { ...opts('capped'), ...withRetry }))).toMatchObject({ code: 'monthly_credit_limit', status: 429, retryable: false });
    expect(emu.posts(AE) - before).toBe(2);
    expect(retries).toEqual([]);
  });

  it('concurrency limit → 429 concurrency_limit (retryable)', async () => {
    const org = emu.accounts.find('one')!;
    emu.accounts.acquire(org, 'audio-event');
    try {
      expect(await failure(detectAudioEventsAsync(tone, opts('one')))).toMatchObject({ code: 'concurrency_limit', status: 429, retryable: true });
    } finally {
      emu.accounts.release(org, 'audio-event');
    }
  });

  it('synthetic voice detection: 403 for an invalid key and for limits, 422 for short audio', async () => {
    expect(await failure(firstValueFrom(detectSyntheticVoice(tone, opts('nope'))))).toMatchObject({ code: 'invalid_api_key', status: 403 });
    expect(await failure(firstValueFrom(detectSyntheticVoice(tone, opts('broke'))))).toMatchObject({ code: 'insufficient_credits', status: 403 });
    const short = await failure(firstValueFrom(detectSyntheticVoice(files.tone('short.wav', 0.3), opts())));
    expect(short).toMatchObject({ code: 'audio_too_short', status: 422 });
  });

  it('an unreachable service → connection_failed, and the key never appears in the message', async () => {
    const err = await failure(detectAudioEventsAsync(tone, { baseUrl: 'http://127.0.0.1:1', apiKey: 'secret-key-123', retry: false }));
    expect(err.code).toBe('connection_failed');
    expect(err.message).not.toContain('secret-key-123');
  });
});
