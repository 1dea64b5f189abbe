// The fleet relay against the in-process relay, side by side in one run: events per second one
// relay process fans out to N pages (one session), and the latency a page sees from the moment
// an event is published (p50/p99, paced). Three processes: this one (the publisher), the relay,
// and the pages (N SSE clients over loopback), with a real redis-server for the fleet relay.
// The in-process relay has no publisher apart from it: its events are made in the relay process.
//
//   npx tsx bench/relayFleet.ts [--pages 1000] [--events 500] [--rate 20] [--seconds 10] [--rounds 3] [--prof]
import { spawn, type ChildProcess } from 'node:child_process';
import { request, Agent } from 'node:http';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { createPublisher } from '../src/fleet/publisher.js';
import type { SessionPublisher } from '../src/publishing.js';
import { createRelay } from '../src/relay/server.js';
import { SseParser } from '../src/relay/sse.js';
import type { ServerEvent } from '../src/schema/events.js';
import { startRedis } from '../test/fleet/redisServer.js';
import { machine, percentile } from './benchInternals.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    pages: { type: 'string', default: '1000' },
    events: { type: 'string', default: '500' },
    rate: { type: 'string', default: '20' },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    prof: { type: 'boolean', default: false },
  },
});
const PAGES = Number(values.pages);
const EVENTS = Number(values.events);
const RATE = Number(values.rate);
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);

/** An event that carries the moment it was made (ms since the epoch, sub-ms, comparable across processes). */
const stamped = (i: number): ServerEvent => ({ type: 'topics', topics: [`${i}`, String(performance.timeOrigin + performance.now())] });
const self = new URL(import.meta.url).pathname;

function child(args: string[]): { proc: ChildProcess; lines: AsyncIterableIterator<string>; send(line: string): void } {
  // --prof: a CPU profile of each relay process, in test/artifacts/.
  const prof = values.prof && args[0] === 'relay' ? ['--cpu-prof', '--cpu-prof-dir', 'test/artifacts/relay-prof'] : [];
  // The children take the same sizes as this run.
  const sizes = ['--pages', String(PAGES), '--events', String(EVENTS), '--rate', String(RATE), '--seconds', String(SECONDS)];
  const proc = spawn(process.execPath, [...prof, '--import', 'tsx', self, ...args, ...sizes], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: proc.stdout! })[Symbol.asyncIterator]();
  return { proc, lines, send: (line) => void proc.stdin!.write(`${line}\n`) };
}
async function next(lines: AsyncIterableIterator<string>): Promise<string> {
  const r = await lines.next();
  if (r.done) throw new Error('the child process ended');
  return r.value;
}
const commands = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

/** The relay process: `relay fleet REDIS_URL` or `relay local`; in local mode it makes the events on `emit COUNT RATE`. */
async function relayProcess(mode: string, url?: string): Promise<void> {
  // Pages that read slowly on a loaded machine are waited for, not cut off: this measures throughput.
  const relay = createRelay({ token: null, heartbeatMs: 60_000, stallTimeoutMs: 600_000, maxStreams: PAGES + 16, maxConnections: PAGES + 64, historyEvents: 100_000, ...(mode === 'fleet' ? { from: url, prefix: 'bench' } : {}) });
  const session = mode === 'local' ? relay.addSession({ id: 'bench' }) : undefined;
  const { url: listening } = await relay.listen();
  process.stdout.write(`${listening}\n`);
  let events: { next(e: ServerEvent): void } | undefined;
  if (session) {
    const { Subject } = await import('rxjs');
    const s = new Subject<ServerEvent>();
    session.feed(s);
    events = s;
  }
  for (;;) {
    const r = await commands.next();
    if (r.done) break;
    const [cmd, count, rate] = r.value.split(' ');
    if (cmd === 'emit' && events) await emit(Number(count), Number(rate), (e) => events.next(e));
  }
  await relay.close();
  process.exit(0);
}
process.once('SIGTERM', () => process.exit(0));

/** Make `count` events at `rate` per second (0: as fast as possible, yielding every 100). */
async function emit(count: number, rate: number, sink: (e: ServerEvent) => void): Promise<void> {
  const start = performance.now();
  for (let i = 0; i < count; i++) {
    if (rate > 0) {
      const due = start + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    } else if (i % 100 === 0) await new Promise((r) => setImmediate(r));
    sink(stamped(i));
  }
}

