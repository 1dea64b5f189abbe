import { readFileSync } from 'node:fs';
import { firstValueFrom, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { createSipServerStats, sipServer, type SipCall, type SipCallMetadata } from '../../../src/telephony/index.js';
import { collectBytes, sendRtpCall } from '../helpers.js';
import { answeredPort, SipPeer } from './sipPeer.js';

const METADATA = readFileSync(new URL('../fixtures/sip/rs-metadata.xml', import.meta.url), 'utf8');
const cleanup: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanup.splice(0)) c();
});

/** RFC 7866's recording INVITE body: two sendonly streams labelled 1 and 2, and the metadata. */
function siprecBody(metadata = METADATA): string {
  const sdp = ['v=0', 'o=SRC 2890844526 2890844526 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', 'm=audio 49170 RTP/AVP 0', 'a=rtpmap:0 PCMU/8000', 'a=label:1', 'a=sendonly', 'm=audio 49172 RTP/AVP 0', 'a=rtpmap:0 PCMU/8000', 'a=label:2', 'a=sendonly', ''].join('\r\n');
  return ['--foobar', 'Content-Type: application/sdp', '', sdp, '--foobar', 'Content-Type: application/rs-metadata+xml', 'Content-Disposition: recording-session', '', metadata, '--foobar--', ''].join('\r\n');
}

async function server(mode: 'stereo' | 'separate') {
  const stats = createSipServerStats();
  const calls: SipCall[] = [];
  let port = 0;
  await new Promise<void>((resolve, reject) => {
    const sub: Subscription = sipServer({ port: 0, rtpPorts: { min: 43000, max: 43099 }, stats, siprec: { mode }, onListening: (a) => ((port = a.port), resolve()) }).subscribe({ next: (c) => calls.push(c), error: reject });
    cleanup.push(() => sub.unsubscribe());
  });
  const peer = await SipPeer.open(port);
  cleanup.push(() => peer.close());
  return { stats, calls, peer, port };
}

describe('sipServer: SIPREC (RFC 7866)', () => {
  it('a recording INVITE becomes one two-channel call, a channel per participant, answered recvonly with plain SDP; an UPDATE is followed', async () => {
    const { calls, peer, stats } = await server('stereo');
    peer.send(peer.build('INVITE', { callId: 'rec1', cseq: 101, body: siprecBody(), contentType: 'multipart/mixed;boundary=foobar', extra: ['Require: siprec'] }));
    const ok = await peer.response(200);
    expect(ok.headers.get('content-type')).toBe('application/sdp');
    const answer = ok.body.toString();
    expect(answer.match(/a=recvonly/g)).toHaveLength(2);
    expect(answer).toContain('a=label:1');
    expect(answer).toContain('a=label:2');
    const toTag = ok.to.params['tag']!;
    peer.send(peer.build('ACK', { callId: 'rec1', cseq: 101, toTag, branch: 'z9hG4bK-rec1-ack' }));
    expect(calls).toHaveLength(1);
    const c = calls[0]!;
    expect(c.format).toEqual({ audio_format: 'mulaw', sample_rate: 8000, num_channels: 2 });
    expect(c.metadata).toMatchObject({
      kind: 'siprec',
      recording: { sessionId: 'hVpd7YQgRW2nD22h7q60JQ==', groupId: '7+OTCyoxTmqmqyA/1weDAg==' },
      participants: [
        { name: 'Alice', aor: 'sip:alice@atlanta.com', channel: 1, label: '1' },
        { name: 'Bob', aor: 'sip:bob@biloxi.com', channel: 2, label: '2' },
      ],
    });
    expect(c.title).toBe('Alice <sip:alice@atlanta.com> & Bob <sip:bob@biloxi.com>');
    const updates: SipCallMetadata[] = [];
    c.metadata$.subscribe((m) => updates.push(m));
    const bytes = collectBytes(c.audio$);
    // Alice from the start of the sample, Bob from 5 s in: two different signals, one per channel.
    await Promise.all([sendRtpCall(answeredPort(ok, 0), 0xa11ce, 1, 2, 0), sendRtpCall(answeredPort(ok, 1), 0xb0b, 1, 2, 40_000)]);
    peer.send(peer.build('UPDATE', { callId: 'rec1', cseq: 102, toTag, body: METADATA.replace('>Bob<', '>Robert<'), contentType: 'application/rs-metadata+xml' }));
    await peer.response(200, 'UPDATE');
    peer.send(peer.build('BYE', { callId: 'rec1', cseq: 103, toTag }));
    await peer.response(200, 'BYE');
    const audio = await bytes;
    expect(audio.length).toBe(16_000);
    const sample = readFileSync(new URL('../../../samples/call-8k.mulaw', import.meta.url));
    const left = audio.filter((_, i) => i % 2 === 0);
    const right = audio.filter((_, i) => i % 2 === 1);
    expect(Buffer.from(left).equals(sample.subarray(0, 8000))).toBe(true);
    expect(Buffer.from(right).equals(sample.subarray(40_000, 48_000))).toBe(true);
    expect(updates.map((m) => m.participants.map((p) => p.name))).toEqual([
      ['Alice', 'Bob'],
      ['Alice', 'Robert'],
    ]);
    expect(await firstValueFrom(c.ended$)).toBe('bye');
    expect(stats).toMatchObject({ answered: 1, updates: 1, running: 0 });
  });

  it('separate: a call per participant stream, each with its participant', async () => {
    const { calls, peer } = await server('separate');
    peer.send(peer.build('INVITE', { callId: 'rec2', cseq: 1, body: siprecBody(), contentType: 'multipart/mixed; boundary="foobar"' }));
    await peer.response(200);
    expect(calls.map((c) => [c.id.slice(-2), c.format.num_channels, c.metadata.participants.filter((p) => p.channel !== undefined).map((p) => p.name)])).toEqual([
      ['-1', 1, ['Alice', 'Bob']],
      ['-2', 1, ['Alice', 'Bob']],
    ]);
  });

  it('refuses metadata with a DTD (400) and a body it does not read (415)', async () => {
    const { peer, stats } = await server('stereo');
    peer.send(peer.build('INVITE', { callId: 'x1', cseq: 1, body: siprecBody('<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><recording>&x;</recording>'), contentType: 'multipart/mixed;boundary=foobar' }));
    await peer.response(400);
    peer.send(peer.build('INVITE', { callId: 'x2', cseq: 1, body: 'hello', contentType: 'text/plain' }));
    expect((await peer.response(415)).headers.get('accept')).toBe('application/sdp, multipart/mixed');
    expect(stats).toMatchObject({ notAcceptable: 2, running: 0 });
  });
});
