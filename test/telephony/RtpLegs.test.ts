// The datagram path without a socket: RTP to a leg per SSRC (started on audio, bounded by
// maxLegs), RTCP and malformed datagrams counted, DTMF before a leg set aside, the leg's
// audio ended when the path stops.
import type dgram from 'node:dgram';
import { VirtualAction, VirtualTimeScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { PayloadTypeGuesser } from '../../src/telephony/PayloadTypeGuesser.js';
import { createRtpSourceStats, RtpLegs, type CallLeg } from '../../src/telephony/RtpLegs.js';

const rinfo = { address: '127.0.0.1', port: 4000, family: 'IPv4', size: 0 } as dgram.RemoteInfo;
function rtp(ssrc: number, seq: number, pt = 0, payload = 160): Buffer {
  const b = Buffer.alloc(12 + payload, 0xff);
  b[0] = 0x80;
  b[1] = pt;
  b.writeUInt16BE(seq, 2);
  b.writeUInt32BE(seq * 160, 4);
  b.writeUInt32BE(ssrc, 8);
  return b;
}

function path(maxLegs = 2) {
  const scheduler = new VirtualTimeScheduler(VirtualAction, 60_000);
  const stats = createRtpSourceStats();
  const legs: CallLeg[] = [];
  let warned = 0;
  const guesser = new PayloadTypeGuesser<[Buffer, dgram.RemoteInfo]>(scheduler, () => undefined);
  const seen: Array<number | undefined> = [];
  const p = new RtpLegs(
    { settings: { onDatagram: (_b, ssrc) => void seen.push(ssrc) }, stats, scheduler, frameMs: 0, maxLegs, handle: undefined, guesser, warnRefused: () => void warned++, warnDraining: () => undefined, changed: () => undefined, emit: (l) => void legs.push(l) },
    {},
  );
  return { p, stats, legs, seen, warned: () => warned, guesser, scheduler };
}

describe('RtpLegs', () => {
  it('a leg per SSRC on its first audio packet; further SSRCs past maxLegs refused and counted', () => {
    const { p, stats, legs, warned, guesser } = path(2);
    for (const ssrc of [1, 2, 3]) p.take(rtp(ssrc, 10), rinfo);
    p.take(rtp(3, 11), rinfo);
    p.take(rtp(1, 11), rinfo);
    expect(legs.map((l) => [l.id, l.codec.name, l.format.audio_format])).toEqual([['rtp-00000001', 'PCMU', 'mulaw'], ['rtp-00000002', 'PCMU', 'mulaw']]);
    expect(stats).toMatchObject({ legs: 2, refusedLegs: 2 });
    expect(warned()).toBe(2); // each refusal; rtpSource's warnRefused says it once
    p.stop();
    guesser.stop();
  });

  it('RTCP counted on its leg, malformed datagrams and DTMF before a leg counted, each told to onDatagram', () => {
    const { p, stats, legs, seen, guesser } = path();
    p.take(Buffer.from('short'), rinfo);
    p.take(rtp(7, 1, 101, 4), rinfo); // telephone-event before any audio
    p.take(rtp(7, 2, 13, 1), rinfo); // comfort noise before any audio
    p.take(rtp(7, 3), rinfo);
    const sr = Buffer.alloc(28);
    sr[0] = 0x80;
    sr[1] = 200;
    sr.writeUInt32BE(7, 4);
    p.take(sr, rinfo);
    expect(stats).toMatchObject({ malformed: 1, nonAudioBeforeLeg: 2, rtcp: 1, legs: 1 });
    expect(legs[0]!.stats.rtcp).toBe(1);
    expect(seen).toEqual([undefined, 7, 7, 7, 7]);
    p.stop();
    guesser.stop();
  });

  it('stopping ends every leg\'s audio', async () => {
    const { p, legs, guesser } = path();
    p.take(rtp(9, 1), rinfo);
    let completed = false;
    legs[0]!.audio$.subscribe({ complete: () => (completed = true) });
    p.stop();
    guesser.stop();
    expect(completed).toBe(true);
  });
});
