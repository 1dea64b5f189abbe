// The event-stream framing and parser, without I/O.
import { describe, expect, it } from 'vitest';
import { SseParser, sseMessage } from '../../src/relay/sse.js';

describe('sseMessage', () => {
  it('frames one message with its id, name and one JSON data line', () => {
    expect(sseMessage('event', { type: 'topics', topics: ['a\nb'] }, 7)).toBe('id: 7\nevent: event\ndata: {"type":"topics","topics":["a\\nb"]}\n\n');
    expect(sseMessage('end', { status: 'done' })).toBe('event: end\ndata: {"status":"done"}\n\n');
    expect(new SseParser().push(sseMessage('event', { x: '\r\n' }, 3))).toEqual([{ event: 'event', data: '{"x":"\\r\\n"}', id: '3' }]);
  });
});

describe('SseParser', () => {
  it('reads messages split anywhere, with CRLF, CR or LF, comments, ids and retry', () => {
    const text = ': hi\r\nretry: 500\r\n\r\nid: 7\revent: event\rdata: {"a":1}\r\rdata: x\ndata: y\n\n';
    for (let cut = 0; cut <= text.length; cut++) {
      const p = new SseParser();
      const got = [...p.push(text.slice(0, cut)), ...p.push(text.slice(cut))];
      expect(got).toEqual([
        { event: 'event', data: '{"a":1}', id: '7' },
        { event: 'message', data: 'x\ny', id: undefined },
      ]);
      expect(p.retry).toBe(500);
    }
    expect(() => new SseParser(10).push('data: 0123456789abc')).toThrow(RangeError);
  });
});
