// The hour of faults from issue 45, as a soak: an hour of a two-speaker call (one 50 s
// recording repeated: samples/call.wav, padded with silence to 50 s) read with
// fileSource(wav, { realtime: 4 }) and analysed by analyzeConversation at its defaults, against
// `svc-stream emulator` (a child process), through a TCP proxy on loopback that every 10 s of
// wall time, in turn: resets every connection; stalls both directions (3 s, then 8 s the next
// time), losing nothing; SIGKILLs or SIGTERMs the emulator (one then the other) and starts it
// again on its port 1.5 s later.
//
// Prints the clips kept (in a consumer's state, folded by clipsReducer, at their true
// positions) out of the clips expected (the emulator's clips of one undisturbed pass of the
// recording, once per repetition), the faults, the reconnects, the event loop's longest stall
// and RSS over time; for a clip lost, the events around it and the faults before it.
//
// Run: npx tsx bench/resilienceSoak.ts   (SOAK_AUDIO_S=3600 SOAK_RATE=4 SOAK_EVERY_S=10)
// It needs the built CLI (`npm run build`) for the emulator, as a user runs it.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileSource } from '../src/audio/fileSource.js';
import { analyzeConversation } from '../src/session/conversation.js';
import type { SessionEvent } from '../src/session/SegmentClock.js';
import { createSessionStats } from '../src/session/stats.js';
import { clipsReducer, initialClipsState, type ClipsState } from '../src/state/clips.js';
import { startTcpProxy } from '../test/internal/tcpProxy.js';
import { watchLoop } from '../test/faults/loopStall.js';
import type { AudioWarning, ReplayGapWarning } from '../src/warnings.js';
import { fmt, machine, median } from './benchInternals.js';

const AUDIO_S = Number(process.env['SOAK_AUDIO_S'] ?? 3600);
const RATE = Number(process.env['SOAK_RATE'] ?? 4);
const EVERY_S = Number(process.env['SOAK_EVERY_S'] ?? 10);
const RECORDING_MS = 50_000;
const RESTART_AFTER_MS = 1_500;
const STALLS_MS = [3_000, 8_000] as const;
const CLI = fileURLToPath(new URL('../bin/svc-stream.js', import.meta.url));
const SAMPLE = readFileSync(new URL('../samples/call.wav', import.meta.url));
const BYTES_PER_MS = 32;
const MATCH_MS = 50;

// ---------------------------------------------------------------------------------------------
// The audio: the sample call padded to 50 s, and the hour of it as one WAV file.

/** A canonical 44-byte WAV header (16 kHz mono s16le, as the sample call's) for `dataBytes`. */
function header(dataBytes: number): Buffer {
  const h = Buffer.from(SAMPLE.subarray(0, 44));
  h.writeUInt32LE(36 + dataBytes, 4);
  h.writeUInt32LE(dataBytes, 40);
  return h;
}

const recording = Buffer.alloc(RECORDING_MS * BYTES_PER_MS);
SAMPLE.copy(recording, 0, 44, Math.min(SAMPLE.length, 44 + recording.length));
const repeats = Math.ceil(AUDIO_S / (RECORDING_MS / 1000));
const dir = mkdtempSync(join(tmpdir(), 'svc-soak-'));
const oneWav = join(dir, 'recording.wav');
const hourWav = join(dir, 'hour.wav');
writeFileSync(oneWav, Buffer.concat([header(recording.length), recording]));
writeFileSync(hourWav, Buffer.concat([header(recording.length * repeats), ...Array.from({ length: repeats }, () => recording)]));

// ---------------------------------------------------------------------------------------------
// `svc-stream emulator` as a child process, restarted on its port.

interface Emulator {
  readonly child: ChildProcess;
  readonly port: number;
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly exited: Promise<void>;
}

function startEmulator(port = 0): Promise<Emulator> {
  const child = spawn(process.execPath, [CLI, 'emulator', '--port', String(port)], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SVC_API_KEY: '', SVC_BASE_URL: '' } });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    child.once('exit', () => reject(new Error(`the emulator exited before it listened: ${err}`)));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const env = Object.fromEntries(out.split('\n').filter((l) => l.includes('=')).map((l) => l.split('=', 2) as [string, string]));
      if (env['SVC_BASE_URL'] && env['SVC_API_KEY'] && out.includes('SVC_PLATFORM_API_KEY=')) {
        const baseUrl = env['SVC_BASE_URL'];
        resolve({ child, port: Number(new URL(baseUrl).port), baseUrl, apiKey: env['SVC_API_KEY'], exited });
      }
    });
  });
}

