// The client's reading of a stream's messages, stepped without a connection: events checked
// and positions forward only (within an epoch, unless a reset came first), a gap moving the
// resume point, the end, what the protocol refuses, messages a newer relay may add.
import { describe, expect, it } from 'vitest';
import { endError, RelayMessageReader } from '../../src/relay/RelayMessageReader.js';

const clip = (i: number) => JSON.stringify({ type: 'clip', clip: { clip_uuid: `c${i}`, speaker_label: '1', text: 't', start_ms: i * 1000, duration_ms: 900 } });
const malformed = expect.objectContaining({ code: 'malformed_frame' });

describe('RelayMessageReader', () => {
  it('events and statuses move the position forward; one that goes back is refused', () => {
    const r = new RelayMessageReader(undefined);
    expect(r.lastId).toBe('');
    expect(r.read({ event: 'event', id: '1', data: clip(1) })).toMatchObject({ type: 'event', id: '1', event: { type: 'clip' } });
    expect(r.read({ event: 'status', id: '2', data: '{"status":"streaming","title":"x"}' })).toEqual({ type: 'status', status: 'streaming', title: 'x' });
    expect(r.lastId).toBe('2');
    expect(() => r.read({ event: 'event', id: '2', data: clip(2) })).toThrow(malformed);
    expect(() => r.read({ event: 'event', data: clip(3) })).toThrow(malformed);
    expect(() => r.read({ event: 'event', id: '3', data: '"not an event"' })).toThrow(malformed);
    expect(() => r.read({ event: 'gap', data: 'not json' })).toThrow(malformed);
  });

  it('another epoch only after a reset; an in-process gap moves the resume point past what it skipped', () => {
    const fleet = new RelayMessageReader('E1:10-4');
    expect(() => fleet.read({ event: 'event', id: 'E2:20-1', data: clip(1) })).toThrow(malformed);
    expect(fleet.read({ event: 'reset', data: '{"reason":"replaced","after":"E1:10-4"}' })).toMatchObject({ type: 'reset', reset: { reason: 'replaced' } });
    fleet.read({ event: 'event', id: 'E2:20-1', data: clip(1) });
    expect(fleet.lastId).toBe('E2:20-1');
    const local = new RelayMessageReader(3);
    expect(local.read({ event: 'gap', data: '{"after":"3","next":"9","missed":5}' })).toMatchObject({ type: 'gap', gap: { missed: 5 } });
    expect(local.lastId).toBe('8');
  });

  it('the end is returned; a failed end is the session\'s error; unknown messages are passed over', () => {
    const r = new RelayMessageReader(undefined);
    expect(r.read({ event: 'end', data: '{"status":"done"}' })).toEqual({ type: 'end', end: { status: 'done' } });
    expect(r.read({ event: 'later-feature', data: '{}' })).toBeUndefined();
    expect(endError({ status: 'failed', error: { code: 'rate_limited', message: 'over' } })).toMatchObject({ name: 'SessionError', code: 'rate_limited', message: 'over' });
    expect(endError({ status: 'failed', error: { code: 'martian', message: 'odd' } })).toMatchObject({ code: 'internal_error', message: 'martian: odd' });
  });
});
