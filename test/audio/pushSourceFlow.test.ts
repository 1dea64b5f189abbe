// The documented way to pace a plain push Observable (docs/audio-sources.md): hand the session
// a FlowControl as `flow` and wait on it before each chunk. Real loopback socket, real emulator.
import { afterEach, describe, expect, it } from 'vitest';
import { Observable } from 'rxjs';
import { analyzeConversation, createSessionStats, FlowControl, type SvcError } from 'svc-stream';
import { startEmulator, type RunningEmulator } from 'svc-stream/emulator';

const KEY = 'sk-test-push-flow';
const RAW = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } as const;
const CHUNK = 1 << 20;

let emulator: RunningEmulator | undefined;
afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

/** The docs' push source: no flow slot, checks `flow` before every chunk, endless. */
function pushSource(flow: FlowControl | undefined, counter: { produced: number }): Observable<Uint8Array> {
  const chunk = new Uint8Array(CHUNK);
  return new Observable<Uint8Array>((subscriber) => {
    let stopped = false;
    void (async () => {
      while (!stopped) {
        if (flow?.paused) await flow.ready();
        if (stopped) return;
        counter.produced += CHUNK;
        subscriber.next(chunk);
        await new Promise((r) => setImmediate(r));
      }
    })();
    return () => {
      stopped = true;
    };
  });
}

describe('a push source paced by FlowControl', () => {
  it('pauses instead of failing with backpressure_overflow when the server stops reading', async () => {
    emulator = await startEmulator({ apiKey: KEY, scenario: { faults: [{ at: 'config', action: 'stop_reading' }] } });
    const flow = new FlowControl();
    const stats = createSessionStats();
    const counter = { produced: 0 };
    let failure: SvcError | undefined;
    const sub = pushSource(flow, counter)
      .pipe(analyzeConversation({ apiKey: KEY, baseUrl: emulator.baseUrl, format: RAW, flow, highWaterMark: 1 << 20, maxBufferedBytes: 8 << 20, stats }))
      .subscribe({ error: (err: SvcError) => (failure = err) });
    try {
      await expect.poll(() => stats.pauses > 0 || failure !== undefined, { timeout: 10_000, interval: 10 }).toBe(true);
      expect(failure).toBeUndefined();
      expect(stats.pauses).toBeGreaterThan(0);
      // The kernel's socket buffers take a few MB after the first pause; then it holds: the
      // count of chunks produced stops moving (the same at two looks 300 ms apart).
      let last = -1;
      await expect
        .poll(
          () => {
            const held = counter.produced === last;
            last = counter.produced;
            return held;
          },
          { timeout: 10_000, interval: 300 },
        )
        .toBe(true);
      expect(flow.paused).toBe(true);
      // What waits to be sent stays bounded by the high-water mark, far under maxBufferedBytes.
      expect(stats.bytesRead - stats.bytesSent).toBeLessThanOrEqual((1 << 20) + CHUNK);
      expect(failure).toBeUndefined();
    } finally {
      sub.unsubscribe();
    }
  }, 30_000);

  it('without the FlowControl, the same source fails with backpressure_overflow', async () => {
    emulator = await startEmulator({ apiKey: KEY, scenario: { faults: [{ at: 'config', action: 'stop_reading' }] } });
    const counter = { produced: 0 };
    const err = await new Promise<SvcError>((resolve, reject) => {
      pushSource(undefined, counter)
        .pipe(analyzeConversation({ apiKey: KEY, baseUrl: emulator!.baseUrl, format: RAW, maxBufferedBytes: 8 << 20 }))
        .subscribe({ error: resolve, complete: () => reject(new Error('completed')) });
    });
    expect(err.code).toBe('backpressure_overflow');
  }, 30_000);
});
