import { ServiceLifecycle } from '../../../src/service/lifecycle.js';
import { firstValueFrom, lastValueFrom, toArray, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { createSipServerStats, sipServer, type SipCall, type SipRefusal, type SipServerOptions } from '../../../src/telephony/index.js';
import { digestAuthorization } from '../../../src/telephony/sip/digestAuth.js';
import { watchLoop } from '../../faults/loopStall.js';
import { collectBytes, sendRtpCall } from '../helpers.js';
import { answeredPort, ManualClock, SipPeer, sdpOffer } from './sipPeer.js';
import { TORTURE } from '../fixtures/sip/rfc4475.js';

const cleanup: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanup.splice(0)) c();
});

let rtpBase = 41000;
/** A server on free ports; resolves once listening, with its calls as they come. */
async function start(options: SipServerOptions = {}) {
  const stats = options.stats ?? createSipServerStats();
  const calls: SipCall[] = [];
  const refusals: SipRefusal[] = [];
  const waiting: Array<(c: SipCall) => void> = [];
  let port = 0;
  const min = (rtpBase += 40);
  const listening = new Promise<void>((resolve, reject) => {
    const sub: Subscription = sipServer({
      port: 0,
      rtpPorts: { min, max: min + 39 },
      stats,
      onRefused: (r) => refusals.push(r),
      onWarning: () => undefined,
      ...options,
      onListening: (a) => {
        port = a.port;
        resolve();
      },
    }).subscribe({
      next: (c) => {
        calls.push(c);
        waiting.shift()?.(c);
      },
      error: reject,
    });
    cleanup.push(() => sub.unsubscribe());
  });
  await listening;
  const peer = async (transport: 'udp' | 'tcp' = 'udp') => {
    const p = await SipPeer.open(port, transport);
    cleanup.push(() => p.close());
    return p;
  };
  const nextCall = (): Promise<SipCall> => (calls.length > waiting.length ? Promise.resolve(calls[calls.length - 1]!) : new Promise((r) => waiting.push(r)));
  return { port, stats, calls, refusals, peer, nextCall, rtpMin: min };
}

/** INVITE, the 200, the ACK: an answered call. */
async function call(peer: SipPeer, callId: string, offer = sdpOffer()) {
  peer.send(peer.build('INVITE', { callId, cseq: 1, body: offer }));
  const ok = await peer.response(200);
  const toTag = ok.to.params['tag']!;
  peer.send(peer.build('ACK', { callId, cseq: 1, toTag, branch: `z9hG4bK-ack-${callId}` }));
  return { ok, toTag, rtpPort: answeredPort(ok) };
}

