import { describe, expect, it } from 'vitest';
import { InputError, SvcError } from '../../src/errors/index.js';
import { MAX_CUSTOM_TERMS, MAX_CUSTOM_TERMS_JSON_CHARS, type BatchConfig } from '../../src/schema/config.js';
import { configText } from '../../src/schema/configText.js';

const U = {
  support: '0b6f3a56-2f7c-4d4e-8f59-3a1f7b2f8c11',
  sales: '5e2d7c1a-3b4f-4a6e-9d8c-7b6a5f4e3d2c',
  agent: 'c7a8e0d2-91b4-4f0e-a3f2-5d6e7f8a9b0c',
  customer: 'd1e2f3a4-b5c6-4d7e-8f90-a1b2c3d4e5f6',
  apology: '1d2e3f40-5a6b-4c7d-8e9f-0a1b2c3d4e5f',
};

const FULL: BatchConfig = {
  conversation_types: [
    { conversation_type_uuid: U.support, name: 'Support call', short_description: 'A customer asks for help', detailed_description: 'An agent resolves a customer problem.' },
    { conversation_type_uuid: U.sales, name: 'Sales call' },
  ],
  participant_roles: [
    { participant_role_uuid: U.agent, name: 'Agent', short_description: 'Works for the company', detailed_description: 'Answers the call.', applies_to_conversation_type_uuids: [U.support, U.sales] },
    { participant_role_uuid: U.customer, name: 'Customer' },
  ],
  behaviors: [
    'preset:agent_empathy',
    {
      behavior_uuid: U.apology,
      name: 'Agent apologises',
      short_description: 'The agent says sorry',
      detailed_description: 'Any explicit apology by the agent.',
      applies_to_conversation_type_uuids: [U.support],
      applies_to_participant_role_uuids: [U.agent],
    },
  ],
  stt: {
    speaker_diarization: true,
    emotion_signal: true,
    accent_signal: false,
    deepfake_signal: true,
    pii_phi_tagging: false,
    language: 'en',
    custom_terms: [
      'Kubernetes',
      { term: 'svc-stream', definition: 'A streaming client library', pronunciations: ['ess vee see stream', 'service stream'] },
      { term: 'ACME' },
    ],
  },
  produce_topics: true,
  produce_topic_sentiments: false,
  produce_summary: true,
  default_conversation_type: { conversation_type_uuid: U.support, name: 'Support call' },
  default_participant_role: { participant_role_uuid: U.customer, name: 'Customer' },
};

function stt(extra: Record<string, unknown>): BatchConfig {
  return { stt: extra } as BatchConfig;
}
function terms(list: unknown): BatchConfig {
  return stt({ custom_terms: list });
}

/** Run configText and return the InputError it must throw. */
function refusal(config: unknown): InputError {
  try {
    configText(config as BatchConfig);
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    expect(err).toBeInstanceOf(SvcError);
    expect(err).toBeInstanceOf(Error);
    const e = err as InputError;
    expect(e.code).toBe('invalid_config');
    expect(e.retryable).toBe(false);
    return e;
  }
  throw new Error(`configText accepted ${JSON.stringify(config).slice(0, 200)}`);
}
function accepts(config: unknown): unknown {
  const frame = configText(config as BatchConfig);
  return JSON.parse(frame);
}

describe('configText: a full valid config', () => {
  it('round-trips unchanged', () => {
    expect(accepts(FULL)).toEqual(FULL);
  });

  it('keeps [] (no candidates) distinct from omitted (built-in defaults)', () => {
    expect(accepts({ conversation_types: [], participant_roles: [], behaviors: [] })).toEqual({ conversation_types: [], participant_roles: [], behaviors: [] });
    expect(accepts({ produce_summary: false })).toEqual({ produce_summary: false });
  });

  it.each([['default_conversation_type'], ['default_participant_role']])('%s: null is accepted and sent as null (disables the fallback)', (key) => {
    const out = accepts({ [key]: null }) as Record<string, unknown>;
    expect(out).toHaveProperty(key, null);
  });

  it('names the offending path in the message', () => {
    const e = refusal({ stt: { custom_terms: ['ok', { term: '' }] } });
    expect(e.path).toBe('stt.custom_terms.1.term');
    expect(e.message).toContain('stt.custom_terms.1.term');
  });
});

