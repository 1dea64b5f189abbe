// Shared by the telephony benches (rtp.ts, mediaStream.ts): the library's own cost, side by side
// with the bare path in one run. For each call count, rounds alternate a bare receiver (a minimal
// datagram/message → ws.send loop with the same frame size) and the library's receiver
// (rtpSource or mediaStreamServer → analyzeCalls), with the same sender and the same stand-in
// server, and print each one's CPU and the ratio library / bare.
//
// Processes: this parent, which samples the receiver's CPU from /proc (the receiver and its
// workers) over the steady window; the stand-in server (a thin ws server: reads the config,
// counts audio, sends a partial clip every second of audio, a clip every 2 s and `done` at the
// end; not the emulator, so no analysis shares the cores being measured); per run a receiver
// (with --workers N, a primary and N workers) and a sender.
import cluster from 'node:cluster';
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { WebSocketServer } from 'ws';
import { fmt, machine, percentile } from './benchInternals.js';

/** Bytes of one 20 ms G.711 chunk at 8 kHz: the unit both senders send. */
export const CHUNK = 160;
/** A call ends this long after its last packet (the library's idleTimeoutMs, the bare loop's check). */
export const IDLE_MS = 2000;
/** The streaming path both receivers connect to. */
export const STREAMING_PATH = '/api/svc-2-streaming';

export const loadavg = (): string => os.loadavg().map((l) => l.toFixed(2)).join(' ');

/** The monotonic clock every process on this machine shares (CLOCK_MONOTONIC), in ms. */
export function mono(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** The stand-in's URL for call `c`: its index in the key, as the library sends it. */
export function callUrl(base: string, c: number): string {
  return `${base.replace(/^http/, 'ws')}${STREAMING_PATH}?api_key=bench-${c}&audio_format=mulaw&sample_rate=8000&num_channels=1`;
}

export const keyOf = (c: number): string => `bench-${c}`;

// ---------------------------------------------------------------------------------------------
// The library as users run it: the built package (dist/, from `npm run build`), not the sources
// through tsx (whose transform adds work of its own to every call); BENCH_SRC=1 runs src/.

const ROOT = new URL('../', import.meta.url);

/** The telephony entry of the library, from dist/ (or src/ with BENCH_SRC=1). */
export async function telephony(): Promise<typeof import('../src/telephony/index.js')> {
  const fromSrc = process.env['BENCH_SRC'] === '1';
  return (await import(new URL(fromSrc ? 'src/telephony/index.ts' : 'dist/telephony/index.js', ROOT).href)) as typeof import('../src/telephony/index.js');
}

/** Source files newer than the build: the figures would be the old code's. */
function staleBuild(): string[] {
  if (process.env['BENCH_SRC'] === '1') return [];
  const stale: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(new URL(dir, ROOT), { withFileTypes: true })) {
      const rel = `${dir}${e.name}`;
      if (e.isDirectory()) walk(`${rel}/`);
      else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) {
        const built = new URL(`dist/${rel.slice(4, -3)}.js`, ROOT);
        try {
          if (statSync(new URL(rel, ROOT)).mtimeMs > statSync(built).mtimeMs) stale.push(rel);
        } catch {
          stale.push(rel);
        }
      }
    }
  };
  walk('src/');
  return stale;
}

// ---------------------------------------------------------------------------------------------
// The command line.

export type PathName = 'bare' | 'library';

export function benchArgs() {
  const { values } = parseArgs({
    options: {
      calls: { type: 'string' },
      seconds: { type: 'string' },
      rounds: { type: 'string' },
      workers: { type: 'string' },
      'frame-ms': { type: 'string' },
      only: { type: 'string' },
      'cpu-prof': { type: 'string' },
      role: { type: 'string' },
      path: { type: 'string' },
      ports: { type: 'string' },
      'stand-in': { type: 'string' },
    },
  });
  const seconds = Number(values.seconds ?? 20);
  return {
    values,
    seconds,
    chunks: Math.round(seconds * 50),
    counts: (values.calls ?? '100,400,1000').split(',').map(Number),
    rounds: Number(values.rounds ?? 2),
    workers: Number(values.workers ?? 1),
    frameMs: Number(values['frame-ms'] ?? 100),
    only: values.only as PathName | undefined,
  };
}

