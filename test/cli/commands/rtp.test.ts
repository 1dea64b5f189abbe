import { execFile } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { PassThrough, Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliIo } from '../../../src/cli/command.js';
import { main } from '../../../src/cli/main.js';
import { sendRtpCall } from '../../telephony/helpers.js';
import { resolveFfmpeg } from '../../../src/internal/ffmpegPath.js';
import { hasReusePort } from '../../../src/telephony/rtpSource.js';
import { killSpawned, spawnBin } from '../spawned.js';

afterEach(killSpawned);

function capture(onWrite?: (text: string) => void): Writable & { text: () => string } {
  let text = '';
  const w = new Writable({
    write(chunk, _enc, cb) {
      text += String(chunk);
      onWrite?.(text);
      cb();
    },
  });
  return Object.assign(w, { text: () => text });
}


/** `svc-stream rtp ARGS` in-process on a free port: its output, the port it listens on, and its exit. */
function startRtp(args: readonly string[], signal?: AbortSignal) {
  let resolvePort!: (p: number) => void;
  const port = new Promise<number>((r) => (resolvePort = r));
  const stderr = capture((t) => {
    const m = /listening for RTP on [\d.]+:(\d+)/.exec(t);
    if (m) resolvePort(Number(m[1]));
  });
  const stdout = capture();
  const io: CliIo = { stdout, stderr, stdin: new PassThrough(), env: {}, ...(signal ? { signal } : {}) };
  return { stdout, stderr, port, done: main(['rtp', '--port', '0', ...args], io) };
}

describe('svc-stream rtp', () => {
  it('prints its help', async () => {
    const stdout = capture();
    const code = await main(['rtp', '--help'], { stdout, stderr: capture(), stdin: new PassThrough(), env: {} });
    expect(code).toBe(0);
    expect(stdout.text()).toContain('--payload-type PT=codec');
  });

  it('refuses a bad --payload-type with exit 2', async () => {
    const stderr = capture();
    const code = await main(['rtp', '--payload-type', '96=speex'], { stdout: capture(), stderr, stdin: new PassThrough(), env: {} });
    expect(code).toBe(2);
    expect(stderr.text()).toMatch(/invalid_argument: --payload-type 96=speex: unknown codec/);
  });

  it('analyses an RTP call on the embedded emulator and prints NDJSON per call', async () => {
    const { stdout, port, done } = startRtp(['--idle-timeout', '300', '--exit-after', '1', '--json']);
    await sendRtpCall(await port, 0xabc, 1, 2);
    expect(await done).toBe(0);
    const lines = stdout.text().trim().split('\n').map((l) => JSON.parse(l) as { type: string; id: string; status?: string; stats?: { received: number }; event?: { type: string } });
    expect(lines[0]).toMatchObject({ type: 'call', id: 'rtp-00000abc', codec: 'PCMU' });
    expect(lines.some((l) => l.type === 'event' && l.event?.type === 'done')).toBe(true);
    expect(lines.find((l) => l.type === 'call_end')).toMatchObject({ type: 'call_end', id: 'rtp-00000abc', status: 'done', duration_ms: 1000, stats: { received: 50, lost: 0 } });
    // As analyze --json ends: a state line saying where the results come from.
    expect(lines.at(-1)).toMatchObject({ type: 'state', id: 'rtp-00000abc', source: 'emulator', label: { source: 'emulator', note: expect.stringMatching(/^speech segments only/) } });
  });

  it('--max-legs refuses a second call and says so once on stderr; --frame-ms groups the audio it sends', async () => {
    const { stdout, stderr, port, done } = startRtp(['--idle-timeout', '300', '--exit-after', '1', '--max-legs', '1', '--frame-ms', '100', '--json']);
    const p = await port;
    // 0xabc's first packet starts the one leg allowed; every packet of 0xdef is refused.
    let abcFirst!: () => void;
    const abcStarted = new Promise<void>((r) => (abcFirst = r));
    // On loopback a datagram is queued at the receiver once sent: 0xdef's come after 0xabc's first.
    await Promise.all([sendRtpCall(p, 0xabc, 1, 2, 0, abcFirst), abcStarted.then(() => sendRtpCall(p, 0xdef, 1, 2))]);
    expect(await done).toBe(0);
    const lines = stdout.text().trim().split('\n').map((l) => JSON.parse(l) as { type: string; id: string });
    expect(lines.filter((l) => l.type === 'call').map((l) => l.id)).toEqual(['rtp-00000abc']);
    expect(stderr.text().match(/a new call leg was refused because 1 legs are running/g)).toHaveLength(1);
    expect(stderr.text()).toContain('Raise --max-legs');
  });
});

