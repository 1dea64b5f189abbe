// A session's options read once: at subscribe, the options and the environment become one
// frozen settings object (credentials, endpoint, format, config frame, heartbeat, reconnect
// policy, deadlines, limits, scheduler), which every layer below reads and a reconnect reuses.
// An option in error is reported from here, before anything connects.
import { asyncScheduler, type SchedulerLike } from 'rxjs';
import WebSocket, { type ClientOptions } from 'ws';
import type { FlowControl } from '../audio/FlowControl.js';
import { modelsCredentials, readModelsCredentials } from '../credentials.js';
import type { SessionConfig } from '../schema/config.js';
import { configText } from '../schema/configText.js';
import { InputError } from '../errors/index.js';
import type { LimiterSource } from '../concurrency/limiter.js';
import type { AudioFormat } from '../schema/audio.js';
import type { SessionState } from '../schema/sessionState.js';
import type { AudioWarning, EventWarning, WarningHandler } from '../warnings.js';
import { resolveHeartbeat, type HeartbeatOptions, type HeartbeatSettings } from './heartbeat.js';
import { resolveReconnect, type ReconnectOptions, type ReconnectPolicy } from './reconnect.js';
import { checkAudioParams } from './url.js';

/** Creates the socket; injectable so tests and proxies can wrap the edge. */
export type WebSocketFactory = (url: string, options: ClientOptions) => WebSocket;

/**
 * A function that gives the API key for one connection (a short-lived token): called once
 * before each connection of a session, the first one and each reconnect. A throw or a
 * rejection fails that connection (`connection_failed`, which a reconnect may cure).
 */
export type ApiKeyFunction = () => string | PromiseLike<string>;

/** What the user's options say of the session's stream (not of the endpoint): read once. */
export interface SessionOptionsRead {
  readonly apiKey?: string | ApiKeyFunction | undefined;
  readonly baseUrl?: string | undefined;
  readonly format?: AudioFormat | undefined;
  readonly connectTimeoutMs?: number | undefined;
  readonly doneTimeoutMs?: number | undefined;
  readonly closeTimeoutMs?: number | undefined;
  readonly highWaterMark?: number | undefined;
  readonly maxBufferedBytes?: number | undefined;
  readonly maxServerFrameBytes?: number | undefined;
  readonly flow?: FlowControl | undefined;
  readonly onStateChange?: ((oldState: SessionState, newState: SessionState) => void) | undefined;
  readonly heartbeat?: HeartbeatOptions | false | undefined;
  readonly reconnect?: ReconnectOptions | false | undefined;
  readonly scheduler?: SchedulerLike | undefined;
  readonly webSocketFactory?: WebSocketFactory | undefined;
  readonly strict?: boolean | undefined;
  readonly onWarning?: WarningHandler<EventWarning> | undefined;
  readonly onAudioWarning?: WarningHandler<AudioWarning> | undefined;
  readonly limiter?: LimiterSource | undefined;
  /** Source of the backoff's jitter, [0, 1) (tests). Default Math.random. */
  readonly random?: (() => number) | undefined;
}

/** The endpoint a session speaks to, as its entry gives it: its path, and its config (checked here) or its first text frame. */
export type EndpointOptions = { readonly path: string } & ({ readonly config: SessionConfig | undefined } | { readonly configFrame: string | undefined });

/** The endpoint a session speaks to: its path and its first text frame (checked). */
export interface SessionEndpoint {
  readonly path: string;
  readonly configFrame: string | undefined;
}

/**
 * Everything a session does, decided once at subscribe. Frozen; a reconnect reuses it. The
 * API key is the one value that may be asked again per connection ({@link ApiKeyFunction}).
 */
export interface SessionSettings extends SessionEndpoint {
  readonly baseUrl: string;
  /** The key, or the user's function asked before each connection. Never shown: URLs are redacted. */
  readonly apiKey: string | ConnectionKeys;
  /** The format of the stream (the option, else what the audio source carries). */
  readonly format: AudioFormat | undefined;
  /** The audio query parameters of `format`, checked. */
  readonly query: Readonly<Record<string, string>>;
  /** Dead-connection detection; undefined: off. */
  readonly heartbeat: HeartbeatSettings | undefined;
  /** The reconnect policy; undefined: off. */
  readonly reconnect: ReconnectPolicy | undefined;
  readonly connectTimeoutMs: number;
  readonly doneTimeoutMs: number;
  readonly closeTimeoutMs: number;
  /** A server that never answers our close must not keep the socket alive. */
  readonly shutTimeoutMs: number;
  readonly highWaterMark: number;
  readonly maxBufferedBytes: number;
  readonly maxServerFrameBytes: number;
  /** The one clock and timer source of the session: every deadline, the heartbeat, the backoff. */
  readonly scheduler: SchedulerLike;
  readonly random: () => number;
  readonly webSocketFactory: WebSocketFactory;
  readonly strict: boolean;
  readonly onWarning: WarningHandler<EventWarning> | undefined;
  readonly onAudioWarning: WarningHandler<AudioWarning> | undefined;
  readonly flow: FlowControl | undefined;
  readonly onStateChange: ((oldState: SessionState, newState: SessionState) => void) | undefined;
  readonly limiter: LimiterSource | undefined;
}

/** The defaults of the session's deadlines and limits. */
export const SESSION_DEFAULTS = {
  connectTimeoutMs: 10_000,
  doneTimeoutMs: 120_000,
  closeTimeoutMs: 5_000,
  shutTimeoutMs: 2_000,
  highWaterMark: 1 << 20,
  maxBufferedBytes: 32 << 20,
  maxServerFrameBytes: 16 << 20,
} as const;

