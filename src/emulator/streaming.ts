// One emulated streaming connection: the session phases of §3 (awaiting config, streaming,
// finishing, closed), the close codes of §7.3, scripted events and scripted faults.
import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { AudioParamsSchema, bytesToMs, isRawFormat, RAW_FORMATS, CONTAINER_FORMATS, type AudioFormat, type RawAudioFormat } from '../schema/audio.js';
import { BatchConfigSchema } from '../schema/config.js';
import type { AccountBook, Model, Organization } from './accounts.js';
import type { Fault, Scenario, ScenarioStep } from './scenario.js';
import { parseWavHeader, type WavInfo } from './wav.js';

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
} as const;

export interface StreamingContext {
  readonly accounts: AccountBook;
  readonly model: Model;
  readonly scenario: Scenario;
  readonly log: (line: string) => void;
  /** Called once per connection when it ends, with what it saw. */
  readonly onEnd?: (summary: ConnectionSummary) => void;
}

export interface ConnectionSummary {
  readonly organization: string | undefined;
  readonly phase: StreamingPhase;
  readonly config: string | undefined;
  readonly bytesReceived: number;
  readonly durationMs: number;
  readonly closeCode: number | undefined;
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

/** Drives one connection from handshake to close. */
export class StreamingConnection {
  phase: StreamingPhase = 'awaiting_config';
  private org: Organization | undefined;
  private slotHeld = false;
  private config: string | undefined;
  private readonly format: AudioFormat;
  private bytes = 0;
  private head: Buffer = Buffer.alloc(0);
  private wav: WavInfo | undefined;
  private nextStep = 0;
  private stalled = false;
  private closeCode: number | undefined;
  private readonly faults: Fault[];

  constructor(
    private readonly ws: WebSocket,
    req: IncomingMessage,
    private readonly ctx: StreamingContext,
  ) {
    const url = new URL(req.url ?? '/', 'http://emulator');
    this.format = formatFromQuery(url);
    this.faults = [...ctx.scenario.faults];
    ws.on('close', (code) => this.onClosed(code));
    ws.on('error', () => undefined);

    this.admit(url);
  }

  // Authentication and limits are decided at the handshake (§5.1 rule 5): the upgrade
  // completes, then an `error` event and a close code say why.
  private admit(url: URL): void {
    const org = this.ctx.accounts.find(url.searchParams.get('api_key'));
    if (!org) return this.reject(4001, STREAMING_ERRORS.invalidKey);
    this.org = org;
    if (!org.models.has(this.ctx.model)) return this.reject(4003, STREAMING_ERRORS.noAccess);
    const admission = this.ctx.accounts.admit(org, this.ctx.model);
    if (!admission.ok) return this.reject(admission.cause === 'concurrency_limit' ? 4030 : 4029, admission.detail);
    this.slotHeld = true;
    const paramsError = audioParamsError(url);
    if (paramsError) return this.reject(1003, paramsError);
    this.ws.on('message', (data, isBinary) => this.onMessage(data as Buffer, isBinary));
    this.strike('handshake');
  }

  private onMessage(data: Buffer, isBinary: boolean): void {
    if (this.stalled || this.phase === 'closed') return;
    if (this.phase === 'awaiting_config') {
      if (isBinary) return void this.reject(1003, STREAMING_ERRORS.audioBeforeConfig);
      const text = data.toString('utf8');
      if (text !== 'default') {
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch {
          return void this.reject(1003, STREAMING_ERRORS.invalidConfig);
        }
        if (!BatchConfigSchema.safeParse(value).success) return void this.reject(1003, STREAMING_ERRORS.invalidConfig);
      }
      this.config = text;
      this.phase = 'streaming';
      this.strike('config');
      return;
    }
    if (this.phase === 'streaming') {
      if (isBinary) {
        this.onAudio(data);
        return;
      }
      if (data.length === 0) {
        this.onEndOfAudio();
        return;
      }
      return void this.reject(1003, STREAMING_ERRORS.unexpectedText);
    }
    // finishing: further frames are ignored, as pending analyses complete.
  }

