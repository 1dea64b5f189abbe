// The live view's progress on the stream's time axis, step by step with the session's figures
// as they move through a reconnect (no socket: the figures are the input, an injected clock).
import { describe, expect, it } from 'vitest';
import { audioProgress, bytesAsMs } from '../../src/cli/audioProgress.js';
import { progressText } from '../../src/cli/terminalView.js';
import type { SessionStatus } from '../../src/schema/sessionState.js';

const S16 = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } as const;
const SECOND = 32_000; // bytes of one second of S16

function harness(durationMs = 60_000) {
  let now = 0;
  const stats = { bytesSent: 0, bytesReplayed: 0, bytesDropped: 0, reconnectingMs: 0, status: 'streaming' as SessionStatus };
  const progress = audioProgress({ stats, format: S16, durationMs: () => durationMs, fileSize: undefined, now: () => now });
  return { stats, progress, tick: (ms: number) => (now += ms) };
}

describe('audioProgress', () => {
  it('a reconnect: the replay does not move the position back or forward, and the rate leaves out the outage', () => {
    const h = harness();
    const seen: number[] = [];
    const step = (): void => void seen.push(h.progress().positionMs!);
    h.tick(5_000);
    h.stats.bytesSent = 5 * SECOND;
    step(); // 5 s in
    h.stats.status = 'reconnecting';
    h.tick(2_000);
    h.stats.reconnectingMs = 2_000;
    h.stats.status = 'streaming';
    // The new session is sent 1.5 s again from the commit point (sent and replayed), then new audio.
    h.stats.bytesSent += 1.5 * SECOND;
    h.stats.bytesReplayed = 1.5 * SECOND;
    step();
    h.tick(1_000);
    h.stats.bytesSent += SECOND;
    step();
    // Were the replay counted as sent a moment before it is counted as replayed, the position holds.
    h.stats.bytesSent += SECOND;
    step();
    h.stats.bytesReplayed += SECOND;
    step();
    h.tick(2_000);
    h.stats.bytesSent += 2 * SECOND;
    step();
    expect(seen).toEqual([5_000, 5_000, 6_000, 7_000, 7_000, 8_000]);
    const p = h.progress();
    // 8 s of audio in 8 s of streaming (10 s elapsed, 2 s reconnecting).
    expect(p.elapsedMs).toBe(8_000);
    expect(progressText(p)).toBe('0:08.0 / 1:00.0  13%  1.0x  ETA 0:52.0');
  });

  it('never beyond the whole, never below zero', () => {
    const h = harness(10_000);
    h.stats.bytesSent = 12 * SECOND;
    expect(h.progress().positionMs).toBe(10_000);
    expect(progressText({ positionMs: -500, durationMs: 10_000, elapsedMs: 1_000 })).toBe('0:00.0 / 0:10.0  0%');
  });

  it('dropped audio was passed while streaming; once failed, the position is the audio actually sent', () => {
    const h = harness();
    h.stats.bytesSent = 8 * SECOND;
    h.stats.bytesDropped = 2 * SECOND;
    expect(h.progress().positionMs).toBe(10_000);
    h.stats.status = 'failed';
    expect(h.progress().positionMs).toBe(8_000);
  });

  it('a container sent as it is: time in proportion to its bytes, when its duration and size are known', () => {
    expect(bytesAsMs(500, { audio_format: 'wav' }, 10_000, 1_000)).toBe(5_000);
    expect(bytesAsMs(500, { audio_format: 'wav' }, undefined, 1_000)).toBeUndefined();
  });
});
