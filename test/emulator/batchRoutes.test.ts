// The emulator's batch endpoints as a client we did not write sees them: curl -F.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AudioEventResultSchema, EmotionResultSchema, PresetListSchema } from 'svc-stream/schema';
import { errorFromHttp } from '../../src/errors/index.js';
import { LIMIT_DETAILS } from 'svc-stream/emulator';
import { MAX_UPLOAD_BYTES } from '../../src/schema/limits.js';
import { audioDir, loggedEmulator, type AudioDir, type LoggedEmulator } from '../batch/fixtures.js';

interface CurlReply {
  readonly status: number;
  readonly body: unknown;
}

function curl(args: readonly string[]): Promise<CurlReply> {
  return new Promise((resolve, reject) => {
    execFile('curl', ['-sS', '-w', '\n%{http_code}', ...args], { timeout: 15_000, maxBuffer: 1 << 20 }, (err, stdout) => {
      if (err) return reject(err);
      const i = stdout.lastIndexOf('\n');
      const text = stdout.slice(0, i);
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // keep the text
      }
      resolve({ status: Number(stdout.slice(i + 1)), body });
    });
  });
}

const AE = '/api/svc-2-audio-event-classifier';
const UNSUPPORTED = 'Unsupported file format. Supported formats: .aac, .aiff, .flac, .mp3, .mp4, .mov, .ogg, .opus, .wav, .webm';
const CORRUPT = 'The audio file could not be processed. It may be corrupted or in an unsupported format.';

let emu: LoggedEmulator;
let files: AudioDir;
let tone: string;
// The emulator runs in this process: a private TMPDIR shows exactly the temp files it leaves.
const privateTmp = mkdtempSync(join(tmpdir(), 'svc-batch-routes-tmp-'));
const savedTmp = process.env['TMPDIR'];

beforeAll(async () => {
  files = audioDir();
  process.env['TMPDIR'] = privateTmp;
  tone = files.tone('tone.wav', 1.2);
  emu = await loggedEmulator({
    organizations: [
      { id: 'main', keys: ['k'], concurrency: 1 },
      { id: 'blocked', keys: ['blocked'], models: [] },
      { id: 'events-only', keys: ['events-only'], models: ['audio-event'] },
      { id: 'broke', keys: ['broke'], credits: 0 },
      { id: 'quota', keys: ['quota'], monthlyUsageQuotaMs: { 'audio-event': 1 } },
      { id: 'capped', keys: ['capped'], monthlyCreditLimit: 0.5 },
    ],
  });
});
afterAll(async () => {
  await emu?.close();
  files?.remove();
  if (savedTmp === undefined) delete process.env['TMPDIR'];
  else process.env['TMPDIR'] = savedTmp;
  rmSync(privateTmp, { recursive: true, force: true });
});

const post = (path: string, key: string | undefined, ...form: string[]): Promise<CurlReply> =>
  curl([...(key === undefined ? [] : ['-H', `X-API-Key: ${key}`]), ...form.flatMap((f) => ['-F', f]), `${emu.baseUrl}${path}`]);

