// The one credentials resolver: an option wins, then the environment variable; an empty string
// counts as absent; what is missing is an InputError naming the option and the variable.
import { describe, expect, it } from 'vitest';
import { InputError } from 'svc-stream';
import { CREDENTIAL_ENV, modelsCredentials, platformCredentials, readModelsCredentials, readPlatformCredentials } from '../src/credentials.js';

const refusal = (f: () => unknown): InputError => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    return e as InputError;
  }
  throw new Error('no refusal');
};

describe('models credentials', () => {
  it('an option wins over its variable; a variable fills what is not given; empty is absent', () => {
    const env = { SVC_API_KEY: 'env-key', SVC_BASE_URL: 'http://env' };
    expect(modelsCredentials({ apiKey: 'opt-key' }, env)).toEqual({ apiKey: 'opt-key', baseUrl: 'http://env' });
    expect(readModelsCredentials({ baseUrl: '' }, {})).toEqual({});
    expect(readModelsCredentials({ apiKey: '' }, { SVC_API_KEY: 'k' })).toEqual({});
  });

  it('a missing value names the option and the variable, base URL first', () => {
    expect(refusal(() => modelsCredentials({}, {}))).toMatchObject({ code: 'invalid_argument', path: 'baseUrl', message: expect.stringContaining(`pass baseUrl or set ${CREDENTIAL_ENV.baseUrl}`) });
    expect(refusal(() => modelsCredentials({ baseUrl: 'http://x' }, {}))).toMatchObject({ path: 'apiKey', message: 'no API key: pass apiKey or set SVC_API_KEY' });
  });
});

describe('platform credentials', () => {
  it('reads the three from their own variables, never the models key', () => {
    const env = { SVC_PLATFORM_URL: 'http://p', SVC_ACCOUNT_UUID: 'acc', SVC_PLATFORM_API_KEY: 'pk', SVC_API_KEY: 'models' };
    expect(platformCredentials({}, env)).toEqual({ baseUrl: 'http://p', accountUuid: 'acc', apiKey: 'pk' });
    expect(readPlatformCredentials({}, { SVC_API_KEY: 'models' })).toEqual({});
  });

  it('names the first missing one', () => {
    expect(refusal(() => platformCredentials({ baseUrl: 'http://p' }, {}))).toMatchObject({ path: 'accountUuid', message: expect.stringContaining('SVC_ACCOUNT_UUID') });
    expect(refusal(() => platformCredentials({ baseUrl: 'http://p', accountUuid: 'a' }, {}))).toMatchObject({ path: 'apiKey', message: expect.stringContaining('SVC_PLATFORM_API_KEY') });
  });
});
