import { describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/schema/events.js';
import { parseServerEvent, parseServerEventValue, type ParseOptions, type ParseResult } from '../../src/schema/parseServerEvent.js';

/** Realistic nested wire frames (wire reference, "Server events: the payload is nested"). */
const CLIP = {
  clip_uuid: '6f1c2b1e-6a55-4a8e-9b1e-0c9f1a2d3e4f',
  text: 'Hi, thanks for calling, how can I help you today?',
  start_ms: 0,
  duration_ms: 2840,
  speaker_label: '1',
  language: 'en',
  emotion: 'Happy',
  accent: 'American',
  deepfake_score: 0.03,
};
const PARTIAL_CLIP = {
  clip_uuid: '6f1c2b1e-6a55-4a8e-9b1e-0c9f1a2d3e4f',
  text: 'Hi, thanks for calling',
  start_ms: 0,
  end_ms: 1320,
  speaker_label: '1',
  emotion: 'Neutral',
  accent: null,
  deepfake_score: null,
};
const CLIP_UPDATE = { clip_uuid: '6f1c2b1e-6a55-4a8e-9b1e-0c9f1a2d3e4f', emotion: 'Happy', accent: 'British' };
const TYPE_PICK = {
  conversation_type_uuid: '0b6f3a56-2f7c-4d4e-8f59-3a1f7b2f8c11',
  name: 'Customer support call',
  confidence: 0.87,
  selection_source: 'inferred',
  detail: 'Agent greets the caller and offers help.',
  reasoning: 'The first speaker identifies the company and offers assistance.',
};
const ROLE_PICK = {
  speaker_label: '2',
  participant_role_uuid: 'c7a8e0d2-91b4-4f0e-a3f2-5d6e7f8a9b0c',
  name: 'Customer',
  confidence: 0.92,
  selection_source: 'inferred',
  detail: null,
  reasoning: 'Describes a problem with their order.',
};
const DETECTION = {
  behavior_uuid: '1d2e3f40-5a6b-4c7d-8e9f-0a1b2c3d4e5f',
  behavior_name: 'Agent apologises',
  speaker_label: '1',
  detected: true,
  confidence: 0.78,
  evidence_clip_uuids: ['6f1c2b1e-6a55-4a8e-9b1e-0c9f1a2d3e4f', 'aa1c2b1e-6a55-4a8e-9b1e-0c9f1a2d3e40'],
  definitive_clip_uuid: 'aa1c2b1e-6a55-4a8e-9b1e-0c9f1a2d3e40',
  reasoning: 'The agent says "I am sorry for the delay".',
};
const TOPIC_SENTIMENT = { topic: 'Late delivery', speaker_label: '2', sentiment_score: -0.65, sentiment_label: 'negative' };

/** Per event type: the nested wire frame and, where there is a payload object, its flat twin. */
const NESTED: Record<string, Record<string, unknown>> = {
  clip: { type: 'clip', clip: CLIP },
  partial_clip: { type: 'partial_clip', partial_clip: PARTIAL_CLIP },
  clip_update: { type: 'clip_update', clip_update: CLIP_UPDATE },
  conversation_type: { type: 'conversation_type', pick: TYPE_PICK },
  participant_role: { type: 'participant_role', pick: ROLE_PICK },
  behavior_detection: { type: 'behavior_detection', detection: DETECTION },
  topics: { type: 'topics', topics: ['Late delivery', 'Refund', 'Account login'] },
  topic_sentiment: { type: 'topic_sentiment', topic_sentiment: TOPIC_SENTIMENT },
  summary: { type: 'summary', text: 'The customer called about a late delivery; the agent issued a refund.' },
  done: { type: 'done', duration_ms: 93_420 },
  error: { type: 'error', error: 'Invalid input audio' },
};
const PAYLOAD_OBJECTS: [type: string, key: string, payload: Record<string, unknown>][] = [
  ['clip', 'clip', CLIP],
  ['partial_clip', 'partial_clip', PARTIAL_CLIP],
  ['clip_update', 'clip_update', CLIP_UPDATE],
  ['conversation_type', 'pick', TYPE_PICK],
  ['participant_role', 'pick', ROLE_PICK],
  ['behavior_detection', 'detection', DETECTION],
  ['topic_sentiment', 'topic_sentiment', TOPIC_SENTIMENT],
];

function parse(value: unknown, options: ParseOptions = {}): ParseResult {
  return parseServerEvent(JSON.stringify(value), options);
}
function ok(value: unknown): ServerEvent {
  const r = parse(value);
  if (!r.ok) throw new Error(`expected ok, got: ${r.reason}`);
  return r.event;
}
/** Strict mode: the refusal, as before tolerance. */
function reason(value: unknown): string {
  const r = parse(value, { strict: true });
  if (r.ok) throw new Error(`expected a refusal, got: ${JSON.stringify(r.event)}`);
  return r.reason;
}

describe('parseServerEvent: nested wire form', () => {
  it('covers all 11 event types of §6', () => {
    expect(Object.keys(NESTED).sort()).toEqual(
      ['behavior_detection', 'clip', 'clip_update', 'conversation_type', 'done', 'error', 'partial_clip', 'participant_role', 'summary', 'topic_sentiment', 'topics'],
    );
  });

  it.each(Object.entries(NESTED))('parses %s unchanged', (_type, frame) => {
    const event = ok(frame);
    expect(event).toEqual(frame);
  });

  it.each(['default', 'auto_selected_single_option', 'inferred'])('accepts selection_source %s', (source) => {
    expect(ok({ type: 'conversation_type', pick: { ...TYPE_PICK, selection_source: source } })).toMatchObject({
      pick: { selection_source: source },
    });
  });

  it('accepts each of the sentiment labels the wire reference names', () => {
    for (const label of ['positive', 'negative', 'neutral', 'very_negative']) {
      expect(ok({ type: 'topic_sentiment', topic_sentiment: { ...TOPIC_SENTIMENT, sentiment_label: label } }).type).toBe('topic_sentiment');
    }
  });

  it.each([-1, 1, 0])('accepts sentiment_score at %s', (score) => {
    expect(ok({ type: 'topic_sentiment', topic_sentiment: { ...TOPIC_SENTIMENT, sentiment_score: score } }).type).toBe('topic_sentiment');
  });

  it.each([0, 1])('accepts deepfake_score at %s', (score) => {
    expect(ok({ type: 'clip', clip: { ...CLIP, deepfake_score: score } }).type).toBe('clip');
  });

  it('accepts an empty topics list, a zero done duration and a behavior detection without evidence', () => {
    expect(ok({ type: 'topics', topics: [] })).toEqual({ type: 'topics', topics: [] });
    expect(ok({ type: 'done', duration_ms: 0 })).toEqual({ type: 'done', duration_ms: 0 });
    const d = { ...DETECTION, evidence_clip_uuids: [] };
    expect(ok({ type: 'behavior_detection', detection: d })).toEqual({ type: 'behavior_detection', detection: d });
  });

  it('accepts a clip_update carrying only clip_uuid (refinement unavailable)', () => {
    const frame = { type: 'clip_update', clip_update: { clip_uuid: CLIP.clip_uuid } };
    expect(ok(frame)).toEqual(frame);
  });

  it('parseServerEventValue agrees with parseServerEvent', () => {
    for (const frame of Object.values(NESTED)) expect(parseServerEventValue(frame)).toEqual(parse(frame));
  });
});

describe('parseServerEvent: flat form normalises to the nested form', () => {
  it.each(PAYLOAD_OBJECTS)('%s: flat deep-equals nested', (type, key, payload) => {
    const flat = ok({ type, ...payload });
    const nested = ok({ type, [key]: payload });
    expect(flat).toEqual(nested);
    expect(flat).toEqual({ type, [key]: payload });
  });

  it.each(PAYLOAD_OBJECTS)('%s: extra flat fields land in the payload, as nested extras do', (type, key, payload) => {
    const flat = ok({ type, ...payload, server_ts: 1712345678901, meta: { shard: 3 } });
    const nested = ok({ type, [key]: { ...payload, server_ts: 1712345678901, meta: { shard: 3 } } });
    expect(flat).toEqual(nested);
  });

  it.each(PAYLOAD_OBJECTS)('%s: a flat frame that breaks the contract is refused (strict) with the nested path', (type, key, payload) => {
    const field = Object.keys(payload)[0]!;
    const broken = { ...payload, [field]: 12345 };
    const flat = parse({ type, ...broken }, { strict: true });
    const nested = parse({ type, [key]: broken }, { strict: true });
    expect(flat.ok).toBe(false);
    expect(nested.ok).toBe(false);
    expect(flat).toEqual(nested);
    if (!flat.ok) expect(flat.reason).toContain(`${key}.${field}`);
  });
});

describe('parseServerEvent: extra fields are kept', () => {
  it.each(Object.entries(NESTED))('%s: top-level extras survive', (_type, frame) => {
    const withExtra = { ...frame, seq: 17, trace: { id: 'x' } };
    expect(ok(withExtra)).toEqual(withExtra);
  });

  it.each(PAYLOAD_OBJECTS)('%s: payload extras survive', (type, key, payload) => {
    const frame = { type, [key]: { ...payload, model_version: 'svc-2.3', scores: [0.1, 0.2] } };
    expect(ok(frame)).toEqual(frame);
  });
});

describe('parseServerEvent: unknown types pass through', () => {
  it.each([
    [{ type: 'transcript_final', clip_uuid: 'x', words: [{ w: 'hi', start_ms: 0 }] }],
    [{ type: 'heartbeat' }],
    [{ type: 'unknown', foo: 1 }],
    [{ type: 'Clip', clip: CLIP }],
    [{ type: '', a: null }],
    [{ type: '__proto__', a: 1 }],
    [{ type: 'constructor' }],
    [{ type: 'toString', x: [1, 2] }],
    [{ type: 'hasOwnProperty' }],
  ])('%j → unknown with the other fields as data', (frame) => {
    const { type, ...data } = frame as { type: string } & Record<string, unknown>;
    expect(ok(frame)).toEqual({ type: 'unknown', event_type: type, data });
  });
});

describe('parseServerEvent: never throws', () => {
  it.each([
    '', ' ', 'not json', '{', '{"type":', 'undefined', 'NaN', "{'type':'clip'}", '\u0000', '{"type":"clip"}x',
    'null', 'true', 'false', '0', '-1.5e300', '"clip"', '""', '[]', '[{"type":"clip"}]', '{}',
    '{"type":null}', '{"type":1}', '{"type":true}', '{"type":["clip"]}', '{"type":{"name":"clip"}}', '{"clip":{"clip_uuid":"a"}}',
    '{"type":"clip"}', '{"type":"clip","clip":null}', '{"type":"clip","clip":[]}', '{"type":"clip","clip":"x"}',
    '{"type":"topics","topics":"a"}', '{"type":"topics"}', '{"type":"done"}', '{"type":"done","duration_ms":"5"}',
    '{"type":"error"}', '{"type":"error","error":{"detail":"x"}}', '{"type":"summary"}',
    '{"type":"participant_role","pick":null}', '{"type":"behavior_detection","detection":{"behavior_uuid":""}}',
    '{"type":"clip","__proto__":{"clip_uuid":"x"}}', '{"type":"clip","clip":{"clip_uuid":"a","__proto__":{"start_ms":-1}}}',
    '[' .repeat(5000) + ']'.repeat(5000),
    '{"a":'.repeat(3000) + '1' + '}'.repeat(3000),
  ])('returns a result for %j', (text) => {
    let r: ParseResult | undefined;
    expect(() => {
      r = parseServerEvent(text);
    }).not.toThrow();
    expect(typeof r!.ok).toBe('boolean');
    if (!r!.ok) expect(r!.reason.length).toBeGreaterThan(0);
  });

  it.each([
    ['non-JSON', 'hello', /JSON/],
    ['null', 'null', /object/],
    ['an array', '[1,2]', /object/],
    ['a number', '42', /object/],
    ['a string', '"done"', /object/],
    ['a missing type', '{"duration_ms":5}', /type/],
    ['a numeric type', '{"type":3}', /type/],
    ['a null type', '{"type":null}', /type/],
  ])('refuses %s with a reason', (_what, text, pattern) => {
    const r = parseServerEvent(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(pattern);
  });

  it('parseServerEventValue never throws on non-JSON values either', () => {
    const values: unknown[] = [undefined, null, 0, 1n, Symbol('s'), () => 1, new Date(0), new Map(), Object.create(null), [], 'clip'];
    for (const v of values) {
      expect(() => parseServerEventValue(v)).not.toThrow();
    }
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { type: 'done', duration_ms: 7 });
    expect(parseServerEventValue(bare)).toEqual({ ok: true, event: { type: 'done', duration_ms: 7 } });
  });

  it('survives random byte strings and random JSON-ish mutations of real frames', () => {
    let seed = 12345;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const frames = Object.values(NESTED).map((f) => JSON.stringify(f));
    for (let i = 0; i < 2000; i++) {
      const base = frames[i % frames.length]!;
      const chars = [...base];
      const edits = 1 + Math.floor(rand() * 4);
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(rand() * chars.length);
        chars[at] = String.fromCharCode(Math.floor(rand() * 128));
      }
      expect(() => parseServerEvent(chars.join(''))).not.toThrow();
    }
  });
});

