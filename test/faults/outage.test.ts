// Never freeze, never drain: every kind of pull source (a file, a Node Readable, an async
// iterable over memory, a `share`d read of a file) × an outage that does not heal (the server
// stops reading and is SIGKILLed; every session closed with 1011 mid-stream; a proxy that
// blackholes the connection), with the library's bounds at their defaults (high-water mark,
// replay and outage windows) and short timings so each case ends in seconds:
// - the event loop never stalls more than 100 ms on the library's account;
// - the source is read at most the replay bound plus the high-water mark beyond what was sent;
// - the final error is typed, resumable (so the outage deadline, not the attempts, ended it),
//   and its audio account adds up: read = sent + unsent, and what was never sent is dropped;
// - nothing is left running.
// The emulator runs as a child process, so its work is not on this process's event loop.
// The first kind (a file) runs each outage on real time; the others run the library's timers
// (heartbeat, connect and outage deadlines, backoff) on virtual time, moved on by the test once
// the fault is known to have struck: the same sockets, the same bounds, seconds less waiting.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { share, type Observable } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeConversation, createSessionStats, DEFAULT_RECONNECT, fileSource, fromAsyncIterable, fromReadable, SessionError, type SessionStats, type SvcError } from 'svc-stream';
import { ERROR_TABLE } from '../../src/errors/index.js';
import { spawnEmulator, type EmulatorProcess } from '../internal/emulatorProcess.js';
import { startTcpProxy } from '../internal/tcpProxy.js';
import { virtualTime } from '../internal/virtualTime.js';
import { watchLoop, type LoopStalls } from './loopStall.js';

const RAW = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } as const;
const CHUNK = 32 * 1024;
/** Silence (no clip ever finalizes, so no event counts as progress), far more than the sessions can send before the outage: 64 MiB in the file, 256 MiB from the generators. */
const FILE_BYTES = 2048 * CHUNK;
const GENERATED_CHUNKS = 8192;
const HIGH_WATER_MARK = 1 << 20; // the session's default
const REPLAY_BYTES = (DEFAULT_RECONNECT.replayMs * 32_000) / 1000;
const STALL_LIMIT_MS = 100;
/** The library's bounds are the defaults; only the timings are short, so a case ends in seconds. */
const TIMING = {
  heartbeat: { intervalMs: 250, timeoutMs: 1_000 },
  connectTimeoutMs: 1_000,
  // maxAttempts out of reach: a resumable final error means the deadline ended the outage.
  reconnect: { deadlineMs: 3_000, maxAttempts: 100 },
} as const;

let dir: string;
let file: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-outage-'));
  file = join(dir, 'silence.raw');
  writeFileSync(file, Buffer.alloc(FILE_BYTES));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type SourceKind = 'file' | 'readable' | 'iterable' | 'shared';

function source(kind: SourceKind): Observable<Uint8Array> {
  switch (kind) {
    case 'file':
      return fileSource(file, { format: RAW });
    case 'readable': {
      async function* chunks(): AsyncGenerator<Buffer> {
        for (let i = 0; i < GENERATED_CHUNKS; i++) yield Buffer.alloc(CHUNK);
      }
      return fromReadable(Readable.from(chunks(), { objectMode: false }), { format: RAW });
    }
    case 'iterable': {
      // Audio already in memory, one buffer reused: next() resolves at once, no I/O between chunks.
      const chunk = new Uint8Array(CHUNK);
      async function* memory(): AsyncGenerator<Uint8Array> {
        for (let i = 0; i < GENERATED_CHUNKS; i++) yield chunk;
      }
      return fromAsyncIterable(memory(), { format: RAW });
    }
    case 'shared':
      return fileSource(file, { format: RAW }).pipe(share());
  }
}

interface Outcome {
  readonly error: SvcError | undefined;
  readonly completed: boolean;
  readonly statuses: string[];
  readonly stats: SessionStats;
  readonly stalls: LoopStalls;
}

type VirtualTime = ReturnType<typeof virtualTime>;
/** Moves virtual time on: by a second at each reconnecting state (the backoff's delay; the third reaches the outage deadline). */
const RECONNECTING_STEP_MS = 1_000;

