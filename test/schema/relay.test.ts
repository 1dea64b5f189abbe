// The relay's wire below the relay: the cursor both relays' SSE ids are (written by the fleet,
// read by every relay and client), a failure's summary, an event's wire form, and the schemas
// refusing what the protocol does not say.
import { describe, expect, it } from 'vitest';
import { SvcError } from '../../src/errors/index.js';
import { errorSummary, fleetCursor, parseRelayCursor, RelayEndSchema, RelayGapSchema, RelayResetSchema, wireEvent } from '../../src/schema/relay.js';

describe('relay wire', () => {
  it('a cursor: an in-process relay numbers events, a fleet relay names EPOCH:MS-SEQ; anything else is no cursor', () => {
    expect(parseRelayCursor('17')).toEqual({ epoch: '', seq: 17 });
    expect(parseRelayCursor(fleetCursor('ep0ch', '1700000000000-42'))).toEqual({ epoch: 'ep0ch', seq: 42, streamId: '1700000000000-42' });
    for (const bad of ['', '-1', '1.5', 'ep:1', 'ep:1-', 'e p:1-1', `${'x'.repeat(33)}:1-1`, '1'.repeat(16), 'ep:99999999999999999-1']) expect(parseRelayCursor(bad)).toBeUndefined();
  });

  it('a failure as pages are told it: the code and the first line; anything that is not an error is code error', () => {
    expect(errorSummary(new SvcError('invalid_api_key', 'bad key\nsecond line'))).toEqual({ code: 'invalid_api_key', message: 'bad key' });
    expect(errorSummary(new Error('boom'))).toEqual({ code: 'error', message: 'boom' });
    expect(errorSummary('plain')).toEqual({ code: 'error', message: 'plain' });
    expect(errorSummary(null)).toEqual({ code: 'error', message: 'null' });
  });

  it('an event goes back to its wire form: an unknown event to its own type and fields, others as they are', () => {
    expect(wireEvent({ type: 'topics', topics: ['a'] })).toEqual({ type: 'topics', topics: ['a'] });
    expect(wireEvent({ type: 'unknown', event_type: 'future_thing', data: { type: 'future_thing', x: 1 } })).toEqual({ type: 'future_thing', x: 1 });
  });

  it('the messages the protocol does not say are refused', () => {
    expect(RelayGapSchema.safeParse({ after: '1', next: '3', missed: 0 }).success).toBe(false);
    expect(RelayResetSchema.safeParse({ reason: 'moved', after: '' }).success).toBe(false);
    expect(RelayEndSchema.safeParse({ status: 'failed', error: { code: 'x', message: 'y' } }).success).toBe(true);
    expect(RelayEndSchema.safeParse({ status: 'maybe' }).success).toBe(false);
  });
});