// ---------------------------------------------------------------------------------------------
// Child processes speak to their parent over IPC (advanced serialization: typed arrays pass as such).

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
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

// ---------------------------------------------------------------------------------------------
// The stand-in server.

interface StandInReport {
  type: 'stand-in-report';
  connections: number;
  bytes: number;
  /** Binary WebSocket messages (audio frames) heard. */
  frames: number;
  done: number;
  /** Per call index: when the chunk k's last byte arrived (monotonic ms; 0 = never). */
  arrivals: Record<number, Float64Array>;
}

/** Child role: the stand-in. `reset` clears its counters; `report` sends them. */
export async function standInRole(chunks: number): Promise<void> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false, maxPayload: 1 << 20 });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  let open = 0;
  let report: StandInReport = { type: 'stand-in-report', connections: 0, bytes: 0, frames: 0, done: 0, arrivals: {} };
  wss.on('connection', (ws, req) => {
    open++;
    report.connections++;
    const c = Number(/api_key=bench-(\d+)/.exec(req.url ?? '')?.[1] ?? -1);
    const arrivals = (report.arrivals[c] = new Float64Array(chunks));
    const mine = report;
    let bytes = 0;
    let configSeen = false;
    let clips = 0;
    ws.on('close', () => open--);
    ws.on('message', (data, isBinary) => {
      const buf = data as Buffer;
      if (isBinary) {
        const before = bytes;
        bytes += buf.length;
        mine.bytes += buf.length;
        mine.frames++;
        const now = mono();
        for (let k = Math.ceil(before / CHUNK); (k + 1) * CHUNK <= bytes && k < chunks; k++) if (arrivals[k] === 0) arrivals[k] = now;
        // A partial clip each second of audio, a clip every two: the events a live call brings.
        const second = Math.floor(bytes / 8000);
        if (second > Math.floor(before / 8000)) {
          const uuid = `c${c}-${Math.floor((second - 1) / 2)}`;
          if (second % 2 === 1) {
            ws.send(JSON.stringify({ type: 'partial_clip', partial_clip: { clip_uuid: uuid, text: 'so the order', start_ms: (second - 1) * 1000, end_ms: second * 1000, speaker_label: '1', emotion: null, accent: null, deepfake_score: null } }));
          } else {
            clips++;
            ws.send(JSON.stringify({ type: 'clip', clip: { clip_uuid: uuid, text: 'so the order is late', start_ms: (second - 2) * 1000, duration_ms: 2000, speaker_label: '1', language: 'en', emotion: null, accent: null, deepfake_score: null } }));
          }
        }
        return;
      }
      if (!configSeen) {
        configSeen = true;
        return;
      }
      if (buf.length === 0) {
        mine.done++;
        ws.send(JSON.stringify({ type: 'done', duration_ms: Math.round(bytes / 8) }));
        ws.close(1000);
      }
    });
  });
  const port = (wss.address() as { port: number }).port;
  process.on('message', (m: { type: string }) => {
    if (m.type === 'reset') report = { type: 'stand-in-report', connections: 0, bytes: 0, frames: 0, done: 0, arrivals: {} };
    else if (m.type === 'open') process.send!({ type: 'open-count', open });
    else if (m.type === 'report') process.send!(report);
    else if (m.type === 'stop') {
      for (const c of wss.clients) c.terminate();
      wss.close(() => process.disconnect());
    }
  });
  process.send!({ type: 'stand-in-ready', baseUrl: `http://127.0.0.1:${port}` });
}

// ---------------------------------------------------------------------------------------------
// The receiver: one path (bare or library), in one process or across workers.

/** What one receiver process (or worker) counts. */
export interface Counters {
  /** Datagrams (RTP) or messages (media streams) received. */
  received: number;
  /** Calls (legs, tracks) started. */
  legs: number;
  /** Calls that ended `done`. */
  done: number;
  /** Calls that ended otherwise, with why (at most a few kept). */
  failed: number;
  failures: string[];
}

export const newCounters = (): Counters => ({ received: 0, legs: 0, done: 0, failed: 0, failures: [] });

export function addCounters(into: Counters, c: Counters): void {
  into.received += c.received;
  into.legs += c.legs;
  into.done += c.done;
  into.failed += c.failed;
  for (const f of c.failures) if (into.failures.length < 5) into.failures.push(f);
}

