// The figures every view shows (src/session/figures.ts), stepped through tables on an injected
// clock, with the session's counters as they move through a run: the position on the stream's
// axis, the percentage, rate and ETA, reconnects and the time spent reconnecting, the audio
// account. Each is checked against an independent record of the same run (what the table
// itself sent, when it failed and when it sent again), and a run with an outage against the
// same run without it.
import { describe, expect, it } from 'vitest';
import { sessionFigures, type SessionFigures, type SessionFiguresInput } from '../../src/session/figures.js';
import type { SessionStatus } from '../../src/schema/sessionState.js';

const S16 = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } as const;
const SECOND = 32_000; // bytes of one second of S16

type Counters = { -readonly [K in keyof SessionFiguresInput['stats']]: SessionFiguresInput['stats'][K] };

function counters(): Counters {
  return { status: 'streaming' as SessionStatus, bytesRead: 0, bytesSent: 0, bytesReplayed: 0, bytesDropped: 0, reconnects: 0, reconnectingMs: 0, reconnectingSince: undefined };
}

/** A session's counters driven by a run's steps on a clock of its own; figures read at any moment. */
function run(durationMs = 60_000) {
  const stats = counters();
  let now = 1_000_000;
  const startedAt = now;
  return {
    stats,
    at: (): number => now,
    tick: (ms: number) => void (now += ms),
    /** `seconds` of new audio read and sent (over `seconds` of streaming, unless `overMs`). */
    send(seconds: number, overMs = seconds * 1000): void {
      now += overMs;
      stats.bytesRead += seconds * SECOND;
      stats.bytesSent += seconds * SECOND;
    },
    figures: (): SessionFigures => sessionFigures({ stats, format: S16, durationMs, startedAt, now }),
  };
}

describe('sessionFigures, a run step by step', () => {
  const STEPS: Array<[string, (r: ReturnType<typeof run>) => void, Partial<SessionFigures>]> = [
    ['before any audio', () => undefined, { positionMs: 0, percent: 0, rate: undefined, etaMs: undefined, wallMs: 0, reconnects: 0, reconnectingMs: 0, reconnecting: false }],
    ['less than half a second in: no rate yet', (r) => r.send(0.25), { positionMs: 250, rate: undefined, etaMs: undefined }],
    ['6 s in, at live pace', (r) => r.send(5.75), { positionMs: 6_000, percent: 10, rate: 1, etaMs: 54_000, streamingMs: 6_000 }],
    ['the connection fails: an outage begins', (r) => void (r.stats.reconnectingSince = r.at()), { reconnecting: true, reconnectingMs: 0, positionMs: 6_000, rate: 1 }],
    ['3 s of failed attempts: counted as they run, the rate and ETA hold', (r) => r.tick(3_000), { reconnecting: true, reconnectingMs: 3_000, wallMs: 9_000, streamingMs: 6_000, rate: 1, etaMs: 54_000 }],
    ['a session opens after 4.2 s (a reconnect), still no frame: the outage goes on', (r) => (r.tick(1_200), (r.stats.reconnects = 1)), { reconnects: 1, reconnecting: true, reconnectingMs: 4_200 }],
    [
      'its first frame, 0.3 s later, ends the outage: 4.5 s from the first failure',
      (r) => {
        r.tick(300);
        r.stats.reconnectingMs += r.at() - r.stats.reconnectingSince!;
        r.stats.reconnectingSince = undefined;
      },
      { reconnecting: false, reconnectingMs: 4_500, streamingMs: 6_000, rate: 1 },
    ],
    [
      '1.5 s sent again from the commit point: the position does not move',
      (r) => {
        r.stats.bytesSent += 1.5 * SECOND;
        r.stats.bytesReplayed += 1.5 * SECOND;
      },
      { positionMs: 6_000, rate: 1 },
    ],
    ['4 s more at live pace', (r) => r.send(4), { positionMs: 10_000, percent: 16, rate: 1, etaMs: 50_000, wallMs: 14_500, streamingMs: 10_000 }],
    ['2 s dropped in a second outage bound: passed, never to be analysed', (r) => void (r.stats.bytesRead += 2 * SECOND, r.stats.bytesDropped += 2 * SECOND), { positionMs: 12_000 }],
    ['failed: the position is the audio actually sent', (r) => void (r.stats.status = 'failed'), { positionMs: 10_000 }],
  ];

  it.each(STEPS.map((s, i) => [i, s[0]] as const))('step %i: %s', (i) => {
    const r = run();
    for (const [, step] of STEPS.slice(0, i)) step(r);
    STEPS[i]![1](r);
    expect(r.figures()).toMatchObject(STEPS[i]![2]);
  });
});

