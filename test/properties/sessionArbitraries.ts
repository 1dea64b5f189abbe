// Generated sessions for the property tests: every interleaving the ordering rules of §3
// allow (a clip's partials, then its clip, then its updates; everything else anywhere).
import fc from 'fast-check';
import type { ServerEvent } from 'svc-stream';

export const SPEAKERS = ['1', '2', '3'] as const;
export const TYPE_UUIDS = ['type-a', 'type-b', 'type-c'] as const;
export const BEHAVIOR_UUIDS = ['greet', 'escalate'] as const;
export const TOPICS = ['billing', 'refund', 'delivery', 'account'] as const;
const EMOTIONS = ['Neutral', 'Happy', 'Angry', 'Frustrated'] as const;
const ACCENTS = ['Irish', 'Scottish', 'Texan'] as const;

const speaker = fc.constantFrom(...SPEAKERS);
const nullableOf = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null });
/** A field that is absent, null (refinement unavailable) or a value. */
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(nullableOf(arb), { nil: undefined });

function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

const partialFields = fc
  .record({ text: fc.string({ maxLength: 12 }), end_ms: maybe(fc.nat(60_000)), speaker_label: maybe(speaker), emotion: maybe(fc.constantFrom(...EMOTIONS)) })
  .map(defined);
const clipFields = fc
  .record({ text: fc.string({ maxLength: 12 }), start_ms: fc.nat(60_000), duration_ms: fc.nat(10_000), speaker_label: speaker, emotion: nullableOf(fc.constantFrom(...EMOTIONS)), accent: nullableOf(fc.constantFrom(...ACCENTS)) })
  .map(defined);
const updateFields = fc.record({ emotion: maybe(fc.constantFrom(...EMOTIONS)), accent: maybe(fc.constantFrom(...ACCENTS)) }).map(defined);

/** One clip's own events in contract order: partials, then (unless still in progress) the clip and its updates. */
const clipScript = fc.record({
  partials: fc.array(partialFields, { maxLength: 3 }),
  final: fc.oneof({ arbitrary: fc.constant(true), weight: 4 }, fc.constant(false)),
  clip: clipFields,
  updates: fc.array(updateFields, { maxLength: 3 }),
});

type ClipScript = typeof clipScript extends fc.Arbitrary<infer T> ? T : never;

function clipEvents(id: string, s: ClipScript): ServerEvent[] {
  const out: ServerEvent[] = s.partials.map((p) => ({ type: 'partial_clip', partial_clip: { clip_uuid: id, ...p } }) as ServerEvent);
  if (s.final || s.partials.length === 0) {
    out.push({ type: 'clip', clip: { clip_uuid: id, ...s.clip } } as ServerEvent);
    for (const u of s.updates) out.push({ type: 'clip_update', clip_update: { clip_uuid: id, ...u } } as ServerEvent);
  }
  return out;
}

/** Events with no ordering constraint among themselves (rules 3-6). Role picks are tagged later. */
const looseEvent: fc.Arbitrary<ServerEvent> = fc.oneof(
  fc.record({ uuid: fc.constantFrom(...TYPE_UUIDS), confidence: fc.double({ min: 0, max: 1, noNaN: true }) }).map(
    ({ uuid, confidence }) => ({ type: 'conversation_type', pick: { conversation_type_uuid: uuid, selection_source: 'inferred', confidence } }) as ServerEvent,
  ),
  { arbitrary: speaker.map((s) => ({ type: 'participant_role', pick: { speaker_label: s, name: 'Agent' } }) as ServerEvent), weight: 3 },
  fc.record({ b: fc.constantFrom(...BEHAVIOR_UUIDS), s: nullableOf(speaker), c: fc.double({ min: 0, max: 1, noNaN: true }) }).map(
    ({ b, s, c }) => ({ type: 'behavior_detection', detection: { behavior_uuid: b, speaker_label: s, detected: true, confidence: c } }) as ServerEvent,
  ),
  fc.array(fc.constantFrom(...TOPICS), { maxLength: 4 }).map((topics) => ({ type: 'topics', topics }) as ServerEvent),
  nullableOf(fc.string({ maxLength: 10 })).map((text) => ({ type: 'summary', text }) as ServerEvent),
  fc.record({ t: fc.constantFrom(...TOPICS), s: speaker, v: fc.double({ min: -1, max: 1, noNaN: true }) }).map(
    ({ t, s, v }) => ({ type: 'topic_sentiment', topic_sentiment: { topic: t, speaker_label: s, sentiment_score: v } }) as ServerEvent,
  ),
);

/** Merge sequences, keeping each one's own order; `picks` chooses which goes next. */
export function interleave<T>(sequences: readonly (readonly T[])[], picks: readonly number[]): T[] {
  const queues = sequences.filter((s) => s.length > 0).map((s) => [...s]);
  const out: T[] = [];
  let p = 0;
  while (queues.length > 0) {
    const i = (picks[p++] ?? 0) % queues.length;
    out.push(queues[i]!.shift()!);
    if (queues[i]!.length === 0) queues.splice(i, 1);
  }
  return out;
}

/**
 * A session the contract allows, optionally ending with `done`. Every role pick gets a unique
 * `participant_role_uuid` (`role@<index>`) so a test can tell which event a state entry came from.
 */
export const sessionArb: fc.Arbitrary<ServerEvent[]> = fc
  .tuple(fc.array(clipScript, { maxLength: 5 }), fc.array(looseEvent, { maxLength: 30 }), fc.boolean())
  .chain(([scripts, loose, withDone]) => {
    const sequences = [...scripts.map((s, i) => clipEvents(`clip-${i}`, s)), ...loose.map((e) => [e])];
    const total = sequences.reduce((n, s) => n + s.length, 0);
    return fc.array(fc.nat(), { minLength: total, maxLength: total }).map((picks) => {
      const events = interleave(sequences, picks).map((e, i): ServerEvent =>
        e.type === 'participant_role' ? { ...e, pick: { ...e.pick, participant_role_uuid: `role@${i}` } } : e,
      );
      if (withDone) events.push({ type: 'done', duration_ms: 60_000 });
      return events;
    });
  });
