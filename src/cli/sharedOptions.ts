// The options several commands share, declared once for the one parser (options.ts): where
// requests go, the config, the scenario, --json, --speed; and the one check of a file named on
// the command line, in the one wording every command uses.
import { accessSync, constants, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { InputError } from '../errors/index.js';
import type { SessionConfig } from '../schema/config.js';
import { configText } from '../schema/configText.js';
import { samplePath } from '../samples.js';
import { readJsonFile } from './command.js';
import { option, type CliOption } from './options.js';

/**
 * Check that `path` is a readable, non-empty regular file, before anything starts. The one
 * wording of every command: `PATH: no such file` (`file_not_found`), `PATH: the file is empty`
 * (`empty_file`), `PATH: not a regular file` and `PATH: cannot read it (EACCES)`
 * (`invalid_argument`); with `flag`, the message starts with it (`--config PATH: …`).
 */
export function checkInputFile(path: string, flag?: string): void {
  const name = flag ? `${flag} ${path}` : path;
  const where = { path: flag ? flag.replace(/^-+/, '') : path };
  let size: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw new InputError('invalid_argument', `${name}: not a regular file`, where);
    size = st.size;
    accessSync(path, constants.R_OK);
  } catch (err) {
    if (err instanceof InputError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new InputError('file_not_found', `${name}: no such file`, { ...where, cause: err });
    throw new InputError('invalid_argument', `${name}: cannot read it (${code ?? (err as Error).message})`, { ...where, cause: err });
  }
  if (size === 0) throw new InputError('empty_file', `${name}: the file is empty`, where);
}

/** `--config FILE|default`: read and validated when parsed; `undefined` when absent. */
export const CONFIG_OPTION = {
  config: option.custom('FILE', "BatchConfig JSON file, or 'default' (the default)", (raw, flag): SessionConfig | undefined => readConfig(raw, flag)),
} as const;

/** The config a `--config` value names, checked now (a bad one fails before anything starts). */
export function readConfig(raw: string | undefined, flag = '--config'): SessionConfig | undefined {
  if (raw === undefined) return undefined;
  if (raw === 'default') return 'default';
  checkInputFile(raw, flag);
  const config = readJsonFile(raw, 'config') as SessionConfig;
  configText(config); // invalid_config naming the path in the config
  return config;
}

/** `--scenario FILE|sample`: the path of the scenario (or recording) the embedded emulator plays; `sample` is the shipped call's. */
export function scenarioOption(help: string): { readonly scenario: CliOption<string | undefined> } {
  return { scenario: option.custom('FILE|sample', help, (raw, flag) => scenarioPath(raw, flag)) };
}

/** The file a `--scenario` value names: `sample` is the shipped call's scenario; a file must exist. */
export function scenarioPath(raw: string | undefined, flag = '--scenario'): string | undefined {
  if (raw === undefined) return undefined;
  if (raw === 'sample') return samplePath('call.scenario.json');
  checkInputFile(raw, flag);
  return raw;
}

/** `--base-url URL`. */
export const BASE_URL_OPTION = {
  'base-url': option.text('URL', 'models API base (default SVC_BASE_URL, else the embedded emulator)'),
} as const;

/** `--api-key KEY`. */
export const API_KEY_OPTION = {
  'api-key': option.text('KEY', 'models API key (default SVC_API_KEY)'),
} as const;

/** `--speed X`: times live pace, above 0. */
export function speedOption(help: string): { readonly speed: CliOption<number | undefined> } {
  return { speed: option.number('X', help, { above: 0 }) };
}

/**
 * The scenario (or recorded session, replayed in step with the audio) a `--scenario` file
 * holds, for the embedded emulator; its named `audio` is the file's folder's. The emulator's
 * modules load only here, when a scenario is used.
 */
export async function loadScenario(path: string): Promise<unknown> {
  const text = await readFile(path, 'utf8').catch((err: Error) => {
    throw new InputError('invalid_argument', `--scenario ${path}: cannot read it (${err.message})`, { path: 'scenario' });
  });
  const { isRecording, recordingScenario } = await import('../emulator/recording.js');
  const { scenarioFromFile } = await import('../emulator/scenario.js');
  try {
    return isRecording(text) ? recordingScenario(text, path) : scenarioFromFile(JSON.parse(text), path);
  } catch (err) {
    throw new InputError('invalid_argument', `--scenario ${path}: ${(err as Error).message}`, { path: 'scenario' });
  }
}