/**
 * Run one session until it ends; `strike` gets the stats (and the virtual time, when the case runs
 * on it) and breaks things when it sees fit.
 */
async function run(audio$: Observable<Uint8Array>, baseUrl: string, apiKey: string, strike: (stats: SessionStats, time?: VirtualTime) => (() => void) | undefined | void, time?: VirtualTime): Promise<Outcome> {
  const stats = createSessionStats();
  const statuses: string[] = [];
  const watching = stats.state$.subscribe((s) => {
    statuses.push(s.status);
    // The attempt after a failure, then the outage deadline, go ahead once the failure is told.
    if (time && s.status === 'reconnecting') setImmediate(() => time.advance(RECONNECTING_STEP_MS));
  });
  const unstrike = strike(stats, time);
  const loop = watchLoop();
  const ended = await new Promise<{ error?: SvcError; completed: boolean }>((resolve) => {
    audio$.pipe(analyzeConversation({ apiKey, baseUrl, stats, ...TIMING, ...(time ? { scheduler: time.scheduler } : {}) })).subscribe({
      error: (error: unknown) => resolve({ error: error as SvcError, completed: false }),
      complete: () => resolve({ completed: true }),
    });
  });
  const stalls = loop.stop();
  watching.unsubscribe();
  unstrike?.();
  return { error: ended.error, completed: ended.completed, statuses, stats, stalls };
}

function expectNeitherFrozenNorDrained(r: Outcome): void {
  expect(r.completed, `statuses ${r.statuses.join(' → ')}`).toBe(false);
  expect(r.error).toBeInstanceOf(SessionError);
  const err = r.error!;
  expect(ERROR_TABLE[err.code].resume, `${err.code}: a final error the outage deadline decided is one a new session could have cured`).toBe(true);
  expect(r.statuses).toContain('reconnecting');
  expect(r.statuses.at(-1)).toBe('failed');
  const audio = err.audio!;
  expect(audio.read).toBe(audio.sent + audio.unsent);
  expect(audio.read).toBe(r.stats.bytesRead);
  expect(audio.sent).toBe(r.stats.bytesSent - r.stats.bytesReplayed);
  // Read at most the replay bound plus the high-water mark beyond what was sent (and the chunk that crossed it).
  expect(audio.unsent, `read ${audio.read}, sent ${audio.sent}`).toBeLessThanOrEqual(REPLAY_BYTES + HIGH_WATER_MARK + CHUNK);
  // What was read and never sent is dropped, and said so.
  expect(r.stats.bytesDropped).toBe(audio.unsent);
  expect(
    r.stalls.busiestMs,
    `the event loop stalled ${r.stalls.busiestMs.toFixed(0)} ms with the main thread on a CPU (longest gap ${r.stalls.longestMs.toFixed(0)} ms, monitorEventLoopDelay max ${r.stalls.histogramMaxMs.toFixed(0)} ms, the rest the machine's load)`,
  ).toBeLessThanOrEqual(STALL_LIMIT_MS);
}

const KINDS: SourceKind[] = ['file', 'readable', 'iterable', 'shared'];
/** The case that keeps the real clock; the others run the library's timers on virtual time. */
const REAL_TIME: SourceKind = 'file';
const timeFor = (kind: SourceKind): VirtualTime | undefined => (kind === REAL_TIME ? undefined : virtualTime());

function countByType(list: readonly string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const t of list) m.set(t, (m.get(t) ?? 0) + 1);
  return m;
}

/** Wait (briefly) for sockets to finish closing, then expect nothing above `baseline`. */
async function expectNothingLeft(baseline: Map<string, number>): Promise<void> {
  const extra = (): string[] => [...countByType(process.getActiveResourcesInfo())].filter(([t, n]) => n > (baseline.get(t) ?? 0)).map(([t, n]) => `${t} +${n - (baseline.get(t) ?? 0)}`);
  // The poll's own timer is a Timeout while it runs: wait for the sockets, then check everything.
  await expect.poll(() => extra().filter((e) => !e.startsWith('Timeout')), { timeout: 2_000 }).toEqual([]);
  expect(extra()).toEqual([]);
}

