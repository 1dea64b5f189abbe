import { describe, expect, it } from 'vitest';
import { JitterBuffer, type JitterPacket, type Playout } from 'svc-stream/telephony';
import { SequenceExtender } from '../../src/telephony/rtpSequence.js';

const pkt = (seq: number, ts = seq * 160, samples = 160): JitterPacket => ({ seq, timestamp: ts >>> 0, payload: new Uint8Array(samples).fill(seq & 0xff), samples });
const skip = (seq: number, ts: number): JitterPacket => ({ seq, timestamp: ts, payload: undefined, samples: 0 });

/** Playouts as short strings: `a5` audio of seq 5, `f320/2` a fill of 320 ticks for 2 lost. */
const show = (ps: Playout[]): string[] => ps.map((p) => (p.kind === 'audio' ? `a${p.seq}` : `f${p.samples}/${p.lost}`));

type Step = [op: 'push', packet: JitterPacket, now: number, out: string[]] | [op: 'expire', now: number, out: string[]] | [op: 'flush', out: string[]];

function run(steps: Step[], options = {}): JitterBuffer {
  const jb = new JitterBuffer({ playoutDelayMs: 60, ...options });
  steps.forEach((step, i) => {
    const out = step[0] === 'push' ? jb.push(step[1], step[2]) : step[0] === 'expire' ? jb.expire(step[1]) : jb.flush();
    expect(show(out), `step ${i}`).toEqual(step[step.length - 1]);
  });
  return jb;
}

describe('SequenceExtender', () => {
  it.each([
    ['in order', [1, 2, 3], [1, 2, 3]],
    ['across wraparound', [65534, 65535, 0, 1], [65534, 65535, 65536, 65537]],
    ['late packet from before the wrap', [65535, 0, 1, 65534, 2], [65535, 65536, 65537, 65534, 65538]],
    ['reordered across the wrap', [65535, 1, 0], [65535, 65537, 65536]],
    ['two wraps', [65535, 0, 20000, 40000, 60000, 0], [65535, 65536, 85536, 105536, 125536, 131072]],
  ])('%s', (_name, input, expected) => {
    const ext = new SequenceExtender();
    expect(input.map((s) => ext.extend(s))).toEqual(expected);
  });
});

describe('JitterBuffer', () => {
  it('releases in-order packets at once, with no delay', () => {
    const jb = run([
      ['push', pkt(10), 0, ['a10']],
      ['push', pkt(11), 20, ['a11']],
      ['push', pkt(12), 40, ['a12']],
    ]);
    expect(jb.deadline).toBeUndefined();
    expect(jb.stats).toMatchObject({ received: 3, reordered: 0, duplicated: 0, lost: 0, late: 0 });
  });

  it('reorders within the playout delay', () => {
    const jb = run([
      ['push', pkt(1), 0, ['a1']],
      ['push', pkt(3), 20, []],
      ['push', pkt(2), 30, ['a2', 'a3']],
      ['push', pkt(4), 40, ['a4']],
    ]);
    expect(jb.stats).toMatchObject({ reordered: 1, lost: 0 });
  });

  it('declares a gap lost at the deadline and fills it from the timestamps', () => {
    const jb = run([
      ['push', pkt(1), 0, ['a1']],
      ['push', pkt(4), 20, []],
      ['push', pkt(5), 40, []],
      ['expire', 79, []],
      ['expire', 80, ['f320/2', 'a4', 'a5']],
      ['push', pkt(6), 100, ['a6']],
    ]);
    expect(jb.stats).toMatchObject({ lost: 2, late: 0 });
  });

  it('counts a packet whose slot was filled as late, and a replayed one as duplicate', () => {
    const jb = run([
      ['push', pkt(1), 0, ['a1']],
      ['push', pkt(3), 20, []],
      ['expire', 80, ['f160/1', 'a3']],
      ['push', pkt(2), 90, []],
      ['push', pkt(3), 95, []],
      ['push', pkt(2), 96, []],
    ]);
    expect(jb.stats).toMatchObject({ received: 5, lost: 1, late: 1, duplicated: 2 });
  });

  it('drops a duplicate that is still held', () => {
    const jb = run([
      ['push', pkt(1), 0, ['a1']],
      ['push', pkt(3), 10, []],
      ['push', pkt(3), 12, []],
      ['push', pkt(2), 15, ['a2', 'a3']],
    ]);
    expect(jb.stats).toMatchObject({ duplicated: 1, reordered: 1 });
  });

  it('fills a timestamp gap between consecutive packets (suppressed silence, DTMF) without counting loss', () => {
    const jb = run([
      ['push', pkt(1, 160), 0, ['a1']],
      ['push', skip(2, 320), 20, []],
      ['push', skip(3, 320), 40, []],
      ['push', pkt(4, 1600), 60, ['f1280/0', 'a4']],
    ]);
    expect(jb.stats.lost).toBe(0);
  });

  it('falls back to lost × packet duration when the timestamp gap is unusable', () => {
    run(
      [
        ['push', pkt(1, 160), 0, ['a1']],
        ['push', pkt(3, 999_999), 10, []],
        ['expire', 70, ['f160/1', 'a3']],
      ],
      { maxFillSamples: 8000 },
    );
  });

  it('declares a gap lost when too many packets are held', () => {
    run(
      [
        ['push', pkt(1), 0, ['a1']],
        ['push', pkt(3), 1, []],
        ['push', pkt(4), 2, []],
        ['push', pkt(5), 3, ['f160/1', 'a3', 'a4', 'a5']],
      ],
      { maxHeldPackets: 2 },
    );
  });

  it('flushes everything held at the end', () => {
    run([
      ['push', pkt(1), 0, ['a1']],
      ['push', pkt(3), 5, []],
      ['push', pkt(6), 6, []],
      ['flush', ['f160/1', 'a3', 'f320/2', 'a6']],
    ]);
  });

  it('keeps the audio clock across sequence wraparound with loss and reordering', () => {
    const ext = new SequenceExtender();
    const p = (seq16: number, k: number) => ({ ...pkt(ext.extend(seq16)), timestamp: (k * 160) >>> 0 });
    const jb = new JitterBuffer();
    const order: Array<[number, number]> = [[65534, 0], [0, 2], [65535, 1], [2, 4], [3, 5]];
    const out: Playout[] = [];
    order.forEach(([s, k], i) => out.push(...jb.push(p(s, k), i * 20)));
    out.push(...jb.expire(1000));
    expect(show(out)).toEqual(['a65534', 'a65535', 'a65536', 'f160/1', 'a65538', 'a65539']);
    const ticks = out.reduce((n, x) => n + x.samples, 0);
    expect(ticks).toBe(6 * 160);
    expect(jb.stats).toMatchObject({ reordered: 1, lost: 1 });
  });

  it('starts over on a sequence jump beyond MAX_DROPOUT', () => {
    const jb = run([
      ['push', pkt(1), 0, ['a1']],
      ['push', pkt(2), 20, ['a2']],
      ['push', pkt(20000, 999), 40, ['a20000']],
      ['push', pkt(20001, 1159), 60, ['a20001']],
    ]);
    expect(jb.stats).toMatchObject({ resyncs: 1, lost: 0 });
  });

  it('says when the next deadline is', () => {
    const jb = new JitterBuffer({ playoutDelayMs: 60 });
    jb.push(pkt(1), 0);
    expect(jb.deadline).toBeUndefined();
    jb.push(pkt(3), 25);
    jb.push(pkt(4), 45);
    expect(jb.deadline).toBe(85);
    expect(jb.heldCount).toBe(2);
  });
});
