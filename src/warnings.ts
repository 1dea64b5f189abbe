// The one warning shape, beside the one error hierarchy (src/errors/index.ts): something went on,
// but a user should know. Every warning has a stable `code` to switch on and a one-line
// `message` for a log; each kind adds the fields that say what, where and what to do.

/**
 * What tolerant parsing does with an out-of-contract value of one field:
 * - `null`: the value becomes `null` ("none"), which the delivered type allows;
 * - `drop`: the field is removed, as if the server had not sent it (a `clip_update` then
 *   keeps the earlier value);
 * - `label`: a speaker label; a number becomes its decimal text, anything else `null`;
 * - `text`: the value becomes text (`JSON.stringify`), so an `error` is never lost.
 * A field with no entry (an id, a required score, a `topics` list…) has no clear meaning
 * without its value: the whole event is delivered as `{ type: 'unknown', reason }`.
 */
export type ToleranceAction = 'null' | 'drop' | 'label' | 'text';

/**
 * An out-of-contract value met in an otherwise well-formed event, and what was done with it
 * (docs/tolerance.md). Given to a session's `onWarning` and counted in `stats.warnings`.
 */
export interface EventWarning {
  /** Always `out_of_contract_value`. */
  readonly code: 'out_of_contract_value';
  /** The frame's `type`. */
  readonly eventType: string;
  /** Where, in the nested form: `clip.speaker_label`, `pick.participant_role_uuid`, `duration_ms`. */
  readonly path: string;
  /** What the contract wanted, e.g. `Invalid input: expected string, received null`. */
  readonly reason: string;
  /** `null`, `drop`, `label`, `text` (the event was delivered with the value normalised) or `unknown` (delivered as an `unknown` event). */
  readonly action: ToleranceAction | 'unknown';
  /** One line saying all of it, for a log. */
  readonly message: string;
}

/**
 * What a session says about its audio when the audio does not say enough (docs/audio-sources.md).
 * Given to a session's `onAudioWarning` and counted in `stats.audioWarnings`.
 * - `audio_meta_missing`: the observable carries neither a format nor flow control (it is not
 *   an audio source of this library: a `new Observable`, a `from(…)`, or an operator written
 *   as `(source) => new Observable(…)` dropped them) and neither `format` nor `flow` was
 *   given: the service must detect the format from the bytes, and the source cannot be paused.
 * - `audio_format_unknown`: no format is known and the first bytes are none of the
 *   self-describing containers the service detects (RIFF/WAVE, FORM/AIFF, OggS, fLaC, EBML,
 *   ADTS/ADIF, ID3 or an MPEG frame sync): the service will refuse the audio (`invalid_audio`).
 * - `flow_not_connected`: the source can pause, but no subscription of it was made while the
 *   session subscribed (an operator subscribes it later, as `subscribeOn` does): the session
 *   treats it as a push source, bounded by `maxBufferedBytes`.
 */
export interface AudioSourceWarning {
  readonly code: 'audio_meta_missing' | 'audio_format_unknown' | 'flow_not_connected';
  /** One line saying what and what to do, for a log. */
  readonly message: string;
}

/**
 * Audio of a reconnected stream that no session analyses (docs/resilience.md, "What is
 * replayed"): the session after a failure could not start where it should, because the bounds
 * (`reconnect.replayMs` + `outageMs`) had let go of audio the failed session was sent and the
 * service never answered. The clips in that span are lost, and said here; those already begun
 * in it (their partials delivered) are never finished. Given to `onAudioWarning` and counted in
 * `stats.audioWarnings`, like an {@link AudioSourceWarning}.
 */
export interface ReplayGapWarning {
  /** Always `replay_gap`. */
  readonly code: 'replay_gap';
  /** The segment that resumed after the gap (`segment` of its events). */
  readonly segment: number;
  /** Where the span no session analyses starts, on the stream's axis (ms): the commit point, or the end of what the service heard past it. */
  readonly fromMs: number;
  /** Where it ends, on the stream's axis (ms): where the segment's audio starts. */
  readonly toMs: number;
  /** The clips begun before the gap's end (their partials delivered) that no session will finish. */
  readonly clipUuids: readonly string[];
  /** One line saying all of it, for a log. */
  readonly message: string;
}

/** What a session says about its audio: the source's, or a replay that could not start where it should. */
export type AudioWarning = AudioSourceWarning | ReplayGapWarning;

/**
 * A bound refused a call, said once per source or server (docs/telephony.md): `rtpSource` and
 * `mediaStreamServer` give it to their `onWarning` the first time, and count every refusal.
 */
export interface LimitWarning {
  /**
   * `max_legs`: an RTP leg refused by `maxLegs`; `max_connections`: a media-stream connection
   * refused by `maxConnections`; `max_calls`: a SIP INVITE refused by `maxCalls`; `draining`: a
   * new call refused because the service drains (`lifecycle`: it takes no new call while the
   * calls in flight end).
   */
  readonly code: 'max_legs' | 'max_connections' | 'max_calls' | 'draining';
  /** The option that raises the bound (`lifecycle` for `draining`: nothing to raise). */
  readonly option: 'maxLegs' | 'maxConnections' | 'maxCalls' | 'lifecycle';
  /** The bound in force (0 for `draining`). */
  readonly limit: number;
  /** One line for a log: what was refused, the counter that keeps counting, the option to raise. */
  readonly message: string;
}

/**
 * An RTP stream of a dynamic payload type that `payloadTypes` does not map, said once per
 * payload type by `rtpSource` (docs/telephony.md, "A payload type nobody mapped"):
 * `unmapped_payload_type` when its codec could not be told from its packets (they are dropped
 * and counted in `stats.unknownPayloadType`), `inferred_payload_type` when it was (G.711 or
 * L16 at any rate, or Opus: `mapping` says what was taken; map it to be sure).
 */
export interface PayloadTypeWarning {
  /** `unmapped_payload_type`: its packets are dropped; `inferred_payload_type`: they are played as `mapping`. */
  readonly code: 'unmapped_payload_type' | 'inferred_payload_type';
  /** The option that maps it. */
  readonly option: 'payloadTypes';
  /** The RTP payload type (0-127). */
  readonly payloadType: number;
  /** What the packets were taken as, `codec/rate/channels` (`L16/16000/1`), when inferred. */
  readonly mapping: string | undefined;
  /** One line for a log: the stream, what happens to it, the option that maps it. */
  readonly message: string;
}

/** Every warning the library gives, told apart by `code`. One handler can take them all. */
export type SvcWarning = EventWarning | AudioWarning | LimitWarning | PayloadTypeWarning;

/** The code of each kind of {@link SvcWarning}. */
export type WarningCode = SvcWarning['code'];

/**
 * What every `onWarning` / `onAudioWarning` option takes: a function of the warnings it can
 * be given. A `WarningHandler` (of every {@link SvcWarning}) fits each of them, so one logger
 * can serve sessions, sources and servers. It must not throw: an exception is reported as
 * RxJS reports unhandled errors and changes nothing else.
 */
export type WarningHandler<W extends SvcWarning = SvcWarning> = (warning: W) => void;
