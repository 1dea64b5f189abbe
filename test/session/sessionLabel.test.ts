// What made a session's results, as the session learns it over real sockets (stats.label): the
// service (no header), the emulator without a scenario, a scenario file, a recording, and a
// scenario that follows its audio: its own audio scripted, other audio labelled by what
// happened (speech segments only, no resume note), a resume found (unchanged) and a resume not
// found (a note, only then). Each label is known before the first event it labels.
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { from, Observable } from 'rxjs';
import { WebSocketServer } from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { analyzeConversation, createSessionStats, samplePath, type ResultLabel, type SessionStats } from 'svc-stream';
import { loadScenarioFile, startEmulator, type EmulatorOptions, type ScenarioInput } from 'svc-stream/emulator';
import { recordingScenario } from '../../src/emulator/recording.js';

const KEY = 'sk-label-0001';
const RAW = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } as const;
const SAMPLES = new URL('../../samples/', import.meta.url);
const pcmOf = (name: string, seconds?: number): Buffer => {
  const wav = readFileSync(new URL(name, SAMPLES));
  return wav.subarray(44, seconds === undefined ? undefined : 44 + seconds * 32_000);
};
const CALL = pcmOf('call.wav', 20);
/** Not the sample call: the music and applause sample. */
const OTHER = pcmOf('music-applause.wav');

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Labelled {
  /** The label when the first event arrived. */
  readonly atFirstEvent: ResultLabel | undefined;
  /** Every label the stats held, in order, read at each event. */
  readonly seen: readonly (ResultLabel | undefined)[];
  readonly stats: SessionStats;
}

/** 20 ms chunks of `pcm`, as fast as the session takes them. */
const chunks = (pcm: Buffer): Observable<Uint8Array> => from(Array.from({ length: Math.ceil(pcm.length / 640) }, (_, i) => pcm.subarray(i * 640, (i + 1) * 640)));

function run(baseUrl: string, pcm: Buffer, reconnect?: object): Promise<Labelled> {
  const stats = createSessionStats();
  const seen: (ResultLabel | undefined)[] = [];
  let atFirstEvent: ResultLabel | undefined;
  let first = true;
  return new Promise((resolve, reject) => {
    const sub = chunks(pcm)
      .pipe(analyzeConversation({ apiKey: KEY, baseUrl, format: RAW, stats, ...(reconnect ? { reconnect } : {}) }))
      .subscribe({
        next: () => {
          if (first) atFirstEvent = stats.label;
          first = false;
          if (seen.at(-1) !== stats.label) seen.push(stats.label);
        },
        error: reject,
        complete: () => resolve({ atFirstEvent, seen, stats }),
      });
    cleanups.push(() => sub.unsubscribe());
  });
}

async function emulator(options: EmulatorOptions): Promise<string> {
  const emu = await startEmulator({ apiKey: KEY, ...options });
  cleanups.push(() => emu.close());
  return emu.baseUrl;
}

const CALL_SCENARIO = await loadScenarioFile(samplePath('call.scenario.json'));
const SCRIPTED: ResultLabel = { source: 'scenario', file: 'call.scenario.json' };

describe('the label of a session, from its first event', () => {
  it('a server without the emulator header is the service', async () => {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((r) => wss.once('listening', r));
    cleanups.push(() => new Promise<void>((r) => wss.close(() => r())));
    wss.on('connection', (ws) => {
      ws.on('message', (data, isBinary) => {
        if (!isBinary && data.toString() === '') {
          ws.send(JSON.stringify({ type: 'done', duration_ms: 1000 }));
          ws.close(1000);
        }
      });
    });
    const r = await run(`http://127.0.0.1:${(wss.address() as AddressInfo).port}`, CALL.subarray(0, 32_000));
    expect(r.atFirstEvent).toEqual({ source: 'service' });
  });

  it('the emulator without a scenario: speech segments only', async () => {
    const r = await run(await emulator({}), CALL.subarray(0, 5 * 32_000));
    expect(r.atFirstEvent).toEqual({ source: 'emulator', note: expect.stringMatching(/^speech segments only \(no transcription/) });
    expect(r.seen).toHaveLength(1);
  });

  it('a scenario file that names no audio: scripted, with its file', async () => {
    const { audio: _a, ...scenario } = CALL_SCENARIO;
    const r = await run(await emulator({ scenario: scenario as ScenarioInput }), CALL.subarray(0, 5 * 32_000));
    expect(r.atFirstEvent).toEqual(SCRIPTED);
  });

  it('a recording replayed: recording, with its file', async () => {
    const text = ['{"type":"svc-stream-recording","version":1}', JSON.stringify({ at_ms: 0, event: { type: 'topics', topics: ['billing'] } })].join('\n');
    const replay = recordingScenario(text, '/tmp/desk-7.ndjson');
    const r = await run(await emulator({ scenario: { ...replay, steps: [...replay.steps] } }), CALL.subarray(0, 32_000));
    expect(r.atFirstEvent).toEqual({ source: 'recording', file: 'desk-7.ndjson' });
  });
});

describe('a scenario that follows its audio', () => {
  it('its own audio is scripted; other audio gets speech segments only and says why, with no resume note', async () => {
    const baseUrl = await emulator({ scenario: CALL_SCENARIO });
    const own = await run(baseUrl, CALL);
    expect(own.atFirstEvent).toEqual(SCRIPTED);
    expect(own.seen).toEqual([SCRIPTED]);
    const other = await run(baseUrl, OTHER);
    expect(other.atFirstEvent).toEqual({ source: 'emulator', note: 'speech segments only: this audio is not call.wav, which scenario call.scenario.json scripts' });
    expect(other.seen).toHaveLength(1);
    expect(JSON.stringify(other.seen)).not.toMatch(/resumed/);
  });

  it('a resume found in its audio changes nothing; one that is not gets a note, from there on', async () => {
    const dropped: ScenarioInput = { ...CALL_SCENARIO, faults: [{ at: 'audio', at_ms: 12_000, action: 'drop' }] };
    const reconnect = { initialDelayMs: 20, maxDelayMs: 50 };
    let n = 0;
    const found = await run(await emulator({ scenario: () => (n++ === 0 ? dropped : CALL_SCENARIO) }), CALL, reconnect);
    expect(found.stats.reconnects).toBe(1);
    expect(found.seen).toEqual([SCRIPTED]);
    // The second session's scenario names other audio: the resumed segment is not in it.
    let m = 0;
    const elsewhere = { ...CALL_SCENARIO, audio: new URL('music-applause.wav', SAMPLES).pathname };
    const lost = await run(await emulator({ scenario: () => (m++ === 0 ? dropped : elsewhere) }), CALL, reconnect);
    expect(lost.stats.reconnects).toBe(1);
    expect(lost.atFirstEvent).toEqual(SCRIPTED);
    expect(lost.seen).toEqual([SCRIPTED, { ...SCRIPTED, note: 'a resumed segment could not be found in music-applause.wav: speech segments only from there' }]);
  });
});