/** The pages process: N SSE clients on one session; on `expect COUNT` reports when each page got COUNT events, and every latency. */
async function pagesProcess(url: string): Promise<void> {
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  const pages: { got: number; latencies: number[]; done?: () => void }[] = [];
  let connected = 0;
  let closed = 0;
  // Say where it stands every 30 s, so a stuck run shows why.
  setInterval(() => {
    const got = pages.map((p) => p.got).sort((a, b) => a - b);
    process.stderr.write(`pages: ${connected} connected, ${closed} closed, events per page min ${got[0]} median ${got[got.length >> 1]} max ${got.at(-1)}\n`);
  }, 30_000).unref();
  await new Promise<void>((ready) => {
    for (let p = 0; p < PAGES; p++) {
      const page: { got: number; latencies: number[]; done?: () => void } = { got: 0, latencies: [] };
      pages.push(page);
      const req = request(`${url}/sessions/bench/events`, { agent }, (res) => {
        if (++connected === PAGES) ready();
        const parser = new SseParser();
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const now = performance.timeOrigin + performance.now();
          for (const m of parser.push(chunk)) {
            if (m.event !== 'event') continue;
            page.got++;
            const sent = Number((JSON.parse(m.data) as { topics: string[] }).topics[1]);
            page.latencies.push(now - sent);
            page.done?.();
          }
        });
      });
      req.on('error', (err) => process.stderr.write(`page ${p}: ${err.message}\n`));
      req.on('close', () => closed++);
      req.end();
    }
  });
  process.stdout.write('ready\n');
  for (;;) {
    const r = await commands.next();
    if (r.done) break;
    const [cmd, count] = r.value.split(' ');
    if (cmd !== 'expect') continue;
    const target = Number(count);
    const base = pages.map((p) => p.got);
    for (const p of pages) p.latencies = [];
    // Armed before anything is published, so no event of this phase is counted in `base`.
    process.stdout.write('armed\n');
    const t0 = performance.now();
    let firstAll = 0;
    await Promise.all(
      pages.map(
        (p, i) =>
          new Promise<void>((resolve) => {
            const check = (): void => {
              if (p.got - base[i]! >= target) {
                delete p.done;
                resolve();
              }
            };
            p.done = check;
            check();
          }),
      ),
    ).then(() => (firstAll = performance.now()));
    const all = pages.flatMap((p) => p.latencies).sort((a, b) => a - b);
    process.stdout.write(`${JSON.stringify({ waitedMs: firstAll - t0, p50: percentile(all, 50), p99: percentile(all, 99), samples: all.length })}\n`);
  }
  process.exit(0);
}

interface Row {
  mode: string;
  round: number;
  fanoutPerSec: number;
  burstMs: number;
  p50: number;
  p99: number;
}

async function measure(mode: 'local' | 'fleet', round: number, redisUrl: string): Promise<Row> {
  const relay = child(['relay', mode, redisUrl]);
  const url = await next(relay.lines);
  const publisher = mode === 'fleet' ? await createPublisher({ url: redisUrl, prefix: 'bench' }) : undefined;
  let session: SessionPublisher | undefined = publisher?.session('bench');
  const pages = child(['pages', url]);
  try {
    if (await next(pages.lines) !== 'ready') throw new Error('pages not ready');
    const publish = async (count: number, rate: number): Promise<void> => {
      if (session) await emit(count, rate, (e) => session!.event(e));
      else relay.send(`emit ${count} ${rate}`);
    };
    // Burst: EVENTS as fast as they can be made; the clock runs until every page has them all.
    pages.send(`expect ${EVENTS}`);
    if ((await next(pages.lines)) !== 'armed') throw new Error('pages not armed');
    const t0 = performance.now();
    await publish(EVENTS, 0);
    await next(pages.lines);
    const burstMs = performance.now() - t0;
    // Paced: RATE per second for SECONDS; latency from the moment each event was made.
    const paced = RATE * SECONDS;
    pages.send(`expect ${paced}`);
    if ((await next(pages.lines)) !== 'armed') throw new Error('pages not armed');
    await publish(paced, RATE);
    const latency = JSON.parse(await next(pages.lines)) as { p50: number; p99: number };
    return { mode, round, fanoutPerSec: (EVENTS * PAGES) / (burstMs / 1000), burstMs, p50: latency.p50, p99: latency.p99 };
  } finally {
    session?.end({ status: 'done' });
    session = undefined;
    pages.proc.kill('SIGKILL');
    // SIGTERM, so a profiled relay writes its profile on exit.
    relay.proc.kill('SIGTERM');
    await new Promise((r) => relay.proc.once('exit', r));
    await publisher?.close();
  }
}

async function main(): Promise<void> {
  const redis = await startRedis();
  const rows: Row[] = [];
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      for (const mode of ['local', 'fleet'] as const) rows.push(await measure(mode, round, redis.url));
    }
  } finally {
    await redis.stop();
  }
  console.log(`\n${machine()}; ${PAGES} pages on one session; burst ${EVENTS} events; paced ${RATE}/s for ${SECONDS} s\n`);
  console.log('| relay | round | events/s fanned out (burst) | burst to the last page | latency p50 | latency p99 |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.mode === 'fleet' ? 'from Redis' : 'in-process'} | ${r.round} | ${Math.round(r.fanoutPerSec).toLocaleString('en')} | ${Math.round(r.burstMs)} ms | ${r.p50.toFixed(1)} ms | ${r.p99.toFixed(1)} ms |`);
  const by = (m: string, f: (r: Row) => number): number => {
    const xs = rows.filter((r) => r.mode === m).map(f).sort((a, b) => a - b);
    return xs[Math.floor(xs.length / 2)]!;
  };
  console.log(`\nfleet / in-process: fan-out ${(by('fleet', (r) => r.fanoutPerSec) / by('local', (r) => r.fanoutPerSec)).toFixed(2)}x, p50 +${(by('fleet', (r) => r.p50) - by('local', (r) => r.p50)).toFixed(1)} ms, p99 +${(by('fleet', (r) => r.p99) - by('local', (r) => r.p99)).toFixed(1)} ms (medians of ${ROUNDS} rounds)`);
  process.exit(0);
}

const [role, a, b] = positionals;
if (role === 'relay') await relayProcess(a!, b);
else if (role === 'pages') await pagesProcess(a!);
else await main();