/** What the receiver's path is given. */
export interface PathContext {
  readonly calls: number;
  readonly frameMs: number;
  readonly standIn: string;
  readonly workers: number;
  /** 0 … workers − 1 in a worker; 0 in a single process. */
  readonly workerIndex: number;
  readonly counters: Counters;
  /** Say that one call has ended (done or not): the harness knows when all of them have. */
  callEnded(): void;
}

/** A path listening on its port (and, for the library across workers, the ports and processes it forked). */
export interface Listening {
  readonly port: number;
  readonly ports?: number[];
  readonly pids?: () => number[];
}

/** One bench: its sender and its two paths. */
export interface TelephonySpec {
  readonly name: string;
  /** Child role: send `calls` calls for `seconds` to `ports` (call c to ports[c % ports.length]). */
  sender(calls: number, ports: readonly number[], seconds: number): Promise<void>;
  /** Start one process's (or worker's) share of a path. */
  path(name: PathName, ctx: PathContext): Promise<Listening>;
  /** How the workers of a path share the port: one shared (node:cluster) or one each. */
  readonly sharedPort: boolean;
  /** What `received` counts. */
  readonly unit: 'datagrams' | 'messages';
}

/**
 * The library's path: `calls(worker, onPort)` in this process, or across `ctx.workers` processes
 * through the library's own `callWorkers`. Each call's end is counted; `received` reads the
 * source's counter (datagrams or messages) in one process.
 */
export function libraryPath<C extends import('../src/telephony/index.js').AnalyzableCall>(
  ctx: PathContext,
  source: 'rtpSource' | 'mediaStreamServer',
  calls: (worker: import('../src/telephony/index.js').CallWorker | undefined, onPort: (port: number) => void) => import('rxjs').Observable<import('../src/telephony/index.js').CallAnalysis<C>>,
  received: () => number,
): Promise<Listening> {
  if (ctx.workers > 1) return libraryOnWorkers(ctx, source, (worker) => calls(worker, () => undefined));
  const c = ctx.counters;
  return new Promise<Listening>((resolve) => {
    calls(undefined, (port) => resolve({ port })).subscribe({
      next: (call) => {
        c.legs++;
        call.outcome$.subscribe((o) => {
          c.received = received();
          if (o.status === 'done') c.done++;
          else {
            c.failed++;
            if (c.failures.length < 5) c.failures.push(`${o.status}: ${String(o.error)}`);
          }
          ctx.callEnded();
        });
      },
      error: (err: unknown) => c.failures.push(`source: ${String(err)}`),
    });
  });
}

/**
 * The library's path across `ctx.workers` processes through its own `callWorkers`: resolves in
 * the primary once every worker listens (never in a worker, which just runs), counting each call's
 * end and, at the end, the counters the primary added up (`source`: the source's stats name).
 */
async function libraryOnWorkers<C extends import('../src/telephony/index.js').AnalyzableCall>(
  ctx: PathContext,
  source: 'rtpSource' | 'mediaStreamServer',
  work: (worker: import('../src/telephony/index.js').CallWorker) => import('rxjs').Observable<import('../src/telephony/index.js').CallAnalysis<C>>,
): Promise<Listening> {
  const { callWorkers, createCallWorkersStats } = await telephony();
  const stats = createCallWorkersStats();
  const ports: number[] = [];
  const pids = new Map<number, number>();
  return new Promise<Listening>((resolve) => {
    callWorkers({ workers: ctx.workers, exec: process.argv[1]!, args: process.argv.slice(2), stats }, work).subscribe({
      next: (e) => {
        if (e.type === 'worker-started') pids.set(e.index, e.pid);
        else if (e.type === 'listening') {
          ports[e.index] = e.port;
          if (ports.filter((p) => p !== undefined).length === ctx.workers) resolve({ port: ports[0]!, ports: [...new Set(ports)], pids: () => [process.pid, ...pids.values()] });
        } else if (e.type === 'call-ended') {
          const c = ctx.counters;
          if (e.status === 'done') c.done++;
          else {
            c.failed++;
            if (c.failures.length < 5) c.failures.push(`${e.status}: ${e.error?.code ?? ''} ${e.error?.message ?? ''}`);
          }
          const t = stats.totals[source] ?? {};
          c.received = source === 'rtpSource' ? (t['datagrams'] ?? 0) : (t['messages'] ?? 0);
          c.legs = stats.calls;
          ctx.callEnded();
        }
      },
      error: (err: unknown) => ctx.counters.failures.push(`workers: ${String(err)}`),
    });
  });
}

