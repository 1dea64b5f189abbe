// A stream that outlives its connections: one feed of the audio (read once, held once in its
// log), and over it a sequence of plain sessions (segments), each reading the log from the
// commit point, so one call stays one conversation on one time axis. The layer's own state is
// a small union moved by one transition; what each session does it reads from that session's
// state stream.
import { asyncScheduler, Observable, Subscription, timer, type SchedulerLike, type Subscriber } from 'rxjs';
import { FlowControl } from '../audio/flow.js';
import { audioMetaOf, type AudioChunk } from '../audio/meta.js';
import { parseWavHeader } from '../audio/wavHeader.js';
import { bytesPerFrame, bytesPerSecond, isRawFormat, type AudioFormat, type RawAudioFormat } from '../schema/audio.js';
import type { SessionState } from '../schema/sessionState.js';
import type { ServerEvent } from '../schema/events.js';
import { AudioFeed } from './audioFeed.js';
import { resumable } from './closeErrors.js';
import { backoffMs, type ReconnectPolicy } from './reconnect.js';
import { SegmentClock, type SessionEvent } from './segments.js';
import { stateStoreOf, type SessionStats } from './stats.js';
import { followState, StateStore } from './stateStore.js';
import { streamingSession, StreamingSession, type StreamingOptions, type StreamProtocol } from './streamingSession.js';

/** The caller's options, with the reconnect policy resolved and the counters given. */
export interface ResilientOptions extends StreamingOptions {
  readonly policy: ReconnectPolicy;
  readonly stats: SessionStats;
  /** Source of jitter, [0, 1). Default Math.random. */
  readonly random?: (() => number) | undefined;
}

/**
 * Stream `audio$` through a sequence of plain sessions speaking `protocol`, reconnecting after
 * a failure the error table says a new session can cure (`resume`) and resuming from the
 * commit point (docs/resilience.md).
 *
 * - Cold: each subscription subscribes to `audio$` once, however many sessions it takes.
 * - Emits every event of every segment on one time axis ({@link SessionEvent}); a reconnected
 *   segment's events carry `segment`. Completes with the last segment's `done`.
 * - Errors with the failure when no new session can cure it (the table says so, the first
 *   session never opened, a format whose byte position has no time, attempts or the outage
 *   deadline exhausted), after emitting that session's `error` event if it sent one.
 * - Its state goes to `options.stats.state$` (and `onStateChange`): each session's states,
 *   `reconnecting` between sessions, then `done`, `failed` or `closed`.
 * - A stream that cannot resume (a compressed format, or none known) is one plain session.
 */
export function resilientSession(audio$: Observable<AudioChunk>, protocol: StreamProtocol<ServerEvent>, options: ResilientOptions): Observable<SessionEvent> {
  const declared = options.format ?? audioMetaOf(audio$)?.format;
  if (!isRawFormat(declared) && declared?.audio_format !== 'wav') return streamingSession(audio$, protocol, options);
  return new Observable<SessionEvent>((subscriber) => {
    const store = stateStoreOf(options.stats);
    // A new subscription starts again from `connecting` (stats given to one before).
    if (store.value.status !== 'connecting') store.set({ status: 'connecting' });
    const following = followState(store.state$, options.onStateChange);
    const s = new ResilientSession(audio$, protocol, options, declared, store, subscriber);
    s.start();
    return () => {
      s.stop();
      following?.unsubscribe();
    };
  });
}

/** The raw layout of the stream: which byte is which millisecond. */
interface Layout {
  readonly format: RawAudioFormat;
  readonly dataOffset: number;
  readonly frame: number;
  readonly perMs: number;
}

/** One plain session over the feed, as the layer holds it. */
interface Attempt {
  /** Where its audio starts in the stream. */
  readonly from: number;
  /** Its state stream, read by the layer (never mirrored). */
  readonly store: StateStore;
  /** The session itself, once subscribed: the layer reads how far it got. */
  session: StreamingSession<ServerEvent> | undefined;
  /** Our subscriptions to its events and its states. */
  events: Subscription | undefined;
  watch: Subscription | undefined;
}

