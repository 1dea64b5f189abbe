// What the SIP server emits: one call (or, for a SIPREC call in `separate` mode, one per
// participant's stream), its parties, its metadata as it changes, its counters and its end.
import type { Observable } from 'rxjs';
import type { AudioObservable } from '../../audio/meta.js';
import type { RawAudioFormat } from '../../schema/audio.js';
import type { RtpCodecName } from '../payloadTypes.js';
import type { StreamStats } from '../PlayoutStream.js';
import type { SipStreamCounters } from './sipMedia.js';

/** A party of the call as SIP names it (From, To). */
export interface SipParty {
  readonly uri: string;
  readonly displayName: string | undefined;
}

/** Someone heard in the call, and where: a SIPREC participant, or the caller of a plain SIP call. */
export interface SipCallParticipant {
  /** SIPREC's `participant_id`; `caller` for a plain call. */
  readonly id: string;
  readonly name: string | undefined;
  /** Address of record. */
  readonly aor: string | undefined;
  /** The channel of the call's audio (1-based) this participant is heard on, if one. */
  readonly channel: number | undefined;
  /** The SDP `a=label` of the stream it sends (SIPREC). */
  readonly label: string | undefined;
}

/** Who and what the call is: shown by the CLI, published as the session's title, kept current. */
export interface SipCallMetadata {
  /** `sip` for a call to the server, `siprec` for a recording session. */
  readonly kind: 'sip' | 'siprec';
  /** The SIP Call-ID of the dialog with the server. */
  readonly callId: string;
  readonly from: SipParty;
  readonly to: SipParty;
  readonly participants: readonly SipCallParticipant[];
  /** SIPREC: the recorded session's id, group and the recorded call's own Call-IDs. */
  readonly recording?: { readonly sessionId: string | undefined; readonly groupId: string | undefined; readonly sipSessionIds: readonly string[] } | undefined;
  /** The caller holds the call (re-INVITE with sendonly or inactive): no audio comes, no RTP timeout runs. */
  readonly held: boolean;
}

/** How a SIP call ended. */
export type SipCallEnd =
  /** The caller sent BYE (or CANCEL before the answer). */
  | 'bye'
  /** No RTP for `rtpTimeoutMs` while not on hold; the server sent BYE. */
  | 'rtp_timeout'
  /** The ACK for our 200 never came (64·T1); the server sent BYE. */
  | 'ack_timeout'
  /** `hangUp()`: the server sent BYE. */
  | 'hangup'
  /** A drain's deadline or a second signal (`endCalls`): the server sent BYE, the audio failed `shutdown`. */
  | 'shutdown'
  /** The server was unsubscribed: BYE sent, audio completed. */
  | 'stopped';

/** Counters of a call: its streams' jitter buffers and their datagrams. */
export interface SipCallStats {
  /** Per stream, by SDP label (or `audio`). */
  readonly streams: Readonly<Record<string, StreamStats & SipStreamCounters>>;
}

/** One call answered by {@link sipServer} (an `AnalyzableCall`: give the server to `analyzeCalls`). */
export interface SipCall {
  /** `sip-…`, unique while the server runs (`-<label>` after it for one stream of a SIPREC call in `separate` mode). */
  readonly id: string;
  /** The session's title where it is published (parties or participants). */
  readonly title: string;
  readonly callId: string;
  readonly from: SipParty;
  readonly to: SipParty;
  /** Where the signalling came from. */
  readonly remote: { readonly address: string; readonly port: number; readonly transport: 'udp' | 'tcp' };
  /** The codec picked for its audio. */
  readonly codec: { readonly name: RtpCodecName; readonly payloadType: number; readonly clockRate: number };
  /** What `audio$` carries: mulaw/alaw/s16be as sent, s16le after ffmpeg (G.722); two channels for a SIPREC call in `stereo` mode. */
  readonly format: RawAudioFormat;
  /** Hot, kept until the first subscriber (as a call leg's); completes when the call ends. */
  readonly audio$: AudioObservable;
  /** The metadata now. */
  readonly metadata: SipCallMetadata;
  /** The metadata now, then each update (a SIPREC re-INVITE or UPDATE, a hold); completes when the call ends. */
  readonly metadata$: Observable<SipCallMetadata>;
  /** Emits how the call ended, once, then completes (replayed to late subscribers). */
  readonly ended$: Observable<SipCallEnd>;
  readonly stats: SipCallStats;
  /** End the call from our side: BYE, then the audio completes. */
  hangUp(): void;
}
