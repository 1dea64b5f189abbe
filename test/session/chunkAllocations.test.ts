// What a session allocates per chunk in a steady state, against a hand-written client of the
// same source (`for await`, one copy into a 64 KiB frame, bare ws, the same flow control): a
// regression guard on the hot path (issue 44), counted, not timed. The bytes the JavaScript heap
// took over 10,000 chunks of 3200 B (v8.GCProfiler: the heap used at the end, minus at the start,
// plus what every collection in between freed) and the collections themselves. The sink is a
// child process, so what it allocates to read the frames is counted for neither client.
import { spawn, type ChildProcess } from 'node:child_process';
import v8 from 'node:v8';
import { afterEach, describe, expect, it } from 'vitest';
import { lastValueFrom } from 'rxjs';
import WebSocket from 'ws';
import { analyzeConversation, createSessionStats, fromAsyncIterable } from 'svc-stream';

const KEY = 'sk-allocations-0001';
const RAW = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } as const;
const CHUNK = 3200;
/** Chunks read before counting (the replay window is 300 of them: its blocks are in place by then), and counted. */
const WARM = 3_000;
const COUNTED = 10_000;
const FRAME = 64 * 1024;
const HIGH_WATER = 1 << 20;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A sink in a child process: takes the config frame, counts audio, answers `done` to the end of audio and closes. */
async function sink(): Promise<string> {
  const code = `
    const { WebSocketServer } = require('ws');
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false, maxPayload: 1 << 24 });
    wss.on('listening', () => process.stdout.write(wss.address().port + '\\n'));
    wss.on('connection', (ws) => {
      let bytes = 0, config = false;
      ws.on('message', (data, binary) => {
        if (binary) { bytes += data.length; return; }
        if (!config) { config = true; return; }
        if (data.length === 0) { ws.send(JSON.stringify({ type: 'done', duration_ms: Math.round(bytes / 32) })); ws.close(1000); }
      });
    });
    process.stdin.on('end', () => process.exit(0));
    process.stdin.resume();`;
  const child: ChildProcess = spawn(process.execPath, ['-e', code], { cwd: process.cwd(), stdio: ['pipe', 'pipe', 'inherit'] });
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.stdin!.end();
        setTimeout(() => child.kill('SIGKILL'), 2_000).unref();
      }),
  );
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
    child.once('exit', (code) => reject(new Error(`sink exited with ${code}`)));
  });
  return `http://127.0.0.1:${port}`;
}

interface Count {
  /** Bytes the JavaScript heap took while the counted chunks went through. */
  readonly bytes: number;
  /** Collections meanwhile. */
  readonly collections: number;
}

/**
 * The source every client reads: WARM + COUNTED chunks, one buffer reused; the count starts as
 * chunk WARM is asked for and stops as the one after the last is (or the source ends).
 */
function countedSource(): { memory: () => AsyncGenerator<Uint8Array>; counted: () => Count } {
  const chunk = new Uint8Array(CHUNK);
  let profiler: v8.GCProfiler | undefined;
  let startUsed = 0;
  let result: Count | undefined;
  const stop = (): void => {
    if (profiler === undefined || result !== undefined) return;
    const endUsed = v8.getHeapStatistics().used_heap_size;
    const { statistics } = profiler.stop() as { statistics: Array<{ beforeGC: { heapStatistics: { usedHeapSize: number } }; afterGC: { heapStatistics: { usedHeapSize: number } } }> };
    const freed = statistics.reduce((n, s) => n + Math.max(0, s.beforeGC.heapStatistics.usedHeapSize - s.afterGC.heapStatistics.usedHeapSize), 0);
    result = { bytes: endUsed - startUsed + freed, collections: statistics.length };
  };
  async function* memory(): AsyncGenerator<Uint8Array> {
    for (let i = 0; i < WARM + COUNTED; i++) {
      if (i === WARM) {
        profiler = new v8.GCProfiler();
        profiler.start();
        startUsed = v8.getHeapStatistics().used_heap_size;
      }
      yield chunk;
    }
    stop();
  }
  return {
    memory,
    counted: () => {
      stop();
      return result!;
    },
  };
}

