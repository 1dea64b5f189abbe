// The relay client's reading of one stream's messages: each server-sent message checked with
// the protocol's schemas (an event with the schema parser), its id taken as the new position
// only when it moves forward within an epoch (or a reset came first), an in-process relay's
// gap moving the resume point past what it skipped. No I/O: the client feeds it messages.
import { ERROR_CODES, RelayError, SessionError, type ErrorCode, type SvcError } from '../errors/index.js';
import type { ServerEvent } from '../schema/events.js';
import { parseServerEventValue } from '../schema/parseServerEvent.js';
import { parseRelayCursor, RelayEndSchema, RelayGapSchema, RelayResetSchema, RelayStatusSchema, type RelayCursor, type RelayEnd, type RelayGap, type RelayReset } from './protocol.js';
import type { SseMessage } from './sse.js';
import type { ResultLabel } from '../schema/resultLabel.js';

/**
 * One message from the relay: an event with its id (the position to resume from), the
 * session's status, a gap, a reset (start the fold again: what follows is the oldest kept),
 * or the connection's state (`open`, `reconnecting`).
 */
export type RelayMessage =
  | { readonly type: 'event'; readonly id: string; readonly event: ServerEvent }
  | { readonly type: 'status'; readonly status: string; readonly title: string; readonly label?: ResultLabel | undefined }
  | { readonly type: 'gap'; readonly gap: RelayGap }
  | { readonly type: 'reset'; readonly reset: RelayReset }
  | {
      readonly type: 'connection';
      readonly state: 'open' | 'reconnecting';
      /** Why it reconnects: the relay's refusal (`redis_unavailable`, `relay_busy`: an `ApiError` with its code) or the connection (`connection_failed`, `connection_lost`). */
      readonly error?: SvcError | undefined;
    };

const KNOWN_CODES: ReadonlySet<string> = new Set(ERROR_CODES);

/** The error a failed session's `end` stands for: its code when the library knows it, else `internal_error` naming it. */
export function endError(end: RelayEnd): SessionError {
  const code = end.error?.code ?? 'internal_error';
  const message = end.error?.message ?? 'the session failed';
  return KNOWN_CODES.has(code) ? new SessionError(code as ErrorCode, message) : new SessionError('internal_error', `${code}: ${message}`);
}

export class RelayMessageReader {
  /** The id to resume after (`Last-Event-ID`); '' for none. */
  lastId: string;
  private position: RelayCursor | undefined;
  private afterReset = false;

  constructor(lastEventId: string | number | undefined) {
    this.lastId = lastEventId === undefined || lastEventId === 0 ? '' : String(lastEventId);
    this.position = this.lastId === '' ? undefined : parseRelayCursor(this.lastId);
  }

  /**
   * One message: what to emit (undefined for a message this client does not know: newer relays
   * may add some), or the session's `end`. Throws `RelayError('malformed_frame')` for a message
   * the protocol refuses or a position that goes back.
   */
  read(m: SseMessage): RelayMessage | { readonly type: 'end'; readonly end: RelayEnd } | undefined {
    let data: unknown;
    try {
      data = JSON.parse(m.data);
    } catch {
      throw malformed(`a ${m.event} message that is not JSON`);
    }
    switch (m.event) {
      case 'event': {
        const parsed = parseServerEventValue(data);
        if (!parsed.ok) throw malformed(`an event the contract refuses: ${parsed.reason}`);
        if (m.id === undefined) throw malformed('an event without an id');
        this.advance(m.id);
        return { type: 'event', id: m.id, event: parsed.event };
      }
      case 'status': {
        const s = RelayStatusSchema.safeParse(data);
        if (!s.success) throw malformed('a status message without a status');
        this.advance(m.id);
        // A label a page cannot read is left out (a newer relay's), never a failure.
        return { type: 'status', status: s.data.status, title: s.data.title ?? '', ...(s.data.label ? { label: s.data.label } : {}) };
      }
      case 'gap': {
        const g = RelayGapSchema.safeParse(data);
        if (!g.success) throw malformed('a gap message the protocol refuses');
        // An in-process relay's gap skips numbered events: resume past them if the stream drops now.
        const next = parseRelayCursor(g.data.next);
        if (next && next.epoch === '' && next.seq - 1 > (this.position?.seq ?? 0)) {
          this.position = { epoch: '', seq: next.seq - 1 };
          this.lastId = String(next.seq - 1);
        }
        return { type: 'gap', gap: g.data };
      }
      case 'reset': {
        const r = RelayResetSchema.safeParse(data);
        if (!r.success) throw malformed('a reset message the protocol refuses');
        this.afterReset = true;
        return { type: 'reset', reset: r.data };
      }
      case 'end': {
        const e = RelayEndSchema.safeParse(data);
        if (!e.success) throw malformed('an end message the protocol refuses');
        return { type: 'end', end: e.data };
      }
      default:
        return undefined;
    }
  }

  /** Take a message's id as the new position: it must move forward, within an epoch, unless a reset came first. */
  private advance(id: string | undefined): void {
    if (id === undefined) return;
    const c = parseRelayCursor(id);
    if (!c) throw malformed(`an id that is no position: ${id.slice(0, 40)}`);
    const position = this.position;
    if (position && !this.afterReset && (c.epoch !== position.epoch || c.seq <= position.seq)) throw malformed(`id ${id.slice(0, 40)} after ${this.lastId.slice(0, 40)}`);
    this.afterReset = false;
    this.position = c;
    this.lastId = id;
  }
}

function malformed(what: string): RelayError {
  return new RelayError('malformed_frame', `the relay sent ${what}`);
}
