// The primary's ledger stepped without processes: places under a shared bound (room said to
// all on each change), session slots granted in order, refused without wait, and everything
// a gone worker held freed for the next.
import { describe, expect, it } from 'vitest';
import type { PrimaryMessage } from '../../src/telephony/callWorker.js';
import { PrimaryBounds, type Peer } from '../../src/telephony/PrimaryBounds.js';

const peer = (): Peer & { got: PrimaryMessage[]; connected: boolean } => {
  const p = { got: [] as PrimaryMessage[], connected: true, isConnected: () => p.connected, send: (m: PrimaryMessage) => p.got.push(m) };
  return p;
};

describe('PrimaryBounds', () => {
  it('places under a bound: taken until full, said full and with room to all, a place not held ignored', () => {
    const told: PrimaryMessage[] = [];
    const ledger = new PrimaryBounds((m) => told.push(m));
    const a = peer();
    const b = peer();
    ledger.take(0, a, 'legs', 2, 1);
    ledger.take(1, b, 'legs', 2, 1);
    ledger.take(1, b, 'legs', 2, 2);
    expect([...a.got, ...b.got]).toEqual([{ t: 'svcw:took', id: 1, ok: true }, { t: 'svcw:took', id: 1, ok: true }, { t: 'svcw:took', id: 2, ok: false }]);
    expect(told).toEqual([{ t: 'svcw:room', bound: 'legs', full: true }]);
    expect(ledger.fullNow()).toEqual([{ t: 'svcw:room', bound: 'legs', full: true }]);
    ledger.give(2, 'legs');
    expect(told).toHaveLength(1);
    ledger.give(0, 'legs');
    expect(told.at(-1)).toEqual({ t: 'svcw:room', bound: 'legs', full: false });
    expect(ledger.fullNow()).toEqual([]);
  });

  it('session slots: granted in order of asking, refused without wait, a withdrawn wait skipped', () => {
    const ledger = new PrimaryBounds(() => undefined);
    const a = peer();
    const b = peer();
    ledger.acquire(0, a, 1, 1, true);
    ledger.acquire(1, b, 1, 1, true);
    ledger.acquire(1, b, 2, 1, true);
    ledger.acquire(0, a, 2, 1, false);
    ledger.withdraw(1, 1);
    ledger.release(0, 1);
    expect(a.got).toEqual([{ t: 'svcw:granted', id: 1, ok: true }, { t: 'svcw:granted', id: 2, ok: false }]);
    expect(b.got).toEqual([{ t: 'svcw:granted', id: 2, ok: true }]);
  });

  it('a gone worker frees its places and slots, its waits dropped, the next waiter served', () => {
    const told: PrimaryMessage[] = [];
    const ledger = new PrimaryBounds((m) => told.push(m));
    const a = peer();
    const b = peer();
    ledger.take(0, a, 'connections', 1, 1);
    ledger.acquire(0, a, 1, 1, true);
    ledger.acquire(0, a, 2, 1, true);
    ledger.acquire(1, b, 1, 1, true);
    ledger.workerGone(0);
    expect(told.at(-1)).toEqual({ t: 'svcw:room', bound: 'connections', full: false });
    expect(b.got).toEqual([{ t: 'svcw:granted', id: 1, ok: true }]);
    expect(a.got.filter((m) => m.t === 'svcw:granted')).toEqual([{ t: 'svcw:granted', id: 1, ok: true }]);
  });
});
