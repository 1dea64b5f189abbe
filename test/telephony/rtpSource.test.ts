import { execFileSync } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, take, timeout, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { audioMetaOf } from '../../src/audio/meta.js';
import { udpReceiveBufferErrors } from '../cli/rtpTestKit.js';
import { createRtpSourceStats, rtpSource, type CallLeg, type RtpSourceOptions } from 'svc-stream/telephony';
import type { LimitWarning, PayloadTypeWarning } from 'svc-stream';
import { collectBytes, ffmpegRtp, SAMPLE_MULAW, udpProxy } from './helpers.js';

const subs: Subscription[] = [];
const closers: Array<() => void> = [];
afterEach(() => {
  subs.splice(0).forEach((s) => s.unsubscribe());
  closers.splice(0).forEach((c) => c());
});

/** Start an rtpSource on a free port; resolves with the port and the first leg (as a promise). */
async function listen(options: RtpSourceOptions = {}): Promise<{ port: number; firstLeg: Promise<CallLeg> }> {
  let resolvePort!: (p: number) => void;
  const port = new Promise<number>((r) => (resolvePort = r));
  const source = rtpSource({ idleTimeoutMs: 400, ...options, onListening: (a) => resolvePort(a.port) });
  let resolveLeg!: (l: CallLeg) => void;
  const firstLeg = new Promise<CallLeg>((r) => (resolveLeg = r));
  subs.push(source.subscribe((leg) => resolveLeg(leg)));
  return { port: await port, firstLeg };
}