describe('sipServer: a call', () => {
  it('answers an INVITE (100, 200 with a recvonly PCMU answer), takes its RTP, and ends on BYE with the audio whole', async () => {
    const s = await start();
    const peer = await s.peer();
    const callP = s.nextCall();
    peer.send(peer.build('INVITE', { callId: 'c1', cseq: 1, body: sdpOffer() }));
    await peer.response(100);
    const ok = await peer.response(200);
    const answer = ok.body.toString();
    expect(ok.headers.get('content-type')).toBe('application/sdp');
    expect(answer).toMatch(/^m=audio \d+ RTP\/AVP 0 101$/m);
    expect(answer).toContain('a=rtpmap:0 PCMU/8000');
    expect(answer).toContain('a=rtpmap:101 telephone-event/8000');
    expect(answer).toContain('a=recvonly');
    expect(ok.headers.get('contact')).toMatch(/^<sip:svc-stream@127\.0\.0\.1:\d+>$/);
    const toTag = ok.to.params['tag']!;
    peer.send(peer.build('ACK', { callId: 'c1', cseq: 1, toTag, branch: 'z9hG4bK-ack1' }));
    const c = await callP;
    expect(c).toMatchObject({ callId: 'c1', format: { audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 }, codec: { name: 'PCMU', payloadType: 0 } });
    expect(c.metadata).toMatchObject({ kind: 'sip', from: { displayName: 'Test Caller' }, participants: [{ id: 'caller', name: 'Test Caller', channel: 1 }], held: false });
    expect(c.title).toBe(`Test Caller <sip:caller@127.0.0.1:${peer.port}> → sip:analytics@127.0.0.1:${s.port}`);
    const bytes = collectBytes(c.audio$);
    await sendRtpCall(answeredPort(ok), 0x1234, 1, 2);
    peer.send(peer.build('BYE', { callId: 'c1', cseq: 2, toTag }));
    await peer.response(200, 'BYE');
    expect((await bytes).length).toBe(8000);
    expect(await firstValueFrom(c.ended$)).toBe('bye');
    expect(c.stats.streams['audio']).toMatchObject({ received: 50, lost: 0, datagrams: 50 });
    expect(s.stats).toMatchObject({ invites: 1, answered: 1, byes: 1, running: 0, malformed: 0 });
  });

  it('picks from our preference what the offer has; telephone-event answered, its packets dropped; no codec we take is 488', async () => {
    const s = await start({ codecs: ['PCMA', 'PCMU', 'L16'] });
    const peer = await s.peer();
    const { ok } = await call(peer, 'c2');
    expect(ok.body.toString()).toMatch(/^m=audio \d+ RTP\/AVP 8 101$/m);
    peer.send(peer.build('INVITE', { callId: 'c3', cseq: 1, body: sdpOffer({ payloads: '18', rtpmaps: ['a=rtpmap:18 G729/8000'] }) }));
    const refused = await peer.response(488);
    expect(refused.headers.get('warning')).toMatch(/^305 /);
    peer.send(peer.build('INVITE', { callId: 'c4', cseq: 1, body: sdpOffer({ payloads: '96', rtpmaps: ['a=rtpmap:96 L16/16000'] }) }));
    expect((await peer.response(200)).body.toString()).toContain('a=rtpmap:96 L16/16000');
    expect(s.stats.notAcceptable).toBe(1);
  });

  it('answers OPTIONS, 481 for a BYE or CANCEL of nothing, 405 for a method it does not take, 420 for an unknown Require', async () => {
    const s = await start();
    const peer = await s.peer();
    peer.send(peer.build('OPTIONS', { callId: 'o1', cseq: 1 }));
    expect((await peer.response(200, 'OPTIONS')).headers.get('allow')).toBe('INVITE, ACK, BYE, CANCEL, OPTIONS, UPDATE');
    peer.send(peer.build('BYE', { callId: 'nobody', cseq: 2, toTag: 'x' }));
    await peer.response(481, 'BYE');
    peer.send(peer.build('CANCEL', { callId: 'nobody2', cseq: 1 }));
    await peer.response(481, 'CANCEL');
    peer.send(peer.build('MESSAGE', { callId: 'm1', cseq: 1 }));
    await peer.response(405, 'MESSAGE');
    peer.send(peer.build('INVITE', { callId: 'r1', cseq: 1, body: sdpOffer(), extra: ['Require: 100rel'] }));
    expect((await peer.response(420)).headers.get('unsupported')).toBe('100rel');
    expect(s.stats).toMatchObject({ unknownDialog: 2, otherRefused: 2, options: 1, running: 0 });
    expect(s.refusals.map((r) => r.reason)).toEqual(['unknown_dialog', 'unknown_dialog', 'method_not_allowed', 'bad_extension']);
  });

  it('over TCP: the answer and our BYE on the caller’s connection (hangUp)', async () => {
    const s = await start();
    const peer = await s.peer('tcp');
    const callP = s.nextCall();
    const { toTag } = await call(peer, 't1');
    const c = await callP;
    expect(c.remote.transport).toBe('tcp');
    c.hangUp();
    const bye = await peer.request('BYE');
    expect(bye.to.params['tag']).toBe(peer.tag);
    expect(bye.from.params['tag']).toBe(toTag);
    peer.answer(bye, 200);
    expect(await firstValueFrom(c.ended$)).toBe('hangup');
    expect(s.stats).toMatchObject({ localHangups: 1, running: 0, tcpConnections: 1 });
  });
});

