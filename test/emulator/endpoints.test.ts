// The other streaming paths: the same authentication and limits, each with its own model
// and close codes, and their emulator shapes ending in done.
import { describe, expect, it } from 'vitest';
import { from, lastValueFrom, toArray } from 'rxjs';
import { streamJson } from 'svc-stream';
import { withAudioMeta } from '../../src/audio/meta.js';
import { CALL_SCENARIO, connectionsEnded, ofType, runSession, sample, wavBody, withEmulator, wsUrl } from './helpers.js';

const STT = '/api/svc-2-stt-streaming';
const SVD = '/api/svc-2-synthetic-voice-detection-streaming';
const PII = '/api/svc-2-pii-phi-redaction-streaming';
const RAW16 = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 };

describe('authentication and limits on the other paths', () => {
  it('STT: 4001 bad key, 4003 no access, 4029 for every limit including concurrency', async () => {
    const orgs = [
      { keys: ['conv-only'], models: ['conversation' as const] },
      { keys: ['one'], concurrency: 1 },
      { keys: ['broke'], credits: 0 },
    ];
    await withEmulator({ organizations: orgs, apiKey: 'one' }, async (emu) => {
      const bad = await runSession(wsUrl(emu, STT, {}, 'nope'));
      expect([bad.closeCode, bad.frames.at(-1)]).toEqual([4001, { type: 'error', error: 'Invalid API key.' }]);
      const denied = await runSession(wsUrl(emu, STT, {}, 'conv-only'));
      expect(denied.closeCode).toBe(4003);
      expect(denied.frames.at(-1)?.type).toBe('error');
      const broke = await runSession(wsUrl(emu, STT, {}, 'broke'));
      expect([broke.closeCode, broke.frames.at(-1)]).toEqual([4029, { type: 'error', error: 'Insufficient credits.' }]);
      // Concurrency is per model: a conversation socket does not count against STT.
      const held = runSession(wsUrl(emu, '/api/svc-2-streaming', RAW16, 'one'), { config: 'default', end: false, timeoutMs: 400 });
      const held2 = runSession(wsUrl(emu, STT, RAW16, 'one'), { end: false, timeoutMs: 400 });
      // Both admitted: the server's own counters hold their slots.
      await expect.poll(() => emu.accounts.find('one')!.inFlight).toMatchObject({ conversation: 1, stt: 1 });
      const over = await runSession(wsUrl(emu, STT, RAW16, 'one'));
      expect(over.closeCode).toBe(4029);
      expect(String(over.frames.at(-1)?.['error'])).toMatch(/Concurrent request limit/);
      await Promise.all([held, held2]);
    });
  });

  it('synthetic voice detection: 4003 for a bad key and for limits', async () => {
    await withEmulator({ organizations: [{ keys: ['quota'], monthlyUsageQuotaMs: { 'synthetic-voice-detection': 0 } }], apiKey: 'quota' }, async (emu) => {
      const bad = await runSession(wsUrl(emu, SVD, RAW16, 'nope'));
      expect([bad.closeCode, bad.frames.at(-1)?.type]).toEqual([4003, 'error']);
      const limited = await runSession(wsUrl(emu, SVD, RAW16));
      expect([limited.closeCode, limited.frames.at(-1)]).toEqual([4003, { type: 'error', error: 'Monthly usage limit reached.' }]);
    });
  });

  it('PII: 4001 bad key, 4030 over concurrency', async () => {
    await withEmulator({ organizations: [{ keys: ['k'], concurrency: { 'pii-phi-redaction': 1 } }], apiKey: 'k' }, async (emu) => {
      expect((await runSession(wsUrl(emu, PII, {}, 'nope'))).closeCode).toBe(4001);
      const held = runSession(wsUrl(emu, PII, RAW16), { end: false, timeoutMs: 400 });
      await expect.poll(() => emu.accounts.find('k')!.inFlight['pii-phi-redaction']).toBe(1);
      const over = await runSession(wsUrl(emu, PII, RAW16));
      expect([over.closeCode, over.frames.at(-1)?.type]).toEqual([4030, 'error']);
      await held;
    });
  });
});