describe('audio event detection over curl', () => {
  it('answers 200 with the real duration and schema-valid probs', async () => {
    const r = await post(AE, 'k', `upload_file=@${tone}`);
    expect(r.status).toBe(200);
    const result = AudioEventResultSchema.parse(r.body);
    expect(result.duration_ms).toBe(1200);
    // A steady 440 Hz tone reads as an instrument, never as applause.
    expect(Object.keys(result.probs).length).toBeGreaterThan(0);
    expect(result.probs.Applause).toBeUndefined();
  });

  it('finds applause and instruments in the music-and-applause sample, nothing in speech', async () => {
    const music = AudioEventResultSchema.parse((await post(AE, 'k', 'upload_file=@samples/music-applause.wav')).body);
    expect(music.probs.Applause).toBeGreaterThan(0.5);
    expect(Object.keys(music.probs).length).toBeGreaterThan(1);
    const speech = AudioEventResultSchema.parse((await post(AE, 'k', 'upload_file=@samples/call.mp3')).body);
    expect(speech.probs).toEqual({});
    expect(Math.abs(speech.duration_ms - 38_500)).toBeLessThan(200);
  });

  it('is deterministic', async () => {
    const a = await post(AE, 'k', 'upload_file=@samples/music-applause.wav');
    const b = await post(AE, 'k', 'upload_file=@samples/music-applause.wav');
    expect(a.body).toEqual(b.body);
  });

  it.each([
    ['unsupported extension', () => [`upload_file=@${files.bytes('notes.txt', 'hello')}`], 400, UNSUPPORTED, 'unsupported_format'],
    ['empty file', () => [`upload_file=@${files.bytes('empty.wav', '')}`], 400, 'The uploaded file is empty.', 'empty_file'],
    ['undecodable audio', () => [`upload_file=@${files.bytes('corrupt.wav', 'RIFF\u0000\u0000garbage, not audio at all')}`], 400, CORRUPT, 'corrupt_audio'],
  ])('%s → %i', async (_name, form, status, detail, code) => {
    const r = await post(AE, 'k', ...form());
    expect(r).toEqual({ status, body: { detail } });
    expect(errorFromHttp(r.status, r.body).code).toBe(code);
  });

  it('a file over 100 000 000 bytes → 400 naming the exact limit (no 413: §4.1 lists none), nothing kept', async () => {
    // One byte over the decimal reading, well under the binary one (104 857 600).
    const big = files.sparse('big.wav', MAX_UPLOAD_BYTES + 1);
    const r = await post(AE, 'k', `upload_file=@${big}`);
    expect(r).toEqual({ status: 400, body: { detail: 'File too large. The maximum upload size is 100,000,000 bytes (100 MB).' } });
    expect(errorFromHttp(r.status, r.body).code).toBe('file_too_large');
    // A service (or a proxy in front of it) that answers 413 instead is classified the same way.
    expect(errorFromHttp(413, r.body).code).toBe('file_too_large');
    expect(errorFromHttp(413, undefined).code).toBe('file_too_large');
  });

  it('a wrong method on a batch path → 405 with Allow, not 404', async () => {
    for (const [method, path, allow] of [['GET', AE, 'POST'], ['PUT', '/api/svc-2-batch', 'POST'], ['DELETE', '/api/svc-2-emotion-batch', 'POST'], ['POST', '/api/svc-2-batch/list-presets', 'GET']] as const) {
      const r = await fetch(`${emu.baseUrl}${path}`, { method, headers: { 'x-api-key': 'k' } });
      expect([method, path, r.status, r.headers.get('allow')]).toEqual([method, path, 405, allow]);
      expect(await r.json()).toEqual({ detail: 'Method Not Allowed' });
    }
    expect((await fetch(`${emu.baseUrl}/api/svc-2-no-such-endpoint`)).status).toBe(404);
  });

  it('a malformed multipart body → 400 Invalid request.', async () => {
    const r = await curl(['-H', 'X-API-Key: k', '-H', 'Content-Type: multipart/form-data; boundary=XYZ', '--data-binary', '--XYZ\r\nno-disposition: x\r\n\r\nabc\r\n--XYZ--\r\n', `${emu.baseUrl}${AE}`]);
    expect(r).toEqual({ status: 400, body: { detail: 'Invalid request.' } });
    expect(errorFromHttp(r.status, r.body).code).toBe('invalid_request');
  });

  it('missing X-API-Key → 422 with loc/msg/type', async () => {
    const r = await post(AE, undefined, `upload_file=@${tone}`);
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ detail: [{ loc: ['header', 'x-api-key'], msg: 'Field required', type: 'missing' }] });
    const err = errorFromHttp(r.status, r.body);
    expect(err.code).toBe('validation_error');
    expect(err.validationErrors?.[0]?.loc).toEqual(['header', 'x-api-key']);
  });

  it('missing header → 422 naming the header alone: the body is not read before the key is checked', async () => {
    const r = await post(AE, undefined, 'other=1');
    expect(r.status).toBe(422);
    expect((r.body as { detail: { loc: unknown[] }[] }).detail.map((d) => d.loc)).toEqual([['header', 'x-api-key']]);
  });

  it('missing upload_file → 422 for a known key', async () => {
    const r = await post(AE, 'k', 'other=1');
    expect(r.status).toBe(422);
    expect((r.body as { detail: { loc: unknown[] }[] }).detail.map((d) => d.loc)).toEqual([['body', 'upload_file']]);
  });

  it.each([
    ['unknown key', 'nope', 401, 'Invalid API key.', 'invalid_api_key'],
    ['organization with no model', 'blocked', 403, 'This request is not permitted.', 'not_permitted'],
    ['insufficient credits', 'broke', 429, 'Insufficient credits.', 'insufficient_credits'],
    ['monthly usage quota', 'quota', 429, 'Monthly usage limit reached.', 'monthly_usage_limit'],
    ['monthly credit limit', 'capped', 429, 'Monthly credit limit reached.', 'monthly_credit_limit'],
  ])('%s → %i', async (_name, key, status, detail, code) => {
    // The quota and credit-limit organizations need one charged request first.
    if (key === 'quota' || key === 'capped') expect((await post(AE, key, `upload_file=@${tone}`)).status).toBe(200);
    const r = await post(AE, key, `upload_file=@${tone}`);
    expect(r).toEqual({ status, body: { detail } });
    expect(errorFromHttp(r.status, r.body).code).toBe(code);
  });

  it('no access to the model → 403', async () => {
    const r = await post('/api/svc-2-emotion-batch', 'events-only', `upload_file=@${tone}`);
    expect(r).toEqual({ status: 403, body: { detail: 'This API key does not have access to this model.' } });
    expect(errorFromHttp(r.status, r.body).code).toBe('no_model_access');
  });

  it('concurrency limit → 429, and the slot count is the emulator\'s own', async () => {
    const org = emu.accounts.find('k')!;
    expect(emu.accounts.acquire(org, 'audio-event')).toBe(true); // hold the only slot
    try {
      const r = await post(AE, 'k', `upload_file=@${tone}`);
      expect(r).toEqual({ status: 429, body: { detail: LIMIT_DETAILS.concurrency_limit } });
      expect(errorFromHttp(r.status, r.body)).toMatchObject({ code: 'concurrency_limit', retryable: true });
    } finally {
      emu.accounts.release(org, 'audio-event');
    }
    expect(org.inFlight['audio-event']).toBe(0);
  });
});