async function stopEmulator(emu: Emulator, signal: NodeJS.Signals): Promise<void> {
  if (emu.child.exitCode === null && emu.child.signalCode === null) emu.child.kill(signal);
  await emu.exited;
}

// ---------------------------------------------------------------------------------------------
// The clips expected: one undisturbed pass of the recording, once per repetition.

interface Span {
  readonly start: number;
  readonly end: number;
}

async function clipsOfOneRecording(emu: Emulator): Promise<Span[]> {
  const spans: Span[] = [];
  await new Promise<void>((resolve, reject) =>
    fileSource(oneWav)
      .pipe(analyzeConversation({ apiKey: emu.apiKey, baseUrl: emu.baseUrl, reconnect: false }))
      .subscribe({
        next: (e) => {
          if (e.type === 'clip') spans.push({ start: e.clip.start_ms!, end: e.clip.start_ms! + e.clip.duration_ms! });
        },
        error: reject,
        complete: resolve,
      }),
  );
  return spans;
}

// ---------------------------------------------------------------------------------------------
// The soak.

type FaultKind = 'reset' | 'stall 3 s' | 'stall 8 s' | 'SIGKILL' | 'SIGTERM';
interface Fault {
  readonly kind: FaultKind;
  readonly wallS: number;
  /** The stream position read so far (the client's, a little ahead of the emulator's), in s. */
  readonly audioS: number;
}

const mb = (bytes: number): string => fmt(bytes / 1e6, 0);

console.log(machine());
console.log(`${AUDIO_S} s of audio (the 50 s recording ${repeats} times) at ${RATE}x, a fault every ${EVERY_S} s of wall time\n`);

let emu = await startEmulator();
const port = emu.port;
const apiKey = emu.apiKey;
const once = await clipsOfOneRecording(emu);
const expected: Span[] = [];
for (let k = 0; k < repeats; k++) for (const s of once) if (k * RECORDING_MS + s.end <= AUDIO_S * 1000) expected.push({ start: k * RECORDING_MS + s.start, end: k * RECORDING_MS + s.end });

const proxy = await startTcpProxy(port);
const stats = createSessionStats();
const faults: Fault[] = [];
const trace: string[] = [];
let state: ClipsState = initialClipsState;
const clipEvents: Array<{ start: number; end: number; uuid: string; segment: number }> = [];
const rss: Array<{ minute: number; mb: number }> = [];
const histogram = monitorEventLoopDelay({ resolution: 10 });
histogram.enable();
const loop = watchLoop();
const t0 = performance.now();
const wallS = (): number => (performance.now() - t0) / 1000;
let restarting: Promise<void> | undefined;
/** For each kill, how long until the new emulator listened (the 1.5 s wait, and its start on a loaded machine). */
const downMs: number[] = [];
/** For each failure, how long until a session streamed again. */
const outageMs: number[] = [];
let failedAt: number | undefined;