describe('rtpSource with ffmpeg as the sender', () => {
  it('takes PCMU across sequence wraparound, bytes equal to the audio sent', async () => {
    const stats = createRtpSourceStats();
    const { port, firstLeg } = await listen({ stats });
    const sent = ffmpegRtp(port, 3, undefined, { seq: 65500 });
    const leg = await firstLeg;
    const bytes = await collectBytes(leg.audio$);
    await sent;
    expect(leg.payloadType).toBe(0);
    expect(leg.format).toEqual({ audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 });
    expect(audioMetaOf(leg.audio$)?.format).toEqual(leg.format);
    expect(leg.stats).toMatchObject({ received: 150, lost: 0, late: 0, duplicated: 0, reordered: 0, fillBytes: 0 });
    expect(bytes.byteLength).toBe(3 * 8000);
    // The payload is the sample, byte for byte, across the 65535 → 0 wrap.
    expect(Buffer.from(bytes).equals(readFileSync(SAMPLE_MULAW).subarray(0, 3 * 8000))).toBe(true);
    expect(stats).toMatchObject({ legs: 1, malformed: 0, rtcp: 0 });
  });

  it('through a proxy that drops, duplicates, reorders, delays and rewrites packets: counters and audio length hold', async () => {
    const stats = createRtpSourceStats();
    const { port, firstLeg } = await listen({ stats, playoutDelayMs: 60 });
    const rtcpSr = Buffer.alloc(28);
    rtcpSr[0] = 0x80;
    rtcpSr[1] = 200; // sender report
    rtcpSr.writeUInt16BE(6, 2);
    const proxy = await udpProxy(port, {
      drop: [10, 30],
      duplicate: [15],
      swapWithNext: [20],
      delay: { 40: 250 },
      payloadType: { 50: 101, 60: 13 },
      inject: { 5: Buffer.from('not rtp at all'), 70: rtcpSr },
    });
    closers.push(proxy.close);
    const sent = ffmpegRtp(proxy.port, 3, undefined, { seq: 65490 });
    const leg = await firstLeg;
    rtcpSr.writeUInt32BE(leg.ssrc, 4); // the sender report names the leg (sent later, at index 70)
    const bytes = await collectBytes(leg.audio$);
    await sent;
    expect(leg.stats).toMatchObject({ duplicated: 1, reordered: 1, late: 1, lost: 3, dtmf: 1, cn: 1, rtcp: 1 });
    expect(stats).toMatchObject({ malformed: 1, rtcp: 1 });
    // 150 packets of 160 samples: lost, rewritten and late ones are silence, so the clock holds.
    expect(bytes.byteLength).toBe(3 * 8000);
    expect(leg.stats.fillBytes).toBe(5 * 160);
    const fill = bytes.subarray(10 * 160, 11 * 160);
    expect(fill.every((b) => b === 0xff)).toBe(true);
  });

  it('decodes a dynamic L16 payload type at a service rate as s16be, passed through', async () => {
    const { port, firstLeg } = await listen({ payloadTypes: { 96: { codec: 'L16', rate: 16000, channels: 1 } } });
    const sent = ffmpegRtp(port, 2, ['-acodec', 'pcm_s16be', '-ar', '16000', '-payload_type', '96'], { pktSize: 652 });
    const leg = await firstLeg;
    const bytes = await collectBytes(leg.audio$);
    await sent;
    expect(leg.format).toEqual({ audio_format: 's16be', sample_rate: 16000, num_channels: 1 });
    expect(Math.abs(bytes.byteLength - 2 * 32000)).toBeLessThanOrEqual(640);
    expect(leg.stats.lost).toBe(0);
  });

  it("ffmpeg's plain default for a 16 kHz wav (PCMU/16000 on 97, nobody mapped it) is told within the first second of its packets, and nothing of it is lost", async () => {
    const stats = createRtpSourceStats();
    let toldAfter: number | undefined;
    const warnings: Array<LimitWarning | PayloadTypeWarning> = [];
    const { port, firstLeg } = await listen({
      stats,
      onWarning: (w) => {
        warnings.push(w);
        toldAfter = stats.datagrams;
      },
    });
    // `ffmpeg -re -i conv.wav -f rtp rtp://…`: nothing else said (ffmpegRtp's readrate paces it).
    const sent = ffmpegRtp(port, 2, [], { input: 'wav', pktSize: 1472, readrate: 1 });
    const leg = await firstLeg;
    const bytes = await collectBytes(leg.audio$);
    await sent;
    expect(warnings).toEqual([expect.objectContaining({ code: 'inferred_payload_type', payloadType: 97, mapping: 'PCMU/16000/1' })]);
    expect(leg.format).toEqual({ audio_format: 'mulaw', sample_rate: 16000, num_channels: 1 });
    // ffmpeg sends 1460 + 26 bytes every 93 ms at 16 kHz: a second of the stream is 22 packets.
    expect(toldAfter).toBeLessThanOrEqual(22);
    // The packets held while it was told are played: the whole 2 s, one byte per sample.
    expect(bytes.byteLength).toBeGreaterThanOrEqual(31_000);
    expect(stats.unknownPayloadType).toBe(0);
  }, 20_000);

  it('transcodes G.722 (PT 9) with ffmpeg to s16le 16 kHz', async () => {
    const { port, firstLeg } = await listen();
    const sent = ffmpegRtp(port, 2, ['-acodec', 'g722', '-ar', '16000', '-payload_type', '9'], { input: 'wav', pktSize: 172 });
    const leg = await firstLeg;
    const bytes = await collectBytes(leg.audio$);
    await sent;
    expect(leg.codec.name).toBe('G722');
    expect(leg.format).toEqual({ audio_format: 's16le', sample_rate: 16000, num_channels: 1 });
    expect(Math.abs(bytes.byteLength - 2 * 32000)).toBeLessThanOrEqual(3200);
  });

  it('wraps Opus in Ogg that ffmpeg decodes to the duration sent', async () => {
    const { port, firstLeg } = await listen({ payloadTypes: { 97: { codec: 'opus', rate: 48000, channels: 2 } } });
    const sent = ffmpegRtp(port, 2, ['-acodec', 'libopus', '-ar', '48000', '-ac', '1', '-b:a', '24k', '-payload_type', '97'], { input: 'wav', pktSize: 1200 });
    const leg = await firstLeg;
    const bytes = await collectBytes(leg.audio$);
    await sent;
    expect(leg.format).toEqual({ audio_format: 'ogg' });
    const dir = mkdtempSync(join(tmpdir(), 'rtp-opus-'));
    writeFileSync(join(dir, 'a.ogg'), bytes);
    const pcm = execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-i', join(dir, 'a.ogg'), '-f', 's16le', '-ar', '8000', '-ac', '1', '-'], { maxBuffer: 1 << 24 });
    expect(Math.abs(pcm.byteLength - 2 * 16000)).toBeLessThanOrEqual(320);
  });

  it('starts one leg per SSRC and ends a leg after the idle timeout', async () => {
    const legs: CallLeg[] = [];
    let resolvePort!: (p: number) => void;
    const portP = new Promise<number>((r) => (resolvePort = r));
    subs.push(rtpSource({ idleTimeoutMs: 300, onListening: (a) => resolvePort(a.port) }).subscribe((l) => legs.push(l)));
    const port = await portP;
    await Promise.all([ffmpegRtp(port, 1), ffmpegRtp(port, 1)]);
    const ends = legs.map((l) => collectBytes(l.audio$, 5000));
    expect(legs.length).toBe(2);
    expect(new Set(legs.map((l) => l.ssrc)).size).toBe(2);
    const all = await Promise.all(ends);
    for (const b of all) expect(b.byteLength).toBe(8000);
  });

  it('errors when the port is taken', async () => {
    const { port } = await listen();
    const err = await firstValueFrom(rtpSource({ port }).pipe(take(1), timeout(2000))).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('source_error');
  });
});