/**
 * The layer's state, keyed by `status`; each member owns what it holds, released by the one
 * transition when the state is left:
 * - `connecting`: a session is opening (`first`: the stream's first; otherwise after a failure);
 * - `open`: a session opened; `proven` times its minimum uptime, after which it counts as progress;
 * - `waiting`: between sessions, the backoff `timer` running;
 * - `ended`: done, failed or unsubscribed; never left.
 */
type Phase =
  | { readonly status: 'connecting'; readonly attempt: Attempt; readonly first: boolean }
  | { readonly status: 'open'; readonly attempt: Attempt; readonly proven: Subscription | undefined }
  | { readonly status: 'waiting'; readonly timer: Subscription }
  | { readonly status: 'ended' };

/** The WAV header must be complete within this many bytes, or the stream is not resumed. */
const MAX_HEADER_BYTES = 1 << 20;

class ResilientSession {
  private readonly scheduler: SchedulerLike;
  private readonly stats: SessionStats;
  private readonly policy: ReconnectPolicy;
  private readonly clock = new SegmentClock();
  private readonly feed: AudioFeed;
  /** Paused from a failure until a new session opens: no pull source reads during an outage. */
  private readonly outage = new FlowControl();
  private phase: Phase = { status: 'waiting', timer: Subscription.EMPTY };
  private layout: Layout | undefined;
  private layoutPending: boolean;
  /** Stream position before which the log's bytes were let go of (on a frame boundary). */
  private keptFrom = 0;
  /** When the outage began (the first failure since the last session that made progress); undefined: none. */
  private outageSince: number | undefined;
  /** When the last session failed, for `reconnectingMs`. */
  private downSince: number | undefined;
  /** Attempts in a row without progress of the commit point. */
  private tries = 0;
  /** The commit point when the last failure struck: attempts count again only after it moves. */
  private failedAtCommitMs = -1;
  private heldError: SessionEvent | undefined;

  constructor(
    audio$: Observable<AudioChunk>,
    private readonly protocol: StreamProtocol<ServerEvent>,
    private readonly options: ResilientOptions,
    private readonly declared: AudioFormat | undefined,
    private readonly store: StateStore,
    private readonly subscriber: Subscriber<SessionEvent>,
  ) {
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.stats = options.stats;
    this.policy = options.policy;
    this.feed = new AudioFeed(audio$, { ...options, keepSent: true }, this.stats, {
      failed: (err) => this.end(err),
      appended: () => this.onAppended(),
    });
    this.feed.gate.follow(this.outage);
    if (isRawFormat(declared)) this.setLayout(declared, 0);
    this.layoutPending = declared?.audio_format === 'wav';
  }

  private setLayout(format: RawAudioFormat, dataOffset: number): void {
    this.layout = { format, dataOffset, frame: bytesPerFrame(format), perMs: bytesPerSecond(format) / 1000 };
  }

  start(): void {
    this.launch(0, this.declared, true);
    if (this.phase.status !== 'ended') this.feed.start();
  }

  stop(): void {
    if (this.phase.status === 'ended') return;
    const now = this.store.value.status;
    if (now !== 'done' && now !== 'failed') this.store.set({ status: 'closed' });
    this.close();
  }

  // ---- the one transition ------------------------------------------------------------------

  /**
   * Enter `next`: the outage gate first (paused unless a session is open or the first is
   * opening), then what the old state owned and the new one does not is released (the old
   * session, the uptime timer, the backoff timer). `ended` is never left: what `next` owns is
   * released instead.
   */
  private setPhase(next: Phase): void {
    const old = this.phase;
    if (old.status === 'ended') {
      release(next, undefined);
      return;
    }
    if (next.status === 'open' || (next.status === 'connecting' && next.first)) this.outage.resume();
    else this.outage.pause();
    this.phase = next;
    release(old, next);
  }

  /** Subscribe to one plain session reading the log from `from`, and watch its state. */
  private launch(from: number, format: AudioFormat | undefined, first: boolean): void {
    const attempt: Attempt = { from, store: new StateStore(), session: undefined, events: undefined, watch: undefined };
    this.setPhase({ status: 'connecting', attempt, first });
    if (this.phase.status === 'ended') return;
    // Its own store: its `failed` or `closed` is ours to judge, not the user's to see.
    attempt.watch = attempt.store.state$.subscribe((s) => this.onSessionState(attempt, s));
    const setup = { stats: this.stats, store: attempt.store, format, from };
    const session$ = new Observable<ServerEvent>((sub) => {
      const session = new StreamingSession(this.feed, this.protocol, this.options, setup, sub);
      attempt.session = session;
      session.start();
      return () => session.unsubscribe();
    });
    attempt.events = session$.subscribe({
      next: (e) => this.onEvent(attempt, e),
      error: (err: unknown) => this.onFailed(attempt, err),
      complete: () => this.onDone(attempt),
    });
  }

