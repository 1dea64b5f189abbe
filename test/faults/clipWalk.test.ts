// A fault walked across one clip, on real sockets: the emulator as a child process behind a TCP
// proxy on loopback, struck at each offset inside a clip (before its first partial, between
// partials, just before its end, just after it) by each kind of fault (the connection reset,
// both directions stalled then let through, the emulator SIGKILLed or SIGTERMed and started
// again on its port), alone and two in a row (each order), while the audio plays at 16× real
// time. The session's timers (backoff, heartbeat) run on virtual time, moved by the test only
// when it wants a reconnect to go ahead, so each fault strikes where it is meant to.
//
// What must hold, from the events a consumer gets and the stats:
// - every clip of the undisturbed run arrives once, at its position, with its final text and
//   speaker, and no clip shares its UUID with another (a consumer's state is keyed by it: a
//   clip whose UUID a later one reuses vanishes from the transcript, issue 45);
// - every clip begun before a fault is finished after it (no partial is left without its clip);
// - the audio account is true, the event loop never stalls over 100 ms on our account, and
//   nothing is left running.
//
// CI runs a representative subset (the two-fault orders that reproduce issue 45 among them);
// SVC_FAULT_WALK=full walks every offset × kind, and every offset × order of two kinds.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { analyzeConversation, createSessionStats, fromAsyncIterable, type AudioWarning, type ReplayGapWarning, type SessionEvent, type SessionStats, type SvcError } from 'svc-stream';
import { clipsReducer, initialClipsState } from 'svc-stream/state';
import { spawnEmulator, type EmulatorProcess } from '../internal/emulatorProcess.js';
import { startTcpProxy, type TcpProxy } from '../internal/tcpProxy.js';
import { virtualTime } from '../internal/virtualTime.js';
import { watchLoop } from './loopStall.js';

const FULL = process.env['SVC_FAULT_WALK'] === 'full';
const RAW = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } as const;
const BYTES_PER_MS = 32;
const WAV = readFileSync(new URL('../../samples/call.wav', import.meta.url));
const pcmOf = (fromMs: number, toMs: number): Buffer => WAV.subarray(44 + fromMs * BYTES_PER_MS, 44 + toMs * BYTES_PER_MS);

/** The audio goes in 80 ms frames at 16× real time. */
const FRAME_BYTES = 80 * BYTES_PER_MS;
const FRAME_EVERY_MS = 5;
/** How long the proxy holds both directions in a stall (6.4 s of audio). */
const STALL_MS = 400;
/** The backoff: one fixed delay, run by the test moving virtual time. */
const DELAY_MS = 100;
/** A run that has not ended in this long (wall clock) has hung. */
const RUN_DEADLINE_MS = 90_000;
const LANES = 4;
/** The heartbeat's interval (the default): a session silent this long (virtual time) pings. */
const DEFAULT_HEARTBEAT_INTERVAL_MS = 5_000;
const STALL_LIMIT_MS = 100;

type Kind = 'reset' | 'stall' | 'SIGKILL' | 'SIGTERM';
const KINDS: readonly Kind[] = ['reset', 'stall', 'SIGKILL', 'SIGTERM'];
const reconnects = (k: Kind): boolean => k !== 'stall';

/** Where in the clip the fault strikes, from its start (or its end). */
interface Offset {
  readonly name: string;
  at(clip: Span): number;
}
// The emulator's partials come 300 ms into an utterance, then every 1000 ms; its clip 350 ms after the utterance's end.
const OFFSETS: readonly Offset[] = [
  { name: 'before its first partial', at: (c) => c.start + 150 },
  { name: 'between its partials', at: (c) => c.start + 800 },
  { name: 'just before its end', at: (c) => c.end - 120 },
  { name: 'just after its end', at: (c) => c.end + 150 },
];
const offset = (name: string): Offset => OFFSETS.find((o) => o.name === name)!;