interface ReceiverReady {
  type: 'receiver-ready';
  ports: number[];
  pids: number[];
}

interface ReceiverReport {
  type: 'receiver-report';
  counters: Counters;
  eldP99: number;
  eldMax: number;
  /** The receiver process's own CPU over its whole run, start to report (ms; with --workers, the primary's only). */
  cpu: { user: number; system: number };
}

/** Resolves once `calls` calls have ended (or the parent says to finish: a call that never ends). */
function endings(calls: number): { callEnded(): void; all: Promise<void> } {
  let n = 0;
  let resolve!: () => void;
  const all = new Promise<void>((r) => (resolve = r));
  void nextMessage(process, 'finish').then(() => resolve(), () => undefined);
  return { callEnded: () => void (++n >= calls && resolve()), all };
}

async function receiverRole(spec: TelephonySpec, name: PathName, calls: number, frameMs: number, standIn: string, workers: number): Promise<void> {
  const eld = monitorEventLoopDelay({ resolution: 10 });
  eld.enable();
  const counters = newCounters();
  const end = endings(calls);
  const report = (): void => {
    eld.disable();
    // Sockets, servers and sessions die with the process: it has nothing left to measure.
    const cpu = process.cpuUsage();
    process.send!(
      { type: 'receiver-report', counters, eldP99: eld.percentile(99) / 1e6, eldMax: eld.max / 1e6, cpu: { user: cpu.user / 1000, system: cpu.system / 1000 } } satisfies ReceiverReport,
      undefined,
      {},
      () => process.exit(0),
    );
  };
  // One process, or the library forking its own workers (it adds their counts up itself).
  if (workers <= 1 || name === 'library') {
    const l = await spec.path(name, { calls, frameMs, standIn, workers, workerIndex: 0, counters, callEnded: end.callEnded });
    process.send!({ type: 'receiver-ready', ports: l.ports ?? [l.port], pids: l.pids?.() ?? [process.pid] } satisfies ReceiverReady);
    await end.all;
    return report();
  }
  // The bare path across workers: the bench's own node:cluster.
  cluster.setupPrimary({ serialization: 'advanced' });
  const ports: number[] = [];
  const pids: number[] = [process.pid];
  const forks = Array.from({ length: workers }, (_, i) => cluster.fork({ BENCH_WORKER_INDEX: String(i) }));
  const reports: Array<Promise<void>> = [];
  await Promise.all(
    forks.map((w) => {
      reports.push(new Promise<void>((resolve) => w.on('message', (m: { type: string; counters?: Counters }) => m.type === 'worker-report' && (addCounters(counters, m.counters!), resolve()))));
      w.on('message', (m: { type: string }) => m.type === 'call-ended' && end.callEnded());
      return new Promise<void>((resolve) =>
        w.on('message', (m: { type: string; port?: number }) => {
          if (m.type !== 'worker-ready') return;
          ports.push(m.port!);
          pids.push(w.process.pid!);
          resolve();
        }),
      );
    }),
  );
  process.send!({ type: 'receiver-ready', ports: spec.sharedPort ? [ports[0]!] : ports, pids } satisfies ReceiverReady);
  await end.all;
  for (const w of forks) w.send({ type: 'finish' });
  await Promise.all(reports);
  for (const w of forks) w.kill();
  report();
}

async function benchWorkerRole(spec: TelephonySpec, name: PathName, calls: number, frameMs: number, standIn: string, workers: number): Promise<void> {
  const counters = newCounters();
  const workerIndex = Number(process.env['BENCH_WORKER_INDEX']);
  const l = await spec.path(name, { calls, frameMs, standIn, workers, workerIndex, counters, callEnded: () => process.send!({ type: 'call-ended' }) });
  process.send!({ type: 'worker-ready', port: l.port });
  await nextMessage(process, 'finish');
  process.send!({ type: 'worker-report', counters });
}

// ---------------------------------------------------------------------------------------------
// CPU and memory of a process tree, from /proc.

const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK']).toString().trim() || 100);

