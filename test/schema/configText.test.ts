// configText: the config's one check and rendering, for the config frame and the batch
// `config` field (the rules of the config itself are test/schema/config.test.ts's).
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors/index.js';
import type { BatchConfig } from '../../src/schema/config.js';
import { configText } from '../../src/schema/configText.js';

function refusal(config: unknown): InputError {
  try {
    configText(config as BatchConfig);
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    return err as InputError;
  }
  throw new Error(`configText accepted ${JSON.stringify(config)}`);
}

describe('configText: the literal default', () => {
  it.each([['default'], [undefined]])('%j → "default"', (c) => {
    expect(configText(c as 'default' | undefined)).toBe('default');
  });

  it('an empty object is a valid BatchConfig, sent as JSON', () => {
    expect(configText({})).toBe('{}');
  });

  it.each([['Default'], ['nonsense'], [''], [null], [[]], [42], [true]])('%j is refused at the root', (c) => {
    const e = refusal(c);
    expect(e.path).toBe('');
    expect(e.message).toMatch(/^invalid config at \(root\): /);
  });
});

describe('configText: a refusal', () => {
  it('is invalid_config, names the first path in the message and carries every issue in detail', () => {
    const e = refusal({ produce_topics: 'yes', stt: { language: 7 } });
    expect(e.code).toBe('invalid_config');
    expect(e.retryable).toBe(false);
    expect(e.message).toMatch(/^invalid config at (produce_topics|stt\.language): /);
    expect(e.path === 'produce_topics' || e.path === 'stt.language').toBe(true);
    expect((e.detail as unknown[]).length).toBe(2);
  });
});

describe('configText: the rendering', () => {
  it('is the JSON of the validated config, which renders to itself again', () => {
    const config: BatchConfig = { produce_summary: true, stt: { speaker_diarization: true, custom_terms: ['ACME', { term: 'svc' }] } };
    const text = configText(config);
    expect(JSON.parse(text)).toEqual(config);
    expect(configText(JSON.parse(text) as BatchConfig)).toBe(text);
  });
});
