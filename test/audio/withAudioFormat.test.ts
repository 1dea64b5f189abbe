// withAudioFormat: states the format of the bytes from here on, keeps the source's flow
// control, emits the chunks unchanged; a format the service refuses is refused at once.
import { from, lastValueFrom, map, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { audioMetaOf, fromAsyncIterable, InputError, withAudioFormat, type RawAudioFormat } from 'svc-stream';

const S16: RawAudioFormat = { audio_format: 's16le', sample_rate: 8000, num_channels: 1 };
const MULAW: RawAudioFormat = { audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 };

describe('withAudioFormat', () => {
  it('replaces the format the source states, and keeps its flow slot', async () => {
    async function* chunks() {
      yield new Uint8Array([1, 2]);
      yield new Uint8Array([3]);
    }
    const source = fromAsyncIterable(chunks(), { format: MULAW });
    const stated = source.pipe(map((c) => c), withAudioFormat(S16));
    expect(audioMetaOf(stated)).toEqual({ format: S16, flow: audioMetaOf(source)!.flow });
    expect((await lastValueFrom(stated.pipe(toArray()))).map((c) => [...c])).toEqual([[1, 2], [3]]);
  });

  it('gives metadata to a plain observable, and operators after it keep it', () => {
    const stated = from([new Uint8Array(4)]).pipe(withAudioFormat({ audio_format: 'wav' }), map((c) => c));
    expect(audioMetaOf(stated)).toEqual({ format: { audio_format: 'wav' } });
  });

  it('subscribes upstream synchronously (a session can hand its flow control through)', () => {
    let subscribed = false;
    const stated = from([new Uint8Array(1)]).pipe(map((c) => { subscribed = true; return c; }), withAudioFormat(S16));
    stated.subscribe();
    expect(subscribed).toBe(true);
  });

  it('refuses at once, with the parameter, a format the service refuses', () => {
    const refusal = (format: unknown) => { try { withAudioFormat(format as RawAudioFormat); } catch (e) { return e as InputError; } throw new Error('accepted'); };
    expect(refusal({ audio_format: 'mulaw', sample_rate: 8000 })).toMatchObject({ code: 'invalid_audio_params', path: 'num_channels' });
    expect(refusal({ audio_format: 's16le', sample_rate: 12345, num_channels: 1 })).toMatchObject({ code: 'invalid_audio_params', path: 'sample_rate' });
    expect(refusal({ audio_format: 'opus' })).toBeInstanceOf(InputError);
  });
});