describe('sipServer: limits, sources, credentials', () => {
  it('past maxCalls answers 503 with Retry-After (or 486), counted and told once', async () => {
    const warnings: string[] = [];
    const s = await start({ maxCalls: 1, retryAfterS: 7, onWarning: (w) => warnings.push(w.code) });
    const peer = await s.peer();
    await call(peer, 'l1');
    peer.send(peer.build('INVITE', { callId: 'l2', cseq: 1, body: sdpOffer() }));
    expect((await peer.response(503)).headers.get('retry-after')).toBe('7');
    peer.send(peer.build('INVITE', { callId: 'l3', cseq: 1, body: sdpOffer() }));
    await peer.response(503);
    expect(s.stats).toMatchObject({ busy: 2, answered: 1, running: 1 });
    expect(warnings).toEqual(['max_calls']);
    const s486 = await start({ maxCalls: 1, whenFull: '486' });
    const p2 = await s486.peer();
    await call(p2, 'b1');
    p2.send(p2.build('INVITE', { callId: 'b2', cseq: 1, body: sdpOffer() }));
    await p2.response(486);
  });

  it('drops, unanswered, every message from a source outside allowedSources', async () => {
    const s = await start({ allowedSources: ['192.0.2.10'] });
    const peer = await s.peer();
    peer.send(peer.build('OPTIONS', { callId: 'a1', cseq: 1 }));
    peer.send(peer.build('INVITE', { callId: 'a2', cseq: 1, body: sdpOffer() }));
    await expect(peer.response(200, 'OPTIONS', 400)).rejects.toThrow(/no matching/);
    expect(s.stats).toMatchObject({ messages: 2, disallowedSource: 2, invites: 0 });
    expect(peer.received).toEqual([]);
  });

  it('asks for digest credentials (SHA-256 and MD5 offered) and takes a right answer to either', async () => {
    const s = await start({ auth: { realm: 'calls', users: { pbx: 's3cret' } } });
    const peer = await s.peer();
    peer.send(peer.build('INVITE', { callId: 'd1', cseq: 1, body: sdpOffer() }));
    const challenge = await peer.response(401);
    const offered = challenge.headers.all('www-authenticate');
    expect(offered.map((c) => /algorithm=([\w-]+)/.exec(c)![1])).toEqual(['SHA-256', 'MD5']);
    peer.send(peer.build('ACK', { callId: 'd1', cseq: 1, toTag: challenge.to.params['tag']!, branch: 'z9hG4bK-d1-INVITE-1' }));
    for (const [i, c] of offered.entries()) {
      const uri = `sip:analytics@127.0.0.1:${s.port}`;
      peer.send(peer.build('INVITE', { callId: `d${i + 2}`, cseq: 2, body: sdpOffer(), extra: [`Authorization: ${digestAuthorization(c, 'INVITE', uri, 'pbx', 's3cret')}`] }));
      await peer.response(200);
    }
    peer.send(peer.build('INVITE', { callId: 'd9', cseq: 2, body: sdpOffer(), extra: [`Authorization: ${digestAuthorization(offered[0]!, 'INVITE', 'sip:x@y', 'pbx', 'wrong')}`] }));
    await peer.response(401);
    expect(s.stats).toMatchObject({ unauthorized: 2, answered: 2 });
    expect(s.refusals.map((r) => r.reason)).toEqual(['no_credentials', 'wrong_password']);
  });
});

