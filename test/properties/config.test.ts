// Config validation agrees with the schema: generated valid configs are accepted by
// configText and round-trip through the frame; each single mutation is refused with its path.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InputError, type BatchConfig } from 'svc-stream';
import { BatchConfigSchema } from 'svc-stream/schema';
import { configText } from '../../src/schema/configText.js';

const uuid = fc.uuid({ version: [1, 2, 3, 4, 5, 6, 7, 8] });
const name = fc.string({ minLength: 1, maxLength: 12 });
const desc = fc.option(fc.string({ maxLength: 20 }), { nil: undefined });
const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 12 });

function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });

const typeDef = fc.record({ conversation_type_uuid: uuid, name, short_description: desc, detailed_description: desc }).map(defined);
const roleDef = fc.record({ participant_role_uuid: uuid, name, short_description: desc, applies_to_conversation_type_uuids: opt(fc.array(uuid, { maxLength: 2 })) }).map(defined);
const behaviorDef = fc.record({ behavior_uuid: uuid, name, detailed_description: desc, applies_to_participant_role_uuids: opt(fc.array(uuid, { maxLength: 2 })) }).map(defined);
const presetRef = fc.stringMatching(/^preset:[A-Za-z0-9][A-Za-z0-9_.-]{0,10}$/);
const customTerm = fc.oneof(
  fc.string({ minLength: 1, maxLength: 12 }),
  fc.record({ term: fc.string({ minLength: 1, maxLength: 12 }), definition: opt(fc.string({ maxLength: 40 })), pronunciations: opt(fc.array(printable, { maxLength: 3 })) }).map(defined),
);
const stt = fc
  .record({
    speaker_diarization: opt(fc.boolean()),
    emotion_signal: opt(fc.boolean()),
    accent_signal: opt(fc.boolean()),
    deepfake_signal: opt(fc.boolean()),
    pii_phi_tagging: opt(fc.boolean()),
    language: opt(fc.option(fc.stringMatching(/^[a-z]{2}$/), { nil: null })),
    custom_terms: opt(fc.option(fc.array(customTerm, { maxLength: 5 }), { nil: null })),
  })
  .map(defined);

const configArb: fc.Arbitrary<BatchConfig> = fc
  .record({
    conversation_types: opt(fc.array(typeDef, { maxLength: 3 })),
    participant_roles: opt(fc.array(roleDef, { maxLength: 3 })),
    behaviors: opt(fc.array(fc.oneof(presetRef, behaviorDef), { maxLength: 3 })),
    stt: opt(stt),
    produce_topics: opt(fc.boolean()),
    produce_topic_sentiments: opt(fc.boolean()),
    produce_summary: opt(fc.boolean()),
    default_conversation_type: opt(fc.option(typeDef, { nil: null })),
    default_participant_role: opt(fc.option(roleDef, { nil: null })),
  })
  .map((c) => defined(c) as BatchConfig);