interface Span {
  readonly start: number;
  readonly end: number;
}
interface TrueClip extends Span {
  readonly text: string;
  readonly speaker: string;
}
interface Truth {
  readonly clips: readonly TrueClip[];
  readonly durationMs: number;
}

// ---------------------------------------------------------------------------------------------
// Lanes: an emulator process (the built CLI, as users run it; `npm test` builds it) behind a
// proxy, one run at a time; runs go four at a time. One config serves both scenarios, by key.

/** The sample call's scenario (its script: text and speaker per clip, found again after a resume). */
const SAMPLE_KEY = 'walk-sample-key';
/** No scenario: speech segments only, clip UUIDs from time in the session (the soak's `svc-stream emulator`). */
const PLAIN_KEY = 'walk-plain-key';

class Lane {
  /** False while the emulator is down on purpose: reconnects then wait for the test. */
  up = true;
  private constructor(
    public emu: EmulatorProcess,
    readonly proxy: TcpProxy,
    private readonly args: readonly string[],
  ) {}

  static async start(args: readonly string[]): Promise<Lane> {
    const emu = await spawnEmulator(0, args, { built: true });
    return new Lane(emu, await startTcpProxy(emu.port), args);
  }

  async stop(signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
    this.up = false;
    await this.emu.stop(signal);
  }

  async restart(): Promise<void> {
    this.emu = await spawnEmulator(this.emu.port, this.args, { built: true });
    this.up = true;
  }

  async close(): Promise<void> {
    await this.proxy.close();
    await this.emu.stop('SIGKILL');
  }
}

class LanePool {
  private readonly free: Lane[] = [];
  private readonly waiting: Array<(lane: Lane) => void> = [];
  constructor(readonly lanes: readonly Lane[]) {
    this.free.push(...lanes);
  }

  async with<T>(work: (lane: Lane) => Promise<T>): Promise<T> {
    const lane = this.free.pop() ?? (await new Promise<Lane>((r) => this.waiting.push(r)));
    try {
      return await work(lane);
    } finally {
      const next = this.waiting.shift();
      if (next) next(lane);
      else this.free.push(lane);
    }
  }
}

function countByType(list: readonly string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const t of list) m.set(t, (m.get(t) ?? 0) + 1);
  return m;
}

let baseline = new Map<string, number>();
let dir: string;
let pool: LanePool;
beforeAll(async () => {
  baseline = countByType(process.getActiveResourcesInfo());
  dir = mkdtempSync(join(tmpdir(), 'svc-clip-walk-'));
  const config = join(dir, 'emulator.json');
  writeFileSync(
    config,
    JSON.stringify({
      organizations: [{ id: 'walk', keys: [SAMPLE_KEY, PLAIN_KEY], concurrency: 10 }],
      scenarios: { sample: fileURLToPath(new URL('../../samples/call.scenario.json', import.meta.url)), plain: {} },
      scenarioByKey: { [SAMPLE_KEY]: 'sample', [PLAIN_KEY]: 'plain' },
    }),
  );
  pool = new LanePool(await Promise.all(Array.from({ length: LANES }, () => Lane.start(['--config', config]))));
}, 60_000);
afterAll(async () => {
  await Promise.all(pool?.lanes.map((l) => l.close()) ?? []);
  rmSync(dir, { recursive: true, force: true });
  // Nothing left running: no socket, timer or child process above what was there before.
  const leftovers = (): string[] =>
    [...countByType(process.getActiveResourcesInfo())].filter(([t, n]) => n > (baseline.get(t) ?? 0)).map(([t, n]) => `${t} +${n - (baseline.get(t) ?? 0)}`);
  // Polled for 3 s without the timers (vi.waitFor's own are among them), then everything checked at once.
  await vi
    .waitFor(() => expect(leftovers().filter((l) => !l.startsWith('Timeout'))).toEqual([]), { timeout: 3_000, interval: 25 })
    .catch(() => undefined);
  expect(leftovers(), `left behind: ${leftovers().join(', ')}`).toEqual([]);
});

