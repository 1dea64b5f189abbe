// streamJson (src/session/jsonStreaming.ts): the streaming endpoints whose event shapes the
// contract does not show, as validated JSON frames. Real sessions against the emulator.
import { afterEach, describe, expect, it } from 'vitest';
import { from, lastValueFrom, Observable, toArray } from 'rxjs';
import { createSessionStats, InputError, streamJson, type EventWarning } from 'svc-stream';
import { startEmulator, type RunningEmulator, type ScenarioInput } from 'svc-stream/emulator';

const KEY = 'sk-test-json-streaming-secret';
const RAW = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } as const;

let emulators: RunningEmulator[] = [];
afterEach(async () => {
  await Promise.all(emulators.map((e) => e.close()));
  emulators = [];
});

async function emulator(scenario: ScenarioInput): Promise<RunningEmulator> {
  const emu = await startEmulator({ apiKey: KEY, scenario });
  emulators.push(emu);
  return emu;
}

/** 300 ms of s16le silence. */
const audio = (): Observable<Uint8Array> => from([new Uint8Array(3200), new Uint8Array(3200), new Uint8Array(3200)]);

describe('streamJson', () => {
  it('an endpoint that is not one of the JSON streaming endpoints is refused locally, naming the choices', async () => {
    const err = await lastValueFrom(audio().pipe(streamJson({ endpoint: 'nope' as never, apiKey: KEY, baseUrl: 'http://127.0.0.1:9', format: RAW }))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect(err).toMatchObject({ code: 'invalid_argument', path: 'endpoint' });
    expect((err as Error).message).toContain('sttStreaming, syntheticVoiceDetectionStreaming, piiPhiRedactionStreaming');
  });
});

describe('streamJson tolerance', () => {
  it('a frame whose type is not a string is delivered as unknown and counted; strict refuses it', async () => {
    const scenario: ScenarioInput = { steps: [{ raw: '{"type":7,"segment":{"text":"x"}}' }] };
    const emu = await emulator(scenario);
    const stats = createSessionStats();
    const warnings: EventWarning[] = [];
    const frames = await lastValueFrom(audio().pipe(streamJson({ endpoint: 'sttStreaming', apiKey: KEY, baseUrl: emu.baseUrl, format: RAW, stats, onWarning: (w) => warnings.push(w) }), toArray()));
    expect(frames[0]).toEqual({ type: 'unknown', data: { type: 7, segment: { text: 'x' } }, reason: 'type: Invalid input: expected string, received number' });
    expect(frames.at(-1)?.type).toBe('done');
    expect(stats.warnings).toBe(1);
    expect(stats.status).toBe('done');
    expect(warnings[0]).toMatchObject({ code: 'out_of_contract_value', path: 'type', action: 'unknown' });
    const strict = await lastValueFrom(audio().pipe(streamJson({ endpoint: 'sttStreaming', apiKey: KEY, baseUrl: emu.baseUrl, format: RAW, strict: true }), toArray())).catch((e: unknown) => e);
    expect(strict).toMatchObject({ code: 'malformed_frame' });
  });
});