describe('configText agrees with BatchConfigSchema', () => {
  it('a valid generated config is accepted, and the frame round-trips to the same config', () => {
    fc.assert(
      fc.property(configArb, (config) => {
        expect(BatchConfigSchema.safeParse(config).success).toBe(true);
        const frame = configText(config);
        expect(JSON.parse(frame)).toEqual(config);
        expect(configText(JSON.parse(frame) as BatchConfig)).toBe(frame);
      }),
      { numRuns: 150 },
    );
  });

  it('on arbitrary values, configText refuses exactly what the schema refuses', () => {
    const anyConfig = fc.oneof(fc.anything({ maxDepth: 3 }), configArb);
    fc.assert(
      fc.property(anyConfig, (value) => {
        fc.pre(value !== undefined && value !== 'default');
        const schemaOk = BatchConfigSchema.safeParse(value).success;
        let thrown: unknown;
        try {
          configText(value as BatchConfig);
        } catch (err) {
          thrown = err;
        }
        expect(thrown === undefined).toBe(schemaOk);
        if (thrown !== undefined) {
          expect(thrown).toBeInstanceOf(InputError);
          expect((thrown as InputError).code).toBe('invalid_config');
        }
      }),
      { numRuns: 150 },
    );
  });

  /** One mutation: where it lands (a path into the config) and what it writes there. */
  interface Mutation {
    readonly name: string;
    readonly apply: (c: Record<string, unknown>, pick: number) => string;
  }

  const at = <T>(list: T[], pick: number): [T, number] => {
    const i = pick % list.length;
    return [list[i]!, i];
  };

  const MUTATIONS: Mutation[] = [
    {
      name: 'a conversation type uuid that is not a UUID',
      apply: (c, pick) => {
        const list = ((c['conversation_types'] as object[] | undefined)?.length ? c['conversation_types'] : (c['conversation_types'] = [{ conversation_type_uuid: '1b4e28ba-2fa1-41d2-883f-0016d3cca427', name: 'Sales' }])) as Array<Record<string, unknown>>;
        const [t, i] = at(list, pick);
        t['conversation_type_uuid'] = 'type-1';
        return `conversation_types.${i}.conversation_type_uuid`;
      },
    },
    {
      name: 'an empty role name',
      apply: (c, pick) => {
        const list = ((c['participant_roles'] as object[] | undefined)?.length ? c['participant_roles'] : (c['participant_roles'] = [{ participant_role_uuid: '1b4e28ba-2fa1-41d2-883f-0016d3cca427', name: 'Agent' }])) as Array<Record<string, unknown>>;
        const [r, i] = at(list, pick);
        r['name'] = '';
        return `participant_roles.${i}.name`;
      },
    },
    {
      name: 'a behavior string that is not preset:<id>',
      apply: (c, pick) => {
        const list = ((c['behaviors'] as unknown[] | undefined)?.length ? c['behaviors'] : (c['behaviors'] = ['preset:empathy'])) as unknown[];
        const i = pick % list.length;
        list[i] = 'empathy';
        return `behaviors.${i}`;
      },
    },
    {
      name: 'an unknown key in a behavior definition',
      apply: (c) => {
        const list = (c['behaviors'] ??= []) as unknown[];
        list.push({ behavior_uuid: '1b4e28ba-2fa1-41d2-883f-0016d3cca427', name: 'Empathy', weight: 3 });
        return `behaviors.${list.length - 1}`;
      },
    },
    {
      name: 'an empty custom term object',
      apply: (c) => {
        const s = (c['stt'] ??= {}) as Record<string, unknown>;
        const terms = (s['custom_terms'] ??= []) as unknown[];
        terms.push({ term: '' });
        return `stt.custom_terms.${terms.length - 1}.term`;
      },
    },
    {
      name: 'a pronunciation that is not printable ASCII',
      apply: (c) => {
        const s = (c['stt'] ??= {}) as Record<string, unknown>;
        const terms = (s['custom_terms'] ??= []) as unknown[];
        terms.push({ term: 'Northwind', pronunciations: ['ok', 'nörth'] });
        return `stt.custom_terms.${terms.length - 1}.pronunciations.1`;
      },
    },
    {
      name: 'a definition over 256 characters',
      apply: (c) => {
        const s = (c['stt'] ??= {}) as Record<string, unknown>;
        const terms = (s['custom_terms'] ??= []) as unknown[];
        terms.push({ term: 'Northwind', definition: 'd'.repeat(257) });
        return `stt.custom_terms.${terms.length - 1}.definition`;
      },
    },
    {
      name: 'a language that is not ISO 639-1',
      apply: (c) => {
        const s = (c['stt'] ??= {}) as Record<string, unknown>;
        s['language'] = 'english';
        return 'stt.language';
      },
    },
    {
      name: 'a boolean flag given as a string',
      apply: (c, pick) => {
        const key = ['produce_topics', 'produce_topic_sentiments', 'produce_summary'][pick % 3]!;
        c[key] = 'yes';
        return key;
      },
    },
    {
      name: 'a default role that is not an object',
      apply: (c) => {
        c['default_participant_role'] = 'Agent';
        return 'default_participant_role';
      },
    },
  ];

  it.each(MUTATIONS)('a generated config with $name is refused by both, with that path', ({ apply }) => {
    fc.assert(
      fc.property(configArb, fc.nat(), (config, pick) => {
        const mutated = structuredClone(config) as Record<string, unknown>;
        const path = apply(mutated, pick);
        const parsed = BatchConfigSchema.safeParse(mutated);
        expect(parsed.success).toBe(false);
        let thrown: unknown;
        try {
          configText(mutated as BatchConfig);
        } catch (err) {
          thrown = err;
        }
        expect(thrown).toBeInstanceOf(InputError);
        expect((thrown as InputError).path).toBe(path);
        expect((thrown as InputError).message).toContain(path);
      }),
      { numRuns: 40 },
    );
  });
});
