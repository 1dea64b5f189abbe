// Workers' counters added up: counts over every process that ever ran, levels over those
// running now, peaks as their maximum, written into the object users hold.
import { describe, expect, it } from 'vitest';
import { WorkerTotals } from '../../src/telephony/WorkerTotals.js';

describe('WorkerTotals', () => {
  it('sums counts, keeps levels of running workers only, and takes the maximum of peaks', () => {
    const totals: Record<string, Record<string, number>> = { stale: { x: 1 } };
    const t = new WorkerTotals(totals);
    t.started(1);
    t.started(2);
    t.report(1, 'analyzeCalls', { started: 3, running: 2, peakRunning: 2 });
    t.report(2, 'analyzeCalls', { started: 4, running: 1, peakRunning: 3 });
    t.report(1, 'rtpSource', { datagrams: 10 });
    expect(totals).toEqual({ analyzeCalls: { started: 7, running: 3, peakRunning: 3 }, rtpSource: { datagrams: 10 } });
    t.exited(2);
    expect(totals['analyzeCalls']).toEqual({ started: 7, running: 2, peakRunning: 3 });
  });
});