describe('parseServerEvent strict: out-of-contract values are refused, naming the path', () => {
  it.each([
    ['deepfake_score 1.5', { type: 'clip', clip: { ...CLIP, deepfake_score: 1.5 } }, 'clip.deepfake_score'],
    ['deepfake_score -0.1', { type: 'clip', clip: { ...CLIP, deepfake_score: -0.1 } }, 'clip.deepfake_score'],
    ['flat deepfake_score 1.5', { type: 'clip', ...CLIP, deepfake_score: 1.5 }, 'clip.deepfake_score'],
    ['partial deepfake_score 1.5', { type: 'partial_clip', partial_clip: { ...PARTIAL_CLIP, deepfake_score: 1.5 } }, 'partial_clip.deepfake_score'],
    ['sentiment_score -2', { type: 'topic_sentiment', topic_sentiment: { ...TOPIC_SENTIMENT, sentiment_score: -2 } }, 'topic_sentiment.sentiment_score'],
    ['sentiment_score 1.01', { type: 'topic_sentiment', topic_sentiment: { ...TOPIC_SENTIMENT, sentiment_score: 1.01 } }, 'topic_sentiment.sentiment_score'],
    ['flat sentiment_score -2', { type: 'topic_sentiment', ...TOPIC_SENTIMENT, sentiment_score: -2 }, 'topic_sentiment.sentiment_score'],
    ['negative start_ms', { type: 'clip', clip: { ...CLIP, start_ms: -40 } }, 'clip.start_ms'],
    ['fractional start_ms', { type: 'clip', clip: { ...CLIP, start_ms: 10.5 } }, 'clip.start_ms'],
    ['negative duration_ms', { type: 'clip', clip: { ...CLIP, duration_ms: -1 } }, 'clip.duration_ms'],
    ['partial negative start_ms', { type: 'partial_clip', partial_clip: { ...PARTIAL_CLIP, start_ms: -1 } }, 'partial_clip.start_ms'],
    ['partial negative end_ms', { type: 'partial_clip', partial_clip: { ...PARTIAL_CLIP, end_ms: -1 } }, 'partial_clip.end_ms'],
    ['clip without clip_uuid', { type: 'clip', clip: { ...CLIP, clip_uuid: undefined } }, 'clip.clip_uuid'],
    ['clip with empty clip_uuid', { type: 'clip', clip: { ...CLIP, clip_uuid: '' } }, 'clip.clip_uuid'],
    ['flat clip without clip_uuid', { type: 'clip', ...CLIP, clip_uuid: undefined }, 'clip.clip_uuid'],
    ['partial_clip without clip_uuid', { type: 'partial_clip', partial_clip: { ...PARTIAL_CLIP, clip_uuid: undefined } }, 'partial_clip.clip_uuid'],
    ['clip_update without clip_uuid', { type: 'clip_update', clip_update: { emotion: 'Sad' } }, 'clip_update.clip_uuid'],
    ['selection_source guess', { type: 'conversation_type', pick: { ...TYPE_PICK, selection_source: 'guess' } }, 'pick.selection_source'],
    ['role selection_source guess', { type: 'participant_role', pick: { ...ROLE_PICK, selection_source: 'guess' } }, 'pick.selection_source'],
    ['flat selection_source guess', { type: 'conversation_type', ...TYPE_PICK, selection_source: 'guess' }, 'pick.selection_source'],
    ['pick confidence 1.5', { type: 'conversation_type', pick: { ...TYPE_PICK, confidence: 1.5 } }, 'pick.confidence'],
    ['type pick without uuid', { type: 'conversation_type', pick: { ...TYPE_PICK, conversation_type_uuid: undefined } }, 'pick.conversation_type_uuid'],
    ['role pick without speaker', { type: 'participant_role', pick: { ...ROLE_PICK, speaker_label: undefined } }, 'pick.speaker_label'],
    ['detection confidence -0.2', { type: 'behavior_detection', detection: { ...DETECTION, confidence: -0.2 } }, 'detection.confidence'],
    ['detection evidence not a list', { type: 'behavior_detection', detection: { ...DETECTION, evidence_clip_uuids: 'x' } }, 'detection.evidence_clip_uuids'],
    ['detection without behavior_uuid', { type: 'behavior_detection', detection: { ...DETECTION, behavior_uuid: undefined } }, 'detection.behavior_uuid'],
    ['topics not strings', { type: 'topics', topics: ['a', 2] }, 'topics.1'],
    ['done negative', { type: 'done', duration_ms: -1 }, 'duration_ms'],
    ['done fractional', { type: 'done', duration_ms: 1.5 }, 'duration_ms'],
    ['error not a string', { type: 'error', error: 500 }, 'error'],
    ['summary text a number', { type: 'summary', text: 5 }, 'text'],
  ])('%s', (_what, frame, path) => {
    const r = reason(frame);
    expect(r).toContain(String(frame.type));
    expect(r).toContain(path);
  });
});