describe('emotion detection over curl', () => {
  it('windows are 15 s and consecutive, whole windows only (38.5 s: two, the last 8.5 s in the whole-file label); none for a short file', async () => {
    const r = await post('/api/svc-2-emotion-batch', 'k', 'upload_file=@samples/call.wav', 'training_permitted=false', 'use_ensemble=true');
    expect(r.status).toBe(200);
    const e = EmotionResultSchema.parse(r.body);
    expect(e.time_series.map((w) => [w.start_ms, w.duration_ms])).toEqual([[0, 15_000], [15_000, 15_000]]);
    const short = EmotionResultSchema.parse((await post('/api/svc-2-emotion-batch', 'k', `upload_file=@${tone}`)).body);
    expect(short.time_series).toEqual([]);
  });

  it('a non-boolean use_ensemble → 422', async () => {
    const r = await post('/api/svc-2-emotion-batch', 'k', `upload_file=@${tone}`, 'use_ensemble=perhaps');
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ detail: [{ loc: ['body', 'use_ensemble'], type: 'bool_parsing' }] });
  });
});

describe('synthetic voice detection quirk', () => {
  const SVD = '/api/svc-2-synthetic-voice-detection-batch';
  it('answers 403 for an invalid key and for limits; the detail says which', async () => {
    const bad = await post(SVD, 'nope', `upload_file=@${tone}`);
    expect(bad).toEqual({ status: 403, body: { detail: 'Invalid API key.' } });
    expect(errorFromHttp(bad.status, bad.body).code).toBe('invalid_api_key');
    const broke = await post(SVD, 'broke', `upload_file=@${tone}`);
    expect(broke).toEqual({ status: 403, body: { detail: 'Insufficient credits.' } });
    expect(errorFromHttp(broke.status, broke.body).code).toBe('insufficient_credits');
  });

  it('refuses audio under 0.5 s with 422, scores longer audio', async () => {
    const short = await post(SVD, 'k', `upload_file=@${files.tone('short.wav', 0.3)}`);
    expect(short.status).toBe(422);
    expect(String((short.body as { detail: string }).detail)).toMatch(/too short/);
    const ok = await post(SVD, 'k', `upload_file=@${tone}`);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ duration_ms: 1200, deepfake_score: expect.any(Number) });
  });
});