/** The hand-written client of the same source: `for await`, one copy into a 64 KiB frame, bare ws, pausing above the same high-water mark. */
async function handWritten(baseUrl: string): Promise<Count> {
  const { memory, counted } = countedSource();
  const ws = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/api/svc-2-streaming?api_key=${KEY}&audio_format=s16le&sample_rate=16000&num_channels=1`, { perMessageDeflate: false });
  cleanups.push(() => ws.terminate());
  const closed = new Promise<void>((resolve, reject) => {
    ws.once('error', reject);
    ws.once('close', (code) => (code === 1000 ? resolve() : reject(new Error(`closed ${code}`))));
  });
  await new Promise<void>((resolve) => ws.once('open', () => resolve()));
  ws.send('default');
  const frame = Buffer.allocUnsafe(FRAME);
  let used = 0;
  let inFlight = 0;
  let wake: (() => void) | undefined;
  const onFull = (): void => {
    inFlight -= FRAME;
    if (wake !== undefined && inFlight <= HIGH_WATER / 2) {
      const w = wake;
      wake = undefined;
      w();
    }
  };
  for await (const chunk of memory()) {
    let off = 0;
    while (off < chunk.byteLength) {
      const n = Math.min(chunk.byteLength - off, FRAME - used);
      frame.set(off === 0 && n === chunk.byteLength ? chunk : chunk.subarray(off, off + n), used);
      used += n;
      off += n;
      if (used === FRAME) {
        ws.send(frame, { binary: true }, onFull);
        inFlight += FRAME;
        used = 0;
      }
    }
    if (inFlight > HIGH_WATER) await new Promise<void>((resolve) => (wake = resolve));
  }
  const count = counted();
  if (used > 0) ws.send(frame.subarray(0, used), { binary: true });
  ws.send('');
  await closed;
  return count;
}

/** The library over the same source; `reconnect` as the option says. */
async function library(baseUrl: string, reconnect: boolean): Promise<Count> {
  const { memory, counted } = countedSource();
  const stats = createSessionStats();
  await lastValueFrom(fromAsyncIterable(memory(), { format: RAW }).pipe(analyzeConversation({ apiKey: KEY, baseUrl, stats, ...(reconnect ? {} : { reconnect: false as const }) })));
  expect(stats.bytesSent).toBe((WARM + COUNTED) * CHUNK);
  return counted();
}

describe('allocations per chunk in a steady state', () => {
  it('a session allocates about what a hand-written client of the same source does, per chunk', async () => {
    const baseUrl = await sink();
    // Once each first, so that what is compiled or loaded on first use is not counted below.
    await handWritten(baseUrl);
    await library(baseUrl, true);
    const hand = await handWritten(baseUrl);
    const withReconnect = await library(baseUrl, true);
    const plain = await library(baseUrl, false);
    const perChunk = (c: Count): number => c.bytes / COUNTED;
    const line = (name: string, c: Count): string => `${name}: ${Math.round(c.bytes / 1024)} KiB (${perChunk(c).toFixed(1)} B per chunk), ${c.collections} collections`;
    console.log(`${COUNTED} chunks of ${CHUNK} B, steady state: ${line('hand-written', hand)}; ${line('library, default', withReconnect)}; ${line('library, reconnect: false', plain)}`);
    // Generous. Both pay the async iteration (a promise and a result per chunk, about 550 B)
    // and ws's frames; what the library adds comes per frame or per block of its log (a view of
    // it, a wait of a turn: about 20-60 B per chunk amortised when this was written), never an
    // object per chunk. Two more small objects per chunk (a closure, a promise, a wrapper: 32 to
    // 100 bytes each) is what this catches.
    for (const c of [withReconnect, plain]) {
      expect(perChunk(c)).toBeLessThan(perChunk(hand) + 100);
    }
  }, 60_000);
});