function procCpu(pid: number): { user: number; system: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(f[11]) * TICK_MS, system: Number(f[12]) * TICK_MS };
  } catch {
    return { user: 0, system: 0 };
  }
}

function procRss(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

const sumCpu = (pids: readonly number[]) => pids.map(procCpu).reduce((a, b) => ({ user: a.user + b.user, system: a.system + b.system }), { user: 0, system: 0 });
const sumRss = (pids: readonly number[]): number => pids.reduce((n, p) => n + procRss(p), 0);

// ---------------------------------------------------------------------------------------------
// One run: a fresh receiver on one path, a fresh sender, the stand-in reset.

export interface RunResult {
  readonly path: PathName;
  readonly calls: number;
  readonly cpuPct: number;
  readonly userPct: number;
  readonly systemPct: number;
  readonly windowMs: number;
  /** The receiver's user and system CPU over its whole run, in ms (one process: with --workers, the primary's). */
  readonly runUserMs: number;
  readonly runSystemMs: number;
  /** Sessions the stand-in had open when the window started. */
  readonly openAtStart: number;
  readonly rssPerCall: number;
  readonly counters: Counters;
  readonly standIn: { connections: number; bytes: number; frames: number; done: number };
  readonly bytesSent: number;
  readonly latency: { p50: number; p99: number; missing: number };
  readonly eldP99: number;
  readonly load: string;
  /** The sender's own CPU, and the chunks it sent more than a tick late (the machine was the limit). */
  readonly sender: { readonly cpuPct: number; readonly lateChunks: number };
}

const dbg = (s: string): void => void (process.env["BENCH_DEBUG"] && process.stderr.write(`[bench] ${s}\n`));
async function oneRun(script: string, spec: TelephonySpec, standIn: ChildProcess, standInUrl: string, path: PathName, calls: number, a: ReturnType<typeof benchArgs>): Promise<RunResult> {
  const load = loadavg();
  standIn.send({ type: 'reset' });
  const prof = a.values['cpu-prof'] !== undefined ? ['--cpu-prof', '--cpu-prof-interval', '250', '--cpu-prof-dir', `${a.values['cpu-prof']}/${path}`] : [];
  // BENCH_NODE_ARGS: more flags for the receivers (`--trace-gc`, `--max-semi-space-size=32`).
  prof.push(...(process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean));
  const receiver = forkRole(
    script,
    ['--role', 'receiver', '--path', path, '--calls', String(calls), '--seconds', String(a.seconds), '--frame-ms', String(a.frameMs), '--workers', String(a.workers), '--stand-in', standInUrl],
    prof,
  );
  const ready = await nextMessage<ReceiverReady>(receiver, 'receiver-ready');
  dbg(`receiver ready ${JSON.stringify(ready)}`);
  const pids = ready.pids;
  const rssBase = sumRss(pids);
  const sender = forkRole(script, ['--role', 'sender', '--calls', String(calls), '--seconds', String(a.seconds), '--ports', ready.ports.join(',')]);
  const senderReport = nextMessage<{ type: 'sender-report'; sentAt: Float64Array[]; lateChunks: number; cpuPct: number }>(sender, 'sender-report');
  await nextMessage(sender, 'started');
  dbg('sender started');
  const startedAt = mono();
  // The window opens once every call's session is open (and a second more), or at half the
  // call's length on a machine that cannot open them all in time (reported as such).
  let openAtStart = 0;
  for (;;) {
    standIn.send({ type: 'open' });
    openAtStart = (await nextMessage<{ type: 'open-count'; open: number }>(standIn, 'open-count')).open;
    if (openAtStart >= calls || mono() - startedAt > (a.seconds * 1000) / 2) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  if (openAtStart >= calls) await new Promise((r) => setTimeout(r, 1000));
  const cpu0 = sumCpu(pids);
  const t0 = mono();
  let rssPeak = sumRss(pids);
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, sumRss(pids))), 500);
  await nextMessage(sender, 'ending');
  dbg(`sender ending, open at start ${openAtStart}`);
  const cpu1 = sumCpu(pids);
  const windowMs = mono() - t0;
  clearInterval(sampler);
  rssPeak = Math.max(rssPeak, sumRss(pids));
  const sent = await senderReport;
  // Every call ends IDLE_MS after its last packet; give the sessions time to get `done`.
  // (A receiver that died meanwhile has no channel: its exit is the error nextMessage reports.)
  const finishTimer = setTimeout(() => receiver.connected && receiver.send({ type: 'finish' }), IDLE_MS + 15_000);
  const report = await nextMessage<ReceiverReport>(receiver, 'receiver-report');
  dbg('receiver report');
  clearTimeout(finishTimer);
  await new Promise<void>((r) => (receiver.exitCode !== null ? r() : receiver.once('exit', () => r())));
  standIn.send({ type: 'report' });
  const si = await nextMessage<StandInReport>(standIn, 'stand-in-report');
  // Sent → heard by the stand-in, per chunk, over every call (the frame size is most of it).
  const lat: number[] = [];
  let missing = 0;
  for (let c = 0; c < calls; c++) {
    const s = sent.sentAt[c]!;
    const got = si.arrivals[c];
    for (let k = 0; k < s.length; k++) {
      if (s[k] === 0) continue;
      const at = got?.[k] ?? 0;
      if (at === 0) missing++;
      else lat.push(at - s[k]!);
    }
  }
  lat.sort((x, y) => x - y);
  return {
    path,
    calls,
    cpuPct: ((cpu1.user + cpu1.system - cpu0.user - cpu0.system) / windowMs) * 100,
    userPct: ((cpu1.user - cpu0.user) / windowMs) * 100,
    systemPct: ((cpu1.system - cpu0.system) / windowMs) * 100,
    windowMs,
    runUserMs: report.cpu.user,
    runSystemMs: report.cpu.system,
    openAtStart,
    rssPerCall: (rssPeak - rssBase) / calls,
    counters: report.counters,
    standIn: { connections: si.connections, bytes: si.bytes, frames: si.frames, done: si.done },
    bytesSent: calls * a.chunks * CHUNK,
    latency: { p50: percentile(lat, 50), p99: percentile(lat, 99), missing },
    eldP99: report.eldP99,
    load,
    sender: { cpuPct: sent.cpuPct, lateChunks: sent.lateChunks },
  };
}

