// A stream that outlives its connections: one subscription to the audio, a sequence of
// streaming sessions (segments) with the same config, and between them a replay of the audio
// since the commit point, so one call stays one conversation on one time axis.
import { asyncScheduler, Observable, timer, type SchedulerLike, type Subscriber, type Subscription } from 'rxjs';
import { connectFlow } from '../internal/audioSources.js';
import { audioMetaOf, withAudioMeta, type AudioChunk } from '../audio/meta.js';
import { parseWavHeader } from '../audio/wavHeader.js';
import { bytesPerFrame, bytesPerSecond, isRawFormat, type AudioFormat, type RawAudioFormat } from '../schema/audio.js';
import type { ServerEvent } from '../schema/events.js';
import { FlowControl } from '../audio/flow.js';
import { AudioCheck, type AudioWarningOptions } from './audioCheck.js';
import { reconnectable } from './closeErrors.js';
import { backoffMs, type ReconnectPolicy } from './reconnect.js';
import { SegmentClock, type SessionEvent } from './segments.js';
import { enterStatus, type SessionStats } from './stats.js';
import type { SessionState } from '../schema/sessionState.js';
import type { StreamingOptions } from './streamingSession.js';

/** Opens one streaming session over `audio$` with these options on top of the caller's. */
export type OpenSession = (audio$: Observable<AudioChunk>, options: Partial<StreamingOptions>) => Observable<ServerEvent>;

/** What the resilient layer needs besides the policy: the caller's options that it shapes. */
export interface ResilientOptions extends AudioWarningOptions {
  readonly policy: ReconnectPolicy;
  readonly stats: SessionStats;
  readonly format?: AudioFormat | undefined;
  readonly flow?: FlowControl | undefined;
  readonly scheduler?: SchedulerLike | undefined;
  readonly onStateChange?: ((oldState: SessionState, newState: SessionState) => void) | undefined;
  /** Source of jitter, [0, 1). Default Math.random. */
  readonly random?: (() => number) | undefined;
}

/**
 * Stream `audio$` through a sequence of sessions opened by `open`, reconnecting after a
 * retryable failure and resuming from the commit point (docs/resilience.md).
 *
 * - Cold: each subscription subscribes to `audio$` once, however many sessions it takes.
 * - Emits every event of every segment on one time axis ({@link SessionEvent}); a reconnected
 *   segment's events carry `segment`. Completes with the last segment's `done`.
 * - Errors with the failure when it cannot be cured by a new session (not retryable, the
 *   first session never opened, a format whose byte position has no time, attempts or
 *   deadline exhausted), after emitting that session's `error` event if it sent one.
 */
export function resilientSession(audio$: Observable<AudioChunk>, open: OpenSession, options: ResilientOptions): Observable<SessionEvent> {
  return new Observable<SessionEvent>((subscriber) => {
    const s = new ResilientSession(audio$, open, options, subscriber);
    s.start();
    return () => s.stop();
  });
}

/** Pauses a pull source for any of several reasons (the open session's backpressure, an outage). */
class Gate {
  private readonly reasons = new Set<string>();
  constructor(readonly flow: FlowControl) {}
  hold(reason: string): void {
    this.reasons.add(reason);
    this.flow.pause();
  }
  free(reason: string): void {
    this.reasons.delete(reason);
    if (this.reasons.size === 0) this.flow.resume();
  }
}

/** The flow control one session sees: its pauses reach the source through the gate while it is the current session. */
class SessionFlow extends FlowControl {
  attached = true;
  constructor(private readonly gate: Gate) {
    super();
  }
  override pause(): void {
    super.pause();
    if (this.attached) this.gate.hold('session');
  }
  override resume(): void {
    super.resume();
    if (this.attached) this.gate.free('session');
  }
}

/** What a pull source may read while it is being subscribed, before a session can push back (the session's default high-water mark). */
const EARLY_BYTES = 1 << 20;

interface Stored {
  /** Stream byte position of the chunk's first byte. */
  readonly at: number;
  readonly bytes: Uint8Array;
}

