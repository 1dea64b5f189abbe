// The codecs the SIP server takes, apart from the SDP code (so no declaration of the package
// names sdp-transform's types, which are a development dependency).

/** Codecs the SIP server can take, in the order it prefers them by default. */
export type SipCodecName = 'PCMU' | 'PCMA' | 'L16' | 'G722';

/** Default preference: G.711 first (no decoder per call), then L16, then G.722 (decoded by ffmpeg, a process per stream). */
export const DEFAULT_SIP_CODECS: readonly SipCodecName[] = ['PCMU', 'PCMA', 'L16', 'G722'];
