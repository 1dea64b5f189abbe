// The summary line of the terminal view: the audio actually sent after a failure (never the
// file's length), and the reconnects a session went through.
import { describe, expect, it } from 'vitest';
import { createSessionStats } from 'svc-stream';
import { audioSummary, reconnectSummary } from '../../src/cli/terminalView.js';
import { initialConversationSnapshot } from '../../src/state/snapshot.js';

describe('terminal summary', () => {
  it('after done: the analysed duration', () => {
    const s = { ...initialConversationSnapshot, aggregates: { ...initialConversationSnapshot.aggregates, audioDurationMs: 38_507 } };
    expect(audioSummary(s, { positionMs: 38_507, durationMs: 38_507, elapsedMs: 0 })).toBe('0:38.5 of audio');
  });

  it('after a failure: the audio sent, of the whole, not the whole', () => {
    expect(audioSummary(initialConversationSnapshot, { positionMs: 20_000, durationMs: 332_300, elapsedMs: 0 })).toBe('0:20.0 of audio sent (of 5:32.3)');
    expect(audioSummary(initialConversationSnapshot, { positionMs: undefined, durationMs: 332_300, elapsedMs: 0 })).toBe('audio sent unknown');
  });

  it('reconnects, their time, and audio dropped when any', () => {
    const stats = createSessionStats();
    expect(reconnectSummary(stats)).toBe('');
    Object.assign(stats, { reconnects: 2, reconnectingMs: 1_300, bytesDropped: 640 });
    expect(reconnectSummary(stats)).toBe(', 2 reconnects (1.3 s), 640 bytes of audio dropped');
  });
});
