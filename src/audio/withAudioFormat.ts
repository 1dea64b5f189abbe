// Stating the format of the bytes after an operator that changed them (a decoder, a
// resampler), keeping the source's flow control.
import type { OperatorFunction } from 'rxjs';
import { InputError } from '../errors/index.js';
import { AudioParamsSchema, type AudioFormat } from '../schema/audio.js';
import { AudioSource, audioMetaOf, type AudioChunk } from './meta.js';

/**
 * Say what the audio is from here on: the result carries `format` (and the upstream's flow
 * control, unchanged) for the session and for `rechunk`, `pace`, `toG711`, `transcode`.
 *
 * - Use it after an operator that changes the bytes (a decoder, a resampler, a `map` to
 *   another encoding): audio sources carry their format through pipeable operators, which
 *   would otherwise go on stating the old one.
 * - Use it after an operator that dropped the metadata (one written as
 *   `(source) => new Observable(…)`), to state the format again. Flow control that did not
 *   reach this point cannot be restored: pass `flow` to the source and to the session.
 * - Emits the upstream's chunks unchanged; cold, like its upstream. Subscribes upstream
 *   synchronously, so the session's flow control still reaches a pull-capable source.
 * - Throws `InputError('invalid_audio_params')` at once for a format the service refuses.
 *
 * ## Example
 * ```ts
 * import { map } from 'rxjs';
 * import { analyzeConversation, decodeG711, fileSource, withAudioFormat } from 'svc-stream';
 *
 * fileSource('samples/call-8k.mulaw', { format: { audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 } })
 *   .pipe(
 *     map((chunk) => decodeG711('mulaw', chunk)), // the bytes are s16le now
 *     withAudioFormat({ audio_format: 's16le', sample_rate: 8000, num_channels: 1 }),
 *     analyzeConversation(),
 *   )
 *   .subscribe({ next: (event) => console.log(event.type), error: (err) => console.error(String(err)) });
 * ```
 */
export function withAudioFormat(format: AudioFormat): OperatorFunction<AudioChunk, AudioChunk> {
  const parsed = AudioParamsSchema.safeParse({
    audio_format: format.audio_format,
    sample_rate: 'sample_rate' in format ? format.sample_rate : undefined,
    num_channels: 'num_channels' in format ? format.num_channels : undefined,
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new InputError('invalid_audio_params', `withAudioFormat: ${issue.message}`, { path: issue.path.join('.') });
  }
  return (upstream) => {
    const flow = audioMetaOf(upstream)?.flow;
    const out = new AudioSource<AudioChunk>({ format, ...(flow ? { flow } : {}) });
    out.source = upstream;
    return out;
  };
}
