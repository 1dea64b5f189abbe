// Said once per source or server: a bound refused a call. Safe defaults stay, but the first
// refusal tells the operator which option raises the bound, instead of only a counter moving.

/**
 * What {@link rtpSource} / {@link mediaStreamServer} say once: the first time a bound refuses a
 * call, or (RTP) a stream of a payload type that is not mapped.
 */
export type TelephonyLimitWarning = TelephonyBoundWarning | PayloadTypeWarning;

/** A bound refused a call. */
export interface TelephonyBoundWarning {
  /** `max_legs`: an RTP leg refused by `maxLegs`; `max_connections`: a media-stream connection refused by `maxConnections`. */
  readonly code: 'max_legs' | 'max_connections';
  /** The option that raises the bound. */
  readonly option: 'maxLegs' | 'maxConnections';
  /** The bound in force. */
  readonly limit: number;
  /** One line for a log: what was refused, the counter that keeps counting, the option to raise. */
  readonly message: string;
}

/**
 * A stream of a dynamic payload type that `payloadTypes` does not map (said once per payload
 * type): `unmapped_payload_type` when its codec could not be told from its packets (they are
 * dropped and counted in `stats.unknownPayloadType`), `inferred_payload_type` when it was
 * (L16 or Opus; `mapping` says what was taken; map it to be sure).
 */
export interface PayloadTypeWarning {
  readonly code: 'unmapped_payload_type' | 'inferred_payload_type';
  /** The option that maps it. */
  readonly option: 'payloadTypes';
  readonly payloadType: number;
  /** What the packets were taken as, `codec/rate/channels` (`L16/16000/1`), when inferred. */
  readonly mapping: string | undefined;
  /** One line for a log: the stream, what happens to it, the option that maps it. */
  readonly message: string;
}

/** Where a limit warning goes: your logger, or (default) Node's `process.emitWarning`, printed once to stderr. */
export type TelephonyWarningHandler = (warning: TelephonyLimitWarning) => void;

/** Node's warning code of each limit warning when no handler is given. */
const NODE_CODES = {
  max_legs: 'SVC_STREAM_MAX_LEGS',
  max_connections: 'SVC_STREAM_MAX_CONNECTIONS',
  unmapped_payload_type: 'SVC_STREAM_UNMAPPED_PAYLOAD_TYPE',
  inferred_payload_type: 'SVC_STREAM_INFERRED_PAYLOAD_TYPE',
} as const;

/** A function that reports `warning` the first time it is called, and does nothing after. */
export function warnOnce(warning: TelephonyLimitWarning, handler: TelephonyWarningHandler | undefined): () => void {
  let said = false;
  return () => {
    if (said) return;
    said = true;
    if (handler === undefined) {
      process.emitWarning(warning.message, { code: NODE_CODES[warning.code] });
      return;
    }
    try {
      handler(warning);
    } catch {
      /* a failing reporter must not take the source down */
    }
  };
}
