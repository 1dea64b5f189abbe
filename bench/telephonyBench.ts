// Shared by the telephony benches (rtp.ts, mediaStream.ts): the emulator child, the sweep over
// call counts (one receiver process per count), per-chunk latency bookkeeping through the
// session's webSocketFactory seam, and the steady-window CPU / RSS / event-loop figures.
import { fork, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { Observable } from 'rxjs';
import WebSocket, { type ClientOptions } from 'ws';
import { startEmulator } from '../src/emulator/index.js';
import { analyzeCalls, type AnalyzableCall } from '../src/telephony/index.js';
import { fmt, machine, percentile } from './benchInternals.js';

/** Bytes of one 20 ms G.711 chunk at 8 kHz: the unit both senders send. */
export const CHUNK = 160;
/** Sessions per emulated organization (the emulator's ceiling, §8). */
export const PER_ORG = 25;

/** A full collection (receivers run with --expose-gc). */
export function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** Heap and external memory after a full collection. */
export function retainedNow(): number {
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

/** The monotonic clock every process on this machine shares (CLOCK_MONOTONIC), in ms. */
export function mono(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

export const loadavg = (): string => os.loadavg().map((l) => l.toFixed(2)).join(' ');

// ---------------------------------------------------------------------------------------------
// Child processes speak to their parent over IPC (advanced serialization: typed arrays pass as such).

const children = new Set<ChildProcess>();
// A receiver that fails takes its children with it (they would hold the terminal open).
process.on('exit', () => {
  for (const c of children) c.kill();
});

export function forkRole(script: string, args: readonly string[], execArgv: readonly string[] = []): ChildProcess {
  const child = fork(script, [...args], { execArgv: [...execArgv, '--import', 'tsx'], serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Send the last message, then let the parent go (disconnect only once it is written). */
export function sendLast(message: unknown): void {
  process.send!(message, undefined, {}, () => process.disconnect());
}

/** The next IPC message of `child` whose `type` is `type`. */
export function nextMessage<T extends { type: string }>(child: ChildProcess | NodeJS.Process, type: T['type']): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: unknown): void => {
      if ((m as { type?: string })?.type !== type) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(m as T);
    };
    const onExit = (code: number | null): void => reject(new Error(`child exited (${code}) before '${type}'`));
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

export interface EmulatorReport {
  type: 'emulator-report';
  cpuPct: number;
  peaks: number[];
  /** Audio bytes the emulator received over every finished connection. */
  bytesReceived: number;
  connections: number;
}

/** Child role: an emulator with ⌈calls / 25⌉ organizations of 25 sessions, keys `bench-<i>`. */
export async function emulatorRole(calls: number): Promise<void> {
  const orgs = Math.ceil(calls / PER_ORG);
  const emu = await startEmulator({ organizations: Array.from({ length: orgs }, (_, i) => ({ id: `org${i}`, keys: [`bench-${i}`], concurrency: PER_ORG })) });
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  process.send!({ type: 'emulator-ready', baseUrl: emu.baseUrl });
  await nextMessage(process, 'stop');
  const u = process.cpuUsage(cpu0);
  const report: EmulatorReport = {
    type: 'emulator-report',
    cpuPct: ((u.user + u.system) / 1000 / (performance.now() - t0)) * 100,
    peaks: emu.accounts.organizations.map((o) => o.peakInFlight.conversation),
    bytesReceived: emu.connections.reduce((n, c) => n + c.bytesReceived, 0),
    connections: emu.connections.length,
  };
  await emu.close();
  sendLast(report);
}

export const keyFor = (callIndex: number): string => `bench-${Math.floor(callIndex / PER_ORG)}`;

// ---------------------------------------------------------------------------------------------
// Per-chunk latency. Chunk k of call c is the bytes [160k, 160k + 160) of its audio (both
// senders start at timestamp 0 and send whole 20 ms chunks). The sender records when it sent
// each chunk (shared monotonic clock); the receiver records when the frame carrying the chunk
// went to ws.send and when ws called back (flushed), by wrapping ws.send in the factory.

export interface CallTrack {
  readonly frameAt: Float64Array;
  readonly flushAt: Float64Array;
  openedAt: number;
  /** Audio bytes sent in frames so far. */
  bytes: number;
  frames: number;
}

export class ChunkClock {
  readonly calls: CallTrack[];
  opened = 0;
  onAllOpen: (() => void) | undefined;

  constructor(
    readonly count: number,
    readonly chunksPerCall: number,
  ) {
    this.calls = Array.from({ length: count }, () => ({ frameAt: new Float64Array(chunksPerCall), flushAt: new Float64Array(chunksPerCall), openedAt: Infinity, bytes: 0, frames: 0 }));
  }

  /** A webSocketFactory for call `c`: a real ws, whose binary sends are booked chunk by chunk. */
  factory(c: number): (url: string, options: ClientOptions) => WebSocket {
    const t = this.calls[c]!;
    return (url, options) => {
      const ws = new WebSocket(url, options);
      ws.once('open', () => {
        t.openedAt = mono();
        if (++this.opened === this.count) this.onAllOpen?.();
      });
      const send = ws.send.bind(ws) as (data: unknown, opts?: unknown, cb?: (err?: Error) => void) => void;
      (ws as unknown as { send: typeof send }).send = (data, opts, cb) => {
        if (typeof data === 'string' || typeof opts === 'function') return send(data, opts, cb);
        const len = (data as Uint8Array).byteLength;
        const from = Math.floor(t.bytes / CHUNK);
        t.bytes += len;
        t.frames++;
        const to = Math.min(this.chunksPerCall, Math.floor(t.bytes / CHUNK));
        const now = mono();
        for (let k = from; k < to; k++) t.frameAt[k] = now;
        return send(data, opts, (err?: Error) => {
          if (!err) {
            const done = mono();
            for (let k = from; k < to; k++) t.flushAt[k] = done;
          }
          cb?.(err);
        });
      };
      return ws;
    };
  }

  /** Latencies from the sender's send times (one Float64Array per call; 0 = not sent). */
  latencies(sentAt: readonly Float64Array[], window: { from: number; to: number }): LatencyFigures {
    const toFrame: number[] = [];
    const toFlush: number[] = [];
    let sent = 0;
    let carried = 0;
    let warmup = 0;
    let frames = 0;
    for (let c = 0; c < this.count; c++) {
      const t = this.calls[c]!;
      const s = sentAt[c]!;
      frames += t.frames;
      for (let k = 0; k < this.chunksPerCall; k++) {
        const at = s[k]!;
        if (at === 0) continue;
        sent++;
        if (t.flushAt[k] === 0) continue;
        carried++;
        // Sent before the session's socket was open: that measures the handshake, not the pipeline.
        if (at < t.openedAt) {
          warmup++;
          continue;
        }
        // Latency over the steady window only (the GC that measures memory ends it).
        if (at < window.from || at >= window.to) continue;
        toFrame.push(t.frameAt[k]! - at);
        toFlush.push(t.flushAt[k]! - at);
      }
    }
    toFrame.sort((a, b) => a - b);
    toFlush.sort((a, b) => a - b);
    return { toFrame, toFlush, sent, carried, warmup, frames };
  }
}

export interface LatencyFigures {
  /** Over the steady window. */
  toFrame: number[];
  toFlush: number[];
  /** Chunks the sender sent. */
  sent: number;
  /** Of which flushed to the service in some frame. */
  carried: number;
  /** Carried, but sent before their session's socket opened (left out of the latencies). */
  warmup: number;
  /** Binary frames the sessions sent. */
  frames: number;
}

// ---------------------------------------------------------------------------------------------
// The steady window: from the moment every call's session is open (plus a settling second)
// until the first sender call ends. CPU, RSS and event-loop delay are taken over it.

export class SteadyWindow {
  private cpu0: NodeJS.CpuUsage | undefined;
  private t0 = 0;
  private readonly eld = monitorEventLoopDelay({ resolution: 10 });
  private rssPeak = 0;
  private from = 0;
  private sampler: NodeJS.Timeout | undefined;
  result: { from: number; to: number; cpuPct: number; userPct: number; systemPct: number; wallMs: number; rssPeak: number; retained: number; eldP50: number; eldP99: number; eldMax: number } | undefined;

  /** Sessions open when the window started (fewer than the calls when it started on the fallback). */
  openAtStart = 0;

  start(open = 0): void {
    if (this.cpu0) return;
    this.openAtStart = open;
    this.cpu0 = process.cpuUsage();
    this.t0 = performance.now();
    this.from = mono();
    this.eld.reset();
    this.eld.enable();
    this.rssPeak = process.memoryUsage.rss();
    this.sampler = setInterval(() => (this.rssPeak = Math.max(this.rssPeak, process.memoryUsage.rss())), 500);
  }

  stop(): void {
    if (!this.cpu0 || this.result) return;
    const u = process.cpuUsage(this.cpu0);
    const wallMs = performance.now() - this.t0;
    const to = mono();
    clearInterval(this.sampler);
    this.eld.disable();
    this.rssPeak = Math.max(this.rssPeak, process.memoryUsage.rss());
    // Heap and external memory after a full collection, every call still live.
    gc();
    const m = process.memoryUsage();
    this.result = {
      from: this.from,
      to,
      retained: m.heapUsed + m.external,
      cpuPct: ((u.user + u.system) / 1000 / wallMs) * 100,
      userPct: (u.user / 1000 / wallMs) * 100,
      systemPct: (u.system / 1000 / wallMs) * 100,
      wallMs,
      rssPeak: this.rssPeak,
      eldP50: this.eld.percentile(50) / 1e6,
      eldP99: this.eld.percentile(99) / 1e6,
      eldMax: this.eld.max / 1e6,
    };
  }
}

export interface SenderReport {
  type: 'sender-report';
  cpuPct: number;
  lateTicks: number;
  sentAt: Float64Array[];
}

/** One receiver run's row, as printed and passed up to the sweep. */
export interface Row {
  type: 'row';
  calls: number;
  done: number;
  line: string;
}

export interface ReceiverResult {
  readonly calls: number;
  readonly done: number;
  readonly failures: readonly string[];
  readonly window: NonNullable<SteadyWindow['result']>;
  readonly rssBase: number;
  /** Heap + external after a full collection, before the calls. */
  readonly retainedBase: number;
  readonly latency: LatencyFigures;
  readonly emulator: EmulatorReport;
  readonly sender: SenderReport;
  /** Audio bytes the sender sent (chunks × 160). */
  readonly bytesSent: number;
  /** Extra loss figures of the source, printed as they are. */
  readonly sourceLine: string;
  readonly loadBefore: string;
  /** Sessions open when the window started. */
  readonly openAtStart: number;
}

export function formatResult(name: string, r: ReceiverResult): string {
  const w = r.window;
  const l = r.latency;
  const lost = l.sent - l.carried;
  const three = (xs: number[]): string => `${fmt(percentile(xs, 50), 2)} / ${fmt(percentile(xs, 99), 2)} / ${fmt(xs.at(-1) ?? NaN, 1)}`;
  return [
    `${name} ${r.calls} calls: done ${r.done}/${r.calls}${r.failures.length ? ` (${r.failures.slice(0, 3).join('; ')})` : ''}; emulator peak sessions per org max ${Math.max(...r.emulator.peaks)}, ${r.emulator.connections} connections`,
    `  load average before ${r.loadBefore}, after ${loadavg()}`,
    `  receiver CPU over the ${fmt(w.wallMs / 1000, 1)} s ${r.openAtStart === r.calls ? 'steady window' : `window (only ${r.openAtStart} of ${r.calls} sessions open when it started: NOT steady)`}: ${fmt(w.cpuPct)} % of one core (user ${fmt(w.userPct)} %, system ${fmt(w.systemPct)} %), ${fmt((w.cpuPct * 1e4) / (r.calls * 50), 1)} µs per chunk due; emulator ${fmt(r.emulator.cpuPct)} %, sender ${fmt(r.sender.cpuPct)} % (late ticks ${r.sender.lateTicks})`,
    `  memory per call: RSS ${fmt(r.rssBase / 1e6)} MB before the calls, peak ${fmt(w.rssPeak / 1e6)} MB: ${fmt((w.rssPeak - r.rssBase) / r.calls / 1024, 0)} kB per call; heap + external after GC ${fmt(r.retainedBase / 1e6)} → ${fmt(w.retained / 1e6)} MB: ${fmt((w.retained - r.retainedBase) / r.calls / 1024, 0)} kB per call`,
    `  added latency per chunk (${l.toFrame.length} chunks sent in the window; ${l.warmup} sent before their session's socket opened), p50 / p99 / max ms: sent → frame ${three(l.toFrame)}; sent → flushed ${three(l.toFlush)}; ${l.frames} frames for ${l.carried} chunks`,
    `  loss: ${lost} of ${l.sent} chunks never reached a flushed frame; emulator received ${r.emulator.bytesReceived} of ${r.bytesSent} bytes sent (${r.bytesSent - r.emulator.bytesReceived} short)${r.sourceLine ? `; ${r.sourceLine}` : ''}`,
    `  event-loop delay p50 / p99 / max: ${fmt(w.eldP50, 2)} / ${fmt(w.eldP99, 2)} / ${fmt(w.eldMax, 1)} ms`,
  ].join('\n');
}

/** The calls of one receiver run: what arrived, how each ended, and when all `calls` have. */
export interface CallRun<C> {
  readonly received: C[];
  readonly failures: string[];
  /** Calls that ended `done`. */
  done: number;
  readonly all: Promise<void>;
}

/** Analyse every call of `calls$` in a session on the emulator, key and booked socket chosen by the call's index. */
export function runCalls<C extends AnalyzableCall>(calls$: Observable<C>, calls: number, baseUrl: string, indexOf: (call: C) => number, clock: ChunkClock): CallRun<C> {
  let ended = 0;
  const run: CallRun<C> = { received: [], failures: [], done: 0, all: Promise.resolve() };
  (run as { all: Promise<void> }).all = new Promise<void>((resolve) => {
    analyzeCalls(calls$, {
      baseUrl,
      maxConcurrent: calls,
      whenFull: 'reject',
      sessionOptions: (call) => ({ apiKey: keyFor(indexOf(call)), webSocketFactory: clock.factory(indexOf(call)) }),
    }).subscribe({
      next: (call) => {
        run.received.push(call.call);
        call.outcome$.subscribe((o) => {
          if (o.status === 'done') run.done++;
          else run.failures.push(`${o.status}: ${String(o.error)}`);
          if (++ended === calls) resolve();
        });
      },
      error: (err: unknown) => {
        run.failures.push(`source: ${String(err)}`);
        resolve();
      },
    });
  });
  return run;
}

/**
 * Start the window once every session is open and a second has passed, or, when the machine
 * cannot open them all in time, `fallbackMs` after the sender started (reported as not steady).
 */
export function armWindow(clock: ChunkClock, window: SteadyWindow, fallbackMs: number): void {
  clock.onAllOpen = () => setTimeout(() => window.start(clock.opened), 1000);
  setTimeout(() => window.start(clock.opened), fallbackMs).unref();
}

/**
 * The sweep: one receiver process per call count, one after the other, each printing its own
 * figures. `script` is the bench itself, run with `--role receiver --calls N`.
 */
export async function sweep(script: string, name: string, counts: readonly number[], passArgs: readonly string[], execArgv: readonly string[]): Promise<number> {
  console.log(`bench/${name}: ${counts.join(', ')} calls, ${machine()}`);
  let failed = 0;
  for (const calls of counts) {
    const child = forkRole(script, ['--role', 'receiver', '--calls', String(calls), ...passArgs], ['--expose-gc', ...execArgv]);
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    if (code !== 0) failed++;
  }
  return failed === 0 ? 0 : 1;
}

// ---------------------------------------------------------------------------------------------
// The receiver and the command line, shared by both benches; only the source differs.

/** What a bench's receiver needs to know about its source. */
export interface ReceiverSpec<C extends AnalyzableCall> {
  readonly name: string;
  /** The source for `calls` calls, reporting its port; `frameMs` as asked on the command line. */
  source(calls: number, frameMs: number | undefined, onPort: (port: number) => void): Observable<C>;
  /** The sender's index of a call (its key and its row in the sender's send times). */
  indexOf(call: C): number;
  /** The source's own counters, once every call has ended. */
  sourceLine(calls: number, received: readonly C[]): string;
}

/** The options every telephony bench takes (see the header of bench/rtp.ts). */
export function benchArgs() {
  const { values } = parseArgs({
    options: {
      calls: { type: 'string' },
      seconds: { type: 'string' },
      role: { type: 'string' },
      port: { type: 'string' },
      'frame-ms': { type: 'string' },
      'cpu-prof': { type: 'string' },
    },
  });
  const seconds = Number(values.seconds ?? 20);
  return { values, seconds, chunks: seconds * 50, counts: (values.calls ?? '100,400,1000').split(',').map(Number) };
}

async function receiverRole<C extends AnalyzableCall>(script: string, spec: ReceiverSpec<C>, calls: number, seconds: number, frameMs: number | undefined): Promise<never> {
  const chunks = seconds * 50;
  const loadBefore = loadavg();
  const emu = forkRole(script, ['--role', 'emulator', '--calls', String(calls)]);
  const { baseUrl } = await nextMessage<{ type: 'emulator-ready'; baseUrl: string }>(emu, 'emulator-ready');
  const clock = new ChunkClock(calls, chunks);
  const window = new SteadyWindow();
  let resolvePort!: (p: number) => void;
  const portP = new Promise<number>((r) => (resolvePort = r));
  const run = runCalls(spec.source(calls, frameMs, resolvePort), calls, baseUrl, (c) => spec.indexOf(c), clock);
  const port = await portP;
  const retainedBase = retainedNow();
  const rssBase = process.memoryUsage.rss();
  const sender = forkRole(script, ['--role', 'sender', '--port', String(port), '--calls', String(calls), '--seconds', String(seconds)]);
  // The fallback counts from the sender's first tick, not its start (a loaded machine takes seconds to start it).
  void nextMessage(sender, 'started').then(() => armWindow(clock, window, Math.min(8000, (seconds * 1000) / 2)), () => undefined);
  const senderReport = nextMessage<SenderReport>(sender, 'sender-report');
  await nextMessage(sender, 'ending');
  window.stop();
  const sent = await senderReport;
  await run.all;
  emu.send({ type: 'stop' });
  const emuReport = await nextMessage<EmulatorReport>(emu, 'emulator-report');
  if (!window.result) throw new Error('no window: the first call ended before the window started');
  console.log(
    formatResult(`${spec.name}${frameMs !== undefined ? ` (frameMs ${frameMs})` : ''}`, {
      calls,
      done: run.done,
      failures: run.failures,
      window: window.result,
      rssBase,
      retainedBase,
      latency: clock.latencies(sent.sentAt, window.result),
      emulator: emuReport,
      sender: sent,
      bytesSent: calls * chunks * CHUNK,
      sourceLine: spec.sourceLine(calls, run.received),
      loadBefore,
      openAtStart: window.openAtStart,
    }),
  );
  process.exit(run.done === calls ? 0 : 1);
}

/** Run the role the command line names: the sweep (default), or a receiver, emulator or sender child. */
export async function benchMain<C extends AnalyzableCall>(script: string, spec: ReceiverSpec<C>, senderRole: (calls: number, port: number) => Promise<void>): Promise<void> {
  const { values, seconds, counts } = benchArgs();
  const frameMs = values['frame-ms'] !== undefined ? Number(values['frame-ms']) : undefined;
  if (values.role === 'emulator') return emulatorRole(counts[0]!);
  if (values.role === 'sender') return senderRole(counts[0]!, Number(values.port));
  if (values.role === 'receiver') return receiverRole(script, spec, counts[0]!, seconds, frameMs);
  const pass = ['--seconds', String(seconds), ...(frameMs !== undefined ? ['--frame-ms', String(frameMs)] : [])];
  const prof = values['cpu-prof'] !== undefined ? ['--cpu-prof', '--cpu-prof-dir', values['cpu-prof']] : [];
  process.exit(await sweep(script, spec.name, counts, pass, prof));
}
