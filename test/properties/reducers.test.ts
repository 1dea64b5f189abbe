// The ordering rules of §3 hold in the reducers (and in splitSession's derived streams) under
// every interleaving the contract allows, checked step by step against the rules' own words.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { from } from 'rxjs';
import { behaviorKey, initialConversationSnapshot, sentimentKey, snapshotReducer } from 'svc-stream/state';
import { splitSession, type BehaviorDetection, type Clip, type ConversationSnapshot, type ServerEvent } from 'svc-stream';
import { sessionArb } from './sessionArbitraries.js';

const RUNS = { numRuns: 150 };

/** Every intermediate snapshot: states[i] is the state after events[0..i]. */
function foldAll(events: readonly ServerEvent[]): ConversationSnapshot[] {
  const states: ConversationSnapshot[] = [];
  let s = initialConversationSnapshot;
  for (const e of events) states.push((s = snapshotReducer(s, e)));
  return states;
}

describe('rules 3-4: roles never outlive a type change', () => {
  it('after a conversation_type with a new uuid (or the first one after roles), no earlier role pick remains; each speaker holds its latest pick since', () => {
    fc.assert(
      fc.property(sessionArb, (events) => {
        const states = foldAll(events);
        let lastDiscard = -1;
        let typeUuid: string | null = null;
        let rolesSinceDiscard = 0;
        events.forEach((e, i) => {
          if (e.type === 'conversation_type') {
            const changes = typeUuid === null ? rolesSinceDiscard > 0 : typeUuid !== e.pick.conversation_type_uuid;
            if (changes) {
              lastDiscard = i;
              rolesSinceDiscard = 0;
            }
            typeUuid = e.pick.conversation_type_uuid;
          } else if (e.type === 'participant_role') rolesSinceDiscard++;

          const roles = states[i]!.conversation.roles;
          for (const pick of roles) {
            const from = Number(pick.participant_role_uuid!.slice('role@'.length));
            expect(from, `a role picked at ${from} outlived the type change at ${lastDiscard}`).toBeGreaterThan(lastDiscard);
          }
          // Each speaker holds the latest pick made for it since the last discard; others are unassigned.
          const latest = new Map<string, string>();
          for (let j = lastDiscard + 1; j <= i; j++) {
            const ej = events[j]!;
            if (ej.type === 'participant_role') latest.set(ej.pick.speaker_label, `role@${j}`);
          }
          expect(roles.size).toBe(latest.size);
          for (const [speaker, tag] of latest) expect(roles.get(speaker)?.participant_role_uuid).toBe(tag);
          expect(states[i]!.conversation.type?.conversation_type_uuid ?? null).toBe(typeUuid);
        });
      }),
      RUNS,
    );
  });
});

describe('rule 5: behaviors', () => {
  it('a detection is emitted at most once per (behavior, speaker), is the first one, and is never withdrawn', () => {
    fc.assert(
      fc.property(sessionArb, (events) => {
        const emitted: Array<ReadonlyMap<string, BehaviorDetection>> = [];
        splitSession(from(events)).behaviorDetections$.subscribe((m) => {
          const entries = new Map<string, BehaviorDetection>();
          m.toArray().forEach((d, i) => entries.set(m.keyAt(i)!, d));
          emitted.push(entries);
        });
        const first = new Map<string, BehaviorDetection>();
        for (const e of events) {
          if (e.type === 'behavior_detection' && !first.has(behaviorKey(e.detection.behavior_uuid, e.detection.speaker_label))) {
            first.set(behaviorKey(e.detection.behavior_uuid, e.detection.speaker_label), e.detection);
          }
        }
        // One emission per new (behavior, speaker): a repeat changes nothing, so emits nothing.
        expect(emitted.length).toBe(first.size);
        let previous = new Map<string, BehaviorDetection>();
        for (const m of emitted) {
          expect(m.size).toBe(previous.size + 1);
          for (const [k, d] of previous) expect(m.get(k)).toBe(d);
          for (const [k, d] of m) expect(d).toBe(first.get(k));
          previous = new Map(m);
        }
      }),
      RUNS,
    );
  });
});