describe('parseServerEvent: tolerance the wire reference asks for', () => {
  it.each([
    ['clip emotion/accent/deepfake_score/language', 'clip', 'clip', { ...CLIP, emotion: null, accent: null, deepfake_score: null, language: null }],
    ['partial_clip end_ms/speaker_label/emotion/accent/deepfake_score', 'partial_clip', 'partial_clip', { ...PARTIAL_CLIP, end_ms: null, speaker_label: null, emotion: null, accent: null, deepfake_score: null }],
    ['clip_update emotion/accent', 'clip_update', 'clip_update', { ...CLIP_UPDATE, emotion: null, accent: null }],
    ['type pick confidence/detail/reasoning', 'conversation_type', 'pick', { ...TYPE_PICK, confidence: null, detail: null, reasoning: null }],
    ['role pick detail/reasoning', 'participant_role', 'pick', { ...ROLE_PICK, confidence: null, detail: null, reasoning: null }],
    ['detection speaker_label/confidence/definitive_clip_uuid/reasoning', 'behavior_detection', 'detection', { ...DETECTION, speaker_label: null, confidence: null, definitive_clip_uuid: null, reasoning: null }],
  ])('accepts null for %s', (_what, type, key, payload) => {
    const frame = { type, [key]: payload };
    expect(ok(frame)).toEqual(frame);
  });

  it('accepts summary text null', () => {
    expect(ok({ type: 'summary', text: null })).toEqual({ type: 'summary', text: null });
  });

  it.each(['Frustrated', 'Bored', 'Confused', 'Excited', 'Happy'])('accepts emotion %s on clip, partial_clip and clip_update', (emotion) => {
    for (const [type, key, payload] of PAYLOAD_OBJECTS.slice(0, 3)) {
      const frame = { type, [key]: { ...payload, emotion } };
      expect(ok(frame)).toEqual(frame);
    }
  });

  it('accepts accent and deepfake_score present even when the option is off', () => {
    const frame = { type: 'clip', clip: { ...CLIP, accent: 'Indian', deepfake_score: 0.5 } };
    expect(ok(frame)).toEqual(frame);
  });

  it('accepts a partial_clip with only clip_uuid (nothing known yet)', () => {
    const frame = { type: 'partial_clip', partial_clip: { clip_uuid: 'p-1' } };
    expect(ok(frame)).toEqual(frame);
  });
});