class ResilientSession {
  private readonly scheduler: SchedulerLike;
  private readonly stats: SessionStats;
  private readonly policy: ReconnectPolicy;
  private readonly clock = new SegmentClock();
  private gate: Gate | undefined;
  /** Chunks read while the source is being subscribed, before the first session exists. */
  private early: Uint8Array[] | undefined;
  private earlyBytes = 0;
  private readonly declared: AudioFormat | undefined;
  /** The raw layout of the stream once known: raw at once, WAV after its header; undefined: not resumable. */
  private layout: { format: RawAudioFormat; dataOffset: number; frame: number; perMs: number } | undefined;
  private layoutPending: boolean;
  private headerBytes: Uint8Array[] = [];
  private source: Subscription | undefined;
  private inner: Subscription | undefined;
  private innerFlow: SessionFlow | undefined;
  private feed: Subscriber<AudioChunk> | undefined;
  private retry: Subscription | undefined;
  private stored: Stored[] = [];
  private storedHead = 0;
  /** Stream bytes read from the source. */
  private readPos = 0;
  private sourceDone = false;
  private everOpened = false;
  /** The commit point when the last failure struck: attempts count again only after it moves. */
  private failedAtCommitMs = -1;
  private attempt = 0;
  private outageSince: number | undefined;
  private heldError: SessionEvent | undefined;
  private lastState: SessionState = { status: 'connecting' };
  private ended = false;

  constructor(
    private readonly audio$: Observable<AudioChunk>,
    private readonly open: OpenSession,
    private readonly options: ResilientOptions,
    private readonly subscriber: Subscriber<SessionEvent>,
  ) {
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.stats = options.stats;
    this.policy = options.policy;
    const meta = audioMetaOf(audio$);
    this.declared = options.format ?? meta?.format;
    const pull = meta?.flow !== undefined || options.flow !== undefined;
    this.gate = pull ? new Gate(options.flow ?? new FlowControl()) : undefined;
    if (isRawFormat(this.declared)) this.setLayout(this.declared, 0);
    this.layoutPending = this.declared?.audio_format === 'wav';
  }

  private setLayout(format: RawAudioFormat, dataOffset: number): void {
    this.layout = { format, dataOffset, frame: bytesPerFrame(format), perMs: bytesPerSecond(format) / 1000 };
  }

  start(): void {
    const subscribe = (): Subscription =>
      this.audio$.subscribe({
        next: (chunk) => this.onChunk(chunk),
        error: (err: unknown) => this.end(err),
        complete: () => {
          this.sourceDone = true;
          this.feed?.complete();
        },
      });
    if (this.gate === undefined) {
      this.openSegment([], this.declared);
      if (!this.ended) this.source = subscribe();
      return;
    }
    // A pull source is subscribed first, so that we know whether the gate reached it (through
    // any lifted operator, or by joining a shared read) before the first session is told it can
    // pause it; what it reads meanwhile (a synchronous start) goes to that session first.
    this.early = [];
    const meta = audioMetaOf(this.audio$);
    const { subscription, connected } = connectFlow(meta?.flow, this.gate.flow, subscribe);
    this.source = subscription;
    const early = this.early;
    this.early = undefined;
    // Not reached (subscribed later, as subscribeOn does): a push source, and the warning says so.
    if (!connected && !new AudioCheck(meta, this.options, this.stats).pausable(false)) {
      this.gate.flow.release();
      this.gate = undefined;
    }
    if (!this.ended) this.openSegment(early, this.declared);
    this.gate?.free('start');
  }

  stop(): void {
    const between = this.inner === undefined && !this.ended;
    this.ended = true;
    this.retry?.unsubscribe();
    // Unsubscribed while waiting to reconnect: no session reports it, so the stream does.
    if (between && this.lastState.status === 'reconnecting') {
      enterStatus(this.stats, 'closed');
      this.report(this.lastState, { status: 'closed' });
    }
    this.inner?.unsubscribe();
    this.source?.unsubscribe();
    this.gate?.flow.release();
    this.stored = [];
  }

  // ---- audio -------------------------------------------------------------------------------

  private onChunk(chunk: AudioChunk): void {
    if (this.ended) return;
    const at = this.readPos;
    this.readPos += chunk.byteLength;
    if (this.layoutPending) this.readHeader(chunk);
    // Kept only while the stream can be resumed (a known raw layout, or a WAV header to come).
    if (this.layout !== undefined || this.layoutPending) {
      this.stored.push({ at, bytes: new Uint8Array(chunk) });
      this.trim();
    }
    if (this.feed) this.feed.next(chunk);
    else if (this.early) {
      // A source that reads synchronously when subscribed is held at the session's default
      // high-water mark until the first session exists and takes over the pressure.
      this.early.push(new Uint8Array(chunk));
      this.earlyBytes += chunk.byteLength;
      if (this.earlyBytes > EARLY_BYTES) this.gate?.hold('start');
    }
    // No session takes it now (an outage): the stream counts it; the next session, replaying it, does not again.
    else this.stats.bytesRead += chunk.byteLength;
  }