describe('other batch paths and presets', () => {
  it.each(['/api/svc-2-stt-batch', '/api/svc-2-stt-batch-english-vfast', '/api/svc-2-stt-batch-multilingual-vfast', '/api/svc-2-pii-phi-redaction-batch'])(
    '%s answers a JSON object with the duration',
    async (path) => {
      const r = await post(path, 'k', 'upload_file=@samples/call.mp3');
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ duration_ms: expect.any(Number), segments: expect.any(Array) });
    },
  );

  it('/api/svc-2-batch needs config: default, a BatchConfig, and refuses an invalid one', async () => {
    expect((await post('/api/svc-2-batch', 'k', `upload_file=@${tone}`)).body).toMatchObject({ detail: [{ loc: ['body', 'config'], type: 'missing' }] });
    const ok = await post('/api/svc-2-batch', 'k', 'upload_file=@samples/call.wav', 'config=default');
    expect(ok.status).toBe(200);
    expect((ok.body as { clips: unknown[] }).clips.length).toBe(10);
    const cfg = JSON.stringify({ behaviors: ['preset:empathy'], produce_topics: false });
    const withConfig = await post('/api/svc-2-batch', 'k', `upload_file=@${tone}`, `config=${cfg}`);
    expect(withConfig.status).toBe(200);
    expect(withConfig.body).toMatchObject({ topics: null });
    const bad = await post('/api/svc-2-batch', 'k', `upload_file=@${tone}`, `config=${JSON.stringify({ behaviors: ['preset:nope'] })}`);
    expect(bad).toEqual({ status: 400, body: { detail: 'Invalid configuration.' } });
  });

  it('list-presets on both paths, consuming nothing', async () => {
    const org = emu.accounts.find('k')!;
    const used = { ...org.usedMs };
    for (const path of ['/api/svc-2-batch/list-presets', '/api/svc-2-streaming/list-presets']) {
      const r = await curl(['-H', 'X-API-Key: k', `${emu.baseUrl}${path}`]);
      expect(r.status).toBe(200);
      expect(PresetListSchema.parse(r.body).presets.length).toBeGreaterThan(0);
    }
    expect(org.usedMs).toEqual(used);
    expect((await curl([`${emu.baseUrl}/api/svc-2-batch/list-presets`])).status).toBe(422);
    expect((await curl(['-H', 'X-API-Key: nope', `${emu.baseUrl}/api/svc-2-batch/list-presets`])).status).toBe(401);
    expect(await curl(['-H', 'X-API-Key: blocked', `${emu.baseUrl}/api/svc-2-batch/list-presets`])).toEqual({ status: 403, body: { detail: 'This request is not permitted.' } });
    expect(await curl(['-H', 'X-API-Key: broke', `${emu.baseUrl}/api/svc-2-batch/list-presets`])).toEqual({ status: 429, body: { detail: 'Insufficient credits.' } });
  });

  it('leaves no upload temp files and no slots behind', () => {
    expect(readdirSync(privateTmp)).toEqual([]);
    for (const org of emu.accounts.organizations) for (const n of Object.values(org.inFlight)) expect(n).toBe(0);
  });
});