describe('emulator shapes', () => {
  it('STT: partial_clip and clip events from the signal, text from the scenario, then done; charged to stt', async () => {
    await withEmulator({ scenario: CALL_SCENARIO as never }, async (emu) => {
      const r = await runSession(wsUrl(emu, STT, RAW16), { audio: wavBody(sample('call.wav')) });
      expect(r.closeCode).toBe(1000);
      const clips = ofType(r.frames, 'clip').map((f) => f['clip'] as any);
      expect(clips).toHaveLength(10);
      expect(clips[3].text).toBe('Four four one two.');
      expect(ofType(r.frames, 'partial_clip').length).toBeGreaterThan(10);
      expect(new Set(r.frames.map((f) => f.type))).toEqual(new Set(['partial_clip', 'clip', 'done']));
      expect(r.frames.at(-1)).toEqual({ type: 'done', duration_ms: 38507 });
      await connectionsEnded(emu, 1);
      expect(emu.accounts.organizations[0]!.usedMs.stt).toBe(38507);
      expect(emu.accounts.organizations[0]!.usedMs.conversation).toBe(0);
    });
  });

  it('STT takes an optional config frame first', async () => {
    await withEmulator({}, async (emu) => {
      const r = await runSession(wsUrl(emu, STT, RAW16), { config: 'default', audio: wavBody(sample('call.wav')).subarray(0, 64000) });
      expect(r.frames.at(-1)).toEqual({ type: 'done', duration_ms: 2000 });
    });
  });

  it('synthetic voice detection: a window every 2 s with its speech time; score only when the scenario gives one', async () => {
    await withEmulator({ scenario: { synthetic_voice_score: 0.97 } }, async (emu) => {
      const r = await runSession(wsUrl(emu, SVD, RAW16), { audio: wavBody(sample('call.wav')) });
      const windows = ofType(r.frames, 'synthetic_voice').map((f) => f['window'] as any);
      expect(windows).toHaveLength(20); // 19 whole windows and a 507 ms tail
      windows.forEach((w, i) => expect(w.start_ms).toBe(i * 2000));
      expect(windows.every((w) => w.speech_ms > 0 && w.score === 0.97)).toBe(true);
      expect(r.frames.at(-1)).toEqual({ type: 'done', duration_ms: 38507 });
    });
    await withEmulator({}, async (emu) => {
      const r = await runSession(wsUrl(emu, SVD, RAW16), { audio: Buffer.alloc(32000 * 3) });
      const windows = ofType(r.frames, 'synthetic_voice').map((f) => f['window'] as any);
      expect(windows).toEqual([
        { start_ms: 0, duration_ms: 2000, speech_ms: 0, score: null },
        { start_ms: 2000, duration_ms: 1000, speech_ms: 0, score: null },
      ]);
    });
  });

  it('PII redaction: redacted segments with entities, through our streamJson client', async () => {
    await withEmulator({ scenario: CALL_SCENARIO as never }, async (emu) => {
      const wav = sample('call.wav');
      const audio$ = withAudioMeta(from([new Uint8Array(wav)]), { format: { audio_format: 'wav' } });
      const frames = await lastValueFrom(audio$.pipe(streamJson({ endpoint: 'piiPhiRedactionStreaming', apiKey: emu.apiKey, baseUrl: emu.baseUrl }), toArray()));
      const segments = frames.filter((f) => f.type === 'redacted_segment').map((f) => (f as any).segment);
      expect(segments).toHaveLength(10);
      expect(segments[0].text).toBe('Northwind Bank support, this is [PERSON_NAME]. How can I help?');
      expect(segments[3].text).toBe('[NUMBER].');
      expect(segments[3].entities).toEqual([{ label: 'NUMBER', start: 0, end: 17 }]);
      expect(frames.at(-1)).toEqual({ type: 'done', duration_ms: 38507 });
    });
  });
});