  private readHeader(chunk: AudioChunk): void {
    this.headerBytes.push(new Uint8Array(chunk));
    const all = Buffer.concat(this.headerBytes);
    const parsed = parseWavHeader(all);
    if (parsed === 'more') return;
    this.layoutPending = false;
    this.headerBytes = [];
    if (parsed !== undefined) this.setLayout(parsed.format, parsed.dataOffset);
    else this.stored = [];
  }

  /** Stream byte position of a time on the stream's axis, on a frame boundary. */
  private posOf(ms: number): number {
    const l = this.layout!;
    return l.dataOffset + Math.floor((ms * l.perMs) / l.frame) * l.frame;
  }

  /** Drop what no resume will need: before the commit point, and beyond the replay (and, in an outage, the outage) bound. */
  private trim(): void {
    if (this.layout === undefined) return;
    const l = this.layout;
    const cap = (this.policy.replayMs + (this.outageSince !== undefined ? this.policy.outageMs : 0)) * l.perMs;
    const keepFrom = Math.max(this.posOf(this.clock.commitMs), this.readPos - cap);
    while (this.storedHead < this.stored.length) {
      const c = this.stored[this.storedHead]!;
      if (c.at + c.bytes.byteLength > keepFrom) break;
      this.storedHead++;
    }
    if (this.storedHead > 256 && this.storedHead * 2 > this.stored.length) {
      this.stored = this.stored.slice(this.storedHead);
      this.storedHead = 0;
    }
  }

  /** The stored bytes from `from` on, as chunks. */
  private storedFrom(from: number): Uint8Array[] {
    const out: Uint8Array[] = [];
    for (let i = this.storedHead; i < this.stored.length; i++) {
      const c = this.stored[i]!;
      const end = c.at + c.bytes.byteLength;
      if (end <= from) continue;
      out.push(c.at >= from ? c.bytes : c.bytes.subarray(from - c.at));
    }
    return out;
  }

  // ---- segments ----------------------------------------------------------------------------

  /** Open the next session over `replay` then the live audio. */
  private openSegment(replay: Uint8Array[], format: AudioFormat | undefined): void {
    const flow = this.gate ? (this.innerFlow = new SessionFlow(this.gate)) : undefined;
    const inner$ = withAudioMeta(
      new Observable<AudioChunk>((sub) => {
        this.feed = sub;
        for (const c of replay) sub.next(c);
        if (this.sourceDone) sub.complete();
        return () => {
          if (this.feed === sub) this.feed = undefined;
        };
      }),
      format ? { format } : {},
    );
    let decided: 'reconnect' | 'fail' | undefined;
    const onStateChange = (old: SessionState, next: SessionState): void => {
      if (next.status === 'streaming' && !this.everOpened) this.everOpened = true;
      if (next.status === 'streaming' && this.outageSince !== undefined) this.reopened();
      if (next.status === 'failed') {
        decided = this.decide(next.error);
        if (decided === 'reconnect') return; // reported as `reconnecting` instead
      }
      // A session let go of (after its failure, or as the stream ends) is not news; the user's unsubscribe is.
      if (next.status === 'closed' && (!this.ended || this.lastState.status === 'failed' || this.lastState.status === 'done')) return;
      this.report(old, next);
    };
    this.inner = this.open(inner$, { ...(format ? { format } : {}), ...(flow ? { flow } : {}), onStateChange }).subscribe({
      next: (e) => this.onEvent(e),
      error: (err: unknown) => {
        if (this.ended) return;
        if ((decided ?? this.decide(err)) === 'reconnect') this.reconnect(err);
        else this.end(err);
      },
      complete: () => {
        this.stop();
        this.subscriber.complete();
      },
    });
  }

