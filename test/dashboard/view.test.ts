// The page's view of one moment, without I/O: stateJson plus the live transcript and status.
import { describe, expect, it } from 'vitest';
import { initialConversationSnapshot, snapshotReducer, type ServerEvent } from 'svc-stream';
import { dashboardView, isTerminalPhase, type DashboardStatus } from '../../src/dashboard/view.js';
import { stateJson } from '../../src/state/stateJson.js';

const status: DashboardStatus = { version: 3, started: true, status: 'streaming', error: null, title: 'call.wav', bytesSent: 100, eventsReceived: 4 };

describe('dashboardView', () => {
  it('is stateJson of the snapshot plus the transcript with its partials and the status', () => {
    const events: ServerEvent[] = [
      { type: 'partial_clip', partial_clip: { clip_uuid: 'a', text: 'Hel', speaker_label: null } },
      { type: 'clip', clip: { clip_uuid: 'a', text: 'Hello.', speaker_label: '1' } },
      { type: 'partial_clip', partial_clip: { clip_uuid: 'b', text: 'I w', speaker_label: '2' } },
      { type: 'error', error: 'backend failed' },
    ];
    const snapshot = events.reduce(snapshotReducer, initialConversationSnapshot);
    const view = dashboardView(snapshot, status);
    expect(view).toEqual({
      ...stateJson(snapshot),
      version: 3,
      started: true,
      status: 'streaming',
      phase: 'streaming',
      error: null,
      title: 'call.wav',
      transcript: [
        { status: 'final', clip: { clip_uuid: 'a', text: 'Hello.', speaker_label: '1' } },
        { status: 'partial', clip: { clip_uuid: 'b', text: 'I w', speaker_label: '2' } },
      ],
      server_error: 'backend failed',
      bytes_sent: 100,
      events_received: 4,
    });
    // What goes on the wire survives JSON as is.
    expect(JSON.parse(JSON.stringify(view))).toEqual(view);
  });

  it('speaks the session vocabulary: failed is terminal, paused, closing and reconnecting are states of their own', () => {
    for (const s of ['connecting', 'streaming', 'paused', 'finishing', 'closing', 'reconnecting', 'done', 'failed', 'closed'] as const) {
      const view = dashboardView(initialConversationSnapshot, { ...status, status: s });
      expect(view.status).toBe(s);
      // The deprecated phase is the status, with failed read as the old `error`.
      expect(view.phase).toBe(s === 'failed' ? 'error' : s);
    }
  });

  it('still reads the deprecated phase when no status is given (old error as failed)', () => {
    const { status: _status, ...old } = status;
    expect(dashboardView(initialConversationSnapshot, { ...old, phase: 'finishing' })).toMatchObject({ status: 'finishing', phase: 'finishing' });
    expect(dashboardView(initialConversationSnapshot, { ...old, phase: 'error' })).toMatchObject({ status: 'failed', phase: 'error' });
    expect(dashboardView(initialConversationSnapshot, old)).toMatchObject({ status: 'connecting' });
  });

  it('names the terminal phases (deprecated isTerminalPhase, which knows failed too)', () => {
    expect(['connecting', 'streaming', 'paused', 'finishing', 'closing', 'reconnecting', 'done', 'error', 'failed', 'closed'].filter((p) => isTerminalPhase(p))).toEqual(['done', 'error', 'failed', 'closed']);
  });
});