describe('sipServer: RFC 3261 timers on virtual time', () => {
  it('a CANCEL before the answer: 200 to it, 487 to the INVITE, retransmitted until the ACK that never comes, then forgotten', async () => {
    const clock = new ManualClock();
    const s = await start({ scheduler: clock, ringMs: 5000 });
    const peer = await s.peer();
    peer.send(peer.build('INVITE', { callId: 'x1', cseq: 1, body: sdpOffer() }));
    await peer.response(100);
    await peer.response(180);
    expect(s.stats.running).toBe(1);
    peer.send(peer.build('CANCEL', { callId: 'x1', cseq: 1, branch: 'z9hG4bK-x1-INVITE-1' }));
    await peer.response(200, 'CANCEL');
    await peer.response(487);
    expect(s.stats).toMatchObject({ cancelled: 1, running: 0, answered: 0 });
    // Timer G: the 487 again at T1, 2·T1, 4·T1, then every T2, until Timer H at 64·T1.
    clock.advance(500);
    await peer.response(487);
    clock.advance(1000);
    await peer.response(487);
    clock.advance(30_000);
    expect(s.stats.ackTimeouts).toBe(0);
    clock.advance(1_000);
    // Timer H for the INVITE's, Timer J for the CANCEL's: both gone at 64·T1.
    expect(s.stats).toMatchObject({ ackTimeouts: 1, transactions: 0 });
    expect(s.calls).toEqual([]);
  });

  it('an ACK that never comes: our 200 retransmitted, then BYE at 64·T1 and the call ends ack_timeout', async () => {
    const clock = new ManualClock();
    const s = await start({ scheduler: clock, rtpTimeoutMs: 60_000 });
    const peer = await s.peer();
    const callP = s.nextCall();
    peer.send(peer.build('INVITE', { callId: 'n1', cseq: 1, body: sdpOffer() }));
    await peer.response(200);
    const c = await callP;
    clock.advance(500);
    await peer.response(200);
    clock.advance(1000);
    await peer.response(200);
    clock.advance(31_000);
    const bye = await peer.request('BYE');
    peer.answer(bye, 200);
    expect(await firstValueFrom(c.ended$)).toBe('ack_timeout');
    expect(await lastValueFrom(c.audio$.pipe(toArray()))).toEqual([]);
    expect(s.stats).toMatchObject({ ackTimeouts: 1, running: 0 });
  });

  it('no RTP for rtpTimeoutMs ends the call with our BYE, retried until answered; a BYE for an unknown dialog then is 481', async () => {
    const clock = new ManualClock();
    const s = await start({ scheduler: clock, rtpTimeoutMs: 10_000 });
    const peer = await s.peer();
    const callP = s.nextCall();
    const { toTag } = await call(peer, 'r1');
    const c = await callP;
    clock.advance(9_999);
    expect(s.stats.rtpTimeouts).toBe(0);
    clock.advance(1);
    const bye = await peer.request('BYE');
    clock.advance(500); // Timer E: the BYE again
    const again = await peer.request('BYE');
    expect(again.via.params['branch']).toBe(bye.via.params['branch']);
    peer.answer(again, 200);
    expect(await firstValueFrom(c.ended$)).toBe('rtp_timeout');
    peer.send(peer.build('BYE', { callId: 'r1', cseq: 2, toTag }));
    await peer.response(481, 'BYE');
    clock.advance(64_000);
    expect(s.stats).toMatchObject({ rtpTimeouts: 1, byeTimeouts: 0, unknownDialog: 1, running: 0, transactions: 0 });
  });

  it('a hold (re-INVITE inactive) pauses the RTP timeout; unhold starts it again', async () => {
    const clock = new ManualClock();
    const s = await start({ scheduler: clock, rtpTimeoutMs: 10_000 });
    const peer = await s.peer();
    const callP = s.nextCall();
    const { toTag } = await call(peer, 'h1');
    const c = await callP;
    const metadata: boolean[] = [];
    c.metadata$.subscribe((m) => metadata.push(m.held));
    peer.send(peer.build('INVITE', { callId: 'h1', cseq: 2, toTag, body: sdpOffer({ direction: 'inactive' }) }));
    const held = await peer.response(200);
    expect(held.body.toString()).toContain('a=inactive');
    clock.advance(60_000);
    expect(s.stats.rtpTimeouts).toBe(0);
    peer.send(peer.build('INVITE', { callId: 'h1', cseq: 3, toTag, body: sdpOffer() }));
    expect((await peer.response(200)).body.toString()).toContain('a=recvonly');
    expect(metadata).toEqual([false, true, false]);
    clock.advance(10_000);
    await peer.request('BYE');
    expect(await firstValueFrom(c.ended$)).toBe('rtp_timeout');
  });
});

