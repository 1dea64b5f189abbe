// The event parser never throws, accepts every in-contract event (nested or flat) unchanged,
// and refuses every known event carrying an out-of-contract value, naming where.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseServerEvent, parseServerEventValue, ServerEventSchema } from 'svc-stream/schema';

const RUNS = { numRuns: 200 };

describe('parseServerEvent never throws', () => {
  it('on any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const r = parseServerEvent(JSON.stringify(value) ?? 'null');
        if (r.ok) expect(ServerEventSchema.safeParse(r.event).success).toBe(true);
        else expect(typeof r.reason).toBe('string');
      }),
      RUNS,
    );
  });

  it('on any value at all, and on any text', () => {
    fc.assert(
      fc.property(fc.anything({ withBigInt: true, withMap: true, withSet: true, withDate: true, withTypedArray: true, withNullPrototype: true }), (value) => {
        const r = parseServerEventValue(value);
        expect(typeof r.ok).toBe('boolean');
      }),
      RUNS,
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        expect(typeof parseServerEvent(text).ok).toBe('boolean');
      }),
      RUNS,
    );
  });

  it('on any object whose type is a known one, with arbitrary payloads', () => {
    const type = fc.constantFrom('clip', 'partial_clip', 'clip_update', 'conversation_type', 'participant_role', 'behavior_detection', 'topics', 'topic_sentiment', 'summary', 'done', 'error');
    fc.assert(
      fc.property(type, fc.dictionary(fc.string({ maxLength: 15 }), fc.jsonValue({ maxDepth: 2 })), (t, rest) => {
        const r = parseServerEventValue({ ...rest, type: t });
        // Tolerant by default: the known type, or (its payload beyond repair) `unknown` naming it.
        if (r.ok) expect(r.event.type === 'unknown' ? r.event.event_type : r.event.type).toBe(t);
        const s = parseServerEventValue({ ...rest, type: t }, { strict: true });
        if (s.ok) expect(s.event.type).toBe(t);
      }),
      RUNS,
    );
  });
});

// In-contract values and, for each field that has a contract, values outside it.
const score01 = fc.double({ min: 0, max: 1, noNaN: true });
const scoreSigned = fc.double({ min: -1, max: 1, noNaN: true });
const ms = fc.nat(10_000_000);
const id = fc.string({ minLength: 1, maxLength: 12 });

// (-0 is not below 0: filtered, as `maxExcluded` alone lets it through.)
const outside01 = fc.oneof(fc.double({ min: 1, max: 1e9, noNaN: true, minExcluded: true }), fc.double({ min: -1e9, max: 0, noNaN: true }).filter((x) => x < 0), fc.constant(Number.NaN));
const outsideSigned = fc.oneof(fc.double({ min: 1, max: 1e9, noNaN: true, minExcluded: true }), fc.double({ min: -1e9, max: -1, noNaN: true, maxExcluded: true }), fc.constant(Number.NaN));
const badMs = fc.oneof(fc.integer({ min: -1e9, max: -1 }), fc.double({ min: 0.001, max: 1e6, noNaN: true }).filter((x) => !Number.isInteger(x)), fc.constant(Number.NaN));
const notString = fc.oneof(fc.integer(), fc.boolean(), fc.constant([]), fc.constant({}));
const notStringOrNull = notString;
const notBoolean = fc.oneof(fc.integer(), fc.string(), fc.constant([]), fc.constant(null));

interface Kind {
  readonly type: string;
  /** The payload key of the nested form, or undefined when the fields sit beside `type`. */
  readonly key: string | undefined;
  readonly valid: fc.Arbitrary<Record<string, unknown>>;
  /** Field name → values out of contract for it. */
  readonly bad: Record<string, fc.Arbitrary<unknown>>;
}

