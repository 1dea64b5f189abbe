// One follower against a real redis-server: paged from Redis while behind the tail, then served
// from it; a gap, a reset and an entry given twice; paused by its sink; closed by the end.
import { describe, expect, it } from 'vitest';
import { FollowedStream } from '../../src/fleet/FollowedStream.js';
import { resetReason, StreamFollower, type FollowSink } from '../../src/fleet/StreamFollower.js';
import { decodeEntry, type StreamEntry } from '../../src/fleet/streamEntries.js';
import { addEntry, recordingHost, redisForFile } from './followedStreamHost.js';

const redis = redisForFile();

type Note = Parameters<FollowSink['entry']>[2];
const sink = (pauseAt = Infinity): FollowSink & { got: Array<[number, Note]>; flushes: number } => {
  const s = {
    got: [] as Array<[number, Note]>,
    flushes: 0,
    entry: (e: StreamEntry, _cursor: string, note: Note) => (s.got.push([e.seq, note]), s.got.length < pauseAt),
    flush: () => void s.flushes++,
  };
  return s;
};
const entry = (kind: string, data = '{}'): StreamEntry => decodeEntry('1-1', ['e', 'E', 'k', kind, 'd', data])!;

describe('resetReason', () => {
  it('lost when the new run restarted a lost stream or its start is gone; replaced otherwise', () => {
    expect(resetReason(entry('start', '{"restarted":true}'))).toBe('lost');
    expect(resetReason(entry('event'))).toBe('lost');
    expect(resetReason(entry('start', '{"title":"x"}'))).toBe('replaced');
    expect(resetReason(entry('start', 'not json'))).toBe('replaced');
  });
});

describe('StreamFollower', () => {
  it('from the start: pages from Redis while behind the tail, then the tail; the end closes it', async () => {
    for (let seq = 1; seq <= 7; seq++) await addEntry(redis.cmd, 'sf:a', 10, seq, 'E', seq === 1 ? 'start' : seq === 7 ? 'end' : 'event');
    const host = recordingHost(redis.cmd, 3, 2);
    const stream = new FollowedStream(host, 'a', 'sf:a');
    await stream.init();
    const s = sink();
    const f = new StreamFollower(stream, s, undefined, undefined, undefined);
    stream.followers.add(f);
    f.start();
    await expect.poll(() => s.got.length).toBe(7);
    expect(s.got.map(([seq]) => seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(s.got.every(([, note]) => Object.keys(note).length === 0)).toBe(true);
    expect(host.stats.pages).toBeGreaterThan(0);
    expect(host.unfollowed).toEqual([f]);
  });

  it('a cursor in the same run: a gap is said, what it had is not given again; another run is a reset', async () => {
    for (const seq of [1, 2, 4]) await addEntry(redis.cmd, 'sf:b', 20, seq, 'E', seq === 1 ? 'start' : 'event');
    const host = recordingHost(redis.cmd, 10);
    const stream = new FollowedStream(host, 'b', 'sf:b');
    await stream.init();
    const s = sink();
    const f = new StreamFollower(stream, s, { epoch: 'E', seq: 2, streamId: '20-1', cursor: 'E:20-2' }, undefined, undefined);
    f.start();
    expect(s.got).toEqual([[4, { gap: { after: 'E:20-2', next: 'E:20-4', missed: 1 } }]]);
    stream.append([['30-1', ['e', 'F', 'k', 'start', 'd', '{}']]]);
    f.pump();
    expect(s.got[1]).toEqual([1, { reset: { reason: 'replaced', after: 'E:20-4' } }]);
    f.close();
  });

  it('a reset decided at join comes first; a sink that says no more pauses it until resume', async () => {
    for (let seq = 1; seq <= 3; seq++) await addEntry(redis.cmd, 'sf:c', 30, seq, 'E', seq === 1 ? 'start' : 'event');
    const host = recordingHost(redis.cmd, 10);
    const stream = new FollowedStream(host, 'c', 'sf:c');
    await stream.init();
    const s = sink(1);
    const f = new StreamFollower(stream, s, undefined, { reason: 'trimmed', after: 'E:1-1' }, { ms: 30, seq: 0 });
    f.pump(); // not started: a page's headers go first
    expect(s.got).toEqual([]);
    f.start();
    expect(s.got).toEqual([[1, { reset: { reason: 'trimmed', after: 'E:1-1' } }]]);
    f.resume();
    expect(s.got.map(([seq]) => seq)).toEqual([1, 2]);
    f.resume();
    expect(s.got.map(([seq]) => seq)).toEqual([1, 2, 3]);
    f.close();
    f.close();
    expect(host.unfollowed).toEqual([f]);
  });
});
