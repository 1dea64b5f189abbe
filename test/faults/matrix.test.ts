// The fault matrix: every point of a session × every server fault ends in the right typed
// error (or completes, once `done` made the results complete), within a bound, with every
// audio byte accounted for, and with no socket, timer or process left running.
//
// Points: before open (TCP and HTTP, from a tiny purpose-built server: the emulator only
// faults after it accepted the upgrade, or refuses it with a status), right after the
// upgrade (`handshake`), after the config frame, mid-audio, after the end of audio, after
// `done`. A close code cannot be sent before the socket is open; there the HTTP refusal
// stands in for it.
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { asyncScheduler, Observable, type SchedulerAction, type SchedulerLike } from 'rxjs';
import { analyzeConversation, ContractError, createSessionStats, SessionError, SvcError, type ErrorCode, type ServerEvent, type SessionStats } from 'svc-stream';
import { startEmulator, type Fault, type RunningEmulator } from 'svc-stream/emulator';

const KEY = 'sk-fault-matrix-0001';
const RAW = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } as const;
// Distinct limits, so the timer that decided an outcome says which one it was.
const CONNECT_MS = 400;
const DONE_MS = 300;
const CLOSE_MS = 350;
const SESSION_TIMERS = new Set([CONNECT_MS, DONE_MS, CLOSE_MS]);
// One session against each fault: reconnecting has its own tests (test/session/reconnect.test.ts).
const OPTIONS = { apiKey: KEY, format: RAW, reconnect: false as const, connectTimeoutMs: CONNECT_MS, doneTimeoutMs: DONE_MS, closeTimeoutMs: CLOSE_MS };

// ---------------------------------------------------------------------------------------------
// Sources that count what they emit, so the session's accounting can be checked against them.

interface Counter {
  emitted: number;
  total: number;
}

/**
 * `count` chunks of `size` zero bytes, `perTick` per macrotask (so faults strike mid-stream,
 * not after a synchronous source has been read whole), counting the bytes handed to `next`.
 */
function countingSource(count: number, size: number, perTick: number): { audio$: Observable<Uint8Array>; counter: Counter } {
  const counter: Counter = { emitted: 0, total: count * size };
  const chunk = new Uint8Array(size);
  const audio$ = new Observable<Uint8Array>((s) => {
    let sent = 0;
    let handle: NodeJS.Immediate | undefined;
    const tick = (): void => {
      handle = undefined;
      for (let k = 0; k < perTick && sent < count && !s.closed; k++) {
        sent++;
        counter.emitted += size;
        s.next(chunk);
      }
      if (s.closed) return;
      if (sent >= count) s.complete();
      else handle = setImmediate(tick);
    };
    handle = setImmediate(tick);
    return () => {
      if (handle) clearImmediate(handle);
    };
  });
  return { audio$, counter };
}

/** 10 s of 100 ms frames, ten per tick. */
const small = () => countingSource(100, 3200, 10);
/** Up to 64 MiB in 64 KiB chunks, for a server that stops reading: overflows a 2 MiB bound. */
const big = () => countingSource(1024, 65_536, 16);
const BIG_OPTIONS = { maxBufferedBytes: 2 << 20 };

// ---------------------------------------------------------------------------------------------
// Running one session and checking what it left behind.

interface Run {
  events: ServerEvent[];
  error: unknown;
  completed: boolean;
  /** The session's own timers (connect, done, close) that fired before the outcome, by their delay. */
  timers: number[];
  stats: SessionStats;
  counter: Counter;
}

/**
 * The async scheduler, noting each session timer (connect, done, close) that fires: the order
 * of timers and outcome says whether an outcome waited for a limit (and which), without
 * reading the wall clock.
 */
function notingScheduler(fired: number[]): SchedulerLike {
  return {
    now: () => asyncScheduler.now(),
    schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T) {
      return asyncScheduler.schedule<T>(function (this: SchedulerAction<T>, s?: T) {
        if (SESSION_TIMERS.has(delay)) fired.push(delay);
        work.call(this, s);
      }, delay, state);
    },
  };
}

function run(source: { audio$: Observable<Uint8Array>; counter: Counter }, baseUrl: string, extra: object = {}): Promise<Run> {
  const stats = createSessionStats();
  const events: ServerEvent[] = [];
  const fired: number[] = [];
  return new Promise((resolve) => {
    const done = (error: unknown, completed: boolean): void => resolve({ events, error, completed, timers: fired.slice(), stats, counter: source.counter });
    source.audio$.pipe(analyzeConversation({ ...OPTIONS, baseUrl, stats, scheduler: notingScheduler(fired), ...extra })).subscribe({
      next: (e) => events.push(e),
      error: (err: unknown) => done(err, false),
      complete: () => done(undefined, true),
    });
  });
}