  private onEvent(e: ServerEvent): void {
    // Progress (the commit point moved past where the last failure left it) starts the count
    // of attempts again; events alone do not, or a server that fails at the same place every
    // time would be retried for ever.
    if (this.attempt > 0 && this.clock.commitMs > this.failedAtCommitMs) this.attempt = 0;
    // An `error` event is held: a failure the next session cures is not the user's to see.
    if (e.type === 'error') {
      this.heldError = this.clock.deliver(e);
      return;
    }
    // Anything after an `error` event (out of contract) means the error was no prelude to a cure.
    const held = this.heldError;
    if (held) {
      this.heldError = undefined;
      this.subscriber.next(held);
    }
    const out = this.clock.deliver(e);
    if (this.attempt > 0 && this.clock.commitMs > this.failedAtCommitMs) this.attempt = 0;
    if (out !== undefined) this.subscriber.next(out);
    this.trim();
  }

  private decide(err: unknown): 'reconnect' | 'fail' {
    if (this.ended || !this.everOpened || !reconnectable(err)) return 'fail';
    if (this.layout === undefined) return 'fail';
    if (this.attempt + 1 > this.policy.maxAttempts) return 'fail';
    const since = this.outageSince ?? this.scheduler.now();
    if (this.scheduler.now() - since >= this.policy.deadlineMs) return 'fail';
    return 'reconnect';
  }

  private reconnect(err: unknown): void {
    this.detach();
    this.heldError = undefined;
    this.failedAtCommitMs = this.clock.commitMs;
    if (this.outageSince === undefined) {
      this.outageSince = this.scheduler.now();
      this.gate?.hold('outage');
    }
    this.attempt++;
    enterStatus(this.stats, 'reconnecting');
    this.report(this.lastState, { status: 'reconnecting', attempt: this.attempt, error: err });
    const wait = backoffMs(this.policy, this.attempt, (this.options.random ?? Math.random)());
    const deadlineLeft = this.policy.deadlineMs - (this.scheduler.now() - this.outageSince);
    this.retry = timer(Math.max(0, Math.min(wait, deadlineLeft)), this.scheduler).subscribe(() => {
      this.retry = undefined;
      this.resume();
    });
  }

  /** Start the next segment from the commit point (or as far back as the bounds allow). */
  private resume(): void {
    if (this.ended) return;
    this.trim();
    const commit = this.posOf(this.clock.commitMs);
    const oldest = this.storedHead < this.stored.length ? this.stored[this.storedHead]!.at : this.readPos;
    // The replay starts at the commit point, unless the bounds dropped audio after it.
    const from = Math.max(commit, Math.min(oldest, this.readPos));
    const aligned = this.layout!.dataOffset + Math.ceil((from - this.layout!.dataOffset) / this.layout!.frame) * this.layout!.frame;
    const start = Math.min(Math.max(aligned, this.layout!.dataOffset), this.readPos);
    if (start > commit) this.stats.bytesDropped += start - commit;
    const replay = this.storedFrom(start);
    let replayed = 0;
    for (const c of replay) replayed += c.byteLength;
    this.stats.bytesReplayed += replayed;
    this.clock.nextSegment((start - this.layout!.dataOffset) / this.layout!.perMs);
    this.stats.segment = this.clock.segment;
    this.report(this.lastState, { status: 'connecting' });
    this.gate?.free('outage');
    this.openSegment(replay, this.layout!.format);
    // The new session counted what it was fed as read; the stream read these bytes once.
    this.stats.bytesRead = this.readPos;
  }

  private reopened(): void {
    this.stats.reconnects++;
    this.stats.reconnectingMs += this.scheduler.now() - this.outageSince!;
    this.outageSince = undefined;
  }

  /** Let go of the session that failed: its flow no longer reaches the source. */
  private detach(): void {
    this.feed = undefined;
    // Every byte the source gave is read, once, whatever the failed session made of it.
    this.stats.bytesRead = this.readPos;
    if (this.innerFlow) {
      this.innerFlow.attached = false;
      this.innerFlow = undefined;
      this.gate?.free('session');
    }
    this.inner?.unsubscribe();
    this.inner = undefined;
  }

  private end(err: unknown): void {
    if (this.ended) return;
    const held = this.heldError;
    this.heldError = undefined;
    if (held) this.subscriber.next(held);
    if (this.lastState.status !== 'failed') this.report(this.lastState, { status: 'failed', error: err });
    enterStatus(this.stats, 'failed');
    this.stop();
    this.subscriber.error(err);
  }

  private report(old: SessionState, next: SessionState): void {
    this.lastState = next;
    this.options.onStateChange?.(old, next);
  }
}
