// Where a command sends its requests: flags, then the environment, then, when nothing is
// configured, an embedded emulator started for the command's lifetime.
import type { RunningEmulator, EmulatorOptions } from '../emulator/server.js';
import type { CliIo } from './command.js';
import { CREDENTIAL_ENV, readModelsCredentials, readPlatformCredentials } from '../credentials.js';
import { InputError } from '../errors/index.js';

export interface ModelsEndpoint {
  readonly apiKey: string;
  readonly baseUrl: string;
  /** The emulator started for this command, if any. */
  readonly emulator: RunningEmulator | undefined;
  readonly platformUrl: string | undefined;
  readonly accountUuid: string | undefined;
  readonly platformApiKey: string | undefined;
  close(): Promise<void>;
}

export interface EndpointFlags {
  readonly baseUrl?: string | undefined;
  readonly apiKey?: string | undefined;
  readonly platformUrl?: string | undefined;
  readonly accountUuid?: string | undefined;
  readonly platformApiKey?: string | undefined;
}

/**
 * Where a command's requests go, opened for its lifetime. Flags win over the environment
 * (`SVC_API_KEY`, `SVC_BASE_URL`, `SVC_PLATFORM_URL`, `SVC_ACCOUNT_UUID`,
 * `SVC_PLATFORM_API_KEY`), by the library's one rule (src/credentials.ts). With neither a key
 * nor a base URL, an embedded emulator is started and a note goes to stderr.
 */
export async function openEndpoint(flags: EndpointFlags, io: CliIo, emulatorOptions: EmulatorOptions = {}): Promise<ModelsEndpoint> {
  const { apiKey, baseUrl } = readModelsCredentials(flags, io.env);
  const platform = readPlatformCredentials({ baseUrl: flags.platformUrl, accountUuid: flags.accountUuid, apiKey: flags.platformApiKey }, io.env);
  if (apiKey === undefined && baseUrl === undefined) {
    // Loaded only when used: a configured endpoint never loads the emulator's server.
    const { startEmulator } = await import('../emulator/server.js');
    const emulator = await startEmulator(emulatorOptions);
    io.stderr.write(`svc-stream: no ${CREDENTIAL_ENV.apiKey} or ${CREDENTIAL_ENV.baseUrl} set; using the embedded emulator at ${emulator.baseUrl}\n`);
    return {
      apiKey: emulator.apiKey,
      baseUrl: emulator.baseUrl,
      emulator,
      platformUrl: platform.baseUrl ?? emulator.platformUrl,
      accountUuid: platform.accountUuid ?? emulator.accountUuid,
      platformApiKey: platform.apiKey ?? emulator.platformApiKey,
      close: () => emulator.close(),
    };
  }
  // Both or neither: one of them alone is a half-configured service, not a reason to start an emulator.
  if (apiKey === undefined || baseUrl === undefined) {
    const [set, unset] = apiKey === undefined ? [CREDENTIAL_ENV.baseUrl, CREDENTIAL_ENV.apiKey] : [CREDENTIAL_ENV.apiKey, CREDENTIAL_ENV.baseUrl];
    throw new InputError('invalid_argument', `${set} is set but ${unset} is not: set both, or neither to use the embedded emulator`, { path: apiKey === undefined ? 'apiKey' : 'baseUrl' });
  }
  return { apiKey, baseUrl, emulator: undefined, platformUrl: platform.baseUrl, accountUuid: platform.accountUuid, platformApiKey: platform.apiKey, close: async () => undefined };
}