const gaps: Array<ReplayGapWarning & { readonly wallS: number }> = [];
const onAudioWarning = (w: AudioWarning): void => {
  if (w.code === 'replay_gap') gaps.push({ ...w, wallS: wallS() });
  console.log(`${fmt(wallS(), 1)} s: warning: ${w.message}`);
};
// The life cycle, for what happened around a gap or a loss.
const moves: string[] = [];
stats.state$.subscribe((st) => {
  if (st.status === 'reconnecting') failedAt ??= performance.now();
  if ((st.status === 'streaming' || st.status === 'paused') && failedAt !== undefined) {
    outageMs.push(performance.now() - failedAt);
    failedAt = undefined;
  }
  if (st.status === 'reconnecting') moves.push(`${fmt(wallS(), 1)} s reconnecting (attempt ${st.attempt}: ${(st.error as { code?: string }).code ?? String(st.error)})`);
  else if (st.status === 'streaming' || st.status === 'paused') moves.push(`${fmt(wallS(), 1)} s ${st.status}, segment ${stats.segment}, audio read ${fmt(stats.bytesRead / BYTES_PER_MS / 1000, 1)} s`);
});
const hour = fileSource(hourWav, { realtime: RATE }).pipe(analyzeConversation({ apiKey, baseUrl: proxy.baseUrl, stats, onAudioWarning }));
const outcome = new Promise<unknown>((resolve) => {
  hour.subscribe({
    next: (e: SessionEvent) => {
      state = clipsReducer(state, e);
      if (e.type === 'clip') clipEvents.push({ start: e.clip.start_ms!, end: e.clip.start_ms! + e.clip.duration_ms!, uuid: e.clip.clip_uuid, segment: e.segment ?? 0 });
      if (e.type === 'clip' || e.type === 'partial_clip') {
        const c = e.type === 'clip' ? e.clip : e.partial_clip;
        trace.push(`${fmt(wallS(), 1)} s seg ${e.segment ?? 0} ${e.type} ${c.start_ms} ${c.clip_uuid.slice(0, 8)}`);
        if (trace.length > 20_000) trace.splice(0, 10_000);
      }
    },
    error: (err: unknown) => resolve(err),
    complete: () => resolve(undefined),
  });
});

let turn = 0;
const schedule = setInterval(() => {
  const t = turn++;
  const round = Math.floor(t / 3);
  const note = (kind: FaultKind): void => void faults.push({ kind, wallS: wallS(), audioS: stats.bytesRead / BYTES_PER_MS / 1000 });
  switch (t % 3) {
    case 0:
      note('reset');
      proxy.reset();
      return;
    case 1: {
      const ms = STALLS_MS[round % 2]!;
      note(ms === 3_000 ? 'stall 3 s' : 'stall 8 s');
      proxy.setMode('stall');
      setTimeout(() => proxy.setMode('forward'), ms);
      return;
    }
    default: {
      if (restarting) return; // the last restart has not finished: no fault this turn
      const signal = round % 2 === 0 ? 'SIGKILL' : 'SIGTERM';
      note(signal);
      restarting = (async () => {
        const killedAt = performance.now();
        await stopEmulator(emu, signal);
        await new Promise((r) => setTimeout(r, RESTART_AFTER_MS));
        emu = await startEmulator(port);
        downMs.push(performance.now() - killedAt);
      })()
        .catch((err: unknown) => console.error('restart failed:', err))
        .finally(() => (restarting = undefined));
    }
  }
}, EVERY_S * 1000);
const sampler = setInterval(() => {
  const minute = Math.round(wallS() / 60);
  const m = process.memoryUsage().rss;
  rss.push({ minute, mb: m / 1e6 });
  console.log(
    `${minute} min: audio ${fmt(stats.bytesRead / BYTES_PER_MS / 1000, 0)} s, ${clipEvents.length} clips, ${faults.length} faults, ${stats.reconnects} reconnects, RSS ${mb(m)} MB, load ${loadavg()[0]!.toFixed(1)}`,
  );
}, 60_000);

const error = await outcome;
clearInterval(schedule);
clearInterval(sampler);
await restarting;
const stalls = loop.stop();
histogram.disable();
await proxy.close();
await stopEmulator(emu, 'SIGTERM');

// What a consumer's state holds: each expected clip once, at its position.
const held = state.clips.toArray().map((c) => ({ start: c.start_ms!, end: c.start_ms! + c.duration_ms!, uuid: c.clip_uuid }));
const near = (a: Span, b: Span): boolean => Math.abs(a.start - b.start) <= MATCH_MS && Math.abs(a.end - b.end) <= MATCH_MS;
const missing: Span[] = [];
let twice = 0;
let said = 0;
for (const x of expected) {
  const n = held.filter((h) => near(h, x)).length;
  if (n === 0 && gaps.some((g) => x.end > g.fromMs && x.start < g.toMs)) said++;
  else if (n === 0) missing.push(x);
  if (n > 1) twice++;
}
const elsewhere = held.filter((h) => !expected.some((x) => near(h, x)));
const shared = clipEvents.length - new Set(clipEvents.map((c) => c.uuid)).size;
const partialsLeft = state.transcript.toArray().filter((t) => t.status === 'partial').length;
const byKind = new Map<string, number>();
for (const f of faults) byKind.set(f.kind, (byKind.get(f.kind) ?? 0) + 1);

