import { describe, expect, it } from 'vitest';
import { INITIAL_SERVICE_STATE, serviceReducer, type ServiceEvent, type ServiceState } from '../../src/service/serviceState.js';

const step = (events: readonly ServiceEvent[], from: ServiceState = INITIAL_SERVICE_STATE): ServiceState[] => {
  const out: ServiceState[] = [];
  let s = from;
  for (const e of events) out.push((s = serviceReducer(s, e)));
  return out;
};

describe('serviceReducer', () => {
  it('starting → ready → draining → stopped, step by step', () => {
    expect(step([{ type: 'listening' }, { type: 'drain', reason: 'signal', deadline: 30_000 }, { type: 'idle' }])).toEqual([
      { status: 'ready' },
      { status: 'draining', reason: 'signal', deadline: 30_000, forced: false },
      { status: 'stopped', reason: 'signal', forced: false },
    ]);
  });

  it.each<[string, ServiceState, ServiceEvent, ServiceState | 'same']>([
    ['listening twice', { status: 'ready' }, { type: 'listening' }, 'same'],
    ['listening while draining', { status: 'draining', reason: 'signal', deadline: 1, forced: false }, { type: 'listening' }, 'same'],
    ['drain before listening', { status: 'starting' }, { type: 'drain', reason: 'signal', deadline: undefined }, { status: 'draining', reason: 'signal', deadline: undefined, forced: false }],
    ['a later drain brings the deadline closer, keeps the reason', { status: 'draining', reason: 'exit-after', deadline: undefined, forced: false }, { type: 'drain', reason: 'signal', deadline: 500 }, { status: 'draining', reason: 'exit-after', deadline: 500, forced: false }],
    ['a later drain never pushes the deadline back', { status: 'draining', reason: 'signal', deadline: 500, forced: false }, { type: 'drain', reason: 'signal', deadline: 900 }, 'same'],
    ['force while draining', { status: 'draining', reason: 'signal', deadline: 500, forced: false }, { type: 'force', reason: 'signal' }, { status: 'draining', reason: 'signal', deadline: 500, forced: true }],
    ['force while ready', { status: 'ready' }, { type: 'force', reason: 'signal' }, { status: 'draining', reason: 'signal', deadline: undefined, forced: true }],
    ['force twice', { status: 'draining', reason: 'signal', deadline: undefined, forced: true }, { type: 'force', reason: 'drain-timeout' }, 'same'],
    ['idle while ready (nothing drains)', { status: 'ready' }, { type: 'idle' }, 'same'],
    ['idle after a forced drain', { status: 'draining', reason: 'signal', deadline: undefined, forced: true }, { type: 'idle' }, { status: 'stopped', reason: 'signal', forced: true }],
    ['stopped is terminal', { status: 'stopped', reason: 'signal', forced: false }, { type: 'drain', reason: 'signal', deadline: 1 }, 'same'],
  ])('%s', (_name, from, event, expected) => {
    const next = serviceReducer(from, event);
    if (expected === 'same') expect(next).toBe(from);
    else expect(next).toEqual(expected);
  });
});
