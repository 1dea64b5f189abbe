// What /metrics costs a busy service: `svc-stream rtp` carrying 400 live RTP calls (into the
// RTP bench's stand-in service), its /metrics scraped every second, against the same run
// unscraped; both runs serve the registry (--metrics-port), only the scrapes differ. Rounds
// alternate (scraped, unscraped, unscraped, scraped, …) in one run; the figure is the CLI
// process's own user CPU over the window where every call's session is open.
//
//   npx tsx bench/metrics.ts [--calls 400] [--seconds 20] [--rounds 3]
//
// The stand-in and the sender are bench/rtp.ts's (its `--role stand-in` and `--role sender`).
import { spawn, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { forkRole, loadavg, mono, nextMessage } from './telephonyBench.js';

const RTP = new URL('./rtp.ts', import.meta.url).pathname;
const BIN = new URL('../bin/svc-stream.js', import.meta.url).pathname;
const { values } = parseArgs({ options: { calls: { type: 'string' }, seconds: { type: 'string' }, rounds: { type: 'string' } } });
const calls = Number(values.calls ?? 400);
const seconds = Number(values.seconds ?? 20);
const rounds = Number(values.rounds ?? 3);

const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK']).toString().trim() || 100);
function cpuOf(pid: number): { user: number; system: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(f[11]) * TICK_MS, system: Number(f[12]) * TICK_MS };
}

interface Round {
  readonly scraped: boolean;
  readonly userPct: number;
  readonly systemPct: number;
  readonly scrapes: number;
  readonly scrapeMs: number;
  readonly open: number;
  readonly load: string;
  readonly last: string;
}

async function oneRound(standIn: ReturnType<typeof forkRole>, baseUrl: string, scraped: boolean): Promise<Round> {
  const load = loadavg();
  standIn.send({ type: 'reset' });
  const cli = spawn(process.execPath, [BIN, 'rtp', '--port', '0', '--metrics-port', '0', '--max-calls', String(calls), '--max-legs', String(calls + 16), '--idle-timeout', '5000'], {
    env: { PATH: process.env['PATH'], SVC_BASE_URL: baseUrl, SVC_API_KEY: 'bench-0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  cli.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const port = async (re: RegExp): Promise<number> => {
    for (;;) {
      const m = re.exec(err);
      if (m) return Number(m[1]);
      if (cli.exitCode !== null) throw new Error(`rtp exited: ${err}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const metricsPort = await port(/metrics on http:\/\/[\d.]+:(\d+)/);
  const rtpPort = await port(/listening for RTP on [\d.]+:(\d+)/);
  const sender = forkRole(RTP, ['--role', 'sender', '--calls', String(calls), '--seconds', String(seconds), '--ports', String(rtpPort)]);
  const report = nextMessage(sender, 'sender-report');
  await nextMessage(sender, 'started');
  const startedAt = mono();
  let open = 0;
  for (;;) {
    standIn.send({ type: 'open' });
    open = (await nextMessage<{ type: 'open-count'; open: number }>(standIn, 'open-count')).open;
    if (open >= calls || mono() - startedAt > (seconds * 1000) / 2) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  await new Promise((r) => setTimeout(r, 1000));
  // Scraped: GET /metrics every second, as Prometheus would, for the whole window.
  let scrapes = 0;
  let scrapeMs = 0;
  let scraping = scraped;
  const scraper = (async () => {
    while (scraping) {
      const t = mono();
      await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      scrapeMs += mono() - t;
      scrapes++;
      await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (mono() - t))));
    }
  })();
  const cpu0 = cpuOf(cli.pid!);
  const t0 = mono();
  await nextMessage(sender, 'ending');
  const cpu1 = cpuOf(cli.pid!);
  const windowMs = mono() - t0;
  scraping = false;
  await scraper;
  await report;
  // The calls idle out and end; a drain ends the command (its last line counts them).
  await new Promise((r) => setTimeout(r, 5500));
  cli.kill('SIGTERM');
  await new Promise((r) => (cli.exitCode !== null ? r(null) : cli.once('exit', r)));
  return {
    scraped,
    userPct: ((cpu1.user - cpu0.user) / windowMs) * 100,
    systemPct: ((cpu1.system - cpu0.system) / windowMs) * 100,
    scrapes,
    scrapeMs: scrapes ? scrapeMs / scrapes : 0,
    open,
    load,
    last: err.trim().split('\n').at(-1) ?? '',
  };
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

console.log(`bench/metrics: ${calls} RTP calls of ${seconds} s into svc-stream rtp, /metrics scraped each second vs not, ${rounds} rounds of each alternating; ${(await import('node:os')).cpus().length} cores`);
const standIn = forkRole(RTP, ['--role', 'stand-in', '--seconds', String(seconds)]);
const { baseUrl } = await nextMessage<{ type: 'stand-in-ready'; baseUrl: string }>(standIn, 'stand-in-ready');
const results: Round[] = [];
for (let round = 0; round < rounds; round++) {
  for (const scraped of round % 2 === 0 ? [true, false] : [false, true]) {
    const r = await oneRound(standIn, baseUrl, scraped);
    results.push(r);
    console.log(
      `  ${scraped ? 'scraped  ' : 'unscraped'} user ${r.userPct.toFixed(1)} % of a core, system ${r.systemPct.toFixed(1)} %; ${r.open}/${calls} sessions open; ${r.scrapes} scrapes, ${r.scrapeMs.toFixed(1)} ms each; load before ${r.load}\n            ${r.last}`,
    );
  }
}
const a = results.filter((r) => r.scraped).map((r) => r.userPct);
const b = results.filter((r) => !r.scraped).map((r) => r.userPct);
console.log(`ratio scraped / unscraped, user CPU: ${(median(a) / median(b)).toFixed(3)} (medians ${median(a).toFixed(1)} % / ${median(b).toFixed(1)} %; per pair ${a.map((x, i) => (x / b[i]!).toFixed(3)).join(', ')}); load now ${loadavg()}`);
standIn.send({ type: 'stop' });
process.exit(0);