function runLine(r: RunResult, spec: TelephonySpec, a: ReturnType<typeof benchArgs>): string {
  const expected = r.calls * a.chunks;
  const steady = r.openAtStart >= r.calls ? '' : ` (NOT steady: ${r.openAtStart} of ${r.calls} sessions open when the window started)`;
  const fails = r.counters.failures.length ? ` [${r.counters.failures.slice(0, 2).join('; ')}]` : '';
  return [
    `  ${r.path.padEnd(7)} CPU ${fmt(r.cpuPct).padStart(5)} % of a core (user ${fmt(r.userPct)}, system ${fmt(r.systemPct)}) over ${fmt(r.windowMs / 1000, 1)} s${steady}; whole run user ${fmt(r.runUserMs, 0)} ms, system ${fmt(r.runSystemMs, 0)} ms; load before ${r.load}`,
    `          ${spec.unit} ${r.counters.received}/${expected}, legs ${r.counters.legs}, done ${r.counters.done}/${r.calls}, failed ${r.counters.failed}${fails}; service heard ${r.standIn.bytes}/${r.bytesSent} bytes in ${r.standIn.frames} frames on ${r.standIn.connections} sessions; sent → heard p50 ${fmt(r.latency.p50, 1)} ms, p99 ${fmt(r.latency.p99, 1)} ms, ${r.latency.missing} chunks never heard; RSS +${fmt(r.rssPerCall / 1024, 0)} kB per call; event-loop delay p99 ${fmt(r.eldP99, 1)} ms; sender ${fmt(r.sender.cpuPct)} % of a core, ${r.sender.lateChunks} chunks sent late${r.sender.lateChunks > (r.calls * a.chunks) / 100 ? ' (the machine, not the receiver, was the limit)' : ''}`,
  ].join('\n');
}

