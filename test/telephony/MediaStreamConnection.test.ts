// One provider connection as the server reads it: the start, media and stop messages in each
// preset's names, malformed ones counted, tracks and interleaving. Real sockets on loopback.
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { audioMetaOf } from '../../src/audio/meta.js';
import { createMediaStreamServerStats } from 'svc-stream/telephony';
import { collectBytes } from './helpers.js';
import { cleanUp, messages, MULAW, replay, serve } from './mediaStreams.js';

afterEach(cleanUp);

describe('a media-stream connection: its messages, tracks and calls', () => {
  it.each(['twilio', 'telnyx'] as const)('takes a %s session: one call, mulaw 8 kHz, every byte in order', async (provider) => {
    const stats = createMediaStreamServerStats();
    const { url, next } = await serve({ preset: provider, stats });
    await replay(url, messages(provider, 2000));
    const call = await next();
    const bytes = await collectBytes(call.audio$, 5000);
    expect(call.preset).toBe(provider);
    expect(call.callId).toBe(provider === 'twilio' ? 'CA42' : 'v3:call-42');
    expect(call.track).toBe('inbound');
    expect(call.customParameters).toEqual({ who: 'test' });
    expect(call.format).toEqual({ audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 });
    expect(audioMetaOf(call.audio$)?.format).toEqual(call.format);
    expect(Buffer.from(bytes).equals(MULAW.subarray(0, 16000))).toBe(true);
    expect(stats).toMatchObject({ connections: 1, malformed: 0, calls: 1 });
  });

  it("media messages in the providers' exact layout (read without JSON.parse) give the same audio and the same malformed counts", async () => {
    const stats = createMediaStreamServerStats();
    const malformed: string[] = [];
    const { url, next } = await serve({ preset: 'twilio', tracks: ['inbound'], stats, onMalformed: (r) => malformed.push(r) });
    const sid = 'MZ0123456789abcdef';
    // Twilio's own key order: event, sequenceNumber, media{track, chunk, timestamp, payload}, streamSid.
    const exact = (k: number, track = 'inbound', payload = MULAW.subarray(k * 160, (k + 1) * 160).toString('base64')) =>
      `{"event":"media","sequenceNumber":"${k + 2}","media":{"track":"${track}","chunk":"${k + 1}","timestamp":"${k * 20}","payload":"${payload}"},"streamSid":"${sid}"}`;
    const frames = messages('twilio', 2000);
    const media = frames.slice(2, -1);
    // Even chunks in the exact layout, odd ones as JSON.stringify orders them; then bad ones in the exact layout.
    const mixed = [...frames.slice(0, 2), ...media.map((m, k) => (k % 2 === 0 ? exact(k) : m)), exact(100, 'sideways'), exact(101, 'inbound', 'abc'), exact(102, 'outbound'), frames.at(-1)!];
    await replay(url, mixed);
    const call = await next();
    const bytes = await collectBytes(call.audio$, 5000);
    expect(Buffer.from(bytes).equals(MULAW.subarray(0, 16000))).toBe(true);
    expect(malformed).toEqual(['unknown track "sideways"', 'media without a base64 payload']);
    expect(stats).toMatchObject({ malformed: 2, ignored: 2, calls: 1 });
  });

  it('detects the preset from the start message by default', async () => {
    const { url, next } = await serve({});
    await replay(url, messages('telnyx', 200));
    expect((await next()).preset).toBe('telnyx');
  });

  it('counts and reports malformed messages without dropping the connection, and undoes duplicates and reordering', async () => {
    const reasons: string[] = [];
    const stats = createMediaStreamServerStats();
    const { url, next } = await serve({ preset: 'twilio', stats, onMalformed: (r) => reasons.push(r) });
    const frames = messages('twilio', 1000);
    const media = frames.filter((f) => f.includes('"media"'));
    const start = frames.findIndex((f) => f.includes('"start"'));
    // Before start: media; then garbage of every kind; a duplicate chunk; two chunks swapped.
    const swapped = [...frames];
    const i = swapped.indexOf(media[10]!);
    [swapped[i], swapped[i + 1]] = [swapped[i + 1]!, swapped[i]!];
    swapped.splice(i + 5, 0, media[12]!);
    swapped.splice(start, 0, media[0]!);
    swapped.splice(start + 2, 0, '{not json', '{"streamSid":"x"}', JSON.stringify({ event: 'media', streamSid: 'MZ', media: { track: 'inbound', payload: '%%%' } }), JSON.stringify({ event: 'mark', mark: { name: 'm' } }));
    const ws = new WebSocket(url);
    await new Promise((r) => ws.once('open', r));
    ws.send(Buffer.from([1, 2, 3]));
    for (const f of swapped) ws.send(f);
    await new Promise<void>((r) => ws.send('', () => r()));
    ws.close();
    const call = await next();
    const bytes = await collectBytes(call.audio$, 5000);
    expect(Buffer.from(bytes).equals(MULAW.subarray(0, 8000))).toBe(true);
    expect(call.stats.inbound).toMatchObject({ duplicated: 1, reordered: 1, lost: 0 });
    // binary, media before start, not JSON, no event, bad payload, and the empty frame
    expect(stats.malformed).toBe(6);
    expect(reasons).toEqual(['binary frame', 'media before start', 'not JSON', 'no event field', 'media without a base64 payload', 'not JSON']);
    expect(reasons).toContain('media before start');
    expect(stats.ignored).toBe(2); // connected, mark
  });

  it('emits one call per track, or both tracks interleaved as two channels', async () => {
    const separate = await serve({ preset: 'twilio' });
    await replay(separate.url, messages('twilio', 400, ['inbound', 'outbound']));
    const [a, b] = [await separate.next(), await separate.next()];
    expect([a.track, b.track].sort()).toEqual(['inbound', 'outbound']);
    const out = await collectBytes((a.track === 'outbound' ? a : b).audio$, 5000);
    expect(Buffer.from(out).equals(MULAW.subarray(80_000, 80_000 + 3200))).toBe(true);

    const mixed = await serve({ preset: 'twilio', trackMode: 'interleaved' });
    await replay(mixed.url, messages('twilio', 400, ['inbound', 'outbound']));
    const call = await mixed.next();
    expect(call.track).toBe('both');
    expect(call.format.num_channels).toBe(2);
    const both = await collectBytes(call.audio$, 5000);
    expect(both.byteLength).toBe(2 * 3200);
    for (const k of [0, 1, 1000, 3199]) {
      expect(both[2 * k]).toBe(MULAW[k]);
      expect(both[2 * k + 1]).toBe(MULAW[80_000 + k]);
    }
  });

  it('pads a silent track in interleaved mode so the call does not stall', async () => {
    const { url, next } = await serve({ preset: 'telnyx', trackMode: 'interleaved', maxSkewMs: 100 });
    await replay(url, messages('telnyx', 400, ['inbound']));
    const bytes = await collectBytes((await next()).audio$, 5000);
    expect(bytes.byteLength).toBe(2 * 3200);
    expect(bytes[1]).toBe(0xff);
  });
});