console.log(`\n| figure | value |\n|---|---|`);
console.log(`| outcome | ${error === undefined ? `done (${stats.status})` : `failed: ${String(error)}`} |`);
console.log(`| wall time | ${fmt(wallS() / 60, 1)} min |`);
console.log(`| clips kept / expected | ${expected.length - missing.length - said} / ${expected.length} (${said} lost and said by a replay_gap warning, ${missing.length} lost unsaid, ${twice} twice, ${elsewhere.length} elsewhere, ${partialsLeft} partials never finished) |`);
console.log(`| replay_gap warnings | ${gaps.length}${gaps.map((g) => ` (${g.fromMs}-${g.toMs} ms)`).join('')} |`);
console.log(`| clip events with a UUID already used | ${shared} |`);
console.log(`| faults | ${faults.length} (${[...byKind].map(([k, n]) => `${n} ${k}`).join(', ')}) |`);
console.log(`| reconnects, segment | ${stats.reconnects}, ${stats.segment} |`);
const sortedDown = [...downMs].sort((a, b) => a - b);
const sortedOutages = [...outageMs].sort((a, b) => a - b);
console.log(`| emulator down per kill (to listening again), median / max | ${fmt(median(sortedDown) / 1000, 1)} s / ${fmt((sortedDown.at(-1) ?? 0) / 1000, 1)} s |`);
console.log(`| outage (failure to streaming again), median / max | ${fmt(median(sortedOutages) / 1000, 1)} s / ${fmt((sortedOutages.at(-1) ?? 0) / 1000, 1)} s (at ${RATE}x the outage bound, replayMs + outageMs = 60 s of audio, is ${fmt(60 / RATE, 0)} s) |`);
console.log(`| bytes read, sent, replayed, dropped | ${stats.bytesRead}, ${stats.bytesSent}, ${stats.bytesReplayed}, ${stats.bytesDropped} (sent − read = replayed: ${stats.bytesSent - stats.bytesRead === stats.bytesReplayed}) |`);
console.log(`| event loop, longest stall | ${fmt(stalls.longestMs, 1)} ms (${fmt(stalls.busiestMs, 0)} ms of it on a CPU; monitorEventLoopDelay max ${fmt(histogram.max / 1e6, 1)} ms) |`);
console.log(`| RSS over time (MB, by minute) | ${rss.map((r) => `${r.minute}: ${fmt(r.mb, 0)}`).join(', ')} |`);
console.log(`| load average at the end | ${machine().split('load average ')[1]} |`);
for (const x of missing) {
  console.log(`\nlost: the clip ${x.start}-${x.end} ms. Faults before it:`);
  for (const f of faults.filter((f) => f.audioS * 1000 < x.end + 30_000 && f.audioS * 1000 > x.start - 60_000)) console.log(`  ${fmt(f.wallS, 1)} s wall, audio read ${fmt(f.audioS, 1)} s: ${f.kind}`);
  const lines = trace.filter((l) => {
    const start = Number(l.split(' ')[5]);
    return Math.abs(start - x.start) < 15_000;
  });
  console.log(lines.map((l) => `  ${l}`).join('\n'));
}
for (const g of gaps) {
  console.log(`\nreplay gap ${g.fromMs}-${g.toMs} ms (segment ${g.segment}, ${g.clipUuids.length} clips begun), said at ${fmt(g.wallS, 1)} s. Before it:`);
  for (const f of faults.filter((f) => f.wallS > g.wallS - 30 && f.wallS <= g.wallS)) console.log(`  ${fmt(f.wallS, 1)} s wall, audio read ${fmt(f.audioS, 1)} s: ${f.kind}`);
  for (const m of moves.filter((m) => Number(m.split(' ')[0]) > g.wallS - 30 && Number(m.split(' ')[0]) <= g.wallS + 1)) console.log(`  ${m}`);
}
rmSync(dir, { recursive: true, force: true });
process.exitCode = missing.length === 0 && said === 0 && error === undefined ? 0 : 1;
