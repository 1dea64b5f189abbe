// An RTP call and a media-stream call whose session drops mid-call: the call's session reconnects and resumes, and the
// call ends `done` with every speech segment once at its true position (the same call, sent
// again without a fault, gives the truth), on one time axis.
import { afterEach, describe, expect, it } from 'vitest';
import type { Subscription } from 'rxjs';
import { startEmulator, type RunningEmulator, type ScenarioInput } from 'svc-stream/emulator';
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { analyzeCalls, mediaStreamServer, rtpSource, type AnalyzableCall, type CallAnalysis, type CallOutcome } from 'svc-stream/telephony';
import { SAMPLE_MULAW, sendRtpCall } from './helpers.js';

let emu: RunningEmulator | undefined;
const subs: Subscription[] = [];
afterEach(async () => {
  subs.splice(0).forEach((s) => s.unsubscribe());
  await emu?.close();
  emu = undefined;
});

type Span = { start: number; end: number };

type Kind = 'rtp' | 'media-stream';

/** 12 s of the sample call as a Twilio media stream: start, 20 ms media messages, stop (sent at once). */
async function sendMediaStreamCall(port: number): Promise<void> {
  const mulaw = readFileSync(SAMPLE_MULAW);
  const sid = 'MZ0123456789abcdef';
  const frames: object[] = [
    { event: 'connected', protocol: 'Call', version: '1.0.0' },
    { event: 'start', sequenceNumber: '1', streamSid: sid, start: { streamSid: sid, accountSid: 'AC1', callSid: 'CA42', tracks: ['inbound'], customParameters: {}, mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } } },
  ];
  for (let k = 0; k < 600; k++) {
    frames.push({ event: 'media', sequenceNumber: String(k + 2), streamSid: sid, media: { track: 'inbound', chunk: String(k + 1), timestamp: String(k * 20), payload: mulaw.subarray(k * 160, (k + 1) * 160).toString('base64') } });
  }
  frames.push({ event: 'stop', sequenceNumber: '602', streamSid: sid, stop: { accountSid: 'AC1', callSid: 'CA42' } });
  const ws = new WebSocket(`ws://127.0.0.1:${port}`);
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  await Promise.all(frames.map((f) => new Promise<void>((r) => ws.send(JSON.stringify(f), () => r()))));
  ws.close();
}

async function oneCall(scenario: () => ScenarioInput, kind: Kind = 'rtp'): Promise<{ outcome: CallOutcome; clips: Span[]; call: CallAnalysis<AnalyzableCall> }> {
  emu = await startEmulator({ scenario });
  let resolvePort!: (p: number) => void;
  const port = new Promise<number>((r) => (resolvePort = r));
  const legs$ =
    kind === 'rtp'
      ? rtpSource({ idleTimeoutMs: 400, onListening: (a) => resolvePort(a.port) })
      : mediaStreamServer({ preset: 'twilio', onListening: (a) => resolvePort(a.port) });
  const got = new Promise<{ outcome: CallOutcome; clips: Span[]; call: CallAnalysis<AnalyzableCall> }>((resolve) => {
    subs.push(
      analyzeCalls<AnalyzableCall>(legs$, {
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
  if (kind === 'rtp') await sendRtpCall(await port, 0x4242, 12, 5);
  else await sendMediaStreamCall(await port);
  return got;
}

describe('analyzeCalls: a call survives a dropped session', () => {
  for (const kind of ['rtp', 'media-stream'] as const) {
  it(`${kind === 'rtp' ? 'an RTP call' : 'a media-stream call'} dropped mid-call reconnects and ends done, every segment once within 50 ms`, async () => {
    const truth = await oneCall(() => ({}), kind);
    expect(truth.outcome.status).toBe('done');
    expect(truth.clips.length).toBeGreaterThanOrEqual(3);
    await emu!.close();
    emu = undefined;
    subs.splice(0).forEach((s) => s.unsubscribe());

    let n = 0;
    const r = await oneCall(() => (n++ === 0 ? { faults: [{ at: 'audio', at_ms: 5_000, action: 'drop' }] } : {}), kind);
    expect(r.outcome.status, String(r.outcome.error)).toBe('done');
    expect(r.call.stats.reconnects).toBe(1);
    for (const t of truth.clips) {
      expect(r.clips.filter((g) => Math.abs(g.start - t.start) <= 50 && Math.abs(g.end - t.end) <= 50), `${t.start}-${t.end} in ${JSON.stringify(r.clips)}`).toHaveLength(1);
    }
    expect(r.clips).toHaveLength(truth.clips.length);
    expect(r.outcome.snapshot.aggregates.audioDurationMs).toBe(truth.outcome.snapshot.aggregates.audioDurationMs);
    // The audio account: every byte of the call read, sent once and never dropped; the resumed
    // session was sent again what the dropped one had sent past the commit point (the replay).
    const s = r.call.stats;
    expect(s.bytesRead).toBe(truth.call.stats.bytesRead);
    expect(s.bytesSent - s.bytesReplayed).toBe(s.bytesRead);
    expect(s.bytesReplayed).toBeGreaterThan(0);
    expect(s.bytesDropped).toBe(0);
  }, 30_000);
  }
});
