// The per-packet work of the telephony receivers, before and after this branch's levers, A/B
// in one process (alternating rounds, median of each): reading an RTP header, handling one
// Twilio media message, and an in-order jitter-buffer push. CPU time per operation.
//
//   npx tsx bench/telephonyPath.ts [--before <git rev>] [--rounds 7]
//
// "Before" is the code as it was: rtp.js's RtpPacket, the media path as it read (JSON.parse,
// paths split per message, Buffer.from and a copy), and the jitter buffer read from git at
// --before. "After": the header read in place, the media message matched by one anchored
// pattern and decoded once, the jitter buffer's in-order fast path.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import * as rtp from 'rtp.js/packets';
import { JitterBuffer } from '../src/telephony/JitterBuffer.js';
import { readField, TWILIO_PRESET } from '../src/telephony/mediaStreamPresets.js';
import { parseRtpHeader } from '../src/telephony/rtpHeader.js';
import { matchMediaMessage } from '../src/telephony/mediaMessage.js';
import { fmt, machine, median } from './benchInternals.js';

const { values } = parseArgs({ options: { before: { type: 'string' }, rounds: { type: 'string' } } });
const ROUNDS = Number(values.rounds ?? 7);
const BEFORE = values.before ?? '0c4a2b0';

function cpuNsPerOp(ops: number, run: () => void): number {
  const u0 = process.cpuUsage();
  run();
  const u = process.cpuUsage(u0);
  return ((u.user + u.system) * 1000) / ops;
}

function ab(name: string, ops: number, before: () => void, after: () => void): void {
  before();
  after();
  const b: number[] = [];
  const a: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    b.push(cpuNsPerOp(ops, before));
    a.push(cpuNsPerOp(ops, after));
  }
  console.log(`${name}: before ${fmt(median(b) / 1000, 2)} µs, after ${fmt(median(a) / 1000, 2)} µs per op, after/before ${fmt(median(a) / median(b), 2)} (medians of ${ROUNDS} alternating rounds of ${ops})`);
}

console.log(`bench/telephonyPath: before = ${BEFORE}, ${machine()}`);

// ---- RTP: one datagram's header and payload copy -------------------------------------------
const N = 200_000;
const datagrams = Array.from({ length: 64 }, (_, i) => {
  const b = Buffer.alloc(172);
  b[0] = 0x80;
  b.writeUInt16BE(i, 2);
  b.writeUInt32BE(i * 160, 4);
  b.writeUInt32BE(0x5000_0000 + i, 8);
  return b;
});
let sink = 0;
ab(
  'RTP datagram: header + payload copy',
  N,
  () => {
    for (let i = 0; i < N; i++) {
      const msg = datagrams[i & 63]!;
      const view = new DataView(msg.buffer, msg.byteOffset, msg.byteLength);
      if (rtp.isRtcp(view) || !rtp.isRtp(view)) continue;
      const packet = new rtp.RtpPacket(view);
      sink += packet.getSsrc() + packet.getPayloadType() + packet.getSequenceNumber() + packet.getTimestamp();
      const p = packet.getPayload();
      sink += new Uint8Array(p.buffer.slice(p.byteOffset, p.byteOffset + p.byteLength)).byteLength;
    }
  },
  () => {
    for (let i = 0; i < N; i++) {
      const msg = datagrams[i & 63]!;
      const view = new DataView(msg.buffer, msg.byteOffset, msg.byteLength);
      if (rtp.isRtcp(view) || !rtp.isRtp(view)) continue;
      const h = parseRtpHeader(msg)!;
      sink += h.ssrc + h.payloadType + h.sequenceNumber + h.timestamp;
      sink += new Uint8Array(msg.subarray(h.payloadStart, h.payloadEnd)).byteLength;
    }
  },
);

// ---- Media stream: one Twilio media message ----------------------------------------------------
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
function readFieldBefore(message: unknown, paths: readonly string[]): unknown {
  for (const path of paths) {
    let v: unknown = message;
    for (const key of path.split('.')) {
      if (v === null || typeof v !== 'object') {
        v = undefined;
        break;
      }
      v = (v as Record<string, unknown>)[key];
    }
    if (v !== undefined && v !== null) return v;
  }
  return undefined;
}
const payload160 = Buffer.alloc(160, 0x55).toString('base64');
const messages = Array.from({ length: 64 }, (_, k) => Buffer.from(`{"event":"media","sequenceNumber":"${k + 2}","media":{"track":"inbound","chunk":"${k + 1}","timestamp":"${k * 20}","payload":"${payload160}"},"streamSid":"MZ${'0'.repeat(32)}"}`));
const M = 100_000;
const handle = (read: typeof readField, decode: (p: string) => Uint8Array) => () => {
  for (let i = 0; i < M; i++) {
    const msg = JSON.parse(messages[i & 63]!.toString('utf8')) as unknown;
    if (read(msg, TWILIO_PRESET.event) !== 'media') continue;
    sink += String(read(msg, TWILIO_PRESET.track)).length;
    const p = read(msg, TWILIO_PRESET.payload) as string;
    if (p.length % 4 !== 0 || !BASE64.test(p)) continue;
    sink += decode(p).byteLength + Number(read(msg, TWILIO_PRESET.chunk)) + Number(read(msg, TWILIO_PRESET.timestamp));
  }
};
let scratch = Buffer.allocUnsafe(1024);
const decodeOnce = (p: string): Uint8Array => {
  const need = (p.length / 4) * 3;
  if (need > scratch.length) scratch = Buffer.allocUnsafe(need * 2);
  const n = scratch.write(p, 'base64');
  const bytes = new Uint8Array(n);
  bytes.set(scratch.subarray(0, n));
  return bytes;
};
ab(
  'media message: parse, fields, base64 payload',
  M,
  handle(readFieldBefore, (p) => new Uint8Array(Buffer.from(p, 'base64'))),
  () => {
    for (let i = 0; i < M; i++) {
      const raw = messages[i & 63]!.toString('utf8');
      const f = matchMediaMessage(raw)!;
      sink += f.track.length;
      if (f.payload.length % 4 !== 0) continue;
      sink += decodeOnce(f.payload).byteLength + Number(f.chunk) + Number(f.timestamp);
    }
  },
);

// ---- Jitter buffer: in-order pushes --------------------------------------------------------------
const dir = mkdtempSync(join(tmpdir(), 'jb-before-'));
for (const f of ['jitterBuffer.ts', 'rtpSequence.ts']) writeFileSync(join(dir, f), execFileSync('git', ['show', `${BEFORE}:src/telephony/${f}`]));
const { JitterBuffer: JitterBufferBefore } = (await import(join(dir, 'jitterBuffer.ts'))) as { JitterBuffer: typeof JitterBuffer };
const payload = new Uint8Array(160);
const J = 200_000;
const pushes = (Ctor: typeof JitterBuffer) => () => {
  const jb = new Ctor();
  for (let s = 0; s < J; s++) sink += jb.push({ seq: s, timestamp: s * 160, payload, samples: 160 }, s * 20).length;
};
ab('jitter buffer: in-order push', J, pushes(JitterBufferBefore), pushes(JitterBuffer));
if (sink === 42) console.log('');
