// One emulated streaming connection: the session states of §3 in the client's words
// (connecting until the config frame, streaming, finishing, closed), the close codes of §7.3, the analysis engine, scripted steps and faults.
import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { AudioParamsSchema, RAW_FORMATS, CONTAINER_FORMATS, type AudioFormat, type RawAudioFormat } from '../schema/audio.js';
import { BatchConfigSchema, type BatchConfig } from '../schema/config.js';
import type { AccountBook, Model, Organization } from './accounts.js';
import type { Engine } from './engine.js';
import type { DoneWireEvent, ErrorWireEvent } from './engineEvents.js';
import { findStreamingRoute, handshakeCloseCode, type StreamingRoute } from './endpoints.js';
import { AudioIntake, IntakeError } from './intake.js';
import type { PcmBlock } from './pcm.js';
import { findPreset } from './presets.js';
import { DEFAULT_EMULATOR_LIMITS, type EmulatorLimits } from './routes.js';
import { analysisEnabled, type Fault, type Scenario, type ScenarioStep } from './scenario.js';
import { ENDPOINTS } from '../schema/endpoints.js';
import type { SessionStatus } from '../schema/sessionState.js';
import { rawDataBuffer } from '../internal/wsData.js';

/**
 * Where an emulated streaming connection is (§3), in the session's one vocabulary
 * ({@link SessionStatus}): `connecting` until the config frame (or, where it is optional,
 * the first frame) arrived, `streaming`, `finishing` (end of audio received), `closed`.
 */
export type ConnectionStatus = Extract<SessionStatus, 'connecting' | 'streaming' | 'finishing' | 'closed'>;

/**
 * The emulator's own phase names before sessions had one vocabulary.
 *
 * @deprecated Use {@link ConnectionStatus} (`ConnectionSummary.status`): `awaiting_config`
 * is `connecting`, the other names are unchanged. Removed in the next release.
 */
export type StreamingPhase = 'awaiting_config' | 'streaming' | 'finishing' | 'closed';

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
/** How long a closed connection's peer gets to answer the close frame before the socket is cut. */
const CLOSE_GRACE_MS = 2_000;

export interface StreamingContext {
  readonly accounts: AccountBook;
  /** The endpoint; defaults to the conversation endpoint of `model` (or conversation). */
  readonly endpoint?: StreamingRoute | undefined;
  /** @deprecated pass `endpoint`; kept so older callers still work. */
  readonly model?: Model | undefined;
  readonly scenario: Scenario;
  readonly log: (line: string) => void;
  /** Called once per connection when it ends, with what it saw. */
  readonly onEnd?: ((summary: ConnectionSummary) => void) | undefined;
  /** Message sizes and the inactivity limit; default {@link DEFAULT_EMULATOR_LIMITS}. */
  readonly limits?: EmulatorLimits | undefined;
}

/** What one finished emulated streaming connection saw: path, organization, last status, config, audio received and charged, close code, events sent. */
export interface ConnectionSummary {
  /** The streaming path. */
  readonly path: string;
  readonly organization: string | undefined;
  /** The status the connection was in when it closed. */
  readonly status: ConnectionStatus;
  /** @deprecated Read {@link ConnectionSummary.status}; `awaiting_config` there is `connecting`. Removed in the next release. */
  readonly phase: StreamingPhase;
  readonly config: string | undefined;
  readonly bytesReceived: number;
  /** True duration of the audio decoded, in ms (what `done` reports and what is charged). */
  readonly durationMs: number;
  readonly closeCode: number | undefined;
  /** Text frames the emulator sent. */
  readonly eventsSent: number;
}

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