// ---------------------------------------------------------------------------------------------
// One run: the audio paced in real time, faults struck at audio positions.

interface Strike {
  /** A fault, or `ping`: the heartbeat's ping (virtual time moved by its interval), and its pong. */
  readonly kind: Kind | 'ping';
  /** Where in the audio (once the events for the audio before it have come)… */
  readonly atMs: number;
  /** …or, for a second fault, the moment the session after the first one opens (before its replay is analysed). */
  readonly atOpen?: boolean;
  /** How long a stall holds (default {@link STALL_MS}). */
  readonly holdMs?: number;
}

interface Run {
  readonly events: SessionEvent[];
  readonly warnings: AudioWarning[];
  readonly stats: SessionStats;
  readonly error: SvcError | undefined;
  readonly totalBytes: number;
  readonly busiestMs: number;
  readonly longestMs: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(what: string, cond: () => boolean, ms = 30_000): Promise<void> {
  // vi.waitFor, not expect.poll: the tests run concurrently.
  await vi.waitFor(
    () => {
      if (!cond()) throw new Error(`timed out waiting for ${what}`);
    },
    { timeout: ms, interval: 5 },
  );
}

async function run(lane: Lane, key: string, pcm: Buffer, strikes: readonly Strike[], reconnect: { replayMs?: number; outageMs?: number } = {}): Promise<Run> {
  const vt = virtualTime();
  const stats = createSessionStats();
  const events: SessionEvent[] = [];
  const warnings: AudioWarning[] = [];
  /** Restarts the quiet period of the one waiting for the events to settle (a debounce, no clock read). */
  let heard: (() => void) | undefined;
  /** Resolves once `quietMs` passed without an event. */
  const quiet = (quietMs: number): Promise<void> =>
    new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      heard = () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          heard = undefined;
          resolve();
        }, quietMs);
      };
      heard();
    });
  let attempt = 0;
  let ended: { error: SvcError | undefined } | undefined;
  const stallTimers = new Set<NodeJS.Timeout>();
  /** A fault to strike as the next session opens, and the promise of its recovery. */
  let onOpen: Strike['kind'] | undefined;
  let pending: Promise<void> | undefined;
  // Virtual time moves only here: a reconnect goes ahead once the emulator is meant to be up.
  const go = (): void => void setImmediate(() => vt.advance(DELAY_MS));
  const watching = stats.state$.subscribe((s) => {
    if (s.status === 'reconnecting') {
      attempt = s.attempt;
      if (lane.up) go();
    } else if (s.status === 'streaming' && onOpen !== undefined && stats.reconnects > 0) {
      const kind = onOpen;
      onOpen = undefined;
      pending = strike({ kind, atMs: 0 });
    }
  });

  /** Strike now; resolves once the stream is whole again (reconnected, or the stall under way). */
  async function strike({ kind, holdMs = STALL_MS }: Strike): Promise<void> {
    const before = stats.reconnects;
    switch (kind) {
      case 'ping':
        vt.advance(DEFAULT_HEARTBEAT_INTERVAL_MS);
        await sleep(200);
        return;
      case 'reset':
        lane.proxy.reset();
        break;
      case 'stall': {
        lane.proxy.setMode('stall');
        const t = setTimeout(() => {
          stallTimers.delete(t);
          lane.proxy.setMode('forward');
        }, holdMs);
        stallTimers.add(t);
        return; // the audio goes on meanwhile
      }
      case 'SIGKILL':
      case 'SIGTERM': {
        await lane.stop(kind);
        // One attempt while nothing listens on the port (refused), then the emulator again.
        await until('the first reconnecting state', () => stats.status === 'reconnecting' && attempt > 0);
        const refused = attempt;
        go();
        await until('a refused attempt', () => attempt > refused);
        await lane.restart();
        go();
        break;
      }
    }
    await until('the reconnect', () => stats.reconnects > before || ended !== undefined);
  }

  async function* paced(): AsyncGenerator<Uint8Array> {
    const queue = [...strikes].sort((a, b) => a.atMs - b.atMs);
    for (let at = 0; at < pcm.length; at += FRAME_BYTES) {
      while (queue.length > 0 && queue[0]!.atMs * BYTES_PER_MS <= at) {
        // Struck once the emulator's events for the audio sent so far have come (150 ms without one).
        await quiet(150);
        const first = queue.shift()!;
        if (queue[0]?.atOpen) onOpen = queue.shift()!.kind;
        await strike(first);
        // A fault struck as the next session opened: the audio goes on once it is over.
        while (onOpen !== undefined || pending !== undefined) {
          if (pending !== undefined) {
            const p = pending;
            await p;
            if (pending === p) pending = undefined;
          } else await sleep(5);
          if (ended !== undefined) return;
        }
      }
      yield pcm.subarray(at, Math.min(pcm.length, at + FRAME_BYTES));
      await sleep(FRAME_EVERY_MS);
    }
  }

  const loop = watchLoop();
  const sub = fromAsyncIterable(paced(), { format: RAW })
    .pipe(
      analyzeConversation({
        apiKey: key,
        baseUrl: lane.proxy.baseUrl,
        stats,
        scheduler: vt.scheduler,
        reconnect: { initialDelayMs: DELAY_MS, maxDelayMs: DELAY_MS, jitter: 0, maxAttempts: 20, ...reconnect },
        onAudioWarning: (w) => warnings.push(w),
      }),
    )
    .subscribe({
      next: (e) => {
        heard?.();
        events.push(e);
      },
      error: (error: unknown) => (ended = { error: error as SvcError }),
      complete: () => (ended = { error: undefined }),
    });
  try {
    await until('the end of the run', () => ended !== undefined, RUN_DEADLINE_MS);
  } finally {
    sub.unsubscribe();
    watching.unsubscribe();
    for (const t of stallTimers) clearTimeout(t);
    lane.proxy.setMode('forward');
    if (!lane.up) await lane.restart();
  }
  const stalls = loop.stop();
  return { events, warnings, stats, error: ended!.error, totalBytes: pcm.length, busiestMs: stalls.busiestMs, longestMs: stalls.longestMs };
}