  private current(attempt: Attempt): boolean {
    const p = this.phase;
    return (p.status === 'connecting' || p.status === 'open') && p.attempt === attempt;
  }

  /** A state of the current session: its opening moves us to `open`; its non-terminal states are the stream's. */
  private onSessionState(attempt: Attempt, s: SessionState): void {
    if (!this.current(attempt)) return;
    switch (s.status) {
      case 'streaming':
      case 'paused':
        if (this.phase.status === 'connecting') this.opened(attempt, this.phase.first);
        this.store.set(s);
        return;
      case 'finishing':
      case 'closing':
        this.store.set(s);
        return;
      default:
        // `connecting` is already the stream's; the terminal states are judged by onFailed/onDone.
        return;
    }
  }

  private opened(attempt: Attempt, first: boolean): void {
    const now = this.scheduler.now();
    if (this.downSince !== undefined) {
      this.stats.reconnects++;
      this.stats.reconnectingMs += now - this.downSince;
      this.downSince = undefined;
    }
    if (!first) {
      // A session that opened is a segment; the attempts that never connected are not.
      this.clock.nextSegment((attempt.from - this.layout!.dataOffset) / this.layout!.perMs);
      this.stats.segment = this.clock.segment;
    }
    // Progress only once it had an event or stayed up a while: a server that drops every
    // session young does not restart the outage's deadline.
    const proven = this.outageSince === undefined ? undefined : timer(this.policy.minUptimeMs, this.scheduler).subscribe(() => this.progress());
    this.setPhase({ status: 'open', attempt, proven });
  }

  /** The current session counts as progress: the outage is over. */
  private progress(): void {
    this.outageSince = undefined;
    const p = this.phase;
    if (p.status === 'open' && p.proven !== undefined) this.setPhase({ status: 'open', attempt: p.attempt, proven: undefined });
  }

  // ---- audio -------------------------------------------------------------------------------

  private onAppended(): void {
    if (this.layoutPending) this.readHeader();
    this.trim();
  }

  private readHeader(): void {
    const log = this.feed.log;
    const parsed = parseWavHeader(log.slice(0, Math.min(log.end, MAX_HEADER_BYTES)));
    if (parsed === 'more' && log.end < MAX_HEADER_BYTES) return;
    this.layoutPending = false;
    if (parsed !== undefined && parsed !== 'more') this.setLayout(parsed.format, parsed.dataOffset);
  }

  /** Stream byte position of a time on the stream's axis, on a frame boundary. */
  private posOf(ms: number): number {
    const l = this.layout!;
    return l.dataOffset + Math.floor((ms * l.perMs) / l.frame) * l.frame;
  }

  /** `pos` down to a frame boundary (never before the data). */
  private alignDown(pos: number): number {
    const l = this.layout!;
    return pos <= l.dataOffset ? Math.min(pos, l.dataOffset) : l.dataOffset + Math.floor((pos - l.dataOffset) / l.frame) * l.frame;
  }

  /**
   * Let go of what no resume will need: before the commit point, and beyond the replay bound
   * (in an outage, the replay and outage bounds); never what the open session has not flushed.
   * Bytes let go of that no session was sent are dropped, and counted.
   */
  private trim(): void {
    if (this.layoutPending) return;
    const log = this.feed.log;
    const p = this.phase;
    const session = p.status === 'connecting' || p.status === 'open' ? p.attempt.session : undefined;
    let keep: number;
    if (this.layout === undefined) {
      // Not resumable (a compressed WAV): nothing is kept once flushed.
      keep = session?.flushedPosition ?? log.end;
    } else {
      const l = this.layout;
      const cap = (this.policy.replayMs + (this.outageSince !== undefined ? this.policy.outageMs : 0)) * l.perMs;
      keep = Math.max(this.posOf(this.clock.commitMs), log.end - cap);
      if (session !== undefined) keep = Math.min(keep, session.flushedPosition);
      keep = this.alignDown(Math.min(keep, log.end));
    }
    if (keep <= this.keptFrom) return;
    const unsentFrom = Math.max(this.keptFrom, this.feed.sentHigh);
    if (keep > unsentFrom) this.feed.drop(keep - unsentFrom);
    this.keptFrom = keep;
    log.trim(keep);
  }

