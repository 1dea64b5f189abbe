// The session's audio warnings, on real sessions against the emulator over loopback: an
// observable without metadata, bytes of no detectable format, a pull-capable source its flow
// control cannot reach; and withAudioFormat stating a format that changed or was lost.
import { createReadStream, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asyncScheduler, from, map, Observable, subscribeOn } from 'rxjs';
import { analyzeConversation, audioMetaOf, createSessionStats, decodeG711, fileSource, fromReadable, InputError, withAudioFormat, type AudioChunk, type AudioWarning, type ConversationOptions, type ServerEvent, type SessionStats } from 'svc-stream';
import { startEmulator, type RunningEmulator } from 'svc-stream/emulator';

const KEY = 'sk-test-audio-check';
const SAMPLES = fileURLToPath(new URL('../../samples/', import.meta.url));
const MULAW = { audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 } as const;
const MULAW_BYTES = readFileSync(SAMPLES + 'call-8k.mulaw');
const WAV_BYTES = readFileSync(SAMPLES + 'call.wav');

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startEmulator({ apiKey: KEY });
});
afterAll(() => emu?.close());

interface Outcome {
  readonly events: ServerEvent[];
  readonly error: unknown;
  readonly warnings: AudioWarning[];
  readonly stats: SessionStats;
}

function session(audio$: Observable<AudioChunk>, options: ConversationOptions = {}): Promise<Outcome> {
  const stats = createSessionStats();
  const warnings: AudioWarning[] = [];
  const events: ServerEvent[] = [];
  return new Promise((resolve) => {
    audio$.pipe(analyzeConversation({ apiKey: KEY, baseUrl: emu.baseUrl, stats, onAudioWarning: (w) => warnings.push(w), ...options })).subscribe({
      next: (e) => events.push(e),
      error: (error: unknown) => resolve({ events, error, warnings, stats }),
      complete: () => resolve({ events, error: undefined, warnings, stats }),
    });
  });
}

/** A user's own push observable: no metadata. */
function plain(bytes: Buffer, size = 8192): Observable<AudioChunk> {
  return new Observable<AudioChunk>((subscriber) => {
    for (let i = 0; i < bytes.length; i += size) subscriber.next(bytes.subarray(i, i + size));
    subscriber.complete();
  });
}

describe('the session warns when the audio does not say enough', () => {
  it('a plain new Observable of raw bytes: audio_meta_missing, then audio_format_unknown, before the service refuses it', async () => {
    const r = await session(plain(MULAW_BYTES));
    expect(r.warnings.map((w) => w.code)).toEqual(['audio_meta_missing', 'audio_format_unknown']);
    expect(r.warnings[0]!.message).toContain('pass `format` and `flow`');
    expect(r.stats.audioWarnings).toBe(2);
    expect(r.stats.lastAudioWarning?.code).toBe('audio_format_unknown');
    expect((r.error as { code?: string }).code).toBe('invalid_audio');
  });

  it('a Readable of raw bytes without a format: audio_format_unknown only (it can pause), before the service refuses it', async () => {
    const r = await session(fromReadable(createReadStream(SAMPLES + 'call-8k.mulaw')));
    expect(r.warnings.map((w) => w.code)).toEqual(['audio_format_unknown']);
    expect((r.error as { code?: string }).code).toBe('invalid_audio');
  });

  it('the same observable with `format` given: no warning, and it completes', async () => {
    const r = await session(plain(MULAW_BYTES), { format: MULAW });
    expect(r.error).toBeUndefined();
    expect(r.warnings).toEqual([]);
    expect(r.events.at(-1)?.type).toBe('done');
  });

  it('from(array) of a WAV, in chunks of 5 bytes: audio_meta_missing only (the container is detected across chunks)', async () => {
    const head = [...Array.from({ length: 4 }, (_, i) => WAV_BYTES.subarray(i * 5, i * 5 + 5)), WAV_BYTES.subarray(20)];
    const r = await session(from(head));
    expect(r.warnings.map((w) => w.code)).toEqual(['audio_meta_missing']);
    expect(r.error).toBeUndefined();
    expect(r.events.at(-1)?.type).toBe('done');
  });

  it('a source with flow control subscribed later (subscribeOn): flow_not_connected, treated as a push source', async () => {
    const r = await session(fileSource(SAMPLES + 'call-8k.mulaw', { format: MULAW }).pipe(subscribeOn(asyncScheduler)));
    expect(r.warnings.map((w) => w.code)).toEqual(['flow_not_connected']);
    expect(r.stats.pauses).toBe(0);
    expect(r.error).toBeUndefined();
  });

  it('a warning handler that throws does not end the session (the throw is reported asynchronously)', async () => {
    const thrown: unknown[] = [];
    const onError = (err: unknown): void => void thrown.push(err);
    process.on('uncaughtException', onError);
    try {
      const r = await session(plain(WAV_BYTES), {
        onAudioWarning: () => {
          throw new Error('handler bug');
        },
      });
      expect(r.error).toBeUndefined();
      expect(r.stats.audioWarnings).toBe(1);
      expect(thrown.map(String)).toEqual(['Error: handler bug']);
    } finally {
      process.off('uncaughtException', onError);
    }
  });
});

describe('withAudioFormat', () => {
  it('states the format a decoder produced: mulaw decoded to s16le completes as s16le', async () => {
    const s16 = { audio_format: 's16le', sample_rate: 8000, num_channels: 1 } as const;
    const audio$ = fileSource(SAMPLES + 'call-8k.mulaw', { format: MULAW }).pipe(
      map((c) => decodeG711('mulaw', c)),
      withAudioFormat(s16),
    );
    expect(audioMetaOf(audio$)?.format).toEqual(s16);
    const r = await session(audio$, { highWaterMark: 4096, maxBufferedBytes: 1024 });
    expect(r.error).toBeUndefined();
    expect(r.stats.bytesSent).toBe(MULAW_BYTES.length * 2);
    // The flow control went through, to the file.
    expect(r.stats.pauses).toBeGreaterThan(0);
  });

  it('states the format of a source that has none (a Readable of raw bytes)', async () => {
    const r = await session(fromReadable(createReadStream(SAMPLES + 'call-8k.mulaw')).pipe(withAudioFormat(MULAW)));
    expect(r.error).toBeUndefined();
    expect(r.warnings).toEqual([]);
    expect(r.events.at(-1)?.type).toBe('done');
  });

  it('refuses at once a format the service refuses', () => {
    expect(() => withAudioFormat({ audio_format: 'mulaw', sample_rate: 8000 } as never)).toThrow(InputError);
    expect(() => withAudioFormat({ audio_format: 'opus' } as never)).toThrow(expect.objectContaining({ code: 'invalid_audio_params' }));
  });
});
