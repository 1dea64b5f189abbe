// The interleaved media-stream call: both tracks of one stream, each out of its own jitter
// buffer, mixed into one two-channel live stream (channel 1 inbound, channel 2 outbound).
import type { Observable } from 'rxjs';
import type { AudioObservable } from '../audio/meta.js';
import { RAW_FORMAT_DESCRIPTORS, type RawAudioFormat } from '../schema/audio.js';
import { LiveAudio, type LiveGrouping } from './LiveAudio.js';
import { TrackInterleaver } from './TrackInterleaver.js';

/** Feeds a {@link TrackInterleaver} from the tracks' audio and ends the call when every track added has. */
export class TrackMixer {
  private readonly live: LiveAudio;
  private readonly interleaver: TrackInterleaver;
  private added = 0;
  private endedTracks = 0;

  constructor(format: RawAudioFormat, maxSkewMs: number, grouping: LiveGrouping | undefined) {
    this.live = new LiveAudio(format, grouping);
    const law = format.audio_format === 'alaw' ? 'alaw' : 'mulaw';
    this.interleaver = new TrackInterleaver(RAW_FORMAT_DESCRIPTORS[law].silence[0]!, Math.round((maxSkewMs * format.sample_rate) / 1000));
  }

  /** The two-channel call's audio (hot, kept until the first subscriber: see `LiveAudio`). */
  get audio$(): AudioObservable {
    return this.live.audio$;
  }

  /** Mix `audio$` in as channel `index` (0 inbound, 1 outbound). */
  add(index: 0 | 1, audio$: Observable<Uint8Array>): void {
    this.added++;
    audio$.subscribe({
      next: (bytes) => this.live.push(this.interleaver.push(index, bytes)),
      complete: () => {
        if (++this.endedTracks === this.added) this.end();
      },
    });
  }

  /** Pad the shorter track, release the rest and end the call. */
  end(): void {
    if (this.live.isEnded) return;
    this.live.push(this.interleaver.end());
    this.live.end();
  }
}