function countByType(list: readonly string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const t of list) m.set(t, (m.get(t) ?? 0) + 1);
  return m;
}

/** Resources above the baseline (sockets, timers, immediates, processes), or [] when none. */
function leftovers(baseline: Map<string, number>): string[] {
  const now = countByType(process.getActiveResourcesInfo());
  const extra: string[] = [];
  for (const [type, n] of now) if (n > (baseline.get(type) ?? 0)) extra.push(`${type} +${n - (baseline.get(type) ?? 0)}`);
  return extra;
}

/**
 * Wait (briefly: sockets take a few ticks to finish closing) until no socket is left over,
 * then expect nothing at all: a timer still pending then is a leak, however short.
 */
async function expectNothingLeft(baseline: Map<string, number>, ms = 1_500): Promise<void> {
  await expect.poll(() => leftovers(baseline).some((e) => !e.startsWith('Timeout')), { timeout: ms }).toBe(false);
  const extra = leftovers(baseline);
  expect(extra, `left behind: ${extra.join(', ')}`).toEqual([]);
}

/** Every byte read is sent or unsent, and read is exactly what the source emitted before the end. */
function expectAccounted(r: Run): void {
  if (r.completed) {
    expect(r.stats.bytesRead).toBe(r.counter.emitted);
    expect(r.stats.bytesSent).toBe(r.counter.total);
    expect(r.counter.emitted).toBe(r.counter.total);
    return;
  }
  const audio = (r.error as SvcError).audio;
  expect(audio, 'the error carries the audio account').toBeDefined();
  expect(audio!.read).toBe(audio!.sent + audio!.unsent);
  expect(audio!.read).toBe(r.counter.emitted);
  expect(audio!.sent).toBeLessThanOrEqual(audio!.read);
  expect(audio!.unsent).toBeGreaterThanOrEqual(0);
}

// ---------------------------------------------------------------------------------------------
// The matrix against the emulator: points after the upgrade × faults.

type Point = 'handshake' | 'config' | 'audio' | 'end' | 'done';
const POINTS: Array<{ point: Point; name: string; fault: Pick<Fault, 'at' | 'at_ms'> }> = [
  { point: 'handshake', name: 'right after the upgrade', fault: { at: 'handshake' } },
  { point: 'config', name: 'after the config frame', fault: { at: 'config' } },
  { point: 'audio', name: 'mid-audio (300 ms in)', fault: { at: 'audio', at_ms: 300 } },
  { point: 'end', name: 'after the end of audio', fault: { at: 'end' } },
  { point: 'done', name: 'after done', fault: { at: 'done' } },
];

/** An expected outcome: a typed error (with its close code, when the close decides) or completion. */
type Expect =
  | { readonly complete: true; readonly waitMs: number }
  | { readonly code: ErrorCode; readonly closeCode?: number; readonly errorEvent?: string; readonly waitMs: number };

interface Column {
  readonly name: string;
  readonly fault: Omit<Fault, 'at' | 'at_ms'>;
  /** Use the big source at this point (a server that stops reading before the audio ends). */
  readonly big?: (point: Point) => boolean;
  readonly extra?: object;
  readonly expect: (point: Point) => Expect;
}

const AFTER_DONE_CLOSES: Expect = { complete: true, waitMs: 0 };

/** Each close code of §7.3 and the wire reference, plus one the client does not know. */
const CLOSES: Array<[code: number, error: string | null, withEvent: ErrorCode, bare: ErrorCode]> = [
  [1000, null, 'missing_done', 'missing_done'],
  [1003, 'Invalid configuration.', 'invalid_config', 'protocol_error'],
  [1011, 'Internal server error', 'internal_error', 'internal_error'],
  [4001, 'Invalid API key.', 'invalid_api_key', 'invalid_api_key'],
  [4002, 'Invalid input audio', 'invalid_audio', 'invalid_audio'],
  [4003, 'This API key does not have access to this model.', 'no_model_access', 'usage_denied'],
  [4029, 'Insufficient credits.', 'insufficient_credits', 'limit_exceeded'],
  [4030, 'Concurrent request limit reached. Please retry after in-flight requests complete.', 'concurrency_limit', 'concurrency_limit'],
  [4031, 'Monthly credit limit reached.', 'monthly_credit_limit', 'limit_exceeded'],
  [4999, 'Something new went wrong', 'unexpected_close', 'unexpected_close'],
];