  /** Milliseconds of audio received so far. */
  get audioMs(): number {
    if (isRawFormat(this.format)) return Math.round(bytesToMs(this.format, this.bytes));
    if (this.wav) return Math.max(0, Math.round(((this.bytes - this.wav.dataOffset) / this.wav.bytesPerSecond) * 1000));
    return 0;
  }

  private onAudio(chunk: Buffer): void {
    this.bytes += chunk.length;
    if (!isRawFormat(this.format) && !this.wav && this.head.length < 65_536) {
      this.head = Buffer.concat([this.head, chunk]);
      this.wav = parseWavHeader(this.head);
    }
    const ms = this.audioMs;
    this.play((s) => !s.after_end && (s.at_ms ?? 0) <= ms);
    this.strike('audio', ms);
  }

  private onEndOfAudio(): void {
    this.phase = 'finishing';
    this.play(() => true);
    if (this.phase !== 'finishing') return;
    if (this.strike('end')) return;
    if (!this.ctx.scenario.done) return;
    this.send(JSON.stringify({ type: 'done', duration_ms: this.audioMs }));
    if (this.strike('done')) return;
    this.close(1000, '');
  }

  /** Emit the next scripted steps, in order, while `ready` allows. */
  private play(ready: (s: ScenarioStep) => boolean): void {
    const steps = this.ctx.scenario.steps;
    while (this.nextStep < steps.length && !this.stalled && this.phase !== 'closed') {
      const step = steps[this.nextStep]!;
      if (!ready(step)) break;
      this.nextStep++;
      if (step.raw !== undefined) this.send(step.raw);
      else if (step.event !== undefined) this.send(JSON.stringify(step.event));
    }
  }

  /** Apply the first pending fault for this point; true when one struck. */
  private strike(point: Fault['at'], audioMs = 0): boolean {
    const i = this.faults.findIndex((f) => f.at === point && (point !== 'audio' || (f.at_ms ?? 0) <= audioMs));
    if (i < 0) return false;
    const fault = this.faults.splice(i, 1)[0]!;
    this.ctx.log(`fault ${fault.action} at ${point}`);
    switch (fault.action) {
      case 'close': {
        const code = fault.code ?? 1011;
        const error = fault.error === undefined ? (code === 1000 ? null : STREAMING_ERRORS.internal) : fault.error;
        if (error !== null) this.send(JSON.stringify({ type: 'error', error }));
        this.close(code, fault.reason ?? '');
        break;
      }
      case 'drop':
        this.phase = 'closed';
        this.ws.terminate();
        break;
      case 'stall':
        this.stalled = true;
        break;
      case 'stop_reading':
        (this.ws as unknown as { _socket?: { pause(): void } })._socket?.pause();
        this.stalled = true;
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
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(text);
  }

  /** Send an `error` event, then close with `code` (§6 rule 6: an error precedes every non-normal close). */
  private reject(code: number, error: string): void {
    this.send(JSON.stringify({ type: 'error', error }));
    this.close(code, '');
  }

  private close(code: number, reason: string): void {
    if (this.phase === 'closed') return;
    this.phase = 'closed';
    this.closeCode = code;
    this.ws.close(code, reason);
    // A client that never answers the close frame must not hold the emulator's socket.
    const t = setTimeout(() => this.ws.terminate(), 2_000);
    t.unref();
  }

  private onClosed(code: number): void {
    if (this.slotHeld && this.org) {
      this.ctx.accounts.charge(this.org, this.ctx.model, this.audioMs);
      this.ctx.accounts.release(this.org, this.ctx.model);
    }
    this.slotHeld = false;
    const summary: ConnectionSummary = {
      organization: this.org?.id,
      phase: this.phase,
      config: this.config,
      bytesReceived: this.bytes,
      durationMs: this.audioMs,
      closeCode: this.closeCode ?? code,
    };
    this.phase = 'closed';
    this.ctx.onEnd?.(summary);
  }
}