describe('sipServer: hostile input', () => {
  it('counts an oversized message, garbage and a torture message by reason, answers none, and keeps answering', async () => {
    const s = await start({ maxMessageBytes: 4096 });
    const peer = await s.peer();
    peer.send(peer.build('INVITE', { callId: 'big', cseq: 1, body: `${sdpOffer()}a=x:${'y'.repeat(5000)}\r\n` }));
    peer.send(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x05, 1, 2, 3, 4, 5]));
    peer.send('INVITE  sip:user@example.com  SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1\r\n\r\n');
    peer.send(peer.build('OPTIONS', { callId: 'after', cseq: 1 }));
    await peer.response(200, 'OPTIONS');
    expect(s.stats).toMatchObject({ messages: 4, malformed: 3, tooLarge: 1, badHeader: 1, badStartLine: 1 });
    expect(s.refusals.map((r) => r.reason)).toEqual(['too_large', 'bad_header', 'bad_start_line']);
    expect(peer.received).toEqual([]);
  });

  it('every RFC 4475 torture message sent to it: the invalid ones counted by reason and unanswered, the valid ones answered, nothing held', async () => {
    // No codec the torture INVITEs offer (PCMU, G.723): they are answered 488, no call is set up.
    const s = await start({ codecs: ['L16'] });
    const peer = await s.peer();
    for (const t of TORTURE) peer.send(t.bytes);
    peer.send(peer.build('OPTIONS', { callId: 'after-torture', cseq: 1 }));
    await peer.next((m) => m.callId === 'after-torture');
    const invalid = TORTURE.filter((t) => t.expect !== 'valid');
    expect(s.stats.malformed).toBe(invalid.length);
    expect(s.refusals.filter((r) => r.status === undefined).map((r) => r.reason)).toEqual(invalid.map((t) => t.expect));
    const requests = TORTURE.filter((t) => t.expect === 'valid' && !t.bytes.toString('latin1').startsWith('SIP/2.0'));
    expect(s.stats.messages).toBe(TORTURE.length + 1);
    expect(s.stats.strayResponses).toBe(TORTURE.length - invalid.length - requests.length);
    expect(s.stats).toMatchObject({ answered: 0, running: 0 });
  });

  it('a flood of 1,000 INVITEs at 1,000 a second: typed refusals and counts, no stall, and every transaction gone after 64·T1', async () => {
    const clock = new ManualClock();
    const s = await start({ scheduler: clock, maxCalls: 5 });
    const peer = await s.peer();
    const loop = watchLoop();
    const heapBefore = process.memoryUsage().heapUsed;
    for (let i = 0; i < 1000; i++) {
      peer.send(peer.build('INVITE', { callId: `f${i}`, cseq: 1, body: sdpOffer() }));
      if (i % 10 === 9) await new Promise((r) => setTimeout(r, 10));
    }
    await peer.next((m) => m.kind === 'response' && m.callId === 'f999' && m.status >= 200, 5000);
    const stalls = loop.stop();
    expect(s.stats).toMatchObject({ invites: 1000, answered: 5, busy: 995, running: 5 });
    expect(s.stats.transactions).toBe(1000);
    // On the library's account (the main thread on a CPU through the stall); the rest is the machine's load.
    expect(stalls.busiestMs, `longest gap ${stalls.longestMs.toFixed(0)} ms`).toBeLessThan(100);
    // The 503s wait for ACKs that never come (Timer G, H), the 5 answered calls for RTP: then the server holds nothing of the flood.
    for (let t = 0; t < 40; t++) clock.advance(1000);
    expect(s.stats).toMatchObject({ transactions: 0, ackTimeouts: 995, rtpTimeouts: 5, running: 0 });
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(64 * 1024 * 1024);
  });
});