describe('against an independent record of the same run', () => {
  it('a run with an outage has the rate, ETA and position of the same run without it', () => {
    // The record: 1 s of audio per second of streaming for 20 s; the outage run loses 7.2 s
    // after 8 s, then sends 1.5 s again and goes on.
    const plain = run();
    const broken = run();
    const outageMs = 7_200;
    const rows: Array<[SessionFigures, SessionFigures]> = [];
    for (let s = 1; s <= 20; s++) {
      plain.send(1);
      broken.send(1);
      if (s === 8) {
        broken.stats.reconnectingSince = broken.at();
        broken.tick(outageMs);
        // The first frame of the reconnected session, the replay, at once.
        broken.stats.reconnects++;
        broken.stats.reconnectingMs += broken.at() - broken.stats.reconnectingSince;
        broken.stats.reconnectingSince = undefined;
        broken.stats.bytesSent += 1.5 * SECOND;
        broken.stats.bytesReplayed += 1.5 * SECOND;
      }
      rows.push([plain.figures(), broken.figures()]);
    }
    for (const [i, [a, b]] of rows.entries()) {
      expect([b.positionMs, b.percent, b.rate, b.etaMs, b.streamingMs]).toEqual([a.positionMs, a.percent, a.rate, a.etaMs, a.streamingMs]);
      expect(b.wallMs - a.wallMs).toBe(i >= 7 ? outageMs : 0);
    }
    const last = rows.at(-1)![1];
    expect(last.reconnectingMs).toBe(outageMs);
    expect(last.wallMs).toBe(20_000 + outageMs);
  });

  it('the audio adds up: sent once = read - dropped at the end, replayed counted once, pending in between', () => {
    const r = run();
    r.stats.bytesRead = 10 * SECOND;
    r.stats.bytesSent = 6 * SECOND;
    expect(r.figures().bytes).toEqual({ read: 10 * SECOND, sent: 6 * SECOND, replayed: 0, dropped: 0, pending: 4 * SECOND });
    // A reconnect sends 2 s again and 3 s more; 1 s is dropped at the end.
    r.stats.bytesSent += 2 * SECOND + 3 * SECOND;
    r.stats.bytesReplayed += 2 * SECOND;
    r.stats.bytesDropped += 1 * SECOND;
    r.stats.status = 'done';
    const { bytes, audioMs } = r.figures();
    expect(bytes.sent).toBe(bytes.read - bytes.dropped);
    expect(bytes).toEqual({ read: 10 * SECOND, sent: 9 * SECOND, replayed: 2 * SECOND, dropped: SECOND, pending: 0 });
    expect(audioMs).toEqual({ read: 10_000, sent: 9_000, replayed: 2_000, dropped: 1_000, pending: 0 });
  });

  it('never beyond the whole; a container sent as it is: time in proportion to its bytes when its duration and size are known', () => {
    const r = run(10_000);
    r.send(12, 12_000);
    expect(r.figures()).toMatchObject({ positionMs: 10_000, percent: 100, etaMs: undefined });
    const stats = { ...counters(), bytesRead: 500, bytesSent: 500 };
    expect(sessionFigures({ stats, format: { audio_format: 'wav' }, durationMs: 10_000, fileSize: 1_000, startedAt: 0, now: 1_000 }).positionMs).toBe(5_000);
    expect(sessionFigures({ stats, format: { audio_format: 'wav' }, fileSize: 1_000, startedAt: 0, now: 1_000 })).toMatchObject({ positionMs: undefined, rate: undefined, percent: undefined });
  });
});
