// The one hook into ws the emulator keeps: ws refuses a frame (over the message limit, invalid
// UTF-8, a protocol violation) by writing its close frame and only then emitting `error` on the
// WebSocket, too late for the `error` event that must precede every non-normal close (§6 rule
// 3). Its receiver's `error` comes first; the hook listens there (read only: nothing of ws is
// written), and fails loudly if a version of ws has no receiver to listen to.
import type WebSocket from 'ws';

/** Why ws refused a frame, in the emulator's words. */
export type FrameRefusal = 'too_large' | 'invalid_utf8' | 'invalid_frame';

interface ReceiverEvents {
  prependListener(event: 'error', listener: (err: Error & { code?: string }) => void): unknown;
}

/**
 * Call `listener` when ws refuses a frame of `ws`, before ws closes the connection: the close
 * code ws will send, why, and ws's error code.
 */
export function onFrameRefused(ws: WebSocket, listener: (closeCode: number, why: FrameRefusal, wsCode: string | undefined) => void): void {
  const receiver = (ws as unknown as { _receiver?: ReceiverEvents })._receiver;
  if (!receiver || typeof receiver.prependListener !== 'function') {
    throw new Error('emulator: this version of ws has no receiver to hear refused frames on; the error event could not precede their close');
  }
  receiver.prependListener('error', (err) => {
    const why: FrameRefusal = err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' ? 'too_large' : err.code === 'WS_ERR_INVALID_UTF8' ? 'invalid_utf8' : 'invalid_frame';
    listener(frameErrorCloseCode(err), why, err.code);
  });
}

/** The close code ws gives a refused frame (its status-code symbol), or 1002 when it says none. */
function frameErrorCloseCode(err: Error): number {
  for (const sym of Object.getOwnPropertySymbols(err)) {
    const v = (err as unknown as Record<symbol, unknown>)[sym];
    if (sym.description === 'status-code' && typeof v === 'number') return v;
  }
  return 1002;
}
