// The page's view of one moment, without I/O: stateJson plus the live transcript and status.
import { describe, expect, it } from 'vitest';
import type { ServerEvent } from 'svc-stream';
import { initialConversationSnapshot, snapshotReducer } from 'svc-stream/state';
import { dashboardView, type DashboardStatus } from '../../src/dashboard/view.js';
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
    }
  });
});