describe('configText: stt.custom_terms', () => {
  it('limits match the wire reference', () => {
    expect(MAX_CUSTOM_TERMS).toBe(1000);
    expect(MAX_CUSTOM_TERMS_JSON_CHARS).toBe(8000);
  });

  it('accepts null', () => {
    expect(accepts(terms(null))).toEqual({ stt: { custom_terms: null } });
  });

  it('accepts an empty list', () => {
    expect(accepts(terms([]))).toEqual({ stt: { custom_terms: [] } });
  });

  it('accepts 1000 entries, refuses 1001', () => {
    expect(accepts(terms(Array.from({ length: 1000 }, () => 'a')))).toMatchObject({ stt: { custom_terms: expect.any(Array) } });
    // 1000 object terms of {"term":"a"} would pass 8000 JSON characters; mix them in under it.
    const mixed = Array.from({ length: 1000 }, (_, i) => (i < 300 ? { term: 'a' } : 'a'));
    expect(JSON.stringify(mixed).length).toBeLessThan(MAX_CUSTOM_TERMS_JSON_CHARS);
    expect(accepts(terms(mixed))).toEqual({ stt: { custom_terms: mixed } });
    const e = refusal(terms(Array.from({ length: 1001 }, () => 'a')));
    expect(e.path).toBe('stt.custom_terms');
    expect(e.message).toMatch(/1000/);
  });

  it.each([
    ['an empty string term', [''], 'stt.custom_terms.0'],
    ['an empty object term', ['ok', { term: '' }], 'stt.custom_terms.1.term'],
    ['an object without term', [{ definition: 'x' }], 'stt.custom_terms.0.term'],
    ['a non-string term', [{ term: 7 }], 'stt.custom_terms.0.term'],
    ['a number entry', [7], 'stt.custom_terms.0'],
    ['a null entry', [null], 'stt.custom_terms.0'],
    ['an unknown term key', [{ term: 'a', meaning: 'x' }], 'stt.custom_terms.0'],
    ['a definition of 257 chars', [{ term: 'a', definition: 'd'.repeat(257) }], 'stt.custom_terms.0.definition'],
    ['17 pronunciations', [{ term: 'a', pronunciations: Array.from({ length: 17 }, (_, i) => `p${i}`) }], 'stt.custom_terms.0.pronunciations'],
    ['a pronunciation of 129 chars', [{ term: 'a', pronunciations: ['ok', 'p'.repeat(129)] }], 'stt.custom_terms.0.pronunciations.1'],
    ['a pronunciation with a tab', [{ term: 'a', pronunciations: ['kay\tbee'] }], 'stt.custom_terms.0.pronunciations.0'],
    ['a pronunciation with a newline', [{ term: 'a', pronunciations: ['kay\n'] }], 'stt.custom_terms.0.pronunciations.0'],
    ['a pronunciation with DEL', [{ term: 'a', pronunciations: ['kay\x7f'] }], 'stt.custom_terms.0.pronunciations.0'],
    ['a pronunciation with NUL', [{ term: 'a', pronunciations: ['\u0000'] }], 'stt.custom_terms.0.pronunciations.0'],
    ['a pronunciation with é', [{ term: 'a', pronunciations: ['kafé'] }], 'stt.custom_terms.0.pronunciations.0'],
    ['a pronunciation with IPA', [{ term: 'a', pronunciations: ['ˈkjuːbɚ'] }], 'stt.custom_terms.0.pronunciations.0'],
    ['a pronunciation with an emoji', [{ term: 'a', pronunciations: ['k8s 🚀'] }], 'stt.custom_terms.0.pronunciations.0'],
    ['a non-list value', 'Kubernetes', 'stt.custom_terms'],
  ])('refuses %s', (_what, list, path) => {
    expect(refusal(terms(list)).path).toBe(path);
  });

  it.each([
    ['a definition of 256 chars', [{ term: 'a', definition: 'd'.repeat(256) }]],
    ['an empty definition', [{ term: 'a', definition: '' }]],
    ['16 pronunciations', [{ term: 'a', pronunciations: Array.from({ length: 16 }, (_, i) => `p${i}`) }]],
    ['no pronunciations', [{ term: 'a', pronunciations: [] }]],
    ['a pronunciation of 128 chars', [{ term: 'a', pronunciations: ['p'.repeat(128)] }]],
    ['every printable ASCII character', [{ term: 'a', pronunciations: [Array.from({ length: 95 }, (_, i) => String.fromCharCode(0x20 + i)).join('')] }]],
    ['a term in any script', ['Ünïcødé', { term: 'Zürich' }]],
  ])('accepts %s', (_what, list) => {
    expect(accepts(terms(list))).toEqual({ stt: { custom_terms: list } });
  });

  it('the JSON of the terms must total under 8000 characters: 7999 accepted, 8000 refused', () => {
    // ["x…x"] is the string length plus 4.
    const under = ['x'.repeat(7995)];
    const at = ['x'.repeat(7996)];
    expect(JSON.stringify(under)).toHaveLength(7999);
    expect(JSON.stringify(at)).toHaveLength(8000);
    expect(accepts(terms(under))).toEqual({ stt: { custom_terms: under } });
    const e = refusal(terms(at));
    expect(e.path).toBe('stt.custom_terms');
    expect(e.message).toMatch(/8000/);
  });

  it('counts object terms in the JSON total, within the 1000-entry limit', () => {
    const entry = { term: 'abcdefghij', definition: 'd'.repeat(100) };
    const count = Math.ceil(MAX_CUSTOM_TERMS_JSON_CHARS / JSON.stringify(entry).length);
    expect(count).toBeLessThanOrEqual(MAX_CUSTOM_TERMS);
    expect(refusal(terms(Array.from({ length: count }, () => entry))).path).toBe('stt.custom_terms');
  });
});

