// Said once per source or server: a bound refused a call. Safe defaults stay, but the first
// refusal tells the operator which option raises the bound, instead of only a counter moving.

/** What {@link rtpSource} / {@link mediaStreamServer} say the first time a bound refuses a call. */
export interface TelephonyLimitWarning {
  /** `max_legs`: an RTP leg refused by `maxLegs`; `max_connections`: a media-stream connection refused by `maxConnections`. */
  readonly code: 'max_legs' | 'max_connections';
  /** The option that raises the bound. */
  readonly option: 'maxLegs' | 'maxConnections';
  /** The bound in force. */
  readonly limit: number;
  /** One line for a log: what was refused, the counter that keeps counting, the option to raise. */
  readonly message: string;
}

/** Where a limit warning goes: your logger, or (default) Node's `process.emitWarning`, printed once to stderr. */
export type TelephonyWarningHandler = (warning: TelephonyLimitWarning) => void;

/** Node's warning code of each limit warning when no handler is given. */
const NODE_CODES = { max_legs: 'SVC_STREAM_MAX_LEGS', max_connections: 'SVC_STREAM_MAX_CONNECTIONS' } as const;

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
