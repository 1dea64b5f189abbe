// Shared by the telephony tests: ffmpeg as a real RTP sender, a UDP proxy that misbehaves on
// purpose, and collecting a leg's audio.
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import { firstValueFrom, Observable, reduce, take, timeout } from 'rxjs';

export const SAMPLE_MULAW = new URL('../../samples/call-8k.mulaw', import.meta.url).pathname;
export const SAMPLE_WAV = new URL('../../samples/call.wav', import.meta.url).pathname;

/**
 * Send `seconds` of the sample call as RTP to 127.0.0.1:`port` with ffmpeg, faster than real
 * time (`-readrate`), 20 ms packets. `codecArgs` picks the codec and payload type.
 */
export function ffmpegRtp(port: number, seconds: number, codecArgs: readonly string[] = ['-acodec', 'pcm_mulaw', '-payload_type', '0'], options: { seq?: number; readrate?: number; pktSize?: number; input?: 'mulaw' | 'wav' } = {}): Promise<void> {
  const input = options.input === 'wav' ? ['-i', SAMPLE_WAV] : ['-f', 'mulaw', '-ar', '8000', '-ac', '1', '-i', SAMPLE_MULAW];
  const args = [
    '-hide_banner', '-loglevel', 'error', '-nostdin',
    '-readrate', String(options.readrate ?? 4),
    ...input,
    '-t', String(seconds),
    ...codecArgs,
    ...(options.seq !== undefined ? ['-seq', String(options.seq)] : []),
    '-f', 'rtp',
    `rtp://127.0.0.1:${port}?pkt_size=${options.pktSize ?? 172}`,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn('ffmpeg', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const t = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('exit', (code) => {
      clearTimeout(t);
      if (code === 0) resolve();
      else reject(new Error(`ffmpeg exited ${code}: ${err}`));
    });
  });
}

/** What the proxy does with the datagram at each index (0-based, in arrival order). */
export interface ProxyPlan {
  readonly drop?: readonly number[];
  readonly duplicate?: readonly number[];
  /** Forward the packet after the next one. */
  readonly swapWithNext?: readonly number[];
  /** Forward after this many ms. */
  readonly delay?: Readonly<Record<number, number>>;
  /** Rewrite the payload type (and keep seq/timestamp), e.g. to make a DTMF or CN packet. */
  readonly payloadType?: Readonly<Record<number, number>>;
  /** Extra datagrams to send before the packet at this index (e.g. RTCP). */
  readonly inject?: Readonly<Record<number, Buffer>>;
}

/** A UDP proxy on a free port forwarding to `target`, following `plan`. */
export async function udpProxy(target: number, plan: ProxyPlan): Promise<{ port: number; close(): void; forwarded: number }> {
  const socket = dgram.createSocket('udp4');
  const out = dgram.createSocket('udp4');
  const state = { port: 0, forwarded: 0, close: () => { socket.close(); out.close(); } };
  let index = 0;
  let swapped: Buffer | undefined;
  const send = (b: Buffer): void => {
    state.forwarded++;
    out.send(b, target, '127.0.0.1');
  };
  socket.on('message', (msg) => {
    const i = index++;
    const extra = plan.inject?.[i];
    if (extra) send(extra);
    let b = Buffer.from(msg);
    const pt = plan.payloadType?.[i];
    if (pt !== undefined) b[1] = (b[1]! & 0x80) | pt;
    if (plan.drop?.includes(i)) return;
    if (plan.swapWithNext?.includes(i)) {
      swapped = b;
      return;
    }
    const delay = plan.delay?.[i];
    if (delay !== undefined) setTimeout(() => send(b), delay);
    else send(b);
    if (plan.duplicate?.includes(i)) send(b);
    if (swapped) {
      const s = swapped;
      swapped = undefined;
      send(s);
    }
  });
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
  state.port = socket.address().port;
  return state;
}

/** All bytes of an audio stream, bounded in time. */
export function collectBytes(audio$: Observable<Uint8Array>, ms = 15_000): Promise<Uint8Array> {
  return firstValueFrom(
    audio$.pipe(
      reduce((acc: Uint8Array[], c: Uint8Array) => (acc.push(c), acc), []),
      timeout(ms),
      take(1),
    ),
  ).then((chunks) => new Uint8Array(Buffer.concat(chunks)));
}

/** Send `seconds` of the sample call as PCMU RTP from one socket (one SSRC), `intervalMs` per 20 ms packet. */
export async function sendRtpCall(port: number, ssrc: number, seconds: number, intervalMs = 5, offsetBytes = 0, firstSent?: () => void): Promise<void> {
  const mulaw = (await import('node:fs')).readFileSync(SAMPLE_MULAW);
  const socket = dgram.createSocket('udp4');
  const packets = Math.round((seconds * 1000) / 20);
  const seq0 = (ssrc * 7919) & 0xffff;
  const ts0 = (ssrc * 104_729) >>> 0;
  try {
    for (let k = 0; k < packets; k++) {
      const b = Buffer.alloc(12 + 160);
      b[0] = 0x80;
      b[1] = 0;
      b.writeUInt16BE((seq0 + k) & 0xffff, 2);
      b.writeUInt32BE((ts0 + k * 160) >>> 0, 4);
      b.writeUInt32BE(ssrc >>> 0, 8);
      mulaw.copy(b, 12, offsetBytes + k * 160, offsetBytes + (k + 1) * 160);
      await new Promise<void>((r) => socket.send(b, port, '127.0.0.1', () => r()));
      if (k === 0) firstSent?.();
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  } finally {
    socket.close();
  }
}