describe('rtpSource against spoofed and unwanted senders', () => {
  /** One PCMU packet of `ssrc`. */
  const packet = (ssrc: number, seq = 1): Buffer => {
    const b = Buffer.alloc(12 + 160, 0xff);
    b[0] = 0x80;
    b[1] = 0;
    b.writeUInt16BE(seq, 2);
    b.writeUInt32BE(seq * 160, 4);
    b.writeUInt32BE(ssrc >>> 0, 8);
    return b;
  };

  async function sendAll(port: number, packets: readonly Buffer[], from?: dgram.Socket): Promise<void> {
    const socket = from ?? dgram.createSocket('udp4');
    try {
      for (let i = 0; i < packets.length; i++) {
        await new Promise<void>((r) => socket.send(packets[i]!, port, '127.0.0.1', () => r()));
        // Let the receiver keep up: loopback UDP drops what the socket buffer cannot hold.
        if (i % 50 === 49) await new Promise((r) => setImmediate(r));
      }
    } finally {
      if (!from) socket.close();
    }
  }

  const until = async (cond: () => boolean, ms = 5_000): Promise<void> => {
    await expect.poll(cond, { timeout: ms, interval: 10 }).toBe(true);
  };

  /**
   * Wait until every one of `sent` datagrams is accounted for: received (`count()`), or dropped
   * by the kernel (its UDP receive errors since `dropsBefore`; machine-wide, so at worst this
   * ends early, and what is checked after it holds at any moment once the legs are full).
   */
  const settled = async (count: () => number, sent: number, dropsBefore: number): Promise<void> => {
    await until(() => count() + (udpReceiveBufferErrors() - dropsBefore) >= sent, 10_000);
  };

  it('2000 spoofed SSRCs make at most maxLegs legs; the rest are refused and counted; a freed place admits again', async () => {
    const stats = createRtpSourceStats();
    const legs: CallLeg[] = [];
    let resolvePort!: (p: number) => void;
    const portP = new Promise<number>((r) => (resolvePort = r));
    const warnings: Array<LimitWarning | PayloadTypeWarning> = [];
    subs.push(
      rtpSource({ stats, maxLegs: 8, idleTimeoutMs: 2_000, recvBufferSize: 4 << 20, onListening: (a) => resolvePort(a.port), onWarning: (w) => warnings.push(w) }).subscribe((l) =>
        legs.push(l),
      ),
    );
    const port = await portP;
    const drops = udpReceiveBufferErrors();
    await sendAll(port, Array.from({ length: 2000 }, (_, i) => packet(0x1000 + i)));
    await settled(() => stats.datagrams, 2000, drops);
    // Loopback UDP may drop some under load: whatever arrived, eight legs and the rest refused.
    expect(stats.datagrams).toBeGreaterThan(500);
    expect(legs).toHaveLength(8);
    expect(stats).toMatchObject({ legs: 8, refusedLegs: stats.datagrams - 8 });
    // Hundreds refused, said once, with the option that raises the bound.
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ code: 'max_legs', option: 'maxLegs', limit: 8 });
    expect(warnings[0]!.message).toMatch(/maxLegs/);
    // Once the legs have gone idle, their places are free for new calls.
    await Promise.all(legs.map((l) => collectBytes(l.audio$)));
    await sendAll(port, [packet(0xabcdef)]);
    await until(() => legs.length === 9);
    expect(legs[8]!.ssrc).toBe(0xabcdef);
  });

  it('the default maxLegs is 64; without onWarning the first refusal is one process warning', async () => {
    const stats = createRtpSourceStats();
    const warned: Error[] = [];
    const onProcessWarning = (w: Error & { code?: string }): void => {
      if (w.code === 'SVC_STREAM_MAX_LEGS') warned.push(w);
    };
    process.on('warning', onProcessWarning);
    try {
      let resolvePort!: (p: number) => void;
      const portP = new Promise<number>((r) => (resolvePort = r));
      subs.push(rtpSource({ stats, idleTimeoutMs: 2_000, recvBufferSize: 4 << 20, onListening: (a) => resolvePort(a.port) }).subscribe());
      const port = await portP;
      const drops = udpReceiveBufferErrors();
      await sendAll(port, Array.from({ length: 100 }, (_, i) => packet(0x2000 + i)));
      await settled(() => stats.datagrams, 100, drops);
      expect(stats.datagrams).toBeGreaterThan(64);
      expect(stats).toMatchObject({ legs: 64, refusedLegs: stats.datagrams - 64 });
      // process.emitWarning delivers on the next tick.
      await new Promise((r) => setImmediate(r));
      expect(warned).toHaveLength(1);
      expect(warned[0]!.message).toMatch(/64 legs are running \(maxLegs\)/);
    } finally {
      process.off('warning', onProcessWarning);
    }
    expect(() => rtpSource({ maxLegs: 0 })).toThrow(/maxLegs/);
  });

  it('allowedSources: datagrams from other senders are dropped unparsed and counted', async () => {
    const deny = createRtpSourceStats();
    const denied = await listen({ stats: deny, allowedSources: ['10.9.9.9'] });
    await sendAll(denied.port, [packet(1), packet(2), Buffer.from('not rtp at all')]);
    await until(() => deny.datagrams === 3);
    expect(deny).toMatchObject({ legs: 0, disallowedSource: 3, malformed: 0 });

    const allow = createRtpSourceStats();
    const allowed = await listen({ stats: allow, allowedSources: ['::ffff:127.0.0.1'] });
    await sendAll(allowed.port, [packet(7)]);
    expect((await allowed.firstLeg).ssrc).toBe(7);
    expect(allow.disallowedSource).toBe(0);

    // A predicate sees the sender's address and port.
    const sender = dgram.createSocket('udp4');
    closers.push(() => sender.close());
    await new Promise<void>((r) => sender.bind(0, '127.0.0.1', () => r()));
    const senderPort = sender.address().port;
    const byPort = createRtpSourceStats();
    const filtered = await listen({ stats: byPort, allowedSources: (remote) => remote.port === senderPort });
    await sendAll(filtered.port, [packet(8)]);
    await sendAll(filtered.port, [packet(9)], sender);
    expect((await filtered.firstLeg).ssrc).toBe(9);
    await until(() => byPort.datagrams === 2);
    expect(byPort).toMatchObject({ legs: 1, disallowedSource: 1 });
  });
});
