// The media-stream server: HTTP and the upgrade, bounded messages and connections, frames of
// frameMs. Real sockets on loopback, a plain `ws` client as the provider.
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { mediaStreamServer } from 'svc-stream/telephony';
import type { LimitWarning } from 'svc-stream';
import { collectBytes } from './helpers.js';
import { attempt, cleanUp, messages, MULAW, replay, serve, trackClient, twilioSession } from './mediaStreams.js';

afterEach(cleanUp);

describe('mediaStreamServer', () => {
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

  it('a plain HTTP request is answered 426, and a wrong path 404', async () => {
    const s = await serve({ path: '/media' });
    const status = await new Promise<number>((resolve, reject) => {
      request(`http://127.0.0.1:${s.port}/media`, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
        .on('error', reject)
        .end();
    });
    expect(status).toBe(426);
    expect((await attempt(`ws://127.0.0.1:${s.port}/elsewhere`)).status).toBe(404);
  });
});

describe('bounded messages and connections', () => {
  it('a message over maxPayload closes its connection with 1009 and ends its call; the server carries on', async () => {
    const s = await serve({ maxPayload: 4096 });
    const url = `ws://127.0.0.1:${s.port}/`;
    const frames = twilioSession('MZ-big', 100);
    const big = JSON.stringify({ event: 'media', streamSid: 'MZ-big', media: { track: 'inbound', chunk: '99', timestamp: '2000', payload: 'A'.repeat(8000) } });
    const r = await attempt(url, {}, [...frames.slice(0, 4), big]);
    expect(r.closeCode).toBe(1009);
    expect(s.stats.oversized).toBe(1);
    expect(s.calls).toHaveLength(1);
    // The call's audio completes with what came before the oversized message.
    expect((await collectBytes(s.calls[0]!.audio$)).byteLength).toBe(320);
    const next = await attempt(url, {}, twilioSession('MZ-next'));
    expect(next.closeCode).toBe(1005);
    expect(s.calls).toHaveLength(2);
  });

  it('the default maxPayload is 64 KiB: a 100 KiB message is refused on its header', async () => {
    const s = await serve({});
    const r = await attempt(`ws://127.0.0.1:${s.port}/`, {}, [Buffer.alloc(100 * 1024)]);
    expect(r.closeCode).toBe(1009);
    expect(s.stats.oversized).toBe(1);
  });

  it('past maxConnections a connection is closed at once with 1013 "too many connections"; a freed place admits again', async () => {
    const warnings: LimitWarning[] = [];
    const s = await serve({ maxConnections: 2, onWarning: (w) => warnings.push(w) });
    const url = `ws://127.0.0.1:${s.port}/`;
    const holders = [new WebSocket(url), new WebSocket(url)];
    for (const h of holders) trackClient(h);
    await Promise.all(holders.map((h) => new Promise((r) => h.once('open', r))));
    await new Promise((r) => setTimeout(r, 20));
    const third = await attempt(url);
    expect(third).toEqual({ status: 101, closeCode: 1013, reason: 'too many connections' });
    expect(await attempt(url)).toMatchObject({ closeCode: 1013 });
    expect(s.stats).toMatchObject({ connections: 2, overCapacity: 2 });
    // Said once, with the option that raises the bound; the second refusal is only counted.
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ code: 'max_connections', option: 'maxConnections', limit: 2 });
    expect(warnings[0]!.message).toMatch(/maxConnections/);
    holders[0]!.close();
    await new Promise((r) => holders[0]!.once('close', r));
    await new Promise((r) => setTimeout(r, 20));
    const again = await attempt(url, {}, twilioSession('MZ-again'));
    expect(again.closeCode).toBe(1005);
    expect(s.stats.connections).toBe(3);
  });
});