/** The median, the mean of the two middle values for an even count. */
function middle(values: readonly number[]): number {
  const s = [...values].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Whether a run carried everything: every datagram or message, every call one leg ending done, every byte heard. */
export function clean(r: RunResult, a: ReturnType<typeof benchArgs>): boolean {
  return r.counters.received >= r.calls * a.chunks && r.counters.legs === r.calls && r.counters.done === r.calls && r.standIn.bytes === r.bytesSent;
}

/** Run the role the command line names: the sweep (default), or a stand-in, receiver, worker or sender child. */
export async function benchMain(script: string, spec: TelephonySpec): Promise<void> {
  const a = benchArgs();
  const v = a.values;
  // A worker of the library's own callWorkers runs the library path again (callWorkers knows its role).
  if (cluster.isWorker && (await telephony()).isCallWorker()) {
    await spec.path('library', { calls: a.counts[0]!, frameMs: a.frameMs, standIn: v['stand-in']!, workers: a.workers, workerIndex: 0, counters: newCounters(), callEnded: () => undefined });
    return;
  }
  if (cluster.isWorker) return benchWorkerRole(spec, v.path as PathName, a.counts[0]!, a.frameMs, v['stand-in']!, a.workers);
  if (v.role === 'stand-in') return standInRole(a.chunks);
  if (v.role === 'sender') return spec.sender(a.counts[0]!, v.ports!.split(',').map(Number), a.seconds);
  if (v.role === 'receiver') return receiverRole(spec, v.path as PathName, a.counts[0]!, a.frameMs, v['stand-in']!, a.workers);
  const paths: PathName[] = a.only ? [a.only] : ['bare', 'library'];
  const stale = staleBuild().filter((f) => !f.startsWith('src/dashboard/page'));
  if (stale.length > 0) {
    console.error(`bench/${spec.name}: dist/ is older than ${stale.slice(0, 3).join(', ')}${stale.length > 3 ? ` and ${stale.length - 3} more` : ''}: run \`npm run build\` (or BENCH_SRC=1 to run the sources)`);
    process.exit(2);
  }
  console.log(
    `bench/${spec.name}: ${a.counts.join(', ')} calls of ${a.seconds} s, frames of ${a.frameMs} ms, ${a.workers} worker${a.workers > 1 ? 's' : ''}, ${a.rounds} rounds of ${paths.join(' / ')} alternating, the library from ${process.env['BENCH_SRC'] === '1' ? 'src/ (tsx)' : 'dist/'}; ${machine()}`,
  );
  const standIn = forkRole(script, ['--role', 'stand-in', '--seconds', String(a.seconds)]);
  const { baseUrl } = await nextMessage<{ type: 'stand-in-ready'; baseUrl: string }>(standIn, 'stand-in-ready');
  let allClean = true;
  for (const calls of a.counts) {
    console.log(`${calls} calls:`);
    const cpu: Record<PathName, number[]> = { bare: [], library: [] };
    const user: Record<PathName, number[]> = { bare: [], library: [] };
    const runUser: Record<PathName, number[]> = { bare: [], library: [] };
    for (let round = 0; round < a.rounds; round++) {
      const order = round % 2 === 0 ? paths : [...paths].reverse();
      for (const path of order) {
        const r = await oneRun(script, spec, standIn, baseUrl, path, calls, a);
        console.log(runLine(r, spec, a));
        cpu[path].push(r.cpuPct);
        user[path].push(r.userPct);
        runUser[path].push(r.runUserMs);
        if (!clean(r, a)) allClean = false;
      }
    }
    if (paths.length === 2) {
      const ratios = cpu.library.map((l, i) => l / cpu.bare[i]!);
      console.log(
        `  ratio library / bare at ${calls} calls: ${fmt(middle(cpu.library) / middle(cpu.bare), 2)} (medians ${fmt(middle(cpu.library))} % / ${fmt(middle(cpu.bare))} %; per round ${ratios.map((x) => fmt(x, 2)).join(', ')})`,
      );
      const perRound = (k: Record<PathName, number[]>): string => k.library.map((l, i) => fmt(l / k.bare[i]!, 2)).join(', ');
      console.log(
        `  user CPU, library / bare at ${calls} calls: steady window ${fmt(middle(user.library) / middle(user.bare), 2)} (medians ${fmt(middle(user.library))} % / ${fmt(middle(user.bare))} %; per round ${perRound(user)}); whole run ${fmt(middle(runUser.library) / middle(runUser.bare), 2)} (medians ${fmt(middle(runUser.library), 0)} ms / ${fmt(middle(runUser.bare), 0)} ms; per round ${perRound(runUser)})`,
      );
    }
  }
  standIn.send({ type: 'stop' });
  process.exit(allClean ? 0 : 1);
}
