// The resilient layer (reconnect on, the default) must not weaken flow control: a pull source
// that reads synchronously when subscribed is held at the high-water mark before the first
// session exists, and then by that session, exactly as with `reconnect: false`. Real session
// against the emulator over loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastValueFrom, Observable } from 'rxjs';
import { analyzeConversation, createSessionStats, type FlowControl, type FlowSlot } from 'svc-stream';
import { withAudioMeta } from '../../src/audio/meta.js';
import { startEmulator, type RunningEmulator } from 'svc-stream/emulator';

const KEY = 'sk-test-resilient-flow';
const RAW = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } as const;
const CHUNK = 3200;
const COUNT = 2000; // 6.4 MB, 200 s of audio: far more than one high-water mark

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startEmulator({ apiKey: KEY });
});
afterAll(() => emu?.close());

/** A pull source that emits synchronously while its gate is open (as a file read into memory could). */
function syncPullSource(): { audio$: Observable<Uint8Array>; emitted: () => number } {
  const slot: FlowSlot = { current: undefined };
  let emitted = 0;
  const source = new Observable<Uint8Array>((subscriber) => {
    const flow: FlowControl | undefined = slot.current;
    slot.current = undefined;
    let stopped = false;
    void (async () => {
      while (emitted < COUNT && !stopped) {
        if (flow?.paused) await flow.ready();
        while (emitted < COUNT && !stopped && !flow?.paused) {
          emitted++;
          subscriber.next(new Uint8Array(CHUNK));
        }
      }
      if (!stopped) subscriber.complete();
    })();
    return () => {
      stopped = true;
    };
  });
  return { audio$: withAudioMeta(source, { format: RAW, flow: slot }), emitted: () => emitted };
}

describe('flow control through the resilient layer', () => {
  it.each([
    ['reconnect on (the default)', undefined],
    ['reconnect: false', false as const],
  ])('%s: a synchronous pull source is paused at the high-water mark and every byte is sent', async (_name, reconnect) => {
    const stats = createSessionStats();
    const highWaterMark = 256 * 1024;
    const { audio$, emitted } = syncPullSource();
    await lastValueFrom(audio$.pipe(analyzeConversation({ apiKey: KEY, baseUrl: emu.baseUrl, stats, highWaterMark, reconnect })));
    expect(emitted()).toBe(COUNT);
    expect(stats.bytesSent).toBe(COUNT * CHUNK);
    expect(stats.pauses).toBeGreaterThan(0);
    // Bounded by the pressure point plus what one turn can add, never by the whole stream.
    expect(stats.peakBufferedBytes).toBeLessThan(2 * 1024 * 1024);
  });
});
