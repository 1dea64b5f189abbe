// One emulated streaming connection's life cycle: the session states of §3 in the client's
// words (connecting until the config frame, streaming, finishing, closed), the frames it
// receives, the audio through the engine, and what it charges when it ends. The handshake's
// verdict is streamingProtocol.ts's, the bytes out ConnectionSender.ts's, the script
// ScenarioScript.ts's.
import type { Socket } from 'node:net';
import type WebSocket from 'ws';
import type { AudioFormat } from '../schema/audio.js';
import type { BatchConfig } from '../schema/config.js';
import type { SessionStatus } from '../schema/sessionState.js';
import { rawDataBuffer } from '../internal/wsData.js';
import type { AccountBook, Model, Organization } from './accounts.js';
import { ConnectionSender } from './ConnectionSender.js';
import type { Engine, EngineOutput } from './engine.js';
import type { DoneWireEvent } from './engineEvents.js';
import type { StreamingRoute } from './endpoints.js';
import { onFrameRefused, type FrameRefusal } from './frameRefusals.js';
import { AudioIntake, IntakeError } from './AudioIntake.js';
import type { PcmBlock } from './pcm.js';
import { DEFAULT_EMULATOR_LIMITS, type EmulatorLimits } from './routes.js';
import { analysisEnabled, type Scenario } from './scenario.js';
import { AligningEngine, type AlignmentNote } from './resumeAlignment.js';
import { ScenarioScript } from './ScenarioScript.js';
import { emulatorPingText } from '../schema/resultLabel.js';
import { GOING_AWAY_CLOSE_CODE, parseConfigFrame, STREAMING_ERRORS, type Handshake } from './streamingProtocol.js';

/**
 * Where an emulated streaming connection is (§3), in the session's one vocabulary
 * ({@link SessionStatus}): `connecting` until the config frame (or, where it is optional,
 * the first frame) arrived, `streaming`, `finishing` (end of audio received), `closed`.
 */
export type ConnectionStatus = Extract<SessionStatus, 'connecting' | 'streaming' | 'finishing' | 'closed'>;

/** What one connection is given: its endpoint, the accounts it charges, the scenario it plays. */
export interface StreamingContext {
  readonly accounts: AccountBook;
  readonly endpoint: StreamingRoute;
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
  readonly config: string | undefined;
  readonly bytesReceived: number;
  /** True duration of the audio decoded, in ms (what `done` reports and what is charged). */
  readonly durationMs: number;
  readonly closeCode: number | undefined;
  /** Text frames the emulator sent. */
  readonly eventsSent: number;
  /** For a scenario that names its audio: where the session's audio was found in it, or why it was not. */
  readonly alignment: AlignmentNote | undefined;
}

const REFUSAL_TEXT: Readonly<Record<FrameRefusal, string>> = {
  too_large: STREAMING_ERRORS.messageTooLarge,
  invalid_utf8: STREAMING_ERRORS.invalidUtf8,
  invalid_frame: STREAMING_ERRORS.invalidFrame,
};

/** Drives one connection from handshake to close. */
export class StreamingConnection {
  status: ConnectionStatus = 'connecting';
  private readonly org: Organization | undefined;
  private readonly release: () => void;
  private readonly admitted: boolean;
  private configText: string | undefined;
  private readonly format: AudioFormat;
  private readonly endpoint: StreamingRoute;
  private intake: AudioIntake | undefined;
  private engine: Engine | undefined;
  private readonly limits: EmulatorLimits;
  private inactivity: NodeJS.Timeout | undefined;
  private readonly sender: ConnectionSender;
  private readonly script: ScenarioScript;
  private alignment: AlignmentNote | undefined;

  constructor(
    ws: WebSocket,
    socket: Socket,
    format: AudioFormat,
    handshake: Handshake,
    private readonly ctx: StreamingContext,
  ) {
    this.endpoint = ctx.endpoint;
    this.format = format;
    this.limits = ctx.limits ?? DEFAULT_EMULATOR_LIMITS;
    this.org = handshake.org;
    this.admitted = handshake.ok;
    this.release = handshake.ok ? handshake.release : () => undefined;
    this.sender = new ConnectionSender(ws, socket, () => this.closing());
    this.script = new ScenarioScript(ctx.scenario, { sender: this.sender, log: ctx.log, goAway: () => this.goAway(), silenced: () => this.stopInactivity() });
    ws.on('close', (code) => this.onClosed(code));
    ws.on('error', () => undefined);
    // Runs before ws closes the connection over a bad frame, so the `error` event goes first.
    onFrameRefused(ws, (code, why, wsCode) => {
      if (this.sender.closed) return; // refused or closing: the error was sent already
      this.ctx.log(`frame refused (${wsCode ?? 'unknown'}): closing with ${code}`);
      this.sender.refusedFrame(code, REFUSAL_TEXT[why]);
    });

    // Authentication and limits were decided at the handshake (§5.1 rule 5): the upgrade
    // completes, then an `error` event and a close code say why.
    if (!handshake.ok) {
      this.sender.reject(handshake.code, handshake.error);
      return;
    }
    ws.on('message', (data, isBinary) => this.onMessage(rawDataBuffer(data), isBinary));
    this.watchInactivity();
    this.script.strike('handshake');
  }