describe('an outage that does not heal, for every kind of pull source', () => {
  let failing: EmulatorProcess;
  let plain: EmulatorProcess;
  /** One emulator to SIGKILL per kind, started with the others (a start is seconds under load). */
  const killable = new Map<SourceKind, EmulatorProcess>();
  beforeAll(async () => {
    const path = join(dir, 'close-1011.json');
    writeFileSync(path, JSON.stringify({ faults: [{ at: 'audio', at_ms: 2_000, action: 'close', code: 1011, error: 'Internal server error' }] }));
    const stop = join(dir, 'stop-reading.json');
    writeFileSync(stop, JSON.stringify({ faults: [{ at: 'audio', at_ms: 2_000, action: 'stop_reading' }] }));
    const [f, p, ...toKill] = await Promise.all([spawnEmulator(0, ['--scenario', path]), spawnEmulator(), ...KINDS.map(() => spawnEmulator(0, ['--scenario', stop]))]);
    [failing, plain] = [f!, p!];
    KINDS.forEach((kind, i) => killable.set(kind, toKill[i]!));
  }, 60_000);
  afterAll(async () => {
    await Promise.all([failing?.stop('SIGKILL'), plain?.stop('SIGKILL'), ...[...killable.values()].map((e) => e.stop('SIGKILL'))]);
  });

  it.each(KINDS)('%s: the server stops reading, then is SIGKILLed', async (kind) => {
    const emu = killable.get(kind)!;
    const baseline = countByType(process.getActiveResourcesInfo());
    try {
      const r = await run(source(kind), emu.baseUrl, emu.apiKey, (stats) => {
        // Killed once the client pushed back (the socket is full), as a crash under load.
        const sub = stats.state$.subscribe((s) => {
          if (s.status !== 'paused') return;
          void emu.stop('SIGKILL');
          queueMicrotask(() => sub.unsubscribe());
        });
      }, timeFor(kind));
      expectNeitherFrozenNorDrained(r);
      expect(['connection_lost', 'connection_failed', 'heartbeat_timeout']).toContain(r.error!.code);
    } finally {
      await emu.stop('SIGKILL');
    }
    await expectNothingLeft(baseline);
  }, 60_000);

  it.each(KINDS)('%s: every session is closed with 1011 mid-stream', async (kind) => {
    const baseline = countByType(process.getActiveResourcesInfo());
    const r = await run(source(kind), failing.baseUrl, failing.apiKey, () => undefined, timeFor(kind));
    expectNeitherFrozenNorDrained(r);
    expect(r.error!.code).toBe('internal_error');
    expect(r.error!.closeCode).toBe(1011);
    // Sessions opened again and died young; each was a segment.
    expect(r.stats.reconnects).toBeGreaterThanOrEqual(1);
    expect(r.stats.segment).toBe(r.stats.reconnects);
    await expectNothingLeft(baseline);
  }, 60_000);

  it.each(KINDS)('%s: a proxy that blackholes the connection for good', async (kind) => {
    const proxy = await startTcpProxy(plain.port);
    const baseline = countByType(process.getActiveResourcesInfo());
    try {
      const r = await run(
        source(kind),
        proxy.baseUrl,
        plain.apiKey,
        (stats, time) => {
          const sub = stats.state$.subscribe((s) => {
            if (s.status !== 'streaming' && s.status !== 'paused') return;
            proxy.setMode('blackhole');
            // On virtual time: the heartbeat's ping goes into the hole and its deadline passes.
            if (time) setImmediate(() => time.advance(TIMING.heartbeat.intervalMs + TIMING.heartbeat.timeoutMs));
            queueMicrotask(() => sub.unsubscribe());
          });
          // Each attempt after that hangs in the hole (the upgrade is swallowed): its connect deadline passes.
          if (!time) return undefined;
          let failed = false;
          const attempts = stats.state$.subscribe((s) => {
            if (s.status === 'reconnecting') failed = true;
            else if (s.status === 'connecting' && failed) setImmediate(() => time.advance(TIMING.connectTimeoutMs));
          });
          return () => attempts.unsubscribe();
        },
        timeFor(kind),
      );
      expectNeitherFrozenNorDrained(r);
      expect(['heartbeat_timeout', 'connect_timeout']).toContain(r.error!.code);
    } finally {
      await proxy.close();
    }
    await expectNothingLeft(baseline);
  }, 60_000);
});