function formatFromQuery(url: URL): AudioFormat {
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

/** Drives one connection from handshake to close. */
export class StreamingConnection {
  status: ConnectionStatus = 'connecting';
  private org: Organization | undefined;
  private slotHeld = false;
  private configText: string | undefined;
  private readonly format: AudioFormat;
  private readonly endpoint: StreamingRoute;
  private intake: AudioIntake | undefined;
  private engine: Engine | undefined;
  private nextStep = 0;
  private stalled = false;
  private closeCode: number | undefined;
  private eventsSent = 0;
  private readonly faults: Fault[];
  private readonly limits: EmulatorLimits;
  private inactivity: NodeJS.Timeout | undefined;

  constructor(
    private readonly ws: WebSocket,
    req: IncomingMessage,
    private readonly ctx: StreamingContext,
  ) {
    const url = new URL(req.url ?? '/', 'http://emulator');
    this.endpoint = ctx.endpoint ?? findStreamingRoute(url.pathname) ?? findStreamingRoute(ENDPOINTS.conversationStreaming.path)!;
    this.format = formatFromQuery(url);
    this.faults = [...ctx.scenario.faults];
    this.limits = ctx.limits ?? DEFAULT_EMULATOR_LIMITS;
    ws.on('close', (code) => this.onClosed(code));
    ws.on('error', () => undefined);
    // Runs before ws closes the connection over a bad frame, so the `error` event goes first.
    receiverOf(ws).prependListener('error', (err: Error) => this.onFrameError(err));
    setMaxMessageBytes(ws, this.limits.maxMessageBytesBeforeConfig);

    this.admit(url);
    // A refused connection has nothing more to send: any data frame ends it (ws then stops reading).
    if (this.status === 'closed') setMaxMessageBytes(ws, REFUSED_MAX_MESSAGE_BYTES);
    // Where the config frame is optional, the first frame may already be audio of any size.
    else if (this.endpoint.configFrame === 'optional') setMaxMessageBytes(ws, this.limits.maxMessageBytes);
  }

  private get model(): Model {
    return this.endpoint.model;
  }

  // Authentication and limits are decided at the handshake (§5.1 rule 5): the upgrade
  // completes, then an `error` event and a close code say why.
  private admit(url: URL): void {
    const org = this.ctx.accounts.find(url.searchParams.get('api_key'));
    if (!org) return this.reject(handshakeCloseCode(this.model, 'invalid_key'), STREAMING_ERRORS.invalidKey);
    this.org = org;
    if (!org.models.has(this.model)) return this.reject(handshakeCloseCode(this.model, 'no_access'), STREAMING_ERRORS.noAccess);
    const admission = this.ctx.accounts.admit(org, this.model);
    if (!admission.ok) return this.reject(handshakeCloseCode(this.model, admission.cause), admission.detail);
    this.slotHeld = true;
    const paramsError = audioParamsError(url);
    if (paramsError) return this.reject(1003, paramsError);
    this.ws.on('message', (data, isBinary) => this.onMessage(rawDataBuffer(data), isBinary));
    this.watchInactivity();
    this.strike('handshake');
  }

  /**
   * A session that stops sending without ending its audio would hold its concurrency slot
   * forever: after `inactivityTimeoutMs` without a frame (awaiting config or streaming), it is
   * closed with 1003 after an `error` event. The contract has no timeout code; 1003 is its
   * "the client broke the protocol" code, and not ending the audio is exactly that.
   */
  private watchInactivity(): void {
    const ms = this.limits.inactivityTimeoutMs;
    if (ms <= 0) return;
    this.inactivity = setTimeout(() => {
      this.inactivity = undefined;
      // A scripted stall is the server hanging, not the client: it stays silent.
      if (this.stalled || (this.status !== 'connecting' && this.status !== 'streaming')) return;
      this.ctx.log(`no frame for ${ms} ms: closing`);
      this.reject(1003, STREAMING_ERRORS.inactive);
    }, ms);
    this.inactivity.unref();
  }

  private stopInactivity(): void {
    if (this.inactivity) clearTimeout(this.inactivity);
    this.inactivity = undefined;
  }

  /**
   * `ws` refused a frame (over the message limit, invalid UTF-8, a protocol violation) and is
   * about to close with its code and stop reading. Send the `error` event first (§6 rule 3).
   */
  private onFrameError(err: Error & { code?: string }): void {
    const code = frameErrorCloseCode(err);
    if (this.status === 'closed') return; // refused or closing: the error was sent already
    const text =
      err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' ? STREAMING_ERRORS.messageTooLarge
      : err.code === 'WS_ERR_INVALID_UTF8' ? STREAMING_ERRORS.invalidUtf8
      : STREAMING_ERRORS.invalidFrame;
    this.ctx.log(`frame refused (${err.code ?? 'unknown'}): closing with ${code}`);
    this.send(JSON.stringify({ type: 'error', error: text }));
    // ws sends the close frame itself; it reads nothing more, so the peer's answer never comes.
    this.status = 'closed';
    this.closeCode = code;
    this.stopInactivity();
    this.intake?.dispose();
    this.terminateLater();
  }

  private onMessage(data: Buffer, isBinary: boolean): void {
    if (this.stalled || this.status === 'closed') return;
    this.inactivity?.refresh();
    if (this.status === 'connecting') {
      if (isBinary) {
        if (this.endpoint.configFrame === 'required') return void this.reject(1003, STREAMING_ERRORS.audioBeforeConfig);
        this.startStreaming(undefined);
        if ((this.status as ConnectionStatus) === 'streaming') this.onAudio(data);
        return;
      }
      const text = data.toString('utf8');
      const config = parseConfigFrame(text);
      if (config === undefined) return void this.reject(1003, STREAMING_ERRORS.invalidConfig);
      this.configText = text;
      this.startStreaming(config);
      return;
    }
    if (this.status === 'streaming') {
      if (isBinary) return this.onAudio(data);
      if (data.length === 0) return void this.onEndOfAudio();
      return void this.reject(1003, STREAMING_ERRORS.unexpectedText);
    }
    // finishing: further frames are ignored, as pending analyses complete.
  }

  private startStreaming(config: 'default' | BatchConfig | undefined): void {
    this.status = 'streaming';
    setMaxMessageBytes(this.ws, this.limits.maxMessageBytes);
    const scenario = this.ctx.scenario;
    if (analysisEnabled(scenario)) {
      this.engine = this.endpoint.engine(scenario, config, {
        send: (e) => this.send(JSON.stringify(e)),
        clipSent: (i) => void this.strike('clip', 0, i),
        log: this.ctx.log,
      });
    }
    this.intake = new AudioIntake(this.format, (block) => this.onPcm(block));
    this.strike('config');
  }

  /**
   * A planned shutdown or restart: an `error` event, then close {@link GOING_AWAY_CLOSE_CODE},
   * whatever the status (a connection already closing or closed is left alone).
   */
  goAway(): void {
    if (this.status === 'closed') return;
    this.ctx.log(`going away: closing with ${GOING_AWAY_CLOSE_CODE}`);
    this.stalled = false;
    this.reject(GOING_AWAY_CLOSE_CODE, STREAMING_ERRORS.restarting);
  }

  /** Milliseconds of audio received and decoded so far. */
  get audioMs(): number {
    return this.engine?.audioMs ?? this.intake?.decodedMs ?? 0;
  }

  private onAudio(chunk: Buffer): void {
    try {
      this.intake!.push(chunk);
    } catch (err) {
      this.fail(err);
    }
  }

  private onPcm(block: PcmBlock): void {
    if (this.status === 'closed') return;
    try {
      this.engine?.push(block);
    } catch (err) {
      return this.fail(err);
    }
    const ms = this.audioMs;
    this.play((s) => !s.after_end && (s.at_ms ?? 0) <= ms);
    this.strike('audio', ms);
  }

  private fail(err: unknown): void {
    // A stalled connection stays silent, whatever happens to its audio.
    if (this.status === 'closed' || this.stalled) return;
    if (err instanceof IntakeError && err.kind === 'invalid_audio') {
      this.ctx.log(`invalid audio: ${err.message}`);
      return this.reject(4002, STREAMING_ERRORS.invalidAudio);
    }
    this.ctx.log(`internal error: ${(err as Error).message}`);
    this.reject(1011, STREAMING_ERRORS.internal);
  }

  private async onEndOfAudio(): Promise<void> {
    this.status = 'finishing';
    this.stopInactivity();
    try {
      await this.intake!.end();
    } catch (err) {
      return this.fail(err);
    }
    if (this.status !== 'finishing') return;
    try {
      this.engine?.flush();
      this.play(() => true);
      this.engine?.finish();
    } catch (err) {
      return this.fail(err);
    }
    if (this.status !== 'finishing') return;
    if (this.strike('end')) return;
    if (!this.ctx.scenario.done) return;
    this.send(JSON.stringify({ type: 'done', duration_ms: Math.round(this.audioMs) } satisfies DoneWireEvent));
    if (this.strike('done')) return;
    this.close(1000, '');
  }

  /** Emit the next scripted steps, in order, while `ready` allows (verbatim and untyped on purpose: see ScenarioStepSchema). */
  private play(ready: (s: ScenarioStep) => boolean): void {
    const steps = this.ctx.scenario.steps;
    while (this.nextStep < steps.length && !this.stalled && this.status !== 'closed') {
      const step = steps[this.nextStep]!;
      if (!ready(step)) break;
      this.nextStep++;
      if (step.raw !== undefined) this.send(step.raw);
      else if (step.event !== undefined) this.send(JSON.stringify(step.event));
    }
  }

  /** Apply the first pending fault for this point; true when one struck. */
  private strike(point: Fault['at'], audioMs = 0, clip = 0): boolean {
    if (this.status === 'closed' || this.stalled) return false;
    const i = this.faults.findIndex(
      (f) => f.at === point && (point !== 'audio' || (f.at_ms ?? 0) <= audioMs) && (point !== 'clip' || (f.clip ?? 0) === clip),
    );
    if (i < 0) return false;
    const fault = this.faults.splice(i, 1)[0]!;
    this.ctx.log(`fault ${fault.action} at ${point}`);
    switch (fault.action) {
      case 'close': {
        const code = fault.code ?? 1011;
        const error = fault.error === undefined ? (code === 1000 ? null : STREAMING_ERRORS.internal) : fault.error;
        if (error !== null) this.send(JSON.stringify({ type: 'error', error } satisfies ErrorWireEvent));
        this.close(code, fault.reason ?? '');
        break;
      }
      case 'drop':
        this.status = 'closed';
        this.ws.terminate();
        break;
      case 'stall':
        this.stalled = true;
        break;
      case 'stop_reading':
        (this.ws as unknown as { _socket?: { pause(): void } })._socket?.pause();
        this.stalled = true;
        break;
      case 'silence':
        // A dead peer on a live TCP connection (a pulled cable, a NAT that forgot the flow):
        // nothing is read, so ws answers no ping either, nothing is sent, and no FIN or RST.
        (this.ws as unknown as { _socket?: { pause(): void } })._socket?.pause();
        this.stalled = true;
        this.stopInactivity();
        break;
      case 'restart':
        this.goAway();
        break;
      case 'malformed':
        this.send(fault.frame ?? '{"type": "clip", "clip": {"clip_uuid": 42');
        break;
      case 'oversized':
        this.send(JSON.stringify({ type: 'summary', text: 'x'.repeat(fault.bytes ?? 17 * 1024 * 1024) }));
        break;
      case 'http':
        // Refusing with an HTTP status happens before the upgrade (see server.ts).
        return false;
    }
    return true;
  }

  private send(text: string): void {
    if (this.stalled || this.status === 'closed') return;
    if (this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(text);
      this.eventsSent++;
    }
  }

  /** Send an `error` event, then close with `code` (§6 rule 3: an error precedes every non-normal close). */
  private reject(code: number, error: string): void {
    if (this.status === 'closed') return;
    this.send(JSON.stringify({ type: 'error', error } satisfies ErrorWireEvent));
    this.close(code, '');
  }

  private close(code: number, reason: string): void {
    if (this.status === 'closed') return;
    this.status = 'closed';
    this.closeCode = code;
    this.stopInactivity();
    this.intake?.dispose();
    this.ws.close(code, reason);
    this.terminateLater();
  }

  /** A client that never answers the close frame must not hold the emulator's socket. */
  private terminateLater(): void {
    const t = setTimeout(() => this.ws.terminate(), CLOSE_GRACE_MS);
    t.unref();
  }

  private onClosed(code: number): void {
    this.stopInactivity();
    this.intake?.dispose();
    const durationMs = Math.round(this.audioMs);
    if (this.slotHeld && this.org) {
      this.ctx.accounts.charge(this.org, this.model, durationMs);
      this.ctx.accounts.release(this.org, this.model);
    }
    this.slotHeld = false;
    const summary: ConnectionSummary = {
      path: this.endpoint.path,
      organization: this.org?.id,
      status: this.status,
      phase: this.status === 'connecting' ? 'awaiting_config' : this.status,
      config: this.configText,
      bytesReceived: this.intake?.bytes ?? 0,
      durationMs,
      closeCode: this.closeCode ?? code,
      eventsSent: this.eventsSent,
    };
    this.status = 'closed';
    this.ctx.onEnd?.(summary);
  }
}


// ws (8.x) offers no public way to change one connection's message limit, nor to act before it
// closes on a frame it refuses; both live on its Receiver. Fail loudly if that ever changes.
interface WsReceiver {
  _maxPayload: number;
  prependListener(event: 'error', listener: (err: Error) => void): unknown;
}

function receiverOf(ws: WebSocket): WsReceiver {
  const r = (ws as unknown as { _receiver?: WsReceiver })._receiver;
  if (!r || typeof r._maxPayload !== 'number' || typeof r.prependListener !== 'function') {
    throw new Error('emulator: this version of ws has no _receiver._maxPayload; the per-connection message limit cannot be set');
  }
  return r;
}

/** Set the largest message `ws` accepts on this connection from now on (checked at each frame header, before buffering). */
function setMaxMessageBytes(ws: WebSocket, bytes: number): void {
  receiverOf(ws)._maxPayload = bytes;
}

/** The close code ws gives a refused frame (its status-code symbol), or 1002 when it says none. */
function frameErrorCloseCode(err: Error): number {
  for (const sym of Object.getOwnPropertySymbols(err)) {
    const v = (err as unknown as Record<symbol, unknown>)[sym];
    if (sym.description === 'status-code' && typeof v === 'number') return v;
  }
  return 1002;
}