describe("svc-stream rtp hears ffmpeg's defaults (dynamic payload type 97, nobody mapped it)", () => {
  // ffmpeg -re -i conv.wav -f rtp rtp://…, nothing else said, for a 16 kHz wav: a=rtpmap:97 PCMU/16000/1.
  it("ffmpeg's plain default (PCMU/16000 on payload type 97) is an analysed call, the inference said once", async () => {
    const { stdout, stderr, port, done } = startRtp(['--idle-timeout', '400', '--exit-after', '1']);
    const ffmpeg = await resolveFfmpeg();
    const sender = execFile(ffmpeg.path, ['-hide_banner', '-loglevel', 'error', '-re', '-i', 'samples/call.wav', '-t', '2', '-f', 'rtp', `rtp://127.0.0.1:${await port}`], { timeout: 20_000 });
    try {
      expect(await done).toBe(0);
    } finally {
      sender.kill('SIGKILL');
    }
    const warnings = stderr.text().split('\n').filter((l) => /payload type 97/.test(l));
    expect(warnings).toEqual([expect.stringMatching(/^svc-stream: payload type 97 \(from 127\.0\.0\.1:\d+\) is not mapped; told from its packets \(1 byte per timestamp tick, paced at 16000 Hz, μ-law by its samples\), it is taken as PCMU\/16000\/1\. Map it with --payload-type 97=PCMU\/16000\/1 to be sure\.$/)]);
    const out = stdout.text();
    expect(out).toMatch(/^rtp-[0-9a-f]{8} call from 127\.0\.0\.1:\d+ \(PCMU\/16000 as mulaw\), /m);
    // The packets held while it was told are played: the whole 2 s is analysed.
    expect(out).toMatch(/^rtp-[0-9a-f]{8} done: (1\.9|2\.\d) s of audio$/m);
  }, 30_000);

  it('the call is analysed as L16/16000 and the inference is said once, with the flag that maps it', async () => {
    const { stdout, stderr, port, done } = startRtp(['--idle-timeout', '400', '--exit-after', '1']);
    const ffmpeg = await resolveFfmpeg();
    const sender = execFile(
      ffmpeg.path,
      ['-hide_banner', '-loglevel', 'error', '-re', '-i', 'samples/call.wav', '-t', '2', '-c:a', 'pcm_s16be', '-ar', '16000', '-ac', '1', '-f', 'rtp', `rtp://127.0.0.1:${await port}`],
      { timeout: 20_000 },
    );
    try {
      expect(await done).toBe(0);
    } finally {
      sender.kill('SIGKILL');
    }
    const warnings = stderr.text().split('\n').filter((l) => /payload type 97/.test(l));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^svc-stream: payload type 97 \(from 127\.0\.0\.1:\d+\) is not mapped; told from its packets \(2 bytes per timestamp tick, paced at 16000 Hz, linear by its samples\), it is taken as L16\/16000\/1\. Map it with --payload-type 97=L16\/16000\/1 to be sure\.$/);
    const out = stdout.text();
    expect(out.split('\n')[0]).toBe('source: emulator: speech segments only (no transcription: clips without text; try --scenario)');
    expect(out).toMatch(/^rtp-[0-9a-f]{8} call from 127\.0\.0\.1:\d+ \(L16\/16000 as s16be\), /m);
    expect(out).toMatch(/^rtp-[0-9a-f]{8} done: [12]\.\d s of audio$/m);
  }, 30_000);

  it('a payload type that cannot be told is named once on stderr with the flag, and nothing is analysed', async () => {
    const controller = new AbortController();
    const { stdout, stderr, port, done } = startRtp([], controller.signal);
    const warned = new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (/payload type 111/.test(stderr.text())) {
          clearInterval(check);
          resolve();
        }
      }, 10);
    });
    // Packets of 33 bytes whose timestamps step by 160: none of G.711, L16 or Opus (GSM-like).
    const socket = createSocket('udp4');
    const p = await port;
    for (let i = 0; i < 4; i++) {
      const pkt = Buffer.alloc(12 + 33, 0x01);
      pkt[0] = 0x80;
      pkt[1] = 111;
      pkt.writeUInt16BE(i, 2);
      pkt.writeUInt32BE(160 * i, 4);
      pkt.writeUInt32BE(0x5555, 8);
      await new Promise<void>((r) => socket.send(pkt, p, '127.0.0.1', () => r()));
    }
    await warned;
    controller.abort();
    expect(await done).toBe(0);
    socket.close();
    const lines = stderr.text().split('\n').filter((l) => /payload type 111/.test(l));
    expect(lines).toEqual([
      'svc-stream: payload type 111 is not mapped and its packets are neither G.711 (a timestamp step of one sample per byte per channel), L16 (per 2 bytes per channel) nor Opus (the duration its TOC byte says); its packets are dropped and counted in stats.unknownPayloadType. Map it with --payload-type 111=CODEC/RATE (e.g. 111=PCMU/16000, 111=PCMA/8000, 111=L16/16000, 111=opus/48000/2).',
    ]);
    // No call: only the line saying where results would come from.
    expect(stdout.text()).toBe('source: emulator: speech segments only (no transcription: clips without text; try --scenario)\n');
  });
});

