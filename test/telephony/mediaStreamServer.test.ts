import { readFileSync } from 'node:fs';
import type { Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { audioMetaOf } from '../../src/audio/meta.js';
import { createMediaStreamServerStats, mediaStreamServer, type MediaStreamCall, type MediaStreamServerOptions } from 'svc-stream/telephony';
import { collectBytes, SAMPLE_MULAW } from './helpers.js';

const MULAW = readFileSync(SAMPLE_MULAW);
const subs: Subscription[] = [];
afterEach(() => subs.splice(0).forEach((s) => s.unsubscribe()));

async function serve(options: MediaStreamServerOptions): Promise<{ url: string; calls: MediaStreamCall[]; next: () => Promise<MediaStreamCall> }> {
  const calls: MediaStreamCall[] = [];
  const waiters: Array<(c: MediaStreamCall) => void> = [];
  let resolvePort!: (p: number) => void;
  const port = new Promise<number>((r) => (resolvePort = r));
  subs.push(
    mediaStreamServer({ ...options, onListening: (a) => resolvePort(a.port) }).subscribe((c) => {
      calls.push(c);
      waiters.shift()?.(c);
    }),
  );
  let taken = 0;
  const next = (): Promise<MediaStreamCall> => {
    const i = taken++;
    return calls[i] ? Promise.resolve(calls[i]!) : new Promise((r) => waiters.push(r));
  };
  return { url: `ws://127.0.0.1:${await port}`, calls, next };
}

/** A recorded-format session: 20 ms media messages, every number a string, as providers send them. */
function messages(provider: 'twilio' | 'telnyx', ms: number, tracks: Array<'inbound' | 'outbound'> = ['inbound']): string[] {
  const sid = provider === 'twilio' ? 'MZ0123456789abcdef' : '32DE0DEA-53CB-4B21-89A4-9E1819C043BC';
  const out: object[] = [];
  let seq = 1;
  if (provider === 'twilio') {
    out.push({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    out.push({ event: 'start', sequenceNumber: String(seq++), streamSid: sid, start: { streamSid: sid, accountSid: 'AC1', callSid: 'CA42', tracks, customParameters: { who: 'test' }, mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } } });
  } else {
    out.push({ event: 'connected', version: '1.0.0' });
    out.push({ event: 'start', sequence_number: String(seq++), stream_id: sid, start: { call_control_id: 'v3:call-42', custom_parameters: { who: 'test' }, media_format: { encoding: 'PCMU', sample_rate: 8000, channels: 1 } } });
  }
  for (let k = 0; k < ms / 20; k++) {
    for (const track of tracks) {
      const payload = MULAW.subarray(k * 160 + (track === 'outbound' ? 80_000 : 0), (k + 1) * 160 + (track === 'outbound' ? 80_000 : 0)).toString('base64');
      const media = { track, chunk: String(k + 1), timestamp: String(k * 20), payload };
      out.push(provider === 'twilio' ? { event: 'media', sequenceNumber: String(seq++), streamSid: sid, media } : { event: 'media', sequence_number: String(seq++), stream_id: sid, media });
    }
  }
  out.push(provider === 'twilio' ? { event: 'stop', sequenceNumber: String(seq++), streamSid: sid, stop: { accountSid: 'AC1', callSid: 'CA42' } } : { event: 'stop', sequence_number: String(seq++), stream_id: sid, stop: {} });
  return out.map((m) => JSON.stringify(m));
}

async function replay(url: string, frames: readonly string[]): Promise<void> {
  const ws = new WebSocket(url);
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  await Promise.all(frames.map((f) => new Promise<void>((r) => ws.send(f, () => r()))));
  ws.close();
}

describe('mediaStreamServer', () => {
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

  it('frameMs: 100 groups a call\'s 20 ms chunks into 800-byte frames, every byte in order', async () => {
    const { url, next } = await serve({ preset: 'twilio', frameMs: 100 });
    await replay(url, messages('twilio', 2000));
    const call = await next();
    const chunks: Uint8Array[] = [];
    const done = new Promise<void>((resolve, reject) => call.audio$.subscribe({ next: (c) => chunks.push(c), complete: resolve, error: reject }));
    await done;
    expect(Buffer.concat(chunks).equals(MULAW.subarray(0, 16000))).toBe(true);
    expect(chunks.length).toBe(20);
    expect(chunks.every((c) => c.byteLength === 800)).toBe(true);
    expect(() => mediaStreamServer({ frameMs: -1 })).toThrow(/frameMs/);
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
