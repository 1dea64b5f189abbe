// The sample call the package ships (samples/ in the tarball), found from the installed package
// so examples run wherever the package is, not only in a clone of the repository.
import { fileURLToPath } from 'node:url';
import { InputError } from './errors/index.js';

/**
 * The files the package ships under `samples/`: the ~38.5 s two-voice call (`call.wav`, 16 kHz
 * mono; `call-8k.mulaw`, the same call as 8 kHz G.711 mu-law bytes, as a telephony media stream
 * carries it), the emulator scenario that plays its analysis (`call.scenario.json`) and a config
 * that turns on emotions and behaviors (`call.config.json`).
 */
export const SAMPLE_FILES = ['call.wav', 'call-8k.mulaw', 'call.scenario.json', 'call.config.json'] as const;

/** One of {@link SAMPLE_FILES}. */
export type SampleFile = (typeof SAMPLE_FILES)[number];

/**
 * The absolute path of a sample the package ships, wherever it is installed.
 *
 * - Throws `InputError('invalid_argument')` for a name not in {@link SAMPLE_FILES}.
 *
 * ## Example
 * ```ts
 * import { fileSource, samplePath } from 'svc-stream';
 *
 * const audio$ = fileSource(samplePath('call.wav')); // cold: the file is read per subscription
 * ```
 */
export function samplePath(name: SampleFile): string {
  if (!(SAMPLE_FILES as readonly string[]).includes(name)) {
    throw new InputError('invalid_argument', `no sample named ${JSON.stringify(name)}; the package ships ${SAMPLE_FILES.join(', ')}`, { path: 'name' });
  }
  // src/samples.ts and dist/samples.js both sit one level below the folder that holds samples/.
  return fileURLToPath(new URL(`../samples/${name}`, import.meta.url));
}
