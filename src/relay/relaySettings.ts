// The relay's options read once: every bound checked (a typed error naming the option) and
// given its default, the Origin allow-list parsed. What the relay runs on is `RelaySettings`.
import { asyncScheduler, type SchedulerLike } from 'rxjs';
import { InputError, type SvcError } from '../errors/index.js';
import { positiveOption } from '../internal/positiveOption.js';
import type { RelayTokenCheck } from './access.js';
import type { RelaySessionLimits } from './relaySession.js';

/** Options of `createRelay`. Every bound has a default; the token check does not. */
export interface RelayOptions {
  /**
   * Who may read: a token, a list, a function `(token, sessionId) => boolean`, or `null` for
   * no token (only behind another guard). Pages send it as `Authorization: Bearer T`, a
   * `token` query parameter (EventSource cannot set headers) or the `svc_relay_token` cookie.
   */
  readonly token: RelayTokenCheck;
  /**
   * Origins allowed to read from a browser (`https://app.example.com`, exact scheme, host and
   * port). A request with any other `Origin` is refused (403, no CORS headers). Requests
   * without `Origin` (servers, curl, same-origin GETs) and the relay's own origin pass. Default none.
   */
  readonly origins?: readonly string[] | undefined;
  /** Events kept per session for pages that join late or resume. Default 10 000. */
  readonly historyEvents?: number | undefined;
  /** Bytes of event messages kept per session. Default 16 MiB. */
  readonly historyBytes?: number | undefined;
  /** Bytes a page's socket may hold before the relay stops writing to it until it drains. Default 256 KiB. */
  readonly maxClientBufferBytes?: number | undefined;
  /** A page whose socket stays full this long is dropped (it may resume). Default 30 000 ms. */
  readonly stallTimeoutMs?: number | undefined;
  /** Event streams open at once, over all sessions; more get 503 `relay_busy`. Default 256. */
  readonly maxStreams?: number | undefined;
  /** Sessions held at once (live and ended); `addSession` past it throws `relay_busy`. Default 1000. */
  readonly maxSessions?: number | undefined;
  /** TCP connections `listen()` accepts at once. Default 1024. */
  readonly maxConnections?: number | undefined;
  /** A comment line on idle streams this often, so proxies keep them open. Default 15 000 ms. */
  readonly heartbeatMs?: number | undefined;
  /** How long an ended session stays listed and joinable. Default 600 000 ms (10 minutes). */
  readonly keepEndedMs?: number | undefined;
  /** The reconnection delay a page is told (`retry:`). Default 1000 ms. */
  readonly retryMs?: number | undefined;
  /** Time allowed to receive a request's headers. Default 10 000 ms. */
  readonly headersTimeoutMs?: number | undefined;
  /** Largest request head accepted (431 past it). Default 8 KiB. */
  readonly maxHeaderBytes?: number | undefined;
  /** Scheduler of the heartbeat, the stall and keep-ended timers (tests use virtual time). */
  readonly scheduler?: SchedulerLike | undefined;
  /**
   * Serve every session published to this Redis (`redis://…`, see `publishSession` and
   * docs/fleet.md) instead of sessions added here: the same interface, with SSE ids
   * (`EPOCH:MS-SEQ`) that every relay of the fleet resumes from. One reader per relay process
   * (two connections), whatever the number of pages. ioredis loads only with this option.
   */
  readonly from?: string | undefined;
  /** The publishers' key prefix, with `from`. Default `svc-stream`. */
  readonly prefix?: string | undefined;
  /** With `from`: called once each time Redis becomes unreachable (the relay reconnects on its own; pages meanwhile get 503 and retry). */
  readonly onRedisError?: ((error: SvcError) => void) | undefined;
}

const DEFAULTS = {
  historyEvents: 10_000,
  historyBytes: 16 << 20,
  maxClientBufferBytes: 256 << 10,
  stallTimeoutMs: 30_000,
  maxStreams: 256,
  maxSessions: 1000,
  maxConnections: 1024,
  heartbeatMs: 15_000,
  keepEndedMs: 600_000,
  retryMs: 1000,
  headersTimeoutMs: 10_000,
  maxHeaderBytes: 8 << 10,
} as const;

/** A relay's options, checked and with their defaults. */
export interface RelaySettings {
  readonly limits: RelaySessionLimits;
  readonly scheduler: SchedulerLike;
  readonly maxStreams: number;
  readonly maxSessions: number;
  readonly keepEndedMs: number;
  readonly retryMs: number;
  readonly heartbeatMs: number;
  readonly maxConnections: number;
  readonly headersTimeoutMs: number;
  readonly maxHeaderBytes: number;
  /** The allowed origins, as `URL.origin` writes them. */
  readonly origins: ReadonlySet<string>;
}

/** Reads `options`; throws `invalid_argument` naming the first bad one. */
export function relaySettings(options: RelayOptions): RelaySettings {
  if (options.token === undefined) throw new InputError('invalid_argument', 'relay option token is required: a token, a list, a function, or null for none', { path: 'token' });
  const scheduler = options.scheduler ?? asyncScheduler;
  const positive = (name: keyof typeof DEFAULTS): number => positiveOption('relay', name, options[name], DEFAULTS[name]);
  return {
    limits: {
      historyEvents: positive('historyEvents'),
      historyBytes: positive('historyBytes'),
      maxClientBufferBytes: positive('maxClientBufferBytes'),
      stallTimeoutMs: positive('stallTimeoutMs'),
      scheduler,
    },
    scheduler,
    maxStreams: positive('maxStreams'),
    maxSessions: positive('maxSessions'),
    keepEndedMs: positive('keepEndedMs'),
    retryMs: positive('retryMs'),
    heartbeatMs: positive('heartbeatMs'),
    maxConnections: positive('maxConnections'),
    headersTimeoutMs: positive('headersTimeoutMs'),
    maxHeaderBytes: positive('maxHeaderBytes'),
    origins: originSet(options.origins ?? []),
  };
}

function originSet(list: readonly string[]): Set<string> {
  const origins = new Set<string>();
  for (const o of list) {
    let origin: string | undefined;
    try {
      origin = new URL(o).origin;
    } catch {
      origin = undefined;
    }
    if (origin === undefined || origin === 'null' || origin !== o.replace(/\/$/, '').toLowerCase()) {
      throw new InputError('invalid_argument', `relay origin ${JSON.stringify(o)} is not an origin (scheme://host[:port], nothing after)`, { path: 'origins' });
    }
    origins.add(origin);
  }
  return origins;
}