describe('rule 6: aggregates replace, never merge', () => {
  it('topics equal the last topics event, the summary the last summary, each sentiment the latest for its (topic, speaker)', () => {
    fc.assert(
      fc.property(sessionArb, (events) => {
        const states = foldAll(events);
        let topics: readonly string[] | null = null;
        let summary: string | null = null;
        const sentiments = new Map<string, number>();
        events.forEach((e, i) => {
          if (e.type === 'topics') topics = e.topics;
          if (e.type === 'summary') summary = e.text;
          if (e.type === 'topic_sentiment') sentiments.set(sentimentKey(e.topic_sentiment.topic, e.topic_sentiment.speaker_label), e.topic_sentiment.sentiment_score);
          const agg = states[i]!.aggregates;
          expect(agg.topics).toEqual(topics);
          expect(agg.summary).toBe(summary);
          expect(agg.topicSentiments.size).toBe(sentiments.size);
          for (const [k, v] of sentiments) expect(agg.topicSentiments.get(k)?.sentiment_score).toBe(v);
        });
        let streamed: readonly string[] | undefined;
        splitSession(from(events)).latestTopics$.subscribe((t) => (streamed = t));
        expect(streamed ?? null).toEqual(topics);
      }),
      RUNS,
    );
  });
});

describe('rules 1-2: clips', () => {
  it("a clip's fields equal its latest update (null keeps the earlier value); partials grow until the final clip replaces them", () => {
    fc.assert(
      fc.property(sessionArb, (events) => {
        const states = foldAll(events);
        const finals = new Map<string, Record<string, unknown>>();
        const partials = new Map<string, Record<string, unknown>>();
        const order: string[] = [];
        events.forEach((e, i) => {
          if (e.type === 'partial_clip') {
            const id = e.partial_clip.clip_uuid;
            if (!order.includes(id)) order.push(id);
            const merged = { ...(partials.get(id) ?? {}) };
            for (const [k, v] of Object.entries(e.partial_clip)) if (v !== undefined) merged[k] = v;
            partials.set(id, merged);
          } else if (e.type === 'clip') {
            const id = e.clip.clip_uuid;
            if (!order.includes(id)) order.push(id);
            finals.set(id, { ...e.clip });
          } else if (e.type === 'clip_update') {
            const clip = finals.get(e.clip_update.clip_uuid)!;
            for (const [k, v] of Object.entries(e.clip_update)) if (v !== undefined && v !== null) clip[k] = v;
          }
          const { clips, transcript, pendingUpdates } = states[i]!.clips;
          expect(pendingUpdates.size).toBe(0);
          expect(clips.size).toBe(finals.size);
          for (const [id, clip] of finals) {
            expect(clips.get(id) as Clip).toEqual(clip);
            expect(transcript.get(id)).toEqual({ status: 'final', clip });
          }
          for (const [id, partial] of partials) {
            if (!finals.has(id)) expect(transcript.get(id)).toEqual({ status: 'partial', clip: partial });
          }
          expect(transcript.toArray().map((t) => t.clip.clip_uuid)).toEqual(order);
        });
      }),
      RUNS,
    );
  });

  it('out of contract, a partial after its clip never turns the final line back into a partial', () => {
    fc.assert(
      fc.property(sessionArb, fc.string({ maxLength: 8 }), (events, text) => {
        const lastClip = events.findLast((e) => e.type === 'clip');
        fc.pre(lastClip !== undefined);
        const id = (lastClip as Extract<ServerEvent, { type: 'clip' }>).clip.clip_uuid;
        const before = foldAll(events).at(-1)!;
        const after = snapshotReducer(before, { type: 'partial_clip', partial_clip: { clip_uuid: id, text } });
        expect(after.clips.transcript.get(id)).toEqual(before.clips.transcript.get(id));
        expect(after.clips.stalePartials).toBe(before.clips.stalePartials + 1);
      }),
      { numRuns: 50 },
    );
  });
});

describe('splitSession agrees with the fold', () => {
  it('the last snapshot$ value is the fold of every event', () => {
    fc.assert(
      fc.property(sessionArb, (events) => {
        let last: ConversationSnapshot | undefined;
        splitSession(from(events)).snapshot$.subscribe((s) => (last = s));
        const fold = foldAll(events).at(-1) ?? initialConversationSnapshot;
        expect(JSON.stringify(last ?? initialConversationSnapshot)).toBe(JSON.stringify(fold));
      }),
      { numRuns: 50 },
    );
  });
});
