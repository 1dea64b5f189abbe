import { VirtualTimeScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { TimerWheel, WHEEL_RESOLUTION_MS, type WheelTarget } from '../../src/internal/timerWheel.js';

function recorder(scheduler: VirtualTimeScheduler): WheelTarget & { fired: Array<[token: number, at: number]> } {
  const fired: Array<[number, number]> = [];
  return { fired, onDeadline: (token) => void fired.push([token, scheduler.now()]) };
}

describe('TimerWheel on virtual time', () => {
  it('fires each deadline once, at the first tick at or after it, in time order across turns of the wheel', () => {
    const scheduler = new VirtualTimeScheduler(undefined, 100_000);
    const wheel = TimerWheel.of(scheduler);
    expect(TimerWheel.of(scheduler)).toBe(wheel);
    const t = recorder(scheduler);
    wheel.at(25, t, 1);
    wheel.at(10, t, 2);
    // Further than one turn of the wheel (256 slots of 10 ms): kept in its slot until its turn.
    wheel.at(5000, t, 3);
    wheel.at(0, t, 4);
    scheduler.flush();
    expect(t.fired).toEqual([
      [4, 10],
      [2, 10],
      [1, 30],
      [3, 5000],
    ]);
    expect(wheel.size).toBe(0);
  });

  it('a deadline added while its slot is being visited fires on the next tick, not a turn later', () => {
    const scheduler = new VirtualTimeScheduler(undefined, 100_000);
    const wheel = TimerWheel.of(scheduler);
    const fired: number[] = [];
    const target: WheelTarget = {
      onDeadline: (token, now) => {
        fired.push(now);
        if (token < 3) wheel.at(now, target, token + 1);
      },
    };
    wheel.at(100, target, 1);
    scheduler.flush();
    expect(fired).toEqual([100, 100 + WHEEL_RESOLUTION_MS, 100 + 2 * WHEEL_RESOLUTION_MS]);
  });

  it('remove() forgets a target, and a wheel with nothing pending stops ticking', () => {
    const scheduler = new VirtualTimeScheduler(undefined, 100_000);
    const wheel = TimerWheel.of(scheduler);
    const a = recorder(scheduler);
    const b = recorder(scheduler);
    wheel.at(50, a, 1);
    wheel.at(60, b, 1);
    wheel.at(3000, a, 2);
    wheel.remove(a);
    expect(wheel.size).toBe(1);
    scheduler.flush();
    expect(a.fired).toEqual([]);
    expect(b.fired).toEqual([[1, 60]]);
    // No action left behind: the scheduler has nothing queued.
    expect(scheduler.actions.length).toBe(0);
  });
});
