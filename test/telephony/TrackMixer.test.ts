import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { TrackMixer } from '../../src/telephony/TrackMixer.js';

const STEREO_MULAW = { audio_format: 'mulaw', sample_rate: 8000, num_channels: 2 } as const;

describe('TrackMixer: two tracks of one call into one two-channel stream', () => {
  it('interleaves sample by sample, pads the track that stays behind, and ends the call when every track added has ended', () => {
    const mixer = new TrackMixer(STEREO_MULAW, 1, undefined);
    const inbound = new Subject<Uint8Array>();
    const outbound = new Subject<Uint8Array>();
    mixer.add(0, inbound);
    mixer.add(1, outbound);
    const out: number[] = [];
    let completed = false;
    mixer.audio$.subscribe({ next: (c) => out.push(...c), complete: () => (completed = true) });
    inbound.next(new Uint8Array([1, 2]));
    outbound.next(new Uint8Array([11]));
    expect(out).toEqual([1, 11]);
    inbound.complete();
    expect(completed).toBe(false);
    // 1 ms of skew at 8 kHz is 8 samples: the finished inbound track is padded with μ-law silence as outbound runs on.
    outbound.next(new Uint8Array(12).fill(12));
    outbound.complete();
    expect(completed).toBe(true);
    expect(out.slice(0, 4)).toEqual([1, 11, 2, 12]);
    expect(out.length).toBe(2 * 13);
    expect(out.filter((_, i) => i % 2 === 0).slice(2)).toEqual(new Array(11).fill(0xff));
  });

  it('a call whose tracks never began ends with nothing', () => {
    const mixer = new TrackMixer(STEREO_MULAW, 500, undefined);
    let completed = false;
    const out: Uint8Array[] = [];
    mixer.audio$.subscribe({ next: (c) => out.push(c), complete: () => (completed = true) });
    mixer.end();
    expect(completed).toBe(true);
    expect(out).toEqual([]);
  });
});
