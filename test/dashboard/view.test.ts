// The page's view of one moment, without I/O: stateJson plus the live transcript and status.
import { describe, expect, it } from 'vitest';
import type { ServerEvent } from 'svc-stream';
import { initialConversationSnapshot, snapshotReducer } from 'svc-stream/state';
import { dashboardView, reachedMs, type DashboardStatus } from '../../src/dashboard/view.js';
import { createSessionStats } from 'svc-stream';
import { sessionFigures } from '../../src/session/figures.js';
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
      audio_ms: 0,
      label: null,
      session: null,
    });
    // What goes on the wire survives JSON as is.
    expect(JSON.parse(JSON.stringify(view))).toEqual(view);
  });

  it('formats nothing itself: the label as given, the figures as sessionFigures computed them, how far the results reach', () => {
    // The stats are the session's to write: its figures after a reconnect, as a copy.
    const stats = { ...createSessionStats(), bytesRead: 64_000, bytesSent: 80_000, bytesReplayed: 16_000, reconnects: 1, reconnectingMs: 7_200 };
    const figures = sessionFigures({ stats, format: { audio_format: 's16le', sample_rate: 16000, num_channels: 1 }, startedAt: 0, now: 10_000 });
    const events: ServerEvent[] = [
      { type: 'clip', clip: { clip_uuid: 'a', text: 'Hello.', speaker_label: '1', start_ms: 200, duration_ms: 1_300 } },
      { type: 'partial_clip', partial_clip: { clip_uuid: 'b', text: 'I w', speaker_label: '2', start_ms: 1_800, end_ms: 2_100 } },
    ];
    const snapshot = events.reduce(snapshotReducer, initialConversationSnapshot);
    const label = { source: 'scenario', file: 'call.scenario.json' } as const;
    const view = dashboardView(snapshot, { ...status, label, figures });
    expect(view).toMatchObject({ label, audio_ms: 2_100, session: { reconnects: 1, reconnecting_ms: 7_200, wall_ms: 10_000, position_ms: 2_000, audio_sent_ms: 2_000, audio_replayed_ms: 500, audio_dropped_ms: 0 } });
    expect(reachedMs(events.concat({ type: 'done', duration_ms: 38_507 }).reduce(snapshotReducer, initialConversationSnapshot))).toBe(38_507);
  });

  it('speaks the session vocabulary: failed is terminal, paused, closing and reconnecting are states of their own', () => {
    for (const s of ['connecting', 'streaming', 'paused', 'finishing', 'closing', 'reconnecting', 'done', 'failed', 'closed'] as const) {
      const view = dashboardView(initialConversationSnapshot, { ...status, status: s });
      expect(view.status).toBe(s);
    }
  });
});
