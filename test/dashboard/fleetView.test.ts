// The supervisor's view of one call, step by step without I/O: roles and behaviors by the
// session's own rules, the latest emotion (the latest clip's and its refinements, never an earlier
// clip's late refinement, with the speaker),
// the audio reached, and the directory's facts beside them.
import { describe, expect, it } from 'vitest';
import { callFoldReducer, FLEET_BEHAVIORS, fleetCall, initialCallFold, type CallFold } from '../../src/dashboard/fleetView.js';
import type { ServerEvent } from '../../src/schema/events.js';

const fold = (events: ServerEvent[]): CallFold => events.reduce(callFoldReducer, initialCallFold);
const info = { id: 'c1', title: 'c1.wav', status: 'streaming', ended: false, stale: false, startedAt: 1000 };

describe('fleet view', () => {
  it('step by step: type and roles, emotion from a clip then its update, behaviors, the audio reached', () => {
    const table: Array<[ServerEvent, (f: CallFold) => unknown, unknown]> = [
      [{ type: 'conversation_type', pick: { conversation_type_uuid: 't', name: 'Support', selection_source: 'inferred' } }, (f) => f.conversation.type?.name, 'Support'],
      [{ type: 'participant_role', pick: { speaker_label: '1', name: 'Agent' } }, (f) => [...f.conversation.roles].map((r) => r.name), ['Agent']],
      [{ type: 'clip', clip: { clip_uuid: 'a', speaker_label: '2', start_ms: 0, duration_ms: 1500, emotion: 'Neutral' } }, (f) => [f.emotion, f.audioMs], [{ speaker: '2', emotion: 'Neutral' }, 1500]],
      [{ type: 'clip', clip: { clip_uuid: 'b', speaker_label: '1', start_ms: 1600, duration_ms: 900 } }, (f) => [f.emotion, f.audioMs], [{ speaker: '2', emotion: 'Neutral' }, 2500]],
      // b has no emotion yet: a's refinement is still the latest clip's with one.
      [{ type: 'clip_update', clip_update: { clip_uuid: 'a', emotion: 'Angry' } }, (f) => f.emotion, { speaker: '2', emotion: 'Angry' }],
      // A clip the fold never saw is not the latest.
      [{ type: 'clip_update', clip_update: { clip_uuid: 'zz', emotion: 'Calm' } }, (f) => f.emotion, { speaker: '2', emotion: 'Angry' }],
      [{ type: 'clip', clip: { clip_uuid: 'c', speaker_label: '1', start_ms: 2600, duration_ms: 400, emotion: 'Happy' } }, (f) => f.emotion, { speaker: '1', emotion: 'Happy' }],
      // A late refinement of an earlier clip does not hide the latest clip's emotion.
      [{ type: 'clip_update', clip_update: { clip_uuid: 'a', emotion: 'Worried' } }, (f) => f.emotion, { speaker: '1', emotion: 'Happy' }],
      [{ type: 'clip_update', clip_update: { clip_uuid: 'c', emotion: 'Sad' } }, (f) => f.emotion, { speaker: '1', emotion: 'Sad' }],
      // b came before c: its emotion, given late, is not the latest clip's.
      [{ type: 'clip_update', clip_update: { clip_uuid: 'b', emotion: 'Neutral' } }, (f) => f.emotion, { speaker: '1', emotion: 'Sad' }],
      [{ type: 'behavior_detection', detection: { behavior_uuid: 'g', behavior_name: 'Greeting', speaker_label: '1' } }, (f) => f.behaviors.detections.size, 1],
      [{ type: 'done', duration_ms: 3000 }, (f) => f.audioMs, 3000],
    ];
    let f = initialCallFold;
    for (const [event, read, want] of table) {
      f = callFoldReducer(f, event);
      expect(read(f)).toEqual(want);
    }
    expect(f.events).toBe(table.length);
  });

  it("a type change discards the roles picked before it, as the session's own reducer does", () => {
    const f = fold([
      { type: 'participant_role', pick: { speaker_label: '1', name: 'Agent' } },
      { type: 'conversation_type', pick: { conversation_type_uuid: 't2', name: 'Sales', selection_source: 'inferred' } },
    ]);
    expect(fleetCall(info, f, false).roles).toEqual([]);
  });

  it('the view: the directory facts, the latest behaviors only, and whether it starts late', () => {
    const behaviors: ServerEvent[] = Array.from({ length: FLEET_BEHAVIORS + 2 }, (_, i) => ({ type: 'behavior_detection', detection: { behavior_uuid: `b${i}`, behavior_name: `B${i}`, speaker_label: i % 2 ? '2' : null } }));
    const view = fleetCall({ ...info, status: 'failed', ended: true, endedAt: 9000, error: { code: 'connection_lost', message: 'gone' } }, fold(behaviors), true);
    expect(view).toMatchObject({ id: 'c1', title: 'c1.wav', status: 'failed', ended: true, startedAt: 1000, endedAt: 9000, partial: true, behaviorCount: FLEET_BEHAVIORS + 2, error: { code: 'connection_lost', message: 'gone' } });
    expect(view.behaviors.map((b) => b.name)).toEqual(['B2', 'B3', 'B4', 'B5', 'B6']);
    expect(view.behaviors[0]).toEqual({ name: 'B2', speaker: null });
    expect(fleetCall(info, initialCallFold, false)).toMatchObject({ roles: [], emotion: null, audioMs: null, conversationType: null, endedAt: null, error: null });
  });
});
