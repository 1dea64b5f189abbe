// What the service tests of `rtp` share: a spawned `svc-stream rtp` and waiting on its output,
// free UDP ports, and RTP calls from plain sockets with known packet counts.
import dgram from 'node:dgram';
import { readFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { spawnBin } from './spawned.js';

/** A running `svc-stream ARGS`, its output, and a way to wait for a line. */
export interface Spawned {
  readonly child: ChildProcess;
  out(): string;
  err(): string;
  /** Resolves with the first match of `pattern` in stderr (or stdout), rejects if the process exits first. */
  seen(pattern: RegExp, of?: 'err' | 'out'): Promise<RegExpExecArray>;
  /** Resolves once `test()` holds (checked on each output chunk), rejects if the process exits first. */
  until(test: () => boolean): Promise<void>;
  /** Lines of stdout (NDJSON with --json) of `type`. */
  count(type: string): number;
  /** Resolves with the exit code once every byte of output is read. */
  exit(): Promise<number | null>;
}

export function spawnCli(args: readonly string[], env: NodeJS.ProcessEnv = {}): Spawned {
  const run = spawnBin(args, env);
  const exited = new Promise<number | null>((resolve) => run.child.once('close', (code) => resolve(code)));
  const seen = (pattern: RegExp, of: 'err' | 'out' = 'err'): Promise<RegExpExecArray> =>
    new Promise((resolve, reject) => {
      const text = of === 'err' ? run.err : run.out;
      const stream = of === 'err' ? run.child.stderr! : run.child.stdout!;
      const check = (): void => {
        const m = pattern.exec(text());
        if (m) {
          stream.off('data', check);
          return resolve(m);
        }
        if (run.child.exitCode !== null || run.child.signalCode !== null) reject(new Error(`exited before ${pattern}: ${run.err()}`));
      };
      stream.on('data', check);
      run.child.once('exit', check);
      check();
    });
  const until = (test: () => boolean): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        if (test()) {
          run.child.stdout!.off('data', check);
          run.child.stderr!.off('data', check);
          return resolve();
        }
        if (run.child.exitCode !== null || run.child.signalCode !== null) reject(new Error(`exited first: ${run.err()}`));
      };
      run.child.stdout!.on('data', check);
      run.child.stderr!.on('data', check);
      run.child.once('exit', check);
      check();
    });
  const count = (type: string): number => run.out().split('\n').filter((l) => l.startsWith(`{"type":"${type}"`)).length;
  return { child: run.child, out: run.out, err: run.err, seen, until, count, exit: () => exited };
}

/** `count` consecutive UDP ports free on 127.0.0.1 now (the first of them). */
export async function freeUdpPorts(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const first = 20_000 + Math.floor(Math.random() * 30_000);
    const sockets: dgram.Socket[] = [];
    try {
      for (let i = 0; i < count; i++) {
        const s = dgram.createSocket('udp4');
        sockets.push(s);
        await new Promise<void>((resolve, reject) => {
          s.once('error', reject);
          s.bind(first + i, '127.0.0.1', () => resolve());
        });
      }
      return first;
    } catch {
      /* taken: try another */
    } finally {
      for (const s of sockets) s.close();
    }
  }
  throw new Error('no free UDP ports');
}

/**
 * One RTP call from its own socket: `packets` PCMU packets of 20 ms (silence-free noise), or
 * packets until `packets()` says stop, sent every `intervalMs`, from sequence number `seq0`;
 * resolves with how many were sent.
 */
export async function rtpCall(port: number, ssrc: number, packets: number | (() => boolean), intervalMs = 20, seq0 = 1000): Promise<number> {
  const socket = dgram.createSocket('udp4');
  const payload = Buffer.alloc(160);
  for (let i = 0; i < 160; i++) payload[i] = (i * 37) & 0x7f;
  let sent = 0;
  try {
    const start = Date.now();
    // A count, or a test that says when to stop (checked before each packet).
    for (let k = 0; typeof packets === 'number' ? k < packets : !packets(); k++) {
      const b = Buffer.alloc(12 + 160);
      b[0] = 0x80;
      b[1] = 0;
      b.writeUInt16BE((seq0 + k) & 0xffff, 2);
      b.writeUInt32BE((k * 160) >>> 0, 4);
      b.writeUInt32BE(ssrc >>> 0, 8);
      payload.copy(b, 12);
      await new Promise<void>((r) => socket.send(b, port, '127.0.0.1', () => r()));
      sent++;
      // Paced from the call's start, so a late timer does not stretch the call.
      const due = start + (k + 1) * intervalMs - Date.now();
      if (due > 0) await new Promise((r) => setTimeout(r, due));
    }
  } finally {
    socket.close();
  }
  return sent;
}

/** The kernel's count of UDP datagrams it could not deliver (a full receive buffer, no memory), machine-wide (Linux /proc/net/snmp `InErrors`). */
export function udpReceiveBufferErrors(): number {
  const lines = readFileSync('/proc/net/snmp', 'utf8').split('\n').filter((l) => l.startsWith('Udp: '));
  const [head, values] = [lines[0]!.split(/\s+/), lines[1]!.split(/\s+/)];
  return Number(values[head.indexOf('InErrors')]);
}
