// The one life-cycle vocabulary: which states are terminal.
import { describe, expect, it } from 'vitest';
import { isTerminalStatus, type SessionStatus } from '../../src/schema/sessionState.js';

describe('isTerminalStatus', () => {
  it('done, failed and closed are terminal; nothing else is', () => {
    const all: SessionStatus[] = ['connecting', 'streaming', 'paused', 'finishing', 'closing', 'reconnecting', 'done', 'failed', 'closed'];
    expect(all.filter(isTerminalStatus)).toEqual(['done', 'failed', 'closed']);
  });
});
