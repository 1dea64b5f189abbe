// Where a command sends its requests: flags, then the environment, then, when nothing is
// configured, an embedded emulator started for the command's lifetime.
import type { RunningEmulator, EmulatorOptions } from '../emulator/server.js';
import type { CliIo } from './command.js';

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
 * Flags win over the environment (`SVC_API_KEY`, `SVC_BASE_URL`, `SVC_PLATFORM_URL`,
 * `SVC_ACCOUNT_UUID`, `SVC_PLATFORM_API_KEY`). With neither a key nor a base URL, an
 * embedded emulator is started and a note goes to stderr.
 */
export async function resolveEndpoint(flags: EndpointFlags, io: CliIo, emulatorOptions: EmulatorOptions = {}): Promise<ModelsEndpoint> {
  const apiKey = flags.apiKey ?? io.env['SVC_API_KEY'];
  const baseUrl = flags.baseUrl ?? io.env['SVC_BASE_URL'];
  const platformUrl = flags.platformUrl ?? io.env['SVC_PLATFORM_URL'];
  const accountUuid = flags.accountUuid ?? io.env['SVC_ACCOUNT_UUID'];
  const platformApiKey = flags.platformApiKey ?? io.env['SVC_PLATFORM_API_KEY'];
  if (!apiKey && !baseUrl) {
    // Loaded only when used: a configured endpoint never loads the emulator's server.
    const { startEmulator } = await import('../emulator/server.js');
    const emulator = await startEmulator(emulatorOptions);
    io.stderr.write(`svc-stream: no SVC_API_KEY or SVC_BASE_URL set; using the embedded emulator at ${emulator.baseUrl}\n`);
    return {
      apiKey: emulator.apiKey,
      baseUrl: emulator.baseUrl,
      emulator,
      platformUrl: platformUrl ?? emulator.platformUrl,
      accountUuid: accountUuid ?? emulator.accountUuid,
      platformApiKey: platformApiKey ?? emulator.platformApiKey,
      close: () => emulator.close(),
    };
  }
  if (!apiKey) throw Object.assign(new Error('SVC_BASE_URL is set but SVC_API_KEY is not: set both, or neither to use the embedded emulator'), { code: 'invalid_argument' });
  if (!baseUrl) throw Object.assign(new Error('SVC_API_KEY is set but SVC_BASE_URL is not: set both, or neither to use the embedded emulator'), { code: 'invalid_argument' });
  return { apiKey, baseUrl, emulator: undefined, platformUrl, accountUuid, platformApiKey, close: async () => undefined };
}