const COLUMNS: Column[] = [
  ...CLOSES.flatMap(([code, error, withEvent, bare]): Column[] => {
    const variants: Column[] = [
      {
        name: error === null ? `close ${code}` : `error event then close ${code}`,
        fault: { action: 'close', code, error },
        expect: (p) => (p === 'done' ? AFTER_DONE_CLOSES : { code: withEvent, closeCode: code, ...(error !== null ? { errorEvent: error } : {}), waitMs: 0 }),
      },
    ];
    if (error !== null) {
      variants.push({
        name: `bare close ${code} (no error event)`,
        fault: { action: 'close', code, error: null },
        expect: (p) => (p === 'done' ? AFTER_DONE_CLOSES : { code: bare, closeCode: code, waitMs: 0 }),
      });
    }
    return variants;
  }),
  {
    name: 'dropped TCP connection',
    fault: { action: 'drop' },
    expect: (p) => (p === 'done' ? { complete: true, waitMs: 0 } : { code: 'connection_lost', closeCode: 1006, waitMs: 0 }),
  },
  {
    name: 'server stall',
    fault: { action: 'stall' },
    // The server keeps reading but never answers: the audio goes out, `done` never comes.
    expect: (p) => (p === 'done' ? { complete: true, waitMs: CLOSE_MS } : { code: 'done_timeout', waitMs: DONE_MS }),
  },
  {
    name: 'malformed frame',
    fault: { action: 'malformed' },
    expect: (p) => (p === 'done' ? { complete: true, waitMs: CLOSE_MS } : { code: 'malformed_frame', waitMs: 0 }),
  },
  {
    name: 'oversized frame',
    fault: { action: 'oversized', bytes: 100_000 },
    extra: { maxServerFrameBytes: 65_536 },
    // The client stops reading at the oversized frame, so it never sees the server's close frame (1006).
    expect: (p) => (p === 'done' ? { complete: true, waitMs: 0 } : { code: 'malformed_frame', waitMs: 0 }),
  },
  {
    name: 'server that never reads',
    fault: { action: 'stop_reading' },
    big: (p) => p !== 'end' && p !== 'done',
    extra: BIG_OPTIONS,
    // Before the end, a push source overflows the bound; after it, `done` never comes; after
    // `done`, the close is never answered and the results stand.
    expect: (p) =>
      p === 'done' ? { complete: true, waitMs: CLOSE_MS } : p === 'end' ? { code: 'done_timeout', waitMs: DONE_MS } : { code: 'backpressure_overflow', waitMs: 0 },
  },
];

const CASES = POINTS.flatMap(({ point, name, fault }) =>
  COLUMNS.map((col) => ({ label: `${name}: ${col.name}`, point, col, fault: { ...fault, ...col.fault } as Fault })),
);

async function check(r: Run, expected: Expect): Promise<void> {
  if ('complete' in expected) {
    expect(r.error, `expected completion, got ${String(r.error)}`).toBeUndefined();
    expect(r.completed).toBe(true);
    expect(r.events.some((e) => e.type === 'done')).toBe(true);
  } else {
    expect(r.completed, `expected ${expected.code}, completed`).toBe(false);
    // A frame outside the contract is a ContractError over the socket as over HTTP; every other failure is the session's.
    expect(r.error, String(r.error)).toBeInstanceOf(expected.code === 'malformed_frame' ? ContractError : SessionError);
    const err = r.error as SvcError;
    expect(err.code, err.message).toBe(expected.code);
    if (expected.closeCode !== undefined) expect(err.closeCode).toBe(expected.closeCode);
    if (expected.errorEvent !== undefined) {
      expect(r.events.at(-1)).toEqual({ type: 'error', error: expected.errorEvent });
      expect(err.detail).toBe(expected.errorEvent);
    }
  }
  // Bounded: an outcome due at once came before any limit of the session ran out; one that
  // waits for a limit came when that limit's timer fired (the test itself is bounded in time).
  if (expected.waitMs === 0) expect(r.timers, 'no session timer had to fire').toEqual([]);
  else expect(r.timers, `the ${expected.waitMs} ms limit decided it`).toContain(expected.waitMs);
  expectAccounted(r);
}

