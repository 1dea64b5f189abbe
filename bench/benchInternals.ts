// Shared by the session benches: a minimal loopback ws sink, a pull-capable frame source,
// a bare ws client doing the same job as the library, percentiles, and machine facts.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Observable } from 'rxjs';
import WebSocket, { WebSocketServer } from 'ws';
import { withAudioMeta, type AudioObservable, type FlowSlot } from '../src/audio/meta.js';
import type { FlowControl } from '../src/audio/FlowControl.js';

export const RAW = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } as const;
export const KEY = 'bench-key';
/** 100 ms of s16le 16 kHz mono. */
export const FRAME_100MS = 3200;
export const MB = 1e6;

// ---------------------------------------------------------------------------------------------
// The sink: counts bytes, answers `done` on the empty frame. Not the emulator, whose analysis
// would dominate every figure.

export interface SinkOptions {
  /** Called for each binary frame as it arrives (latency probes). */
  readonly onBinary?: (data: Buffer, now: number) => void;
  /**
   * Events to send back as audio arrives: called with the audio byte count before and after
   * each frame; returns the text frames to send now.
   */
  readonly eventsFor?: (before: number, after: number) => readonly string[];
  /** Read audio no faster than this (bytes per second) by pausing the socket: a slow server. */
  readonly bytesPerSecond?: number;
}

export interface Sink {
  readonly port: number;
  readonly baseUrl: string;
  /** Bytes received on every connection so far. */
  bytes(): number;
  close(): Promise<void>;
}

export async function startSink(options: SinkOptions = {}): Promise<Sink> {
  let total = 0;
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false, maxPayload: 64 << 20 });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  wss.on('connection', (ws) => {
    let bytes = 0;
    let configSeen = false;
    let firstAt = 0;
    ws.on('message', (data, isBinary) => {
      const buf = data as Buffer;
      if (isBinary) {
        const before = bytes;
        bytes += buf.length;
        total += buf.length;
        options.onBinary?.(buf, performance.now());
        if (options.bytesPerSecond !== undefined) {
          const now = performance.now();
          if (before === 0) firstAt = now;
          const wait = firstAt + (bytes / options.bytesPerSecond) * 1000 - now;
          if (wait > 1) {
            ws.pause();
            setTimeout(() => ws.resume(), wait);
          }
        }
        if (options.eventsFor) for (const text of options.eventsFor(before, bytes)) ws.send(text);
        return;
      }
      if (!configSeen) {
        configSeen = true;
        return;
      }
      if (buf.length === 0) {
        ws.send(JSON.stringify({ type: 'done', duration_ms: Math.round(bytes / 32) }));
        ws.close(1000);
      }
    });
  });
  const port = (wss.address() as { port: number }).port;
  return {
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    bytes: () => total,
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of wss.clients) c.terminate();
        wss.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// Sources and the bare client.

export interface PullFramesOptions {
  /** Sees each frame as it goes, before the session does. */
  readonly onEmit?: (index: number, frame: Uint8Array) => void;
  /** A new buffer per frame, as a real source reads (default: one buffer sent again). */
  readonly fresh?: boolean;
}

/**
 * `count` frames of `size` bytes from a pull-capable source: emitted in a synchronous loop
 * while the session lets it flow, awaiting the session's FlowControl when paused (as
 * `fromReadable` does, without a stream's own cost).
 */
export function pullFrames(count: number, size: number, options: PullFramesOptions = {}): AudioObservable {
  const { onEmit, fresh = false } = options;
  const slot: FlowSlot = { current: undefined };
  const shared = new Uint8Array(size);
  const source = new Observable<Uint8Array>((subscriber) => {
    const flow: FlowControl | undefined = slot.current;
    slot.current = undefined;
    let i = 0;
    let stopped = false;
    void (async () => {
      while (i < count && !stopped) {
        if (flow?.paused) await flow.ready();
        while (i < count && !stopped && !flow?.paused) {
          const frame = fresh ? new Uint8Array(size) : shared;
          onEmit?.(i, frame);
          i++;
          subscriber.next(frame);
        }
      }
      if (!stopped) subscriber.complete();
    })();
    return () => {
      stopped = true;
    };
  });
  return withAudioMeta(source, { format: RAW, flow: slot });
}