// ---------------------------------------------------------------------------------------------
// What a run must show.

type Clip = Extract<SessionEvent, { type: 'clip' }>['clip'];

function truthOf(r: Run): Truth {
  expect(r.error, String(r.error)).toBeUndefined();
  const clips = r.events.flatMap((e) =>
    e.type === 'clip' ? [{ start: e.clip.start_ms!, end: e.clip.start_ms! + e.clip.duration_ms!, text: e.clip.text ?? '', speaker: e.clip.speaker_label ?? '' }] : [],
  );
  const done = r.events.find((e) => e.type === 'done') as { duration_ms: number } | undefined;
  return { clips, durationMs: done!.duration_ms };
}

const show = (c: { start_ms?: number | undefined; duration_ms?: number | undefined; clip_uuid: string }): string => `${c.start_ms}+${c.duration_ms} ${c.clip_uuid.slice(0, 8)}`;

function traceOf(r: Run): string {
  return r.events
    .filter((e) => e.type === 'clip' || e.type === 'partial_clip')
    .map((e) => `${e.segment ?? 0} ${e.type} ${show(e.type === 'clip' ? e.clip : (e as { partial_clip: Clip }).partial_clip)}`)
    .join('\n');
}

function expectWhole(r: Run, truth: Truth, kinds: readonly Kind[]): void {
  expect(r.error, `the run failed: ${String(r.error)}`).toBeUndefined();
  // Resumed at the commit point every time: nothing to say about the audio.
  expect(r.warnings).toEqual([]);
  const trace = traceOf(r);

  // No two clips under one UUID: a consumer's transcript is keyed by it.
  const owners = new Map<string, Clip[]>();
  for (const e of r.events) if (e.type === 'clip') owners.set(e.clip.clip_uuid, [...(owners.get(e.clip.clip_uuid) ?? []), e.clip]);
  const shared = [...owners.values()].filter((list) => list.length > 1).map((list) => list.map(show).join(' and '));
  expect(shared, `clips sharing a UUID, in:\n${trace}`).toEqual([]);

  // The conversation as a consumer's state has it: every clip begun is finished…
  const state = r.events.reduce(clipsReducer, initialClipsState);
  const unfinished = state.transcript.toArray().filter((t) => t.status === 'partial').map((t) => show(t.clip));
  expect(unfinished, `partials never finished, in:\n${trace}`).toEqual([]);
  // …and each true clip is there once, at its position, with its text and speaker.
  const got = state.clips.toArray();
  for (const t of truth.clips) {
    const at = got.filter((g) => Math.abs(g.start_ms! - t.start) <= 50 && Math.abs(g.start_ms! + g.duration_ms! - t.end) <= 50);
    expect(at.length, `the clip ${t.start}-${t.end} (${JSON.stringify(t.text)}), in:\n${trace}`).toBe(1);
    expect({ text: at[0]!.text, speaker: at[0]!.speaker_label }).toEqual({ text: t.text, speaker: t.speaker });
  }
  expect(got.length, trace).toBe(truth.clips.length);
  const done = r.events.filter((e) => e.type === 'done') as Array<{ duration_ms: number }>;
  expect(done).toHaveLength(1);
  expect(Math.abs(done[0]!.duration_ms - truth.durationMs)).toBeLessThanOrEqual(50);

  // The account: every byte read once, none dropped, what went again is what was replayed.
  const s = r.stats;
  const expected = kinds.filter(reconnects).length;
  expect({ reconnects: s.reconnects, segment: s.segment, status: s.status }).toEqual({ reconnects: expected, segment: expected, status: 'done' });
  expect(s.bytesRead).toBe(r.totalBytes);
  expect(s.bytesDropped).toBe(0);
  expect(s.bytesSent - s.bytesRead).toBe(s.bytesReplayed);
  expect(
    r.busiestMs,
    `the event loop stalled ${r.busiestMs.toFixed(0)} ms with the main thread on a CPU (longest gap ${r.longestMs.toFixed(0)} ms, the rest the machine's load)`,
  ).toBeLessThanOrEqual(STALL_LIMIT_MS);
}

