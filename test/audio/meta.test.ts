// Audio metadata through standard RxJS operators, on real sessions against the emulator over
// loopback: a raw mulaw file keeps its format (without it the service refuses the bytes with
// invalid_audio), and a file keeps its flow control (a tiny maxBufferedBytes would fail a push
// source at once; the source emits nothing while the session is paused).
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  asyncScheduler,
  bufferCount,
  bufferTime,
  concatMap,
  filter,
  map,
  merge,
  NEVER,
  observeOn,
  of,
  share,
  take,
  takeUntil,
  tap,
  type MonoTypeOperatorFunction,
  type Observable,
} from 'rxjs';
import { analyzeConversation, AudioSource, audioMetaOf, createSessionStats, fileSource, type AudioChunk, type ServerEvent, type SessionState, type SessionStats } from 'svc-stream';
import { startEmulator, type RunningEmulator } from 'svc-stream/emulator';

const KEY = 'sk-test-audio-meta';
const SAMPLES = fileURLToPath(new URL('../../samples/', import.meta.url));
const MULAW = { audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 } as const;
const CHUNK = 16 * 1024;
const concatChunks = (chunks: AudioChunk[]): AudioChunk => Buffer.concat(chunks);

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startEmulator({ apiKey: KEY });
});
afterAll(() => emu?.close());

/** Each operator of the issue, as a chunks-to-chunks operator a user would insert. */
const OPERATORS: Array<[string, MonoTypeOperatorFunction<AudioChunk>, { partial?: boolean }?]> = [
  ['tap', tap(() => undefined)],
  ['map (same chunks)', map((c) => c)],
  ['filter', filter((c) => c.byteLength > 0)],
  ['take', take(6), { partial: true }],
  ['takeUntil', takeUntil(NEVER)],
  ['bufferCount + merge back', (s) => s.pipe(bufferCount(5), map(concatChunks))],
  ['bufferTime + merge back', (s) => s.pipe(bufferTime(5), filter((b) => b.length > 0), map(concatChunks))],
  ['concatMap', concatMap((c) => of(c))],
  ['share', share()],
  ['observeOn', observeOn(asyncScheduler)],
];

/** The files: a raw format (only the metadata says what it is) and a container (flow). */
const SOURCES: Array<[string, () => Observable<AudioChunk>]> = [
  ['mulaw 8 kHz raw file', () => fileSource(SAMPLES + 'call-8k.mulaw', { format: MULAW, chunkSize: CHUNK })],
  ['wav file', () => fileSource(SAMPLES + 'call.wav', { chunkSize: CHUNK, probe: false })],
];

interface Run {
  readonly events: ServerEvent[];
  readonly error: unknown;
  readonly stats: SessionStats;
  /** Chunks the source emitted while the session was paused. */
  readonly emittedWhilePaused: number;
  readonly sourceBytes: number;
}

/** One session over `source` through `op`, with a high-water mark far under one chunk. */
function run(source: Observable<AudioChunk>, op: MonoTypeOperatorFunction<AudioChunk>): Promise<Run> {
  const stats = createSessionStats();
  const events: ServerEvent[] = [];
  let state: SessionState['status'] = 'connecting';
  let emittedWhilePaused = 0;
  let sourceBytes = 0;
  // Counted at the source, before the operator: a gated source reads nothing while paused.
  const counted = source.pipe(
    tap((c) => {
      sourceBytes += c.byteLength;
      if (state === 'paused') emittedWhilePaused++;
    }),
  );
  return new Promise((resolve) => {
    counted
      .pipe(
        op,
        analyzeConversation({
          apiKey: KEY,
          baseUrl: emu.baseUrl,
          stats,
          highWaterMark: 4096,
          // A source the session could not pause would fail at its first chunk.
          maxBufferedBytes: 1024,
          onStateChange: (_, next) => (state = next.status),
        }),
      )
      .subscribe({
        next: (e) => events.push(e),
        error: (error: unknown) => resolve({ events, error, stats, emittedWhilePaused, sourceBytes }),
        complete: () => resolve({ events, error: undefined, stats, emittedWhilePaused, sourceBytes }),
      });
  });
}

describe('audio metadata through operators, on a real session', () => {
  for (const [sourceName, makeSource] of SOURCES) {
    for (const [opName, op, opts] of OPERATORS) {
      it(`${sourceName} | ${opName}: the format and the flow control reach the session`, async () => {
        const r = await run(makeSource(), op);
        expect(r.error).toBeUndefined();
        expect(r.events.at(-1)?.type).toBe('done');
        expect(r.stats.pauses).toBeGreaterThan(0);
        expect(r.emittedWhilePaused).toBe(0);
        expect(r.stats.audioWarnings).toBe(0);
        expect(r.stats.bytesSent).toBe(r.stats.bytesRead);
        if (opts?.partial) expect(r.stats.bytesRead).toBe(6 * CHUNK);
        else expect(r.stats.bytesRead).toBe(r.sourceBytes);
      }, 20_000);
    }
  }

  it('lifted operators keep the same metadata object', () => {
    const src = fileSource(SAMPLES + 'call-8k.mulaw', { format: MULAW });
    const piped = src.pipe(tap(() => undefined), map((c) => c), share());
    expect(piped).toBeInstanceOf(AudioSource);
    expect(audioMetaOf(piped)).toBe(audioMetaOf(src));
  });

  it('one shared file, two sessions: both complete, and the source reads at the pace of the slower', async () => {
    const stats = [createSessionStats(), createSessionStats()] as const;
    const states: Array<SessionState['status']> = ['connecting', 'connecting'];
    let emittedWhilePaused = 0;
    let sourceBytes = 0;
    // Counted once per chunk the file emits, before `share`.
    const counted = fileSource(SAMPLES + 'call-8k.mulaw', { format: MULAW, chunkSize: CHUNK }).pipe(
      tap((c) => {
        sourceBytes += c.byteLength;
        if (states.includes('paused')) emittedWhilePaused++;
      }),
      share(),
    );
    const session = (i: 0 | 1): Observable<ServerEvent> =>
      counted.pipe(
        analyzeConversation({
          apiKey: KEY,
          baseUrl: emu.baseUrl,
          stats: stats[i],
          highWaterMark: 4096,
          maxBufferedBytes: 1024,
          onStateChange: (_, next) => (states[i] = next.status),
        }),
      );
    const dones = await new Promise<number>((resolve, reject) => {
      let n = 0;
      merge(session(0), session(1)).subscribe({ next: (e) => (n += e.type === 'done' ? 1 : 0), error: reject, complete: () => resolve(n) });
    });
    expect(dones).toBe(2);
    for (const s of stats) {
      expect(s.pauses).toBeGreaterThan(0);
      expect(s.bytesSent).toBe(s.bytesRead);
    }
    expect(emittedWhilePaused).toBe(0);
    // The second session joined the running read: both got every chunk of one read.
    expect(stats[0].bytesRead).toBe(sourceBytes);
    expect(stats[1].bytesRead).toBe(sourceBytes);
  }, 20_000);
});