export function wsUrl(baseUrl: string): string {
  return `${baseUrl.replace(/^http/, 'ws')}/api/svc-2-streaming?api_key=${KEY}&audio_format=s16le&sample_rate=16000&num_channels=1`;
}

/**
 * What the library does, written directly on `ws`: connect, send `default`, the frames with
 * the same high-water mark (1 MiB in flight, resume at half), the empty frame, wait for the
 * close after `done`.
 */
export function bareClient(baseUrl: string, count: number, size: number, onEmit?: (index: number) => void, highWater = 1 << 20): Promise<void> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl(baseUrl), { perMessageDeflate: false });
    const frame = new Uint8Array(size);
    let i = 0;
    let inFlight = 0;
    let paused = false;
    const onSent = (err?: Error): void => {
      inFlight -= size;
      if (err) return;
      if (paused && inFlight <= highWater / 2) {
        paused = false;
        pump();
      }
    };
    const pump = (): void => {
      while (i < count) {
        if (inFlight > highWater) {
          paused = true;
          return;
        }
        onEmit?.(i);
        i++;
        inFlight += size;
        ws.send(frame, { binary: true }, onSent);
      }
      ws.send('');
    };
    ws.on('open', () => {
      ws.send('default');
      pump();
    });
    ws.on('message', () => undefined);
    ws.on('error', reject);
    ws.on('close', (code) => (code === 1000 ? resolve() : reject(new Error(`closed ${code}`))));
  });
}

// ---------------------------------------------------------------------------------------------
// Figures and the machine they were measured on.

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export function median(values: readonly number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50);
}

export function machine(): string {
  let cpu = os.cpus()[0]?.model ?? 'unknown';
  try {
    const m = /model name\s*:\s*(.+)/.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (m) cpu = m[1]!.trim();
  } catch {
    /* not Linux */
  }
  const load = os.loadavg().map((l) => l.toFixed(2)).join(' ');
  return `${os.availableParallelism()} CPUs (${cpu}), node ${process.version}, load average ${load}`;
}

/** Whether ws in this process masks with bufferutil (WS_NO_BUFFER_UTIL=1 turns it off). */
export function bufferUtilInUse(): boolean {
  const require = createRequire(import.meta.url);
  const bufferUtilPath = path.join(path.dirname(require.resolve('ws')), 'lib', 'buffer-util.js');
  const mod = require(bufferUtilPath) as { mask: (...args: unknown[]) => void };
  return mod.mask.toString().includes('bufferUtil');
}

/** The sink's process, as {@link withSinkProcess} hands it to the bench. */
export interface SinkProcess {
  /** CPU seconds (user + system) the sink's process has used so far (NaN where /proc is not there). */
  cpuSeconds(): number;
}

/**
 * Run `script --sink ...args` in a child process (a sink whose work is charged to neither
 * client), call `run` with its base URL, and stop it (closing its stdin) once `run` settled.
 */
export async function withSinkProcess<T>(script: string, args: readonly string[], run: (baseUrl: string, sink: SinkProcess) => Promise<T>): Promise<T> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, '--sink', ...args], { stdio: ['pipe', 'pipe', 'inherit'], env: process.env });
  const port = await new Promise<number>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
  const ticks = 100; // USER_HZ on Linux
  const cpuSeconds = (): number => {
    try {
      const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return (Number(fields[11]) + Number(fields[12])) / ticks;
    } catch {
      return Number.NaN;
    }
  };
  try {
    return await run(`http://127.0.0.1:${port}`, { cpuSeconds });
  } finally {
    child.stdin.end();
  }
}

/** The child side of {@link withSinkProcess}: a sink that prints its port and lives until stdin ends. */
export function serveSink(options: SinkOptions = {}): void {
  void startSink(options).then((sink) => {
    process.stdout.write(`${sink.port}\n`);
    process.stdin.resume();
    process.stdin.on('end', () => void sink.close().then(() => process.exit(0)));
  });
}

/** Run this script again in a child process with `args` and extra `env`; resolves with its stdout. */
export function runSelf(script: string, args: readonly string[], env: Record<string, string> = {}, nodeArgs: readonly string[] = []): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', script, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${script} ${args.join(' ')} exited with ${code}`))));
  });
}

export const fmt = (n: number, digits = 1): string => n.toFixed(digits);

/** The 44-byte header of a mono s16le 16 kHz WAV file (the tests' one writer). */
export { wavHeader } from '../test/internal/wavHeader.js';