const KINDS: Kind[] = [
  {
    type: 'clip',
    key: 'clip',
    valid: fc.record({ clip_uuid: id, text: fc.string(), start_ms: ms, duration_ms: ms, speaker_label: fc.constantFrom('1', '2'), emotion: fc.option(fc.string()), deepfake_score: fc.option(score01) }),
    bad: { clip_uuid: fc.oneof(fc.constant(''), fc.integer(), fc.constant(null)), start_ms: badMs, duration_ms: badMs, deepfake_score: outside01, speaker_label: notString, emotion: notStringOrNull },
  },
  {
    type: 'partial_clip',
    key: 'partial_clip',
    valid: fc.record({ clip_uuid: id, text: fc.string(), end_ms: fc.option(ms), speaker_label: fc.option(fc.constantFrom('1', '2')) }),
    bad: { clip_uuid: fc.oneof(fc.constant(''), fc.integer()), end_ms: badMs, deepfake_score: outside01, text: notString },
  },
  {
    type: 'clip_update',
    key: 'clip_update',
    valid: fc.record({ clip_uuid: id, emotion: fc.option(fc.string()), accent: fc.option(fc.string()) }),
    bad: { clip_uuid: fc.oneof(fc.constant(''), fc.integer()), emotion: notStringOrNull, accent: notStringOrNull },
  },
  {
    type: 'conversation_type',
    key: 'pick',
    valid: fc.record({ conversation_type_uuid: id, selection_source: fc.constantFrom('inferred', 'auto_selected_single_option', 'default'), confidence: fc.option(score01) }),
    bad: { conversation_type_uuid: fc.oneof(fc.constant(''), fc.integer()), selection_source: fc.string().filter((s) => !['inferred', 'auto_selected_single_option', 'default'].includes(s)), confidence: outside01 },
  },
  {
    type: 'participant_role',
    key: 'pick',
    valid: fc.record({ speaker_label: id, name: fc.string(), confidence: fc.option(score01) }),
    bad: { speaker_label: fc.oneof(fc.constant(''), fc.integer(), fc.constant(null)), confidence: outside01 },
  },
  {
    type: 'behavior_detection',
    key: 'detection',
    valid: fc.record({ behavior_uuid: id, speaker_label: fc.option(id), detected: fc.boolean(), confidence: fc.option(score01), evidence_clip_uuids: fc.array(id, { maxLength: 3 }) }),
    bad: { behavior_uuid: fc.oneof(fc.constant(''), fc.integer()), detected: notBoolean, confidence: outside01, evidence_clip_uuids: fc.oneof(fc.string(), fc.constant([1])) },
  },
  {
    type: 'topic_sentiment',
    key: 'topic_sentiment',
    valid: fc.record({ topic: fc.string(), speaker_label: fc.constantFrom('1', '2'), sentiment_score: scoreSigned, sentiment_label: fc.constantFrom('positive', 'negative', 'neutral') }),
    bad: { sentiment_score: fc.oneof(outsideSigned, fc.string(), fc.constant(null)), topic: notString, speaker_label: notString },
  },
  { type: 'topics', key: undefined, valid: fc.record({ topics: fc.array(fc.string(), { maxLength: 5 }) }), bad: { topics: fc.oneof(fc.string(), fc.constant(null), fc.array(fc.integer(), { minLength: 1 })) } },
  { type: 'summary', key: undefined, valid: fc.record({ text: fc.option(fc.string()) }), bad: { text: notString } },
  { type: 'done', key: undefined, valid: fc.record({ duration_ms: ms }), bad: { duration_ms: fc.oneof(badMs, fc.string(), fc.constant(null)) } },
  { type: 'error', key: undefined, valid: fc.record({ error: fc.string() }), bad: { error: fc.oneof(fc.integer(), fc.constant(null), fc.constant({})) } },
];

function nested(kind: Kind, payload: Record<string, unknown>): Record<string, unknown> {
  return kind.key === undefined ? { type: kind.type, ...payload } : { type: kind.type, [kind.key]: payload };
}

describe('parseServerEvent on generated events', () => {
  it.each(KINDS)('$type: in contract, nested and flat, is accepted and normalised to the nested form', (kind) => {
    fc.assert(
      fc.property(kind.valid, (payload) => {
        const wire = nested(kind, payload);
        const r = parseServerEvent(JSON.stringify(wire));
        expect(r.ok, r.ok ? '' : r.reason).toBe(true);
        expect(r.ok && r.event).toEqual(JSON.parse(JSON.stringify(wire)));
        if (kind.key !== undefined) {
          const flat = parseServerEvent(JSON.stringify({ type: kind.type, ...payload }));
          expect(flat.ok && flat.event).toEqual(r.ok && r.event);
        }
      }),
      { numRuns: 60 },
    );
  });

  it.each(KINDS)('$type: one out-of-contract value is refused in strict mode, naming the field, nested and flat', (kind) => {
    const field = fc.constantFrom(...Object.keys(kind.bad));
    fc.assert(
      fc.property(kind.valid, field.chain((f) => kind.bad[f]!.map((v) => [f, v] as const)), (payload, [f, v]) => {
        const broken = { ...payload, [f]: v };
        const forms = [nested(kind, broken)];
        if (kind.key !== undefined) forms.push({ type: kind.type, ...broken });
        for (const form of forms) {
          // The value itself, and the text a server would send (except NaN, which JSON writes as null).
          const r = parseServerEventValue(form, { strict: true });
          expect(r.ok, `accepted ${kind.type} with ${f}=${String(v)}`).toBe(false);
          if (!r.ok) expect(r.reason).toContain(f);
          if (!Number.isNaN(v)) expect(parseServerEvent(JSON.stringify(form), { strict: true }).ok, `accepted text ${kind.type} with ${f}=${String(v)}`).toBe(false);
          // Tolerant (the default): delivered, valid, and the value reported by path.
          const t = parseServerEventValue(form);
          expect(t.ok).toBe(true);
          if (t.ok) {
            expect(ServerEventSchema.safeParse(t.event).success).toBe(true);
            expect(t.warnings?.map((w) => w.path).join(' ')).toContain(f);
          }
        }
      }),
      { numRuns: 80 },
    );
  });
});
