// An RTP call whose session drops mid-call: the call's session reconnects and resumes, and the
// call ends `done` with every speech segment once at its true position (the same call, sent
// again without a fault, gives the truth), on one time axis.
import { afterEach, describe, expect, it } from 'vitest';
import type { Subscription } from 'rxjs';
import { startEmulator, type RunningEmulator, type ScenarioInput } from 'svc-stream/emulator';
import { analyzeCalls, rtpSource, type CallAnalysis, type CallLeg, type CallOutcome } from 'svc-stream/telephony';
import { sendRtpCall } from './helpers.js';

let emu: RunningEmulator | undefined;
const subs: Subscription[] = [];
afterEach(async () => {
  subs.splice(0).forEach((s) => s.unsubscribe());
  await emu?.close();
  emu = undefined;
});

type Span = { start: number; end: number };

async function oneCall(scenario: () => ScenarioInput): Promise<{ outcome: CallOutcome; clips: Span[]; call: CallAnalysis<CallLeg> }> {
  emu = await startEmulator({ scenario });
  let resolvePort!: (p: number) => void;
  const port = new Promise<number>((r) => (resolvePort = r));
  const legs$ = rtpSource({ idleTimeoutMs: 400, onListening: (a) => resolvePort(a.port) });
  const got = new Promise<{ outcome: CallOutcome; clips: Span[]; call: CallAnalysis<CallLeg> }>((resolve) => {
    subs.push(
      analyzeCalls(legs$, {
        apiKey: emu!.apiKey,
        baseUrl: emu!.baseUrl,
        heartbeat: { intervalMs: 100, timeoutMs: 500 },
        reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
      }).subscribe((call) => {
        const clips: Span[] = [];
        call.streams.events$.subscribe((e) => {
          if (e.type === 'clip') clips.push({ start: e.clip.start_ms!, end: e.clip.start_ms! + e.clip.duration_ms! });
        });
        call.outcome$.subscribe((outcome) => resolve({ outcome, clips, call }));
      }),
    );
  });
  await sendRtpCall(await port, 0x4242, 12, 5);
  return got;
}

describe('analyzeCalls: a call survives a dropped session', () => {
  it('an RTP call dropped mid-call reconnects and ends done, every segment once within 50 ms', async () => {
    const truth = await oneCall(() => ({}));
    expect(truth.outcome.status).toBe('done');
    expect(truth.clips.length).toBeGreaterThanOrEqual(3);
    await emu!.close();
    emu = undefined;
    subs.splice(0).forEach((s) => s.unsubscribe());

    let n = 0;
    const r = await oneCall(() => (n++ === 0 ? { faults: [{ at: 'audio', at_ms: 5_000, action: 'drop' }] } : {}));
    expect(r.outcome.status, String(r.outcome.error)).toBe('done');
    expect(r.call.stats.reconnects).toBe(1);
    for (const t of truth.clips) {
      expect(r.clips.filter((g) => Math.abs(g.start - t.start) <= 50 && Math.abs(g.end - t.end) <= 50), `${t.start}-${t.end} in ${JSON.stringify(r.clips)}`).toHaveLength(1);
    }
    expect(r.clips).toHaveLength(truth.clips.length);
    expect(r.outcome.snapshot.aggregates.audioDurationMs).toBe(truth.outcome.snapshot.aggregates.audioDurationMs);
  }, 30_000);
});