// ---------------------------------------------------------------------------------------------

// Two audios. The sample call (14 s; its script gives each clip its text and speaker): the
// clip walked is the agent's second turn (7.6 s to 11.2 s). A 6.4 s recording of two turns
// (customer, then agent), three times, on the plain emulator (as in the soak): each fault
// strikes the agent's turn, the second one recording later, or as the next session opens.
const CALL = pcmOf(0, 14_000);
const PERIOD_MS = 6_400;
const ONCE = pcmOf(11_600, 18_000);
const REPEATED = Buffer.concat([ONCE, ONCE, ONCE]);
let callTruth: Truth;
let callClip: TrueClip;
let repeatedTruth: Truth;
let repeatedClip: TrueClip;
beforeAll(async () => {
  const [call, repeated] = await Promise.all([pool.with((lane) => run(lane, SAMPLE_KEY, CALL, [])), pool.with((lane) => run(lane, PLAIN_KEY, REPEATED, []))]);
  callTruth = truthOf(call);
  callClip = callTruth.clips.find((c) => Math.abs(c.start - 7_643) < 100)!;
  expect(callClip, JSON.stringify(callTruth.clips)).toBeDefined();
  repeatedTruth = truthOf(repeated);
  expect(repeatedTruth.clips).toHaveLength(6);
  repeatedClip = repeatedTruth.clips[1]!;
}, 60_000);

