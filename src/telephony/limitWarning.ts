// Said once per source or server: a bound refused a call. Safe defaults stay, but the first
// refusal tells the operator which option raises the bound, instead of only a counter moving.

import type { LimitWarning, PayloadTypeWarning, WarningHandler } from '../warnings.js';

/** Node's warning code of each limit warning when no handler is given. */
const NODE_CODES = {
  max_legs: 'SVC_STREAM_MAX_LEGS',
  max_connections: 'SVC_STREAM_MAX_CONNECTIONS',
  draining: 'SVC_STREAM_DRAINING',
  max_calls: 'SVC_STREAM_MAX_CALLS',
  unmapped_payload_type: 'SVC_STREAM_UNMAPPED_PAYLOAD_TYPE',
  inferred_payload_type: 'SVC_STREAM_INFERRED_PAYLOAD_TYPE',
} as const;

/** A function that reports `warning` the first time it is called, and does nothing after. */
export function warnOnce<W extends LimitWarning | PayloadTypeWarning>(warning: W, handler: WarningHandler<W> | undefined): () => void {
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