describe('sipServer: media', () => {
  it('G.722 when the offer has nothing else we take, decoded by ffmpeg to 16 kHz', async () => {
    const { ffmpegRtp } = await import('../helpers.js');
    const s = await start();
    const peer = await s.peer();
    const callP = s.nextCall();
    const { rtpPort } = await call(peer, 'g1', sdpOffer({ payloads: '9 101', rtpmaps: ['a=rtpmap:9 G722/8000', 'a=rtpmap:101 telephone-event/8000'] }));
    const c = await callP;
    expect(c.codec.name).toBe('G722');
    expect(c.format).toEqual({ audio_format: 's16le', sample_rate: 16000, num_channels: 1 });
    const bytes = collectBytes(c.audio$, 20_000);
    await ffmpegRtp(rtpPort, 1, ['-acodec', 'g722', '-ar', '16000', '-payload_type', '9']);
    c.hangUp();
    // 1 s at 16 kHz, 16-bit: ffmpeg's decoder may hold back a few samples at the end.
    expect(Math.abs((await bytes).length - 32_000)).toBeLessThan(400);
  }, 30_000);

  it('an SSRC change mid-call joins the stream: one audio, no gap, counted', async () => {
    const s = await start();
    const peer = await s.peer();
    const callP = s.nextCall();
    const { toTag, rtpPort } = await call(peer, 's1');
    const c = await callP;
    const bytes = collectBytes(c.audio$);
    await sendRtpCall(rtpPort, 0x1111, 0.5, 2);
    await sendRtpCall(rtpPort, 0x2222, 0.5, 2, 4000);
    peer.send(peer.build('BYE', { callId: 's1', cseq: 2, toTag }));
    await peer.response(200, 'BYE');
    expect((await bytes).length).toBe(8000);
    expect(c.stats.streams['audio']).toMatchObject({ ssrcChanges: 1, received: 50, lost: 0, resyncs: 0 });
  });
});

describe('sipServer: a service life cycle', () => {
  it('on a ServiceLifecycle: ready once listening; draining answers new INVITEs (and OPTIONS) 503 with Retry-After while calls go on; forced, BYE and the audio fails shutdown; then stopped', async () => {
    const lifecycle = new ServiceLifecycle({ drainTimeoutMs: 60_000 });
    const s = await start({ lifecycle });
    expect(lifecycle.readiness).toEqual({ ready: true, reason: undefined });
    const server = lifecycle.attached[0]!;
    const peer = await s.peer();
    const callP = s.nextCall();
    await call(peer, 'lc1');
    const c = await callP;
    expect(server.inFlight).toBe(1);
    lifecycle.drain('signal');
    expect(lifecycle.readiness.ready).toBe(false);
    peer.send(peer.build('INVITE', { callId: 'lc2', cseq: 1, body: sdpOffer() }));
    expect((await peer.response(503)).headers.get('retry-after')).toBe('5');
    peer.send(peer.build('OPTIONS', { callId: 'lc3', cseq: 1 }));
    await peer.response(503, 'OPTIONS');
    const audio = collectBytes(c.audio$).catch((e: unknown) => e);
    lifecycle.force('signal');
    const bye = await peer.request('BYE');
    peer.answer(bye, 200);
    expect(await audio).toMatchObject({ code: 'shutdown' });
    expect(await firstValueFrom(c.ended$)).toBe('shutdown');
    expect(server.inFlight).toBe(0);
    expect((await lifecycle.whenStopped()).status).toBe('stopped');
    expect(s.stats).toMatchObject({ drainRefused: 2, localHangups: 1, running: 0 });
    const metrics = Object.fromEntries(server.metrics!().map((m) => [m.name, m.samples()]));
    expect(metrics['svc_stream_sip_calls_answered_total']).toEqual([{ value: 1 }]);
    expect(metrics['svc_stream_sip_invites_refused_total']).toContainEqual({ labels: { reason: 'draining' }, value: 2 });
    expect(metrics['svc_stream_sip_calls_ended_total']).toContainEqual({ labels: { reason: 'local' }, value: 1 });
    expect(metrics['svc_stream_sip_calls']).toEqual([{ value: 0 }]);
  });
});
