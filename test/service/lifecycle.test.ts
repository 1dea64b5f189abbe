import { VirtualTimeScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { SvcError } from '../../src/errors/index.js';
import { ServiceLifecycle, type CallServer } from '../../src/service/lifecycle.js';
import type { ServiceState } from '../../src/service/serviceState.js';

/** A server holding `calls` in flight; what the life cycle told it, in order. */
function server(calls: number) {
  const told: string[] = [];
  let inFlight = calls;
  let unready: string | undefined;
  let handle: { changed(): void } | undefined;
  const s: CallServer = {
    get inFlight() {
      return inFlight;
    },
    stopAccepting: () => void told.push('stop accepting'),
    endCalls: (error) => {
      told.push(`end calls: ${error.code}`);
      inFlight = 0;
    },
    get unready() {
      return unready;
    },
  };
  return {
    s,
    told,
    attach: (l: ServiceLifecycle) => (handle = l.attach(s)),
    end: () => {
      inFlight--;
      handle!.changed();
    },
    setUnready: (r: string | undefined) => (unready = r),
  };
}

function states(l: ServiceLifecycle): ServiceState[] {
  const seen: ServiceState[] = [];
  l.state$.subscribe((s) => seen.push(s));
  return seen;
}

describe('ServiceLifecycle', () => {
  it('drains: stops accepting at once, stops when the last call ends, before the deadline', () => {
    const scheduler = new VirtualTimeScheduler();
    const l = new ServiceLifecycle({ drainTimeoutMs: 30_000, scheduler });
    const seen = states(l);
    const a = server(2);
    a.attach(l);
    l.ready();
    expect(l.readiness).toEqual({ ready: true, reason: undefined });
    l.drain('signal');
    expect(a.told).toEqual(['stop accepting']);
    expect(l.readiness).toEqual({ ready: false, reason: 'draining' });
    a.end();
    expect(l.state.status).toBe('draining');
    a.end();
    expect(l.state).toEqual({ status: 'stopped', reason: 'signal', forced: false });
    scheduler.flush();
    expect(a.told).toEqual(['stop accepting']); // the deadline's timer was let go
    expect(seen.map((s) => s.status)).toEqual(['starting', 'ready', 'draining', 'stopped']);
  });

  it('the deadline ends the calls in flight typed shutdown, on virtual time', () => {
    const scheduler = new VirtualTimeScheduler();
    const l = new ServiceLifecycle({ drainTimeoutMs: 500, scheduler });
    const a = server(3);
    a.attach(l);
    l.ready();
    l.drain('signal');
    scheduler.maxFrames = 499;
    scheduler.flush();
    expect(l.state.status).toBe('draining');
    scheduler.maxFrames = Infinity;
    scheduler.flush();
    expect(a.told).toEqual(['stop accepting', 'end calls: shutdown']);
    expect(l.state).toEqual({ status: 'stopped', reason: 'signal', forced: true });
  });

  it('a second signal ends the calls at once; a drain with nothing in flight stops at once', () => {
    const l = new ServiceLifecycle();
    const a = server(1);
    a.attach(l);
    l.ready();
    l.drain('signal');
    l.force('signal');
    expect(a.told).toEqual(['stop accepting', 'end calls: shutdown']);
    expect(l.state).toMatchObject({ status: 'stopped', forced: true });
    const idle = new ServiceLifecycle();
    idle.ready();
    idle.drain('exit-after', Infinity);
    expect(idle.state).toEqual({ status: 'stopped', reason: 'exit-after', forced: false });
  });

  it('a server attached while draining is told to stop accepting at once; one that is full or lacks a dependency makes it unready', () => {
    const l = new ServiceLifecycle();
    const a = server(0);
    a.attach(l);
    l.ready();
    a.setUnready('every one of 3 sessions runs');
    expect(l.readiness).toEqual({ ready: false, reason: 'every one of 3 sessions runs' });
    a.setUnready(undefined);
    const b = server(1);
    b.attach(l);
    l.drain('signal', Infinity);
    const late = server(1);
    late.attach(l);
    expect(late.told).toEqual(['stop accepting']);
  });

  it('the shutdown error names why', () => {
    const errors: SvcError[] = [];
    const scheduler = new VirtualTimeScheduler();
    const l = new ServiceLifecycle({ drainTimeoutMs: 0, scheduler });
    l.attach({ inFlight: 1, stopAccepting: () => undefined, endCalls: (e) => void errors.push(e) });
    l.ready();
    l.drain('signal');
    scheduler.flush();
    expect(errors[0]).toBeInstanceOf(SvcError);
    expect(errors[0]!.message).toMatch(/the drain deadline passed/);
  });
});
