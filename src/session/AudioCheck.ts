// What a session knows of the audio it was given, and what it says when it does not know
// enough: no metadata on the observable (a plain `new Observable`, `from(…)`, or an operator
// that does not lift), no format and bytes the service cannot detect, or a pull-capable
// source its flow control did not reach. Warnings, not errors: the session goes on.
import type { AudioSourceMeta, AudioChunk } from '../audio/meta.js';
import { sniffContainer, SNIFF_BYTES } from '../internal/sniffContainer.js';
import type { AudioFormat } from '../schema/audio.js';
import type { FlowControl } from '../audio/FlowControl.js';
import type { StatsCounters } from './stats.js';
import { callUser } from '../internal/userCallback.js';
import type { AudioSourceWarning, AudioWarning, WarningHandler } from '../warnings.js';

/** The session options about audio warnings (see docs/audio-sources.md). */
export interface AudioWarningOptions {
  /**
   * Called with each {@link AudioWarning}, as it is counted in `stats.audioWarnings`. It must
   * not throw: an exception is rethrown asynchronously (as RxJS reports unhandled errors).
   */
  readonly onAudioWarning?: WarningHandler<AudioWarning> | undefined;
}

/** What the audio check needs of the session's options. */
interface CheckedOptions extends AudioWarningOptions {
  readonly format?: AudioFormat | undefined;
  readonly flow?: FlowControl | undefined;
}

/** One session's checks of its audio: at start, when subscribed, and on the first bytes. */
export class AudioCheck {
  /** The first bytes, while no format is known and the container is not yet told. */
  private head: Uint8Array | undefined;
  private headBytes = 0;

  constructor(
    private readonly meta: AudioSourceMeta | undefined,
    private readonly options: CheckedOptions,
    private readonly stats: StatsCounters,
  ) {
    const known = options.format?.audio_format ?? meta?.format?.audio_format;
    if (known === undefined) this.head = new Uint8Array(SNIFF_BYTES);
  }

  /** True while the first bytes are still looked at. */
  get sniffing(): boolean {
    return this.head !== undefined;
  }

  /** Before subscribing: an observable that says neither its format nor how to pause it, and nothing given instead. */
  begin(): void {
    const meta = this.meta;
    if (meta?.format?.audio_format !== undefined || meta?.flow !== undefined) return;
    if (this.options.format !== undefined || this.options.flow !== undefined) return;
    this.warn(
      'audio_meta_missing',
      'the audio observable carries no format and no flow control (a new Observable, from(…), or an operator that does not lift dropped them): the service detects the format from the bytes and the source cannot be paused; pass `format` and `flow` to the session, or state the format with withAudioFormat()',
    );
  }

  /**
   * After subscribing: whether the session can pause the source (its flow control reached
   * one, or the caller gave `flow`). Warns when a pull-capable source was not reached.
   */
  pausable(connected: boolean): boolean {
    if (connected || this.options.flow !== undefined) return true;
    if (this.meta?.flow !== undefined) {
      this.warn(
        'flow_not_connected',
        'the audio source can pause, but an operator between it and the session subscribes it later (as subscribeOn does), so flow control does not reach it: the session treats it as a push source bounded by maxBufferedBytes; pass the same FlowControl as `flow` to the source and the session',
      );
    }
    return false;
  }

  /** The first bytes of an audio of unknown format: warn when they are no container the service detects. */
  sniff(chunk: AudioChunk): void {
    const head = this.head!;
    const n = Math.min(SNIFF_BYTES - this.headBytes, chunk.byteLength);
    head.set(chunk.subarray(0, n), this.headBytes);
    this.headBytes += n;
    if (this.headBytes < SNIFF_BYTES) return;
    this.head = undefined;
    if (sniffContainer(head) !== undefined) return;
    this.warn(
      'audio_format_unknown',
      'no audio format is known (neither `format` nor the source says one) and the first bytes are no container the service detects (wav mp3 ogg flac webm aac aiff): the service will refuse them as invalid_audio; pass `format` to the session or state it with withAudioFormat()',
    );
  }

  private warn(code: AudioSourceWarning['code'], message: string): void {
    reportAudioWarning(this.stats, this.options, { code, message });
  }
}

/** Count `warning` in `stats` (`audioWarnings`, `lastAudioWarning`) and give it to `onAudioWarning`. */
export function reportAudioWarning(stats: StatsCounters, options: AudioWarningOptions, warning: AudioWarning): void {
  stats.audioWarnings++;
  stats.lastAudioWarning = warning;
  callUser(options.onAudioWarning, warning);
}
