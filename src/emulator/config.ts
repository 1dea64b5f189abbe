// The emulator config file (`svc-stream emulator --config FILE`): organizations with their
// keys and limits, the scenario (or scenarios, chosen per connection) and the platform account.
import { readFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { dirname, isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { MAX_CONCURRENCY, MODELS } from './accounts.js';
import { ScenarioSchema, loadScenarioFile, type Scenario } from './scenario.js';
import type { EmulatorOptions } from './server.js';

const ModelSchema = z.enum(MODELS);
const Concurrency = z.number().int().min(1).max(MAX_CONCURRENCY);

/** Validates one entry of `organizations` in an emulator config file; infers the fields of {@link OrganizationSpec}. */
export const OrganizationConfigSchema = z.strictObject({
  id: z.string().min(1).optional(),
  keys: z.array(z.string().min(1)).min(1),
  models: z.array(ModelSchema).optional(),
  concurrency: z.union([Concurrency, z.partialRecord(ModelSchema, Concurrency)]).optional(),
  monthlyUsageQuotaMs: z.partialRecord(ModelSchema, z.number().min(0)).optional(),
  monthlyCreditLimit: z.number().min(0).nullable().optional(),
  credits: z.number().optional(),
  creditsPerAudioSecond: z.number().min(0).optional(),
});

/** A scenario inline, or the path of a scenario JSON file (relative to the config file). */
const ScenarioRef = z.union([z.string().min(1), ScenarioSchema]);

/**
 * Validates an emulator config file (`svc-stream emulator --config FILE`): listen address,
 * organizations, the scenario(s) and the rules that pick one per connection, and the
 * orchestration account. Unknown keys are refused. Infers {@link EmulatorConfig}.
 */
export const EmulatorConfigSchema = z.strictObject({
  host: z.string().optional(),
  port: z.number().int().min(0).max(65535).optional(),
  /** The key printed in `SVC_API_KEY`. Default: the first key of the first organization, or the development key. */
  apiKey: z.string().min(1).optional(),
  organizations: z.array(OrganizationConfigSchema).min(1).optional(),
  /** The scenario of every connection no rule below picks one for. */
  scenario: ScenarioRef.optional(),
  /** Named scenarios, picked per connection by `scenarioByKey` or `scenarioByPath`. */
  scenarios: z.record(z.string(), ScenarioRef).optional(),
  /** API key → scenario name (first rule tried). */
  scenarioByKey: z.record(z.string(), z.string()).optional(),
  /** Streaming path → scenario name (second rule). */
  scenarioByPath: z.record(z.string(), z.string()).optional(),
  platform: z.strictObject({ accountUuid: z.string().optional(), apiKey: z.string().optional() }).optional(),
  /** Caps on what one peer may send (`EmulatorLimits`); each field defaults on its own. */
  limits: z
    .strictObject({
      inactivityTimeoutMs: z.number().int().min(0).optional(),
      maxMessageBytesBeforeConfig: z.number().int().min(1).optional(),
      maxMessageBytes: z.number().int().min(1).optional(),
      maxFormParts: z.number().int().min(1).optional(),
      maxFormFieldBytes: z.number().int().min(1).optional(),
    })
    .optional(),
});
/** The contents of an emulator config file, as {@link EmulatorConfigSchema} accepts it. */
export type EmulatorConfig = z.infer<typeof EmulatorConfigSchema>;

/**
 * Read an emulator config file and turn it into `startEmulator` options. Rejects with an
 * Error naming the file and the offending path when it is not valid.
 *
 * ## Example
 * ```ts
 * import { loadEmulatorConfig, startEmulator } from 'svc-stream/emulator';
 *
 * const emu = await startEmulator(await loadEmulatorConfig('emulator.json'));
 * console.log(emu.envLines().join('\n'));
 * ```
 */
export async function loadEmulatorConfig(path: string): Promise<EmulatorOptions> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw new Error(`${path}: ${(err as Error).message}`);
  }
  return emulatorOptionsFromConfig(value, dirname(resolve(path)));
}

/** The options for a config value already read; scenario paths resolve against `baseDir`. */
export async function emulatorOptionsFromConfig(value: unknown, baseDir = process.cwd()): Promise<EmulatorOptions> {
  const parsed = EmulatorConfigSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`emulator config: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  const cfg = parsed.data;
  // An inline scenario's named audio, when relative, is the config file's folder's.
  const load = async (ref: string | Scenario): Promise<Scenario> =>
    typeof ref === 'string' ? loadScenarioFile(resolve(baseDir, ref)) : ref.audio !== undefined && !isAbsolute(ref.audio) ? { ...ref, audio: resolve(baseDir, ref.audio) } : ref;

  const named = new Map<string, Scenario>();
  for (const [name, ref] of Object.entries(cfg.scenarios ?? {})) named.set(name, await load(ref));
  const pick = (name: string, rule: string): Scenario => {
    const s = named.get(name);
    if (!s) throw new Error(`emulator config: ${rule} names scenario ${JSON.stringify(name)}, which is not in scenarios`);
    return s;
  };
  const byKey = new Map(Object.entries(cfg.scenarioByKey ?? {}).map(([k, n]) => [k, pick(n, `scenarioByKey`)]));
  const byPath = new Map(Object.entries(cfg.scenarioByPath ?? {}).map(([p, n]) => [p, pick(n, `scenarioByPath`)]));
  const fallback: Scenario = cfg.scenario !== undefined ? await load(cfg.scenario) : ScenarioSchema.parse({});

  const scenario =
    byKey.size === 0 && byPath.size === 0
      ? fallback
      : (req: IncomingMessage): Scenario => {
          const url = new URL(req.url ?? '/', 'http://emulator');
          return byKey.get(url.searchParams.get('api_key') ?? '') ?? byPath.get(url.pathname) ?? fallback;
        };

  const apiKey = cfg.apiKey ?? cfg.organizations?.[0]?.keys[0];
  return {
    ...(cfg.host !== undefined ? { host: cfg.host } : {}),
    ...(cfg.port !== undefined ? { port: cfg.port } : {}),
    ...(apiKey !== undefined ? { apiKey } : {}),
    ...(cfg.organizations ? { organizations: cfg.organizations } : {}),
    ...(cfg.platform ? { platform: cfg.platform } : {}),
    ...(cfg.limits ? { limits: cfg.limits } : {}),
    scenario,
  };
}