describe('svc-stream rtp --workers', () => {
  it('runs the calls on two worker processes; a worker killed mid-call ends its call worker_exited, the other call ends done, totals on stderr and exit 1 (a call was lost)', async () => {
    const run = spawnBin(['rtp', '--port', '0', '--workers', '2', '--max-calls', '4', '--idle-timeout', '400', '--exit-after', '2', '--json']);
    const child = run.child;
    try {
      const seen = (pattern: RegExp, of: () => string): Promise<RegExpExecArray> =>
        new Promise((resolve, reject) => {
          const check = (): void => {
            const m = pattern.exec(of());
            if (m) return resolve(m);
            if (child.exitCode !== null) reject(new Error(`exited before ${pattern}: ${run.err()}`));
          };
          child.stdout!.on('data', check);
          child.stderr!.on('data', check);
          child.once('exit', check);
          check();
        });
      // Each worker says its own port, in whichever order they come up.
      await seen(/listening for RTP on [\d.]+:\d+ \(worker \d\)[\s\S]*listening for RTP on [\d.]+:\d+ \(worker \d\)/, () => run.err());
      const portOf = (i: number): number => Number(new RegExp(`listening for RTP on [\\d.]+:(\\d+) \\(worker ${i}\\)`).exec(run.err())![1]);
      const pid1 = Number((await seen(/worker 1 started \(pid (\d+)\)/, () => run.err()))[1]);
      // Call a goes to worker 0, call b to worker 1 (the one killed below).
      const a = sendRtpCall(portOf(0), 0xa1, 2, 10);
      const b = sendRtpCall(portOf(1), 0xb2, 2, 10);
      await seen(/"type":"call","id":"rtp-000000a1"[\s\S]*"type":"call","id":"rtp-000000b2"|"type":"call","id":"rtp-000000b2"[\s\S]*"type":"call","id":"rtp-000000a1"/, () => run.out());
      process.kill(pid1, 'SIGKILL');
      await Promise.all([a, b]);
      // 'close': every byte of its output read, not only the exit.
      const code = await new Promise<number | null>((r) => child.once('close', r));
      expect(code).toBe(1);
      const ends = run.out()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; id: string; status: string; error?: { code: string } })
        .filter((l) => l.type === 'call_end');
      // The call the killed worker had ends worker_exited; the healthy one done (and, when the
      // sender's next packets reached the restarted worker before the drain, its new leg too).
      // Which printed port is worker 1's depends on which worker said it first: the lost call is
      // one of the two, the other ends done.
      const lost = ends.filter((e) => e.status === 'error');
      expect(lost.map((e) => e.error!.code)).toEqual(['worker_exited']);
      expect(['rtp-000000a1', 'rtp-000000b2']).toContain(lost[0]!.id);
      expect(ends.filter((e) => e.status === 'done').map((e) => e.id)).toContain(lost[0]!.id === 'rtp-000000a1' ? 'rtp-000000b2' : 'rtp-000000a1');
      expect(run.err()).toMatch(/worker 1 \(pid \d+\) exited on SIGKILL; its 1 call\(s\) ended worker_exited; restarting it/);
      // The last line counts the calls by outcome.
      expect(run.err().trim().split('\n').at(-1)).toMatch(/^svc-stream: [23] call\(s\): [12] done, 1 failed \(1 lost with a worker\), 0 shutdown, 0 rejected; 1 worker restart\(s\); datagrams \d+, legs [23]/);
    } finally {
      child.kill('SIGKILL');
    }
  }, 60_000);

  it('--reuse-port needs Node 22.12 or later: a usage error before anything starts on this Node', async () => {
    if (hasReusePort()) return;
    const stderr = capture();
    const code = await main(['rtp', '--workers', '2', '--reuse-port'], { stdout: capture(), stderr, stdin: new PassThrough(), env: {} });
    expect(code).toBe(2);
    expect(stderr.text()).toMatch(/--reuse-port needs Node 22\.12 or later/);
  });
});