  // ---- events ------------------------------------------------------------------------------

  private onEvent(attempt: Attempt, e: ServerEvent): void {
    if (!this.current(attempt)) return;
    if (this.outageSince !== undefined && this.phase.status === 'open') this.progress();
    // Progress of the commit point (past where the last failure left it) starts the count of
    // attempts again; events alone do not, or a server that fails at the same place every
    // time would be retried for ever.
    if (this.tries > 0 && this.clock.commitMs > this.failedAtCommitMs) this.tries = 0;
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
    if (this.tries > 0 && this.clock.commitMs > this.failedAtCommitMs) this.tries = 0;
    if (out !== undefined) this.subscriber.next(out);
    this.trim();
  }

  private onDone(attempt: Attempt): void {
    if (!this.current(attempt)) return;
    this.store.set({ status: 'done' });
    this.close();
    this.subscriber.complete();
  }

  private onFailed(attempt: Attempt, err: unknown): void {
    if (!this.current(attempt)) return;
    if (this.decide(err) === 'reconnect') this.reconnect(err);
    else this.end(err);
  }

  private decide(err: unknown): 'reconnect' | 'fail' {
    const p = this.phase;
    // The first connection is not retried: a wrong URL or key, a service down, is said at once.
    if (p.status === 'connecting' && p.first) return 'fail';
    if (!resumable(err) || this.layout === undefined) return 'fail';
    if (this.tries + 1 > this.policy.maxAttempts) return 'fail';
    const now = this.scheduler.now();
    if (now - (this.outageSince ?? now) >= this.policy.deadlineMs) return 'fail';
    return 'reconnect';
  }

  private reconnect(err: unknown): void {
    const now = this.scheduler.now();
    this.heldError = undefined;
    this.failedAtCommitMs = this.clock.commitMs;
    this.outageSince ??= now;
    this.downSince = now;
    this.tries++;
    const wait = backoffMs(this.policy, this.tries, (this.options.random ?? Math.random)());
    const left = this.policy.deadlineMs - (now - this.outageSince);
    this.setPhase({ status: 'waiting', timer: timer(Math.max(0, Math.min(wait, left)), this.scheduler).subscribe(() => this.resume()) });
    this.store.set({ status: 'reconnecting', attempt: this.tries, error: err });
    this.trim();
  }

  /** Start the next session from the commit point (or as far back as the bounds kept). */
  private resume(): void {
    if (this.phase.status !== 'waiting') return;
    this.trim();
    const from = Math.max(this.posOf(this.clock.commitMs), this.keptFrom);
    this.store.set({ status: 'connecting' });
    this.launch(from, this.layout!.format, false);
  }

  /** The stream fails with `err`, after the `error` event held for a cure that will not come. */
  private end(err: unknown): void {
    if (this.phase.status === 'ended') return;
    const held = this.heldError;
    this.heldError = undefined;
    if (held) this.subscriber.next(held);
    this.store.set({ status: 'failed', error: err });
    this.close();
    this.subscriber.error(err);
  }

  private close(): void {
    this.setPhase({ status: 'ended' });
    this.outage.resume();
    this.feed.stop();
    this.feed.finish();
  }
}

/** Release what `old` owned that `next` does not own. */
function release(old: Phase, next: Phase | undefined): void {
  if ((old.status === 'connecting' || old.status === 'open') && !((next?.status === 'connecting' || next?.status === 'open') && next.attempt === old.attempt)) {
    old.attempt.events?.unsubscribe();
    old.attempt.watch?.unsubscribe();
  }
  if (old.status === 'open' && (next?.status !== 'open' || next.proven !== old.proven)) old.proven?.unsubscribe();
  if (old.status === 'waiting' && (next?.status !== 'waiting' || next.timer !== old.timer)) old.timer.unsubscribe();
}
