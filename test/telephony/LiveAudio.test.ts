import { map, VirtualTimeScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIVE_FRAME_MS, LiveAudio } from '../../src/telephony/LiveAudio.js';
import { PlayoutStream } from '../../src/telephony/PlayoutStream.js';
import { TimerWheel } from '../../src/internal/timerWheel.js';
import { FlowControl } from '../../src/audio/FlowControl.js';
import { AudioFeed, type FeedReader } from '../../src/session/AudioFeed.js';
import { accountOf, countersOf, createSessionStats } from '../../src/session/stats.js';
import { resolvePayloadType } from 'svc-stream/telephony';

const MULAW = { audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 } as const;
const PCMU = resolvePayloadType(0)!;
const pkt = (seq: number) => ({ seq, timestamp: seq * 160, payload: new Uint8Array(160).fill(seq), samples: 160 });

describe('LiveAudio', () => {
  it('keeps what is pushed before the first subscriber, then goes live; a later subscriber gets live chunks only', () => {
    const live = new LiveAudio(MULAW);
    live.push(new Uint8Array([1]));
    const first: number[] = [];
    live.audio$.subscribe((c) => first.push(...c));
    live.push(new Uint8Array([2]));
    const second: number[] = [];
    live.audio$.subscribe((c) => second.push(...c));
    live.push(new Uint8Array([3]));
    live.end();
    expect(first).toEqual([1, 2, 3]);
    expect(second).toEqual([3]);
  });
});

describe('frame grouping (frameMs) on virtual time', () => {
  it('joins 20 ms chunks into 100 ms frames, in order; a partial frame goes within frameMs of its first chunk; the end flushes the last partial frame', () => {
    const scheduler = new VirtualTimeScheduler(undefined, 100_000);
    const live = new LiveAudio(MULAW, { frameMs: 100, scheduler });
    const out: Array<[at: number, bytes: number, first: number]> = [];
    let completedAt: number | undefined;
    live.audio$.subscribe({ next: (c) => out.push([scheduler.now(), c.byteLength, c[0]!]), complete: () => (completedAt = scheduler.now()) });
    // Seven chunks every 20 ms, then the caller pauses; two more at 500 and 520, and the call ends at 530.
    for (let k = 0; k < 7; k++) scheduler.schedule(() => live.push(new Uint8Array(160).fill(k + 1)), k * 20);
    scheduler.schedule(() => live.push(new Uint8Array(160).fill(8)), 500);
    scheduler.schedule(() => live.push(new Uint8Array(160).fill(9)), 520);
    scheduler.schedule(() => live.end(), 530);
    scheduler.flush();
    // 5 chunks (800 B) at 80 ms; the two begun at 100 ms go at 190 (within 100 ms of the first);
    // the last two go with the end of the call, not later.
    expect(out).toEqual([
      [80, 800, 1],
      [190, 320, 6],
      [530, 320, 8],
    ]);
    expect(completedAt).toBe(530);
    expect(live.bytes).toBe(9 * 160);
    // Nothing is left on the wheel once the call has ended.
    expect(TimerWheel.of(scheduler).size).toBe(0);
  });

  it('a packet a little late costs no frame of its own: the rest of its window goes with the next window, then frames are windows again', () => {
    const scheduler = new VirtualTimeScheduler(undefined, 100_000);
    const live = new LiveAudio(MULAW, { frameMs: 100, scheduler });
    const out: Array<[at: number, bytes: number, first: number]> = [];
    live.audio$.subscribe((c) => out.push([scheduler.now(), c.byteLength, c[0]!]));
    // Fifteen chunks every 20 ms, but the fifth comes at 95 ms, after its frame was due (90 ms).
    for (let k = 0; k < 15; k++) scheduler.schedule(() => live.push(new Uint8Array(160).fill(k + 1)), k === 4 ? 95 : k * 20);
    scheduler.schedule(() => live.end(), 400);
    scheduler.flush();
    expect(out).toEqual([
      [90, 640, 1],
      [180, 960, 5],
      [280, 800, 11],
    ]);
    expect(out.reduce((n, [, b]) => n + b, 0)).toBe(15 * 160);
  });

  it('a packet lost, reordered or late lands in its frame\'s place: frame window k holds exactly the 20 ms slots 5k+1 … 5k+5', () => {
    const scheduler = new VirtualTimeScheduler(undefined, 100_000);
    const stream = new PlayoutStream(PCMU, { scheduler, idleTimeoutMs: 400, playoutDelayMs: 40, grouping: { frameMs: 100, scheduler } });
    const frames: Uint8Array[] = [];
    stream.live.audio$.subscribe((c) => frames.push(c));
    // Packet 4 never comes; 7 and 8 arrive swapped; 12 arrives after its slot was filled (late).
    const arrivals: Array<[at: number, seq: number]> = [];
    for (let seq = 1; seq <= 15; seq++) {
      if (seq === 4 || seq === 12) continue;
      const at = seq === 7 ? 150 : seq === 8 ? 140 : (seq - 1) * 20;
      arrivals.push([at, seq]);
    }
    arrivals.push([300, 12]);
    for (const [at, seq] of arrivals) scheduler.schedule(() => stream.push(pkt(seq)), at);
    scheduler.flush();
    // The first window's frame went early, at 90 ms, before the jitter buffer gave up on packet 4
    // (at 120 ms); the rest of that window (the fill for 4, then 5) went with the next window, in
    // one frame, not as a write of its own; from there every frame is a window again.
    expect(frames.map((f) => f.byteLength)).toEqual([480, 320 + 800, 800]);
    const all = Buffer.concat(frames);
    for (let seq = 1; seq <= 15; seq++) {
      const slot = all.subarray((seq - 1) * 160, seq * 160);
      const want = seq === 4 || seq === 12 ? 0xff : seq;
      expect([...slot].every((b) => b === want), `slot ${seq}`).toBe(true);
    }
    expect(stream.stats).toMatchObject({ lost: 2, late: 1, reordered: 1, fillBytes: 320 });
    expect(stream.ended).toBe(true);
  });

  it('frames are msToBytes of frameMs: whole sample frames (a 30 ms frame of s16le stereo 16 kHz is 1920 bytes); a container is not grouped; the default is 100 ms', () => {
    expect(DEFAULT_LIVE_FRAME_MS).toBe(100);
    const scheduler = new VirtualTimeScheduler(undefined, 100_000);
    const sizes = (format: ConstructorParameters<typeof LiveAudio>[0], frameMs: number, chunk: number, n: number): number[] => {
      const live = new LiveAudio(format, { frameMs, scheduler });
      const out: number[] = [];
      live.audio$.subscribe((c) => out.push(c.byteLength));
      for (let i = 0; i < n; i++) live.push(new Uint8Array(chunk));
      live.end();
      return out;
    };
    expect(sizes({ audio_format: 's16le', sample_rate: 16000, num_channels: 2 }, 30, 640, 6)).toEqual([1920, 1920]);
    expect(sizes({ audio_format: 'ogg' }, 100, 300, 3)).toEqual([300, 300, 300]);
    scheduler.flush();
  });
});