describe('configText: behaviors', () => {
  it.each(['preset:agent_empathy', 'preset:a', 'preset:Escalation-Request.v2', 'preset:42'])('accepts %s', (b) => {
    expect(accepts({ behaviors: [b] })).toEqual({ behaviors: [b] });
  });

  it.each(['preset:', 'foo:bar', 'agent_empathy', '', 'PRESET:x', ' preset:x', 'preset: x'])('refuses %j, naming behaviors.N', (b) => {
    expect(refusal({ behaviors: ['preset:ok', b] }).path).toBe('behaviors.1');
  });

  it('refuses a behavior definition without a name', () => {
    expect(refusal({ behaviors: [{ behavior_uuid: U.apology }] }).path).toBe('behaviors.0.name');
  });
});

describe('configText: uuid fields', () => {
  const BAD = ['not-a-uuid', '', '1234', '0b6f3a562f7c4d4e8f593a1f7b2f8c11', '0b6f3a56-2f7c-4d4e-8f59-3a1f7b2f8c1', '{0b6f3a56-2f7c-4d4e-8f59-3a1f7b2f8c11}', 42];
  const CASES: [string, (u: unknown) => unknown, string][] = [
    ['conversation_types.N.conversation_type_uuid', (u) => ({ conversation_types: [{ conversation_type_uuid: u, name: 'x' }] }), 'conversation_types.0.conversation_type_uuid'],
    ['participant_roles.N.participant_role_uuid', (u) => ({ participant_roles: [{ participant_role_uuid: u, name: 'x' }] }), 'participant_roles.0.participant_role_uuid'],
    ['participant_roles.N.applies_to_conversation_type_uuids.M', (u) => ({ participant_roles: [{ participant_role_uuid: U.agent, name: 'x', applies_to_conversation_type_uuids: [U.support, u] }] }), 'participant_roles.0.applies_to_conversation_type_uuids.1'],
    ['behaviors.N.behavior_uuid', (u) => ({ behaviors: [{ behavior_uuid: u, name: 'x' }] }), 'behaviors.0.behavior_uuid'],
    ['behaviors.N.applies_to_conversation_type_uuids.M', (u) => ({ behaviors: [{ behavior_uuid: U.apology, name: 'x', applies_to_conversation_type_uuids: [u] }] }), 'behaviors.0.applies_to_conversation_type_uuids.0'],
    ['behaviors.N.applies_to_participant_role_uuids.M', (u) => ({ behaviors: [{ behavior_uuid: U.apology, name: 'x', applies_to_participant_role_uuids: [u] }] }), 'behaviors.0.applies_to_participant_role_uuids.0'],
    ['default_conversation_type.conversation_type_uuid', (u) => ({ default_conversation_type: { conversation_type_uuid: u, name: 'x' } }), 'default_conversation_type.conversation_type_uuid'],
    ['default_participant_role.participant_role_uuid', (u) => ({ default_participant_role: { participant_role_uuid: u, name: 'x' } }), 'default_participant_role.participant_role_uuid'],
  ];

  it.each(CASES)('%s accepts a UUID', (_field, build) => {
    expect(() => configText(build(U.customer) as BatchConfig)).not.toThrow();
  });

  // The wire sets no RFC version or variant bits: any 8-4-4-4-12 hex form goes (issue 19).
  const ANY_HEX = ['aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa', '00000000-0000-0000-0000-000000000000', 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF', '12345678-1234-1234-1234-123456789abc'];
  it.each(CASES.flatMap(([field, build]) => ANY_HEX.map((u) => [field, u, build] as const)))('%s accepts the version-less %s', (_field, u, build) => {
    expect(() => configText(build(u) as BatchConfig)).not.toThrow();
  });

  it.each(CASES.flatMap(([field, build, path]) => BAD.map((bad) => [field, bad, build, path] as const)))(
    '%s refuses %j',
    (_field, bad, build, path) => {
      expect(refusal(build(bad)).path).toBe(path);
    },
  );
});

describe('configText: keys and scalar options', () => {
  it.each([
    [{ produce_summaries: true }, '', 'produce_summaries'],
    [{ config: 'default' }, '', 'config'],
    [{ stt: { speeker_diarization: true } }, 'stt', 'speeker_diarization'],
    [{ conversation_types: [{ conversation_type_uuid: U.support, name: 'x', description: 'y' }] }, 'conversation_types.0', 'description'],
  ])('refuses the unknown key in %j, naming where and which', (config, path, key) => {
    const e = refusal(config);
    expect(e.path).toBe(path);
    expect(e.message).toContain(key);
  });

  it.each([['en'], ['de'], ['ja'], [null]])('stt.language %j accepted', (language) => {
    expect(accepts(stt({ language }))).toEqual({ stt: { language } });
  });

  it.each([['english'], ['EN'], ['en-US'], ['e'], [''], [1]])('stt.language %j refused', (language) => {
    expect(refusal(stt({ language })).path).toBe('stt.language');
  });

  it.each([
    ['produce_topics'], ['produce_topic_sentiments'], ['produce_summary'],
  ])('%s must be a boolean', (key) => {
    expect(refusal({ [key]: 'yes' }).path).toBe(key);
  });

  it.each([['speaker_diarization'], ['emotion_signal'], ['accent_signal'], ['deepfake_signal'], ['pii_phi_tagging']])('stt.%s must be a boolean', (key) => {
    expect(refusal(stt({ [key]: 1 })).path).toBe(`stt.${key}`);
  });

  it('an empty name is refused', () => {
    expect(refusal({ conversation_types: [{ conversation_type_uuid: U.support, name: '' }] }).path).toBe('conversation_types.0.name');
  });
});