const newWebSocket: WebSocketFactory = (url, options) => new WebSocket(url, options);

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value > 0)) throw new InputError('invalid_argument', `${name} must be a positive number, got ${String(value)}`, { path: name });
  return value;
}

/**
 * The settings of one subscription: `options` and the environment (`SVC_API_KEY`,
 * `SVC_BASE_URL`) read now, once; `format` is the stream's (the option's, else the source's).
 * Throws the InputError of the first option in error (the audio parameters, the heartbeat, the
 * reconnect policy, the deadlines and limits, then the base URL and key, then the config).
 */
export function resolveSessionSettings(
  options: SessionOptionsRead,
  endpoint: EndpointOptions,
  sourceFormat: AudioFormat | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): SessionSettings {
  // The session's own options first, then what lower layers check (credentials, the config).
  const format = options.format ?? sourceFormat;
  const query = Object.freeze(checkAudioParams(format));
  const heartbeat = resolveHeartbeat(options.heartbeat);
  const reconnect = resolveReconnect(options.reconnect);
  const connectTimeoutMs = positive('connectTimeoutMs', options.connectTimeoutMs, SESSION_DEFAULTS.connectTimeoutMs);
  const doneTimeoutMs = positive('doneTimeoutMs', options.doneTimeoutMs, SESSION_DEFAULTS.doneTimeoutMs);
  const closeTimeoutMs = positive('closeTimeoutMs', options.closeTimeoutMs, SESSION_DEFAULTS.closeTimeoutMs);
  const highWaterMark = positive('highWaterMark', options.highWaterMark, SESSION_DEFAULTS.highWaterMark);
  const maxBufferedBytes = positive('maxBufferedBytes', options.maxBufferedBytes, SESSION_DEFAULTS.maxBufferedBytes);
  const maxServerFrameBytes = positive('maxServerFrameBytes', options.maxServerFrameBytes, SESSION_DEFAULTS.maxServerFrameBytes);
  const { apiKey, baseUrl } = credentialsOf(options, env);
  const configFrame = 'config' in endpoint ? configText(endpoint.config) : endpoint.configFrame;
  const settings: SessionSettings = {
    path: endpoint.path,
    configFrame,
    baseUrl,
    apiKey,
    format,
    query,
    heartbeat,
    reconnect,
    connectTimeoutMs,
    doneTimeoutMs,
    closeTimeoutMs,
    shutTimeoutMs: SESSION_DEFAULTS.shutTimeoutMs,
    highWaterMark,
    maxBufferedBytes,
    maxServerFrameBytes,
    scheduler: options.scheduler ?? asyncScheduler,
    random: options.random ?? Math.random,
    webSocketFactory: options.webSocketFactory ?? newWebSocket,
    strict: options.strict === true,
    onWarning: options.onWarning,
    onAudioWarning: options.onAudioWarning,
    flow: options.flow,
    onStateChange: options.onStateChange,
    limiter: options.limiter,
  };
  return Object.freeze(settings);
}

/** The base URL and the key (or key function), each from its option or else its variable. */
function credentialsOf(options: SessionOptionsRead, env: Readonly<Record<string, string | undefined>>): { apiKey: string | ConnectionKeys; baseUrl: string } {
  const given = options.apiKey;
  if (typeof given === 'function') {
    const { baseUrl } = modelsCredentials({ apiKey: 'function', baseUrl: options.baseUrl }, env);
    return { apiKey: new ConnectionKeys(given), baseUrl };
  }
  if (given !== undefined && typeof given !== 'string') throw new InputError('invalid_argument', `apiKey must be a string or a function, got ${typeof given}`, { path: 'apiKey' });
  return modelsCredentials({ apiKey: given, baseUrl: options.baseUrl }, env);
}

/**
 * The key and base URL as far as `options` and the environment give them, without failing
 * (for the callers that decide themselves what a missing one means); a key function is left
 * uncalled (`undefined`).
 */
export function peekCredentials(options: SessionOptionsRead, env: Readonly<Record<string, string | undefined>> = process.env): { apiKey?: string; baseUrl?: string } {
  return readModelsCredentials({ apiKey: typeof options.apiKey === 'function' ? undefined : options.apiKey, baseUrl: options.baseUrl }, env);
}

/**
 * The keys a user's {@link ApiKeyFunction} gives a subscription, one per connection. The
 * concurrency slot may ask which key the next connection will use (`peek`): that answer is then
 * the one the connection gets, so the function is still asked once per connection.
 */
export class ConnectionKeys {
  private pending: string | Promise<string> | undefined;

  constructor(readonly ask: ApiKeyFunction) {}

  /** The key the next connection will use (asked now, if not yet). */
  peek(): string | Promise<string> {
    return (this.pending ??= checkedKey(this.ask));
  }

  /** The key of a connection starting now. */
  next(): string | Promise<string> {
    const p = this.pending;
    this.pending = undefined;
    return p ?? checkedKey(this.ask);
  }
}

/** The function's answer, checked: a non-empty string, else InputError (a throw or a rejection passes as is). */
function checkedKey(ask: ApiKeyFunction): string | Promise<string> {
  const checked = (k: unknown): string => {
    if (typeof k !== 'string' || k === '') throw new InputError('invalid_argument', `the apiKey function gave ${k === '' ? 'an empty string' : typeof k}, not a key`, { path: 'apiKey' });
    return k;
  };
  const k = ask();
  return typeof k === 'string' ? checked(k) : Promise.resolve(k).then(checked);
}

/** The key for one connection: the key itself, or the next answer of the user's function. */
export function connectionKey(apiKey: string | ConnectionKeys): string | Promise<string> {
  return typeof apiKey === 'string' ? apiKey : apiKey.next();
}