  private get model(): Model {
    return this.endpoint.model;
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
      if (this.sender.stalled || (this.status !== 'connecting' && this.status !== 'streaming')) return;
      this.ctx.log(`no frame for ${ms} ms: closing`);
      this.sender.reject(1003, STREAMING_ERRORS.inactive);
    }, ms);
    this.inactivity.unref();
  }

  private stopInactivity(): void {
    if (this.inactivity) clearTimeout(this.inactivity);
    this.inactivity = undefined;
  }

  /** The sender closed or dropped the connection: nothing more is decoded or timed. */
  private closing(): void {
    this.status = 'closed';
    this.stopInactivity();
    this.intake?.dispose();
  }

  private onMessage(data: Buffer, isBinary: boolean): void {
    if (this.sender.stalled || this.status === 'closed') return;
    this.inactivity?.refresh();
    if (this.status === 'connecting') {
      // ws checked the frame against the connection's limit; the first message has a smaller one.
      if (this.endpoint.configFrame === 'required' && data.length > this.limits.maxMessageBytesBeforeConfig) {
        this.ctx.log(`first message of ${data.length} bytes over the pre-config limit: closing with 1009`);
        return this.sender.reject(1009, STREAMING_ERRORS.messageTooLarge);
      }
      if (isBinary) {
        if (this.endpoint.configFrame === 'required') return this.sender.reject(1003, STREAMING_ERRORS.audioBeforeConfig);
        this.startStreaming(undefined);
        if ((this.status as ConnectionStatus) === 'streaming') this.onAudio(data);
        return;
      }
      const text = data.toString('utf8');
      const config = parseConfigFrame(text);
      if (config === undefined) return this.sender.reject(1003, STREAMING_ERRORS.invalidConfig);
      this.configText = text;
      this.startStreaming(config);
      return;
    }
    if (this.status === 'streaming') {
      if (isBinary) return this.onAudio(data);
      if (data.length === 0) return void this.onEndOfAudio();
      return this.sender.reject(1003, STREAMING_ERRORS.unexpectedText);
    }
    // finishing: further frames are ignored, as pending analyses complete.
  }

  private startStreaming(config: 'default' | BatchConfig | undefined): void {
    this.status = 'streaming';
    const scenario = this.ctx.scenario;
    if (analysisEnabled(scenario)) {
      const out: EngineOutput = {
        send: (e) => this.sender.send(JSON.stringify(e)),
        clipSent: (i) => void this.script.strike('clip', 0, i),
        log: this.ctx.log,
      };
      const make = (s: Scenario, o: EngineOutput): Engine => this.endpoint.engine(s, config, o);
      // A scenario that names its audio follows a resumed stream (resumeAlignment.ts).
      const audio = scenario.audio;
      this.engine = audio !== undefined ? new AligningEngine({ ...scenario, audio }, make, out, (note) => this.aligned(note)) : make(scenario, out);
    }
    this.intake = new AudioIntake(this.format, (block) => this.onPcm(block));
    this.script.strike('config');
  }

  /**
   * What the session's first audio was found to be, in the audio its scenario names: kept for
   * the connection's summary, and said to the client before any event of the engine (a ping,
   * beside the contract's messages, as the upgrade's header is), so its results are labelled
   * by what happened: scripted, or speech segments only (src/schema/resultLabel.ts).
   */
  private aligned(note: AlignmentNote): void {
    this.alignment = note;
    this.sender.note(emulatorPingText('offsetMs' in note ? { aligned: true, offsetMs: note.offsetMs } : note.scripted ? { aligned: true, offsetMs: 0 } : { aligned: false }));
  }

  /**
   * A planned shutdown or restart: an `error` event, then close {@link GOING_AWAY_CLOSE_CODE},
   * whatever the status (a connection already closing or closed is left alone).
   */
  goAway(): void {
    if (this.status === 'closed') return;
    this.ctx.log(`going away: closing with ${GOING_AWAY_CLOSE_CODE}`);
    this.sender.resume();
    this.sender.reject(GOING_AWAY_CLOSE_CODE, STREAMING_ERRORS.restarting);
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
    this.script.play((s) => !s.after_end && (s.at_ms ?? 0) <= ms);
    this.script.strike('audio', ms);
  }

  private fail(err: unknown): void {
    // A stalled connection stays silent, whatever happens to its audio.
    if (this.status === 'closed' || this.sender.stalled) return;
    if (err instanceof IntakeError && err.kind === 'invalid_audio') {
      this.ctx.log(`invalid audio: ${err.message}`);
      return this.sender.reject(4002, STREAMING_ERRORS.invalidAudio);
    }
    this.ctx.log(`internal error: ${(err as Error).message}`);
    this.sender.reject(1011, STREAMING_ERRORS.internal);
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
      this.script.play(() => true);
      this.engine?.finish();
    } catch (err) {
      return this.fail(err);
    }
    if (this.status !== 'finishing') return;
    if (this.script.strike('end')) return;
    if (!this.ctx.scenario.done) return;
    this.sender.send(JSON.stringify({ type: 'done', duration_ms: Math.round(this.audioMs) } satisfies DoneWireEvent));
    if (this.script.strike('done')) return;
    this.sender.close(1000, '');
  }

  private onClosed(code: number): void {
    const status = this.status;
    this.closing();
    const durationMs = Math.round(this.audioMs);
    if (this.admitted && this.org) this.ctx.accounts.charge(this.org, this.model, durationMs);
    this.release();
    const summary: ConnectionSummary = {
      path: this.endpoint.path,
      organization: this.org?.id,
      status,
      config: this.configText,
      bytesReceived: this.intake?.bytes ?? 0,
      durationMs,
      closeCode: this.sender.closeCode ?? code,
      eventsSent: this.sender.eventsSent,
      alignment: this.alignment,
    };
    this.ctx.onEnd?.(summary);
  }
}