describe('fault matrix against the emulator (point × fault)', () => {
  it.each(CASES)('$label', async ({ point, col, fault }) => {
    const baseline = countByType(process.getActiveResourcesInfo());
    const emu: RunningEmulator = await startEmulator({ apiKey: KEY, scenario: { faults: [fault] } });
    let r: Run;
    try {
      r = await run(col.big?.(point) ? big() : small(), emu.baseUrl, col.extra);
    } finally {
      await emu.close();
    }
    await check(r, col.expect(point));
    await expectNothingLeft(baseline);
  });

  it('no fault: completes with every byte sent, and nothing left behind', async () => {
    const baseline = countByType(process.getActiveResourcesInfo());
    const emu = await startEmulator({ apiKey: KEY });
    let r: Run;
    try {
      r = await run(small(), emu.baseUrl);
    } finally {
      await emu.close();
    }
    await check(r, { complete: true, waitMs: 0 });
    expect(r.stats.bytesSent).toBe(100 * 3200);
    await expectNothingLeft(baseline);
  });
});

// ---------------------------------------------------------------------------------------------
// Before the socket opens: a tiny TCP server plays each fault, and the emulator refuses the
// upgrade with an HTTP status.

interface TinyServer {
  readonly baseUrl: string;
  close(): Promise<void>;
}

async function tinyServer(onSocket: (s: Socket) => void): Promise<TinyServer> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
    onSocket(s);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

const BEFORE_OPEN: Array<{ name: string; server: (s: Socket) => void; expect: Expect }> = [
  { name: 'dropped TCP connection', server: (s) => s.destroy(), expect: { code: 'connection_failed', waitMs: 0 } },
  { name: 'server stall (accepts, never answers)', server: () => undefined, expect: { code: 'connect_timeout', waitMs: CONNECT_MS } },
  { name: 'malformed HTTP answer', server: (s) => s.end('SSH-2.0-OpenSSH_9.6\r\n\r\n'), expect: { code: 'connection_failed', waitMs: 0 } },
  {
    name: 'oversized HTTP answer (headers beyond the parser limit)',
    server: (s) => s.write(`HTTP/1.1 101 Switching Protocols\r\nx-filler: ${'a'.repeat(200_000)}\r\n\r\n`),
    expect: { code: 'connection_failed', waitMs: 0 },
  },
  {
    name: 'server that never reads',
    server: (s) => s.pause(),
    expect: { code: 'connect_timeout', waitMs: CONNECT_MS },
  },
  {
    name: 'refusal whose body never ends',
    server: (s) => s.write('HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"detail":'),
    expect: { code: 'connect_timeout', waitMs: CONNECT_MS },
  },
];

const REFUSALS: Array<{ status: number; detail: string; code: ErrorCode }> = [
  { status: 401, detail: 'Invalid API key.', code: 'invalid_api_key' },
  { status: 403, detail: 'This request is not permitted.', code: 'not_permitted' },
  { status: 429, detail: 'Insufficient credits.', code: 'insufficient_credits' },
  { status: 500, detail: 'Internal server error', code: 'internal_error' },
  { status: 503, detail: 'Service temporarily unavailable. Please try again later.', code: 'service_unavailable' },
];

describe('fault matrix before the socket opens', () => {
  it.each(BEFORE_OPEN)('before open: $name', async ({ server, expect: expected }) => {
    const baseline = countByType(process.getActiveResourcesInfo());
    const tiny = await tinyServer(server);
    let r: Run;
    try {
      r = await run(small(), tiny.baseUrl);
    } finally {
      await tiny.close();
    }
    await check(r, expected);
    await expectNothingLeft(baseline);
  });

  it('before open: nothing listening', async () => {
    const baseline = countByType(process.getActiveResourcesInfo());
    const tiny = await tinyServer(() => undefined);
    await tiny.close();
    const r = await run(small(), tiny.baseUrl);
    await check(r, { code: 'connection_failed', waitMs: 0 });
    await expectNothingLeft(baseline);
  });

  it.each(REFUSALS)('before open: the upgrade refused with HTTP $status', async ({ status, detail, code }) => {
    const baseline = countByType(process.getActiveResourcesInfo());
    const emu = await startEmulator({ apiKey: KEY, scenario: { faults: [{ at: 'handshake', action: 'http', status, detail }] } });
    let r: Run;
    try {
      r = await run(small(), emu.baseUrl);
    } finally {
      await emu.close();
    }
    await check(r, { code, waitMs: 0 });
    expect((r.error as SessionError).status).toBe(status);
    await expectNothingLeft(baseline);
  });
});