describe('parseServerEvent tolerant (the default): normalise or deliver as unknown, with warnings', () => {
  it.each([
    ['clip speaker_label null', { type: 'clip', clip: { ...CLIP, speaker_label: null } }, { type: 'clip', clip: { ...CLIP, speaker_label: null } }, 'clip.speaker_label', 'label'],
    ['clip speaker_label a number', { type: 'clip', clip: { ...CLIP, speaker_label: 2 } }, { type: 'clip', clip: { ...CLIP, speaker_label: '2' } }, 'clip.speaker_label', 'label'],
    ['flat clip deepfake_score 1.5', { type: 'clip', ...CLIP, deepfake_score: 1.5 }, { type: 'clip', clip: { ...CLIP, deepfake_score: null } }, 'clip.deepfake_score', 'null'],
    ['clip negative start_ms', { type: 'clip', clip: { ...CLIP, start_ms: -40 } }, { type: 'clip', clip: (({ start_ms: _s, ...rest }) => rest)(CLIP) }, 'clip.start_ms', 'drop'],
    ['role uuid null', { type: 'participant_role', pick: { ...ROLE_PICK, participant_role_uuid: null } }, { type: 'participant_role', pick: { ...ROLE_PICK, participant_role_uuid: null } }, 'pick.participant_role_uuid', 'null'],
    ['role speaker a number', { type: 'participant_role', pick: { ...ROLE_PICK, speaker_label: 1 } }, { type: 'participant_role', pick: { ...ROLE_PICK, speaker_label: '1' } }, 'pick.speaker_label', 'label'],
    ['clip_update emotion a number', { type: 'clip_update', clip_update: { ...CLIP_UPDATE, emotion: 5 } }, { type: 'clip_update', clip_update: (({ emotion: _e, ...rest }) => rest)(CLIP_UPDATE) }, 'clip_update.emotion', 'drop'],
    ['error not a string', { type: 'error', error: 500 }, { type: 'error', error: '500' }, 'error', 'text'],
  ])('%s', (_what, frame, event, path, action) => {
    const r = parse(frame);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.event).toEqual(event);
    expect(r.warnings?.map((w) => [w.path, w.action])).toEqual([[path, action]]);
    expect(parse(frame, { strict: true }).ok).toBe(false);
  });

  it.each([
    ['clip without clip_uuid', { type: 'clip', clip: { text: 'x' } }, 'clip.clip_uuid'],
    ['role speaker null', { type: 'participant_role', pick: { ...ROLE_PICK, speaker_label: null } }, 'pick.speaker_label'],
    ['type selection_source guess', { type: 'conversation_type', pick: { ...TYPE_PICK, selection_source: 'guess' } }, 'pick.selection_source'],
    ['sentiment_score -2', { type: 'topic_sentiment', topic_sentiment: { ...TOPIC_SENTIMENT, sentiment_score: -2 } }, 'topic_sentiment.sentiment_score'],
    ['topics not strings', { type: 'topics', topics: ['a', 2] }, 'topics.1'],
    ['done fractional', { type: 'done', duration_ms: 1.5 }, 'duration_ms'],
    ['payload not an object', { type: 'clip', clip: 'x' }, 'clip'],
  ])('%s → unknown with the reason', (_what, frame, path) => {
    const r = parse(frame);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const { type, ...data } = frame;
    expect(r.event).toMatchObject({ type: 'unknown', event_type: type, data });
    expect(r.event.type === 'unknown' && r.event.reason).toMatch(new RegExp(`^${path.replace('.', '\\.')}: `));
    expect(r.warnings).toEqual([expect.objectContaining({ code: 'out_of_contract_value', eventType: type, path, action: 'unknown' })]);
  });

  it('in-contract events carry no warnings', () => {
    for (const frame of Object.values(NESTED)) expect(parse(frame)).toEqual({ ok: true, event: frame });
  });
});
