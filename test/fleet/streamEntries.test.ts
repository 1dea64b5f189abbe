// How a session lives in Redis, without a server: key names (one hash tag per session), stream
// ids as numbers, entries and directory notes read from XRANGE's shape, and what is refused.
import { describe, expect, it } from 'vitest';
import { compareStreamIds, decodeDirectoryEntry, decodeEntry, fleetKeys, newEpoch, parseStreamId } from '../../src/fleet/streamEntries.js';
import { parseRelayCursor } from '../../src/schema/relay.js';

describe('stream entries', () => {
  it('keys: a session keeps its stream and epoch under one hash tag; the id comes back from the key', () => {
    const k = fleetKeys('acme');
    expect(k.stream('call:1')).toBe('acme:s:{call:1}:events');
    expect(k.epoch('call:1')).toBe('acme:s:{call:1}:epoch');
    expect(k.directory).toBe('acme:sessions');
    expect(k.idOf(k.stream('call:1'))).toBe('call:1');
    expect(k.idOf('acme:sessions')).toBeUndefined();
    expect(fleetKeys().stream('x')).toBe('svc-stream:s:{x}:events');
    expect(() => fleetKeys('a b')).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
  });

  it('stream ids read as numbers and order as Redis orders them', () => {
    expect(parseStreamId('1700000000000-42')).toEqual({ ms: 1700000000000, seq: 42 });
    for (const bad of ['', '12', '-3', 'a-1', '1-b', '1.5-2']) expect(parseStreamId(bad)).toBeUndefined();
    const ids = ['10-2', '9-100', '10-10', '10-1'];
    expect([...ids].sort(compareStreamIds)).toEqual(['9-100', '10-1', '10-2', '10-10']);
  });

  it('an entry: its fields, its number in the session, and the cursor pages resume from', () => {
    const e = decodeEntry('1700000000000-7', ['e', 'ep0ch', 'k', 'event', 'd', '{"type":"done"}'])!;
    expect(e).toMatchObject({ id: '1700000000000-7', ms: 1700000000000, seq: 7, epoch: 'ep0ch', kind: 'event', data: '{"type":"done"}', cursor: 'ep0ch:1700000000000-7' });
    expect(parseRelayCursor(e.cursor)).toEqual({ epoch: 'ep0ch', seq: 7, streamId: '1700000000000-7' });
    // Not ours: a field missing, or a kind we do not write.
    expect(decodeEntry('1-1', ['e', 'x', 'k', 'event'])).toBeUndefined();
    expect(decodeEntry('1-1', ['e', 'x', 'k', 'shout', 'd', '{}'])).toBeUndefined();
    expect(decodeEntry('nope', ['e', 'x', 'k', 'event', 'd', '{}'])).toBeUndefined();
  });

  it('a directory note, and one whose payload is broken still names its session', () => {
    expect(decodeDirectoryEntry('5-0', ['s', 'call', 'k', 'start', 'e', 'ep', 'd', '{"title":"a.wav","status":"connecting"}'])).toEqual({
      id: '5-0',
      session: 'call',
      kind: 'start',
      epoch: 'ep',
      info: { title: 'a.wav', status: 'connecting' },
    });
    expect(decodeDirectoryEntry('6-0', ['s', 'call', 'k', 'end', 'e', 'ep', 'd', '{'])).toMatchObject({ kind: 'end', info: {} });
    expect(decodeDirectoryEntry('7-0', ['s', 'call', 'k', 'who'])).toBeUndefined();
  });

  it('epochs are fresh names that fit a cursor', () => {
    const a = newEpoch();
    expect(a).toMatch(/^[A-Za-z0-9_-]{12}$/);
    expect(newEpoch()).not.toBe(a);
    expect(parseRelayCursor(`${a}:1-1`)?.epoch).toBe(a);
  });
});
