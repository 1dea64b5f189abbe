import { VirtualTimeScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { PlayoutStream } from '../../src/telephony/PlayoutStream.js';
import { WHEEL_RESOLUTION_MS } from '../../src/internal/timerWheel.js';
import { resolvePayloadType } from 'svc-stream/telephony';

const PCMU = resolvePayloadType(0)!;
const pkt = (seq: number) => ({ seq, timestamp: seq * 160, payload: new Uint8Array(160).fill(seq), samples: 160 });

/** Push packets at virtual times; returns what came out, when. */
function play(arrivals: Array<[at: number, seq: number]>, options: { playoutDelayMs?: number; idleTimeoutMs?: number } = {}) {
  const scheduler = new VirtualTimeScheduler(undefined, 100_000);
  const stream = new PlayoutStream(PCMU, { scheduler, ...options });
  const out: Array<[at: number, what: string]> = [];
  let completedAt: number | undefined;
  stream.live.audio$.subscribe({
    next: (c) => out.push([scheduler.now(), c[0] === 0xff && c.every((b) => b === 0xff) ? `silence${c.byteLength}` : `p${c[0]}`]),
    complete: () => (completedAt = scheduler.now()),
  });
  for (const [at, seq] of arrivals) scheduler.schedule(() => stream.push(pkt(seq)), at);
  scheduler.flush();
  return { out, completedAt, stats: stream.stats };
}

describe('PlayoutStream on virtual time', () => {
  it('waits the playout delay for a missing packet, then fills it', () => {
    const { out, stats } = play([[0, 1], [20, 3], [40, 4]], { playoutDelayMs: 60, idleTimeoutMs: 1000 });
    expect(out).toEqual([[0, 'p1'], [80, 'silence160'], [80, 'p3'], [80, 'p4']]);
    expect(stats).toMatchObject({ lost: 1, fillBytes: 160, bytesOut: 640 });
  });

  it('plays a reordered packet as soon as the hole closes', () => {
    const { out } = play([[0, 1], [20, 3], [30, 2]], { idleTimeoutMs: 1000 });
    expect(out).toEqual([[0, 'p1'], [30, 'p2'], [30, 'p3']]);
  });

  it('ends the stream after the idle timeout, counted from the last packet', () => {
    const { completedAt } = play([[0, 1], [20, 2], [400, 3]], { idleTimeoutMs: 500 });
    // Quiet at 900; confirmed one wheel tick later, after any packet that waited meanwhile.
    expect(completedAt).toBe(900 + WHEEL_RESOLUTION_MS);
  });

  it('never ends on its own with idleTimeoutMs 0', () => {
    const { completedAt } = play([[0, 1]], { idleTimeoutMs: 0 });
    expect(completedAt).toBeUndefined();
  });
});
