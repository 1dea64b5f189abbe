// Where the keys and base URLs come from, written once: an option wins, then the environment
// variable, for every caller (sessions, batch calls, the orchestration client, the fleet, the
// CLI). A missing value is an InputError naming the option and the variable to set.
import { InputError } from './errors/index.js';

/** The environment variable behind each credential. */
export const CREDENTIAL_ENV = {
  /** The models API key (sessions, batch calls). */
  apiKey: 'SVC_API_KEY',
  /** The models API base URL. */
  baseUrl: 'SVC_BASE_URL',
  /** The orchestration API base URL (§4.5). */
  platformUrl: 'SVC_PLATFORM_URL',
  /** The orchestration account (`accountuuid` header, §5.2). */
  accountUuid: 'SVC_ACCOUNT_UUID',
  /** The orchestration API key (`apikey` header, §5.2), not a models API key. */
  platformApiKey: 'SVC_PLATFORM_API_KEY',
} as const;

/** The models API key and base URL as options give them; what is absent is read from the environment. */
export interface ModelsCredentialOptions {
  /** Default `SVC_API_KEY`. */
  readonly apiKey?: string | undefined;
  /** Default `SVC_BASE_URL`. */
  readonly baseUrl?: string | undefined;
}

/** The models API key and base URL, both present. */
export interface ModelsCredentials {
  readonly apiKey: string;
  readonly baseUrl: string;
}

/** The orchestration API's base URL, account and key as options give them. */
export interface PlatformCredentialOptions {
  /** Default `SVC_PLATFORM_URL`. */
  readonly baseUrl?: string | undefined;
  /** Default `SVC_ACCOUNT_UUID`. */
  readonly accountUuid?: string | undefined;
  /** Default `SVC_PLATFORM_API_KEY`. */
  readonly apiKey?: string | undefined;
}

/** The orchestration API's base URL, account and key, all present. */
export interface PlatformCredentials {
  readonly baseUrl: string;
  readonly accountUuid: string;
  readonly apiKey: string;
}

type Env = Readonly<Record<string, string | undefined>>;

/** An option, else its environment variable; an empty string counts as absent. */
function pick(option: string | undefined, variable: string, env: Env): string | undefined {
  const v = option ?? env[variable];
  return v === undefined || v === '' ? undefined : v;
}

/**
 * The models API key and base URL, each from its option or else `SVC_API_KEY` /
 * `SVC_BASE_URL` in `env`, or `undefined` fields where neither gives one. For the callers
 * that decide themselves what a missing value means (the CLI starts an emulator).
 */
export function readModelsCredentials(options: ModelsCredentialOptions, env: Env = process.env): Partial<ModelsCredentials> {
  const apiKey = pick(options.apiKey, CREDENTIAL_ENV.apiKey, env);
  const baseUrl = pick(options.baseUrl, CREDENTIAL_ENV.baseUrl, env);
  return { ...(apiKey !== undefined ? { apiKey } : {}), ...(baseUrl !== undefined ? { baseUrl } : {}) };
}

/**
 * The models API key and base URL (option, then `SVC_API_KEY` / `SVC_BASE_URL`). Throws an
 * InputError `invalid_argument` whose `path` names the missing option, base URL first.
 */
export function modelsCredentials(options: ModelsCredentialOptions, env: Env = process.env): ModelsCredentials {
  const { apiKey, baseUrl } = readModelsCredentials(options, env);
  if (baseUrl === undefined) throw missing('baseUrl', CREDENTIAL_ENV.baseUrl, 'no base URL', ' (`svc-stream emulator` prints one)');
  if (apiKey === undefined) throw missing('apiKey', CREDENTIAL_ENV.apiKey, 'no API key');
  return { apiKey, baseUrl };
}

/** The orchestration API's base URL, account and key, each from its option or else its variable in `env`; `undefined` where neither gives one. */
export function readPlatformCredentials(options: PlatformCredentialOptions, env: Env = process.env): Partial<PlatformCredentials> {
  const baseUrl = pick(options.baseUrl, CREDENTIAL_ENV.platformUrl, env);
  const accountUuid = pick(options.accountUuid, CREDENTIAL_ENV.accountUuid, env);
  const apiKey = pick(options.apiKey, CREDENTIAL_ENV.platformApiKey, env);
  return { ...(baseUrl !== undefined ? { baseUrl } : {}), ...(accountUuid !== undefined ? { accountUuid } : {}), ...(apiKey !== undefined ? { apiKey } : {}) };
}

/**
 * The orchestration API's base URL, account and key (option, then `SVC_PLATFORM_URL`,
 * `SVC_ACCOUNT_UUID`, `SVC_PLATFORM_API_KEY`). Throws an InputError `invalid_argument` whose
 * `path` names the first missing option.
 */
export function platformCredentials(options: PlatformCredentialOptions, env: Env = process.env): PlatformCredentials {
  const { baseUrl, accountUuid, apiKey } = readPlatformCredentials(options, env);
  if (baseUrl === undefined) throw missing('baseUrl', CREDENTIAL_ENV.platformUrl, 'no orchestration API URL');
  if (accountUuid === undefined) throw missing('accountUuid', CREDENTIAL_ENV.accountUuid, 'no account identifier');
  if (apiKey === undefined) throw missing('apiKey', CREDENTIAL_ENV.platformApiKey, 'no orchestration API key');
  return { baseUrl, accountUuid, apiKey };
}

function missing(option: string, variable: string, what: string, hint = ''): InputError {
  return new InputError('invalid_argument', `${what}: pass ${option} or set ${variable}${hint}`, { path: option });
}
