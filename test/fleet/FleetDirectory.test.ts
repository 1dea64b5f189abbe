// The directory's rules, stepped entry by entry on virtual time: what each kind of note does
// to a session, a late note of an earlier run, a replaced run, stale and swept by the clock.
import { VirtualAction, VirtualTimeScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { FleetDirectory } from '../../src/fleet/FleetDirectory.js';

const note = (session: string, kind: string, epoch: string, data: object = {}): string[] => ['s', session, 'k', kind, 'e', epoch, 'd', JSON.stringify(data)];

function directory(until: number) {
  const scheduler = new VirtualTimeScheduler(VirtualAction, until);
  const changes: string[] = [];
  const replaced: string[] = [];
  const dir = new FleetDirectory({ staleMs: 30_000, keepEndedMs: 60_000, now: () => scheduler.now(), scheduler, replaced: (id, epoch) => replaced.push(`${id}@${epoch}`) });
  dir.changes$.subscribe((id) => changes.push(id));
  return { dir, scheduler, changes, replaced };
}

describe('FleetDirectory', () => {
  it('start, status, alive and end each change the session; a late note of an earlier run changes nothing', () => {
    const { dir, changes } = directory(0);
    dir.read('1-1', note('a', 'start', 'E1', { title: 'a.wav', startedAt: 5 }), false);
    expect(dir.session('a')).toMatchObject({ epoch: 'E1', title: 'a.wav', status: 'connecting', startedAt: 5, ended: false });
    dir.read('2-1', note('a', 'status', 'E1', { status: 'streaming', events: 3 }), false);
    dir.read('3-1', ['s', 'x', 'k', 'alive', 'e', '-', 'd', JSON.stringify({ sessions: { a: 7 } })], false);
    expect(dir.session('a')).toMatchObject({ status: 'streaming', events: 7 });
    dir.read('4-1', note('a', 'status', 'E0', { status: 'failed' }), false);
    expect(dir.session('a')?.status).toBe('streaming');
    dir.read('5-1', note('a', 'end', 'E1', { status: 'done', error: { code: 'x', message: 'y' } }), false);
    expect(dir.session('a')).toMatchObject({ ended: true, status: 'done', error: { code: 'x', message: 'y' } });
    expect(dir.lastId).toBe('5-1');
    expect(changes).toEqual(['a', 'a', 'a', 'a', 'a']);
    dir.close();
  });

  it('history is heard when it was written and says no change; a new run of an id is said replaced and listed last', () => {
    const { dir, changes, replaced } = directory(0);
    dir.read('100-1', note('a', 'start', 'E1'), true);
    dir.read('200-1', note('b', 'start', 'F1'), true);
    expect(dir.session('a')?.heardAt).toBe(100);
    expect(changes).toEqual([]);
    dir.read('300-1', note('a', 'start', 'E2', { title: 'again' }), false);
    expect(replaced).toEqual(['a@E2']);
    expect(dir.sessions().map((s) => s.id)).toEqual(['b', 'a']);
    dir.read('400-1', ['garbage'], false);
    expect(dir.lastId).toBe('400-1');
    dir.close();
  });

  it('a quiet live session goes stale (said once), then both it and an ended one are swept by the clock', () => {
    const { dir, scheduler, changes } = directory(200_000);
    dir.read('0-1', note('live', 'start', 'E'), false);
    dir.read('0-2', note('done', 'start', 'F'), false);
    dir.read('0-3', note('done', 'end', 'F'), false);
    changes.length = 0;
    const live = dir.session('live')!;
    scheduler.flush();
    expect(dir.isStale(live)).toBe(true);
    expect(dir.session('live')).toBeUndefined();
    expect(dir.session('done')).toBeUndefined();
    // stale once (at 40 s), then each swept once: ended at 70 s, stale at 100 s
    expect(changes).toEqual(['live', 'done', 'live']);
    dir.close();
  });
});
