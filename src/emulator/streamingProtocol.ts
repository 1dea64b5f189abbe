// What an emulated streaming connection decides before it reads a frame: the texts of its
// `error` events, the handshake's verdict (auth, limits, query parameters; §5.1 rule 5) with
// the message limit the connection gets for it, and the config frame's check (§3).
import type { IncomingMessage } from 'node:http';
import { AudioParamsSchema, CONTAINER_FORMATS, RAW_FORMATS, type AudioFormat, type RawAudioFormat } from '../schema/audio.js';
import { BatchConfigSchema, type BatchConfig } from '../schema/config.js';
import type { AccountBook, Organization } from './accounts.js';
import { handshakeCloseCode, type StreamingRoute } from './endpoints.js';
import { findPreset } from './presets.js';
import type { EmulatorLimits } from './routes.js';
import type { Scenario } from './scenario.js';

/** The exact texts the emulator sends in `error` events (wire reference examples). */
export const STREAMING_ERRORS = {
  invalidKey: 'Invalid API key.',
  noAccess: 'This API key does not have access to this model.',
  audioBeforeConfig: 'Audio received before the configuration frame.',
  invalidConfig: 'Invalid configuration.',
  invalidAudio: 'Invalid input audio',
  unexpectedText: 'Unexpected text frame after the configuration frame.',
  internal: 'Internal server error',
  /** Close 1009: a message over the connection's limit (see `EmulatorLimits`). */
  messageTooLarge: 'Message too large.',
  /** Close 1007: a text frame that is not UTF-8. */
  invalidUtf8: 'Invalid UTF-8 in a text frame.',
  /** Close 1002 (as `ws` decides): a frame that breaks RFC 6455 (unmasked, reserved bits or opcode). */
  invalidFrame: 'Invalid WebSocket frame.',
  /** Close 1003: no frame from the client within the inactivity limit. */
  inactive: 'Session closed: no frame received within the inactivity limit.',
  /** Close {@link GOING_AWAY_CLOSE_CODE}: the emulator is shutting down or restarting (SIGTERM, SIGINT, `shutdown()`, a `restart` fault). */
  restarting: 'Service restarting. Please reconnect.',
} as const;

/**
 * The close code of a planned shutdown or restart: 1012 (Service Restart, RFC 6455's IANA
 * registry). Unlike 1001 (Going Away), which a browser also sends when a page is left, 1012
 * only ever means "the server is restarting, come back", so a client can reconnect without
 * guessing; it is not 1006 (no close frame), which looks like a network drop.
 */
export const GOING_AWAY_CLOSE_CODE = 1012;

/** The message limit of a connection that has been refused: it has nothing left to say. */
export const REFUSED_MAX_MESSAGE_BYTES = 1024;

/** The server-side message for an audio query error, as the service words it. */
export function audioParamsError(url: URL): string | undefined {
  const num = (k: string): number | undefined => {
    const v = url.searchParams.get(k);
    return v === null ? undefined : Number(v);
  };
  const fmt = url.searchParams.get('audio_format') ?? undefined;
  if (fmt === 'opus') return `Invalid audio_format='opus'. Valid values: [${[...CONTAINER_FORMATS, ...RAW_FORMATS].join(', ')}]`;
  const parsed = AudioParamsSchema.safeParse({ audio_format: fmt, sample_rate: num('sample_rate'), num_channels: num('num_channels') });
  return parsed.success ? undefined : parsed.error.issues[0]!.message;
}

/** The audio format a connection's query parameters name (`{}` when none: a container told by its bytes). */
export function formatFromQuery(url: URL): AudioFormat {
  const fmt = url.searchParams.get('audio_format');
  if (fmt === null) return {};
  if ((RAW_FORMATS as readonly string[]).includes(fmt)) {
    return { audio_format: fmt, sample_rate: Number(url.searchParams.get('sample_rate')), num_channels: Number(url.searchParams.get('num_channels')) } as RawAudioFormat;
  }
  return { audio_format: fmt } as AudioFormat;
}

/**
 * Validate a config frame like the service: `default`, or JSON that is a valid BatchConfig
 * whose `preset:<id>` behaviors all name presets of the catalogue. Undefined when invalid.
 */
export function parseConfigFrame(text: string): 'default' | BatchConfig | undefined {
  if (text === 'default') return 'default';
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = BatchConfigSchema.safeParse(value);
  if (!parsed.success) return undefined;
  for (const b of parsed.data.behaviors ?? []) {
    if (typeof b === 'string' && !findPreset(b.slice('preset:'.length))) return undefined;
  }
  return parsed.data;
}

/**
 * The handshake's verdict. Admitted: the organization and its concurrency slot (released by
 * `release`, once). Refused: the close code and the `error` event's text, sent once the
 * upgrade completes (the contract refuses after the upgrade, §5.1 rule 5).
 */
export type Handshake =
  | { readonly ok: true; readonly org: Organization; readonly maxMessageBytes: number; release(): void }
  | { readonly ok: false; readonly org: Organization | undefined; readonly code: number; readonly error: string; readonly maxMessageBytes: number };

/**
 * Decide a connection at its handshake: the key, the model's access, the organization's
 * limits (taking a concurrency slot), the audio query parameters; and the largest message it
 * may send, which `ws` checks at each frame header, before buffering. A refused connection
 * (or one a scripted handshake fault ends) gets {@link REFUSED_MAX_MESSAGE_BYTES}; an admitted
 * one `maxMessageBytes` (`ws` fixes a connection's limit when it opens: the smaller limit
 * before the config frame, `maxMessageBytesBeforeConfig`, is checked on the first message).
 */
export function decideHandshake(req: IncomingMessage, endpoint: StreamingRoute, accounts: AccountBook, scenario: Scenario, limits: EmulatorLimits): Handshake {
  const url = new URL(req.url ?? '/', 'http://emulator');
  const refuse = (org: Organization | undefined, code: number, error: string): Handshake => ({ ok: false, org, code, error, maxMessageBytes: REFUSED_MAX_MESSAGE_BYTES });
  const org = accounts.find(url.searchParams.get('api_key'));
  if (!org) return refuse(undefined, handshakeCloseCode(endpoint.model, 'invalid_key'), STREAMING_ERRORS.invalidKey);
  if (!org.models.has(endpoint.model)) return refuse(org, handshakeCloseCode(endpoint.model, 'no_access'), STREAMING_ERRORS.noAccess);
  const admission = accounts.admit(org, endpoint.model);
  if (!admission.ok) return refuse(org, handshakeCloseCode(endpoint.model, admission.cause), admission.detail);
  let held = true;
  const release = (): void => {
    if (held) accounts.release(org, endpoint.model);
    held = false;
  };
  const paramsError = audioParamsError(url);
  if (paramsError) {
    release();
    return refuse(org, 1003, paramsError);
  }
  const endsAtHandshake = scenario.faults.some((f) => f.at === 'handshake' && (f.action === 'close' || f.action === 'drop' || f.action === 'restart'));
  return { ok: true, org, maxMessageBytes: endsAtHandshake ? REFUSED_MAX_MESSAGE_BYTES : limits.maxMessageBytes, release };
}