/** A session's feed over `audio$`, its reader noting the log's end (and the time) each time it is told of bytes. */
function feedOf(audio$: LiveAudio['audio$'], now: () => number, onAppended?: (feed: AudioFeed) => void) {
  const stats = createSessionStats();
  const told: Array<[at: number, end: number]> = [];
  let completed = false;
  const feed: AudioFeed = new AudioFeed(audio$, { keepSent: true }, countersOf(stats), { failed: (err) => { throw err; } });
  const reader: FeedReader = {
    sendsAtOnce: () => false,
    sendNow: () => undefined,
    appended: () => {
      told.push([now(), feed.log.end]);
      onAppended?.(feed);
    },
    completed: () => (completed = true),
    flushedPosition: 0,
  };
  feed.attach(reader, new FlowControl());
  return { feed, stats, told, done: () => completed };
}

describe('a live leg written straight into its session\'s log', () => {
  /** Seven chunks every 20 ms (one frame and two chunks before the session starts at 130 ms), two more at 500 and 520, the end at 530. */
  function run(consume: (live: LiveAudio, scheduler: VirtualTimeScheduler) => void): LiveAudio {
    const scheduler = new VirtualTimeScheduler(undefined, 100_000);
    const live = new LiveAudio(MULAW, { frameMs: 100, scheduler });
    for (let k = 0; k < 7; k++) scheduler.schedule(() => live.push(new Uint8Array(160).fill(k + 1)), k * 20);
    scheduler.schedule(() => consume(live, scheduler), 130);
    scheduler.schedule(() => live.push(new Uint8Array(160).fill(8)), 500);
    scheduler.schedule(() => live.push(new Uint8Array(160).fill(9)), 520);
    scheduler.schedule(() => live.end(), 530);
    scheduler.flush();
    return live;
  }

  it('the feed is told of the same frames at the same times as a subscriber gets them, the kept audio first and the last partial frame at the end; every byte in place and counted read', () => {
    const frames: Array<[at: number, bytes: number]> = [];
    const all: number[] = [];
    run((live, s) => live.audio$.subscribe((c) => (frames.push([s.now(), c.byteLength]), all.push(...c))));
    let fed!: ReturnType<typeof feedOf>;
    const live = run((live, s) => {
      fed = feedOf(live.audio$, () => s.now());
      fed.feed.start();
    });
    // Told per frame (the log's end at each), never per packet; the frames' ends are the subscriber's.
    let end = 0;
    expect(fed.told).toEqual(frames.map(([at, n]) => [at, (end += n)]));
    expect(fed.told.length).toBe(3);
    expect(fed.done()).toBe(true);
    expect(Array.from(fed.feed.log.slice(0, fed.feed.log.end))).toEqual(all);
    // In the feed's own block (one per 16 frames), not a segment per frame: no second log.
    expect(fed.feed.log.segments).toBe(1);
    expect(fed.stats.bytesRead).toBe(9 * 160);
    expect(live.bytes).toBe(9 * 160);
    fed.feed.stop();
    fed.feed.finish();
    // Nothing was sent: all of it is unsent, and dropped at the end.
    expect(accountOf(fed.stats)).toEqual({ read: 1440, sent: 0, unsent: 1440 });
    expect(fed.stats.bytesDropped).toBe(1440);
  });

  it('a subscriber beside the feed gets every chunk, as a copy of its own (the feed reuses its blocks); when the feed lets go mid-frame, the rest still comes', () => {
    const scheduler = new VirtualTimeScheduler(undefined, 100_000);
    const live = new LiveAudio(MULAW, { frameMs: 100, scheduler });
    // The reader lets go of each frame at once: the log's blocks go back for reuse.
    const fed = feedOf(live.audio$, () => scheduler.now(), (feed) => feed.log.trim(feed.log.end));
    fed.feed.start();
    const got: Uint8Array[] = [];
    let completed = false;
    live.audio$.subscribe({ next: (c) => got.push(c), complete: () => (completed = true) });
    const chunk = (k: number): Uint8Array => Uint8Array.from({ length: 160 }, (_, i) => (k * 7 + i) & 0xff);
    // 200 chunks (32 kB: the feed's blocks of 12.8 kB go round); the feed stops at 2,050 ms, mid-frame.
    for (let k = 0; k < 200; k++) scheduler.schedule(() => live.push(chunk(k)), k * 20);
    scheduler.schedule(() => fed.feed.stop(), 2050);
    scheduler.schedule(() => live.end(), 4000);
    scheduler.flush();
    expect(completed).toBe(true);
    const bytes = Buffer.concat(got);
    expect(bytes.byteLength).toBe(200 * 160);
    for (let k = 0; k < 200; k++) expect(Array.from(bytes.subarray(k * 160, (k + 1) * 160)), `chunk ${k}`).toEqual(Array.from(chunk(k)));
    // The feed read the frames committed before it stopped (20 frames of 100 ms), and no more.
    expect(fed.stats.bytesRead).toBe(20 * 800);
    expect(fed.told.length).toBe(20);
  });

  it('an observable piped from the leg, or a leg already subscribed, is read by subscribing: every operator sees the chunks', () => {
    const scheduler = new VirtualTimeScheduler(undefined, 100_000);
    const piped = new LiveAudio(MULAW, { frameMs: 100, scheduler });
    let seen = 0;
    const fed = feedOf(piped.audio$.pipe(map((c) => ((seen += c.byteLength), c))), () => scheduler.now());
    fed.feed.start();
    const taken = new LiveAudio(MULAW, { frameMs: 100, scheduler });
    const user: number[] = [];
    taken.audio$.subscribe((c) => user.push(c.byteLength));
    const fed2 = feedOf(taken.audio$, () => scheduler.now());
    fed2.feed.start();
    for (let k = 0; k < 10; k++) {
      piped.push(new Uint8Array(160));
      taken.push(new Uint8Array(160));
    }
    piped.end();
    taken.end();
    expect(seen).toBe(1600);
    expect(fed.stats.bytesRead).toBe(1600);
    expect(user).toEqual([800, 800]);
    expect(fed2.stats.bytesRead).toBe(1600);
  });
});