const TWO_FAULTS_CI: ReadonlyArray<readonly [Kind, Kind]> = [
  ['reset', 'reset'],
  ['SIGKILL', 'reset'],
  ['reset', 'SIGTERM'],
  ['stall', 'reset'],
];
const PAIRS = FULL ? KINDS.flatMap((a) => KINDS.map((b) => [a, b] as const)) : TWO_FAULTS_CI;
const PAIR_OFFSETS = FULL ? OFFSETS : [offset('between its partials')];

describe.concurrent('a fault walked across a clip', () => {
  const single = KINDS.flatMap((kind) => OFFSETS.filter((o) => FULL || kind === 'reset' || kind === 'stall' || o.name === 'between its partials').map((o) => ({ kind, o })));
  for (const { kind, o } of single) {
    it(`of the sample call: ${kind} ${o.name}`, async () => {
      const r = await pool.with((lane) => run(lane, SAMPLE_KEY, CALL, [{ atMs: o.at(callClip), kind }]));
      expectWhole(r, callTruth, [kind]);
    }, 120_000);
  }

  for (const o of PAIR_OFFSETS) {
    for (const [a, b] of PAIRS) {
      it(`of a repeated recording: ${a} then ${b} one recording later, ${o.name}`, async () => {
        const at = o.at(repeatedClip);
        const r = await pool.with((lane) =>
          run(lane, PLAIN_KEY, REPEATED, [
            { atMs: at, kind: a },
            { atMs: at + PERIOD_MS, kind: b },
          ]),
        );
        expectWhole(r, repeatedTruth, [a, b]);
      }, 120_000);
    }
  }

  // The clip in progress at the first fault is finished two sessions on.
  const atOpen = FULL ? PAIRS.filter(([a]) => reconnects(a)) : TWO_FAULTS_CI.filter(([a, b]) => reconnects(a) && b === 'reset');
  for (const o of PAIR_OFFSETS) {
    for (const [a, b] of atOpen) {
      it(`of a repeated recording: ${a} then ${b} as the next session opens, ${o.name}`, async () => {
        const at = o.at(repeatedClip);
        const r = await pool.with((lane) =>
          run(lane, PLAIN_KEY, REPEATED, [
            { atMs: at, kind: a },
            { atMs: at, kind: b, atOpen: true },
          ]),
        );
        expectWhole(r, repeatedTruth, [a, b]);
      }, 120_000);
    }
  }

  // A stall of more audio than the replay window (1 s here) ended by a reset before the results
  // of what was sent in it came: the soak's SIGTERM two seconds after an 8 s stall at 4×.
  const stallThenReset = (at: number): Strike[] => [
    { atMs: at, kind: 'stall', holdMs: 2_000 },
    { atMs: at + 2_400, kind: 'reset' },
  ];

  it('of the sample call: a stall longer than the replay window, then a reset while stalled: what the server never answered is replayed, nothing lost', async () => {
    const r = await pool.with((lane) => run(lane, SAMPLE_KEY, CALL, stallThenReset(offset('between its partials').at(callClip)), { replayMs: 1_000 }));
    expectWhole(r, callTruth, ['stall', 'reset']);
  }, 120_000);

  it('of a recording with a long silence: past the replay window, what the server heard (it answered a ping) is let go of, and a reset there loses nothing and says nothing', async () => {
    // The recording, 16 s of silence, the recording again; 1 s of replay. A ping answered 10 s
    // into the silence, a reset 15 s into it: the next session resumes from what the server
    // had not yet heard (2 s before the ping), not from the commit point 16 s back.
    const silence = Buffer.alloc(16_000 * BYTES_PER_MS);
    const pcm = Buffer.concat([ONCE, silence, ONCE]);
    const shift = PERIOD_MS + 16_000;
    const truth: Truth = {
      clips: [...repeatedTruth.clips.slice(0, 2), ...repeatedTruth.clips.slice(0, 2).map((c) => ({ ...c, start: c.start + shift, end: c.end + shift }))],
      durationMs: shift + PERIOD_MS,
    };
    const r = await pool.with((lane) =>
      run(
        lane,
        PLAIN_KEY,
        pcm,
        [
          { atMs: PERIOD_MS + 10_000, kind: 'ping' },
          { atMs: PERIOD_MS + 15_000, kind: 'reset' },
        ],
        { replayMs: 1_000 },
      ),
    );
    expectWhole(r, truth, ['reset']);
    const commitMs = repeatedTruth.clips[1]!.end;
    expect(r.stats.bytesReplayed).toBeLessThan((PERIOD_MS + 15_000 - commitMs - 5_000) * BYTES_PER_MS);
  }, 120_000);

  it('of the sample call: the same beyond the outage bound too: the audio no session analyses is said, with its span, and the rest is whole', async () => {
    // The stall holds 2 s of wall time (the rest of the audio) and the reset strikes 2.4 s of
    // audio into it, once the bounds (1 s in all) have let go of the walked clip's start.
    const at = offset('between its partials').at(callClip);
    const r = await pool.with((lane) => run(lane, SAMPLE_KEY, CALL, stallThenReset(at), { replayMs: 1_000, outageMs: 0 }));
    const truth = callTruth;
    expect(r.error, String(r.error)).toBeUndefined();
    const trace = traceOf(r);
    expect(r.warnings.map((w) => w.code)).toEqual(['replay_gap']);
    expect(r.stats.audioWarnings).toBe(1);
    const gap = r.warnings[0] as ReplayGapWarning;
    // From the commit point (the end of the clip before the walked one) to past the walked clip's start.
    const before = truth.clips[truth.clips.indexOf(callClip) - 1]!;
    expect(Math.abs(gap.fromMs - before.end)).toBeLessThanOrEqual(50);
    expect(gap.toMs).toBeGreaterThan(callClip.start);
    expect(gap.segment).toBe(1);
    expect(gap.message).toContain('replayMs');
    const inGap = (c: Span): boolean => c.end > gap.fromMs && c.start < gap.toMs;
    const state = r.events.reduce(clipsReducer, initialClipsState);
    // The walked clip had begun: its partial is never finished, and the warning names it.
    const unfinished = state.transcript.toArray().filter((t) => t.status === 'partial').map((t) => t.clip.clip_uuid);
    expect(unfinished.length).toBe(1);
    expect(gap.clipUuids).toEqual(unfinished);
    // Every clip outside the gap once at its position, with its text and speaker; of those in
    // it, at most the part after it (as the service heard it), from the gap's end.
    const got = state.clips.toArray();
    for (const t of truth.clips.filter((c) => !inGap(c))) {
      const at = got.filter((g) => Math.abs(g.start_ms! - t.start) <= 50 && Math.abs(g.start_ms! + g.duration_ms! - t.end) <= 50);
      expect(at.length, `the clip ${t.start}-${t.end}, in:\n${trace}`).toBe(1);
      expect({ text: at[0]!.text, speaker: at[0]!.speaker_label }).toEqual({ text: t.text, speaker: t.speaker });
    }
    const elsewhere = got.filter((g) => !truth.clips.some((t) => Math.abs(g.start_ms! - t.start) <= 50));
    for (const g of elsewhere) expect(Math.abs(g.start_ms! - gap.toMs), trace).toBeLessThanOrEqual(50);
    expect(elsewhere.length).toBeLessThanOrEqual(1);
    expect(r.stats.reconnects).toBe(1);
    expect(r.stats.bytesRead).toBe(r.totalBytes);
    expect(r.stats.bytesSent - r.stats.bytesRead).toBe(r.stats.bytesReplayed);
  }, 120_000);
});
