// A stream that outlives its connections: one feed of the audio (read once, held once in its
// log), and over it a sequence of plain sessions (segments), each reading the log from the
// commit point, so one call stays one conversation on one time axis. The layer's state is
// resilienceState.ts's union, moved by one transition that releases what the old phase held;
// what each session does it reads from that session's own state stream.
import { asyncScheduler, Observable, timer, type SchedulerLike, type Subscriber, type Subscription } from 'rxjs';
import { FlowControl } from '../audio/flow.js';
import { audioMetaOf, type AudioChunk } from '../audio/meta.js';
import { parseWavHeader } from '../audio/wavHeader.js';
import { bytesPerFrame, bytesPerSecond, isRawFormat, type AudioFormat, type RawAudioFormat } from '../schema/audio.js';
import type { SessionState } from '../schema/sessionState.js';
import type { ServerEvent } from '../schema/events.js';
import { AudioFeed } from './audioFeed.js';
import { reportAudioWarning } from './audioCheck.js';
import { resumable } from './closeErrors.js';
import type { ReconnectPolicy } from './reconnect.js';
import { initialResilienceState, resilienceReducer, type ResilienceEvent, type ResilienceState } from './resilienceState.js';
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

/** One plain session over the feed, as the layer holds it while it is the current one. */
interface Attempt {
  /** Where its audio starts in the stream. */
  readonly from: number;
  /** Its state stream, read by the layer (never mirrored). */
  readonly store: StateStore;
  /** The session itself, once subscribed: the layer reads how far it flushed. */
  session: StreamingSession<ServerEvent> | undefined;
  /** Our subscriptions to its events and its states. */
  events: Subscription | undefined;
  watch: Subscription | undefined;
}

/** The WAV header must be complete within this many bytes, or the stream is not resumed. */
const MAX_HEADER_BYTES = 1 << 20;

/**
 * Audio this close before what the server acknowledged is not taken as heard: an utterance
 * that began there may have no partial yet.
 */
const HEARD_MARGIN_MS = 2_000;

class ResilientSession {
  private readonly scheduler: SchedulerLike;
  private readonly stats: SessionStats;
  private readonly policy: ReconnectPolicy;
  private readonly clock = new SegmentClock();
  private readonly feed: AudioFeed;
  /** Paused from a failure until a new session opens: no pull source reads during an outage. */
  private readonly outage = new FlowControl();
  private state: ResilienceState = initialResilienceState;
  /** What the phase holds: the current session (connecting, open), the uptime timer (open, proving), the backoff (waiting). */
  private attempt: Attempt | undefined;
  private uptime: Subscription | undefined;
  private backoff: Subscription | undefined;
  /** The failure being judged, for the `reconnecting` and `failed` states. */
  private lastError: unknown;
  private layout: Layout | undefined;
  private layoutPending: boolean;
  /** Stream position before which the log's bytes were let go of (on a frame boundary). */
  private keptFrom = 0;
  /** Stream position up to which what was let go of was heard by the server with no utterance in progress in it: no clip lies there. */
  private heardUpTo = 0;
  /** The replay window in bytes, once the layout is known. */
  private replayBytes = 0;
  /** The log's end at the last trim. */
  private trimmedAt = 0;
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
      failed: (err) => {
        this.lastError = err;
        this.dispatch({ type: 'stopped', how: 'failed' });
      },
      appended: () => this.onAppended(),
    });
    this.feed.gate.follow(this.outage);
    if (isRawFormat(declared)) this.setLayout(declared, 0);
    this.layoutPending = declared?.audio_format === 'wav';
  }

  private setLayout(format: RawAudioFormat, dataOffset: number): void {
    this.layout = { format, dataOffset, frame: bytesPerFrame(format), perMs: bytesPerSecond(format) / 1000 };
    this.replayBytes = this.policy.replayMs * this.layout.perMs;
  }

  start(): void {
    this.launch(0, this.declared);
    if (this.state.phase.status !== 'ended') this.feed.start();
  }

  stop(): void {
    this.dispatch({ type: 'stopped', how: 'closed' });
  }

  // ---- the one transition ------------------------------------------------------------------

  /**
   * Move to the state `event` leads to (resilienceReducer), then enter it: the outage gate
   * first (paused unless a session is open or the first is opening), then what the old phase
   * held and the new one does not is released, then the new phase's effects. An effect that
   * tells the user (a state they see) comes last: a user who unsubscribes from there finds
   * nothing half-acquired.
   */
  private dispatch(event: ResilienceEvent): void {
    const old = this.state;
    const next = resilienceReducer(old, event, this.policy);
    if (next === old) return;
    this.state = next;
    const o = old.phase;
    const n = next.phase;
    if (n.status === 'open' || (n.status === 'connecting' && n.first)) this.outage.resume();
    else if (n.status !== 'ended') this.outage.pause();
    const live = (p: typeof o): boolean => p.status === 'connecting' || p.status === 'open';
    if (live(o) && !live(n)) this.releaseAttempt();
    if (o.status === 'open' && o.proving && !(n.status === 'open' && n.proving)) this.uptime?.unsubscribe();
    if (o.status === 'waiting' && n.status !== 'waiting') this.backoff?.unsubscribe();
    switch (n.status) {
      case 'open':
        if (o.status === 'connecting') this.opened(old, o.first, n.proving);
        return;
      case 'waiting':
        this.heldError = undefined;
        this.backoff = timer(n.delayMs, this.scheduler).subscribe(() => this.dispatch({ type: 'retry' }));
        this.trim();
        this.store.set({ status: 'reconnecting', attempt: next.tries, error: this.lastError });
        return;
      case 'connecting':
        this.resume();
        return;
      case 'ended':
        this.ended(n.how);
        return;
    }
  }

  private releaseAttempt(): void {
    const a = this.attempt;
    this.attempt = undefined;
    a?.events?.unsubscribe();
    a?.watch?.unsubscribe();
  }

  /** Subscribe to one plain session reading the log from `from`, and watch its state. */
  private launch(from: number, format: AudioFormat | undefined): void {
    const attempt: Attempt = { from, store: new StateStore(), session: undefined, events: undefined, watch: undefined };
    this.attempt = attempt;
    // Its own store: its `failed` or `closed` is ours to judge, not the user's to see.
    attempt.watch = attempt.store.state$.subscribe((s) => this.onSessionState(attempt, s));
    const setup = { stats: this.stats, store: attempt.store, format, from };
    const session$ = new Observable<ServerEvent>((sub) => {
      const session = new StreamingSession(this.feed, this.protocol, this.options, setup, sub);
      attempt.session = session;
      session.start();
      return () => session.unsubscribe();
    });
    const events = session$.subscribe({
      next: (e) => this.onEvent(attempt, e),
      error: (err: unknown) => this.onFailed(attempt, err),
      complete: () => {
        if (this.attempt === attempt) this.dispatch({ type: 'done' });
      },
    });
    if (this.attempt === attempt) attempt.events = events;
  }

  /** A state of the current session: its opening opens the stream; its other non-terminal states are the stream's. */
  private onSessionState(attempt: Attempt, s: SessionState): void {
    if (this.attempt !== attempt) return;
    switch (s.status) {
      case 'streaming':
      case 'paused':
        this.dispatch({ type: 'opened', now: this.scheduler.now() });
        if (this.attempt === attempt) this.store.set(s);
        return;
      case 'finishing':
      case 'closing':
        this.store.set(s);
        return;
      default:
        // `connecting` is already the stream's; the terminal states are judged by onFailed and `done`.
        return;
    }
  }

  private opened(old: ResilienceState, first: boolean, proving: boolean): void {
    if (old.downSince !== undefined) {
      this.stats.reconnects++;
      this.stats.reconnectingMs += this.scheduler.now() - old.downSince;
    }
    if (!first) {
      // A session that opened is a segment; the attempts that never connected are not.
      const from = this.attempt!.from;
      // Where the audio no session will analyse starts: the commit point, or past it what the
      // server heard with nothing in progress (it had nothing to say of that).
      const lostFrom = Math.max(this.posOf(this.clock.commitMs), this.heardUpTo);
      const unfinished = this.clock.nextSegment((from - this.layout!.dataOffset) / this.layout!.perMs);
      this.stats.segment = this.clock.segment;
      if (from > lostFrom || unfinished.length > 0) this.replayGap(lostFrom, from, unfinished);
    }
    // Progress only once it had an event or stayed up a while: a server that drops every
    // session young does not restart the outage's deadline.
    if (proving) this.uptime = timer(this.policy.minUptimeMs, this.scheduler).subscribe(() => this.dispatch({ type: 'uptime' }));
  }

  /**
   * The segment that just opened starts after the audio it should resume from: the bounds let
   * go of audio the failed session was sent and the server had not answered (a stall longer
   * than replayMs + outageMs of audio), so no session analyses it again. Its clips are lost:
   * said, with where, never silently gone (issue 45).
   */
  private replayGap(lostFrom: number, from: number, clipUuids: readonly string[]): void {
    const l = this.layout!;
    const fromMs = (lostFrom - l.dataOffset) / l.perMs;
    const toMs = Math.max(fromMs, (from - l.dataOffset) / l.perMs);
    const segment = this.clock.segment;
    const begun = `${clipUuids.length} clip${clipUuids.length === 1 ? '' : 's'} begun before it will not be finished (${clipUuids.join(', ')})`;
    const gap =
      toMs > fromMs
        ? `segment ${segment} resumed at ${Math.round(toMs)} ms, after ${Math.round(fromMs)} ms: the replay and outage bounds (reconnect.replayMs, outageMs) had let go of the audio between, which the server never answered, so no session analyses it and its clips are lost`
        : `segment ${segment} resumed at ${Math.round(fromMs)} ms`;
    reportAudioWarning(this.stats, this.options, {
      code: 'replay_gap',
      segment,
      fromMs,
      toMs,
      clipUuids,
      message: clipUuids.length > 0 ? `${gap}; ${begun}` : gap,
    });
  }

  /** Start the next session from the commit point (or as far back as the bounds kept). */
  private resume(): void {
    this.trim();
    const from = Math.max(this.posOf(this.clock.commitMs), this.keptFrom);
    const entered = this.state;
    this.store.set({ status: 'connecting' });
    if (this.state === entered) this.launch(from, this.layout!.format);
  }

  /** The stream ends: its last state told, the feed let go of, the subscriber told. */
  private ended(how: 'done' | 'failed' | 'closed'): void {
    this.uptime?.unsubscribe();
    this.backoff?.unsubscribe();
    const held = this.heldError;
    this.heldError = undefined;
    if (how === 'failed' && held) this.subscriber.next(held);
    const now = this.store.value.status;
    if (how === 'failed') this.store.set({ status: 'failed', error: this.lastError });
    else if (how === 'done') this.store.set({ status: 'done' });
    else if (now !== 'done' && now !== 'failed') this.store.set({ status: 'closed' });
    this.outage.resume();
    this.feed.stop();
    this.feed.finish();
    if (how === 'failed') this.subscriber.error(this.lastError);
    else if (how === 'done') this.subscriber.complete();
  }

  // ---- audio -------------------------------------------------------------------------------

  private onAppended(): void {
    if (this.layoutPending) this.readHeader();
    else {
      // Between events only the replay window moves (the commit point moves with events, which
      // trim too): at most one trim per block appended, once the log is longer than the window.
      const log = this.feed.log;
      if (log.end - this.trimmedAt >= log.blockBytes && (this.layout === undefined || log.end - this.keptFrom > this.replayBytes)) this.trim();
    }
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

  /** `pos` down to a frame boundary (never into the header). */
  private alignDown(pos: number): number {
    const l = this.layout!;
    return pos <= l.dataOffset ? pos : l.dataOffset + Math.floor((pos - l.dataOffset) / l.frame) * l.frame;
  }

  /**
   * Let go of what no resume will need: before the commit point, and beyond the replay bound
   * what the server has heard with no utterance in progress in it (in an outage, the replay
   * and outage bounds); beyond the replay and outage bounds, whatever it is. Never what the
   * current session has not flushed. Bytes let go of that no session was sent are dropped,
   * and counted.
   */
  private trim(): void {
    if (this.layoutPending) return;
    const log = this.feed.log;
    this.trimmedAt = log.end;
    const session = this.attempt?.session;
    let keep: number;
    if (this.layout === undefined) {
      // Not resumable (a compressed WAV): nothing is kept once flushed.
      keep = session?.flushedPosition ?? log.end;
    } else {
      const l = this.layout;
      const commit = this.posOf(this.clock.commitMs);
      const cap = (this.policy.replayMs + (this.state.outageSince !== undefined ? this.policy.outageMs : 0)) * l.perMs;
      const hardCap = (this.policy.replayMs + this.policy.outageMs) * l.perMs;
      // Past the commit point, the replay bound lets go only of audio the server has heard (it
      // answered a ping sent after it, so what it had to say of it has come) with no utterance
      // in progress in it. What it has not answered is what a resume needs: a stall longer
      // than replayMs of audio, then a failure before the results came, lost the clips sent in
      // the stall (issue 45). That waits for the outage bound, as audio no session takes.
      const heard = session === undefined || this.clock.inProgress ? commit : Math.max(commit, session.acknowledgedPosition - HEARD_MARGIN_MS * l.perMs);
      const safe = Math.max(commit, Math.min(log.end - cap, heard));
      keep = Math.max(safe, log.end - hardCap);
      if (session !== undefined) keep = Math.min(keep, session.flushedPosition);
      keep = this.alignDown(Math.min(keep, log.end));
      if (keep > this.keptFrom) this.heardUpTo = Math.max(this.heardUpTo, Math.min(keep, this.alignDown(safe)));
    }
    if (keep <= this.keptFrom) return;
    const unsentFrom = Math.max(this.keptFrom, this.feed.sentHigh);
    if (keep > unsentFrom) this.feed.drop(keep - unsentFrom);
    this.keptFrom = keep;
    log.trim(keep);
  }

  // ---- events ------------------------------------------------------------------------------

  private onEvent(attempt: Attempt, e: ServerEvent): void {
    if (this.attempt !== attempt) return;
    // An `error` event is held: a failure the next session cures is not the user's to see.
    // (Nor is it progress: a server that fails every session says so with an `error` event first.)
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
    // Progress of the commit point (past where the last failure left it) starts the count of
    // attempts again; events alone do not, or a server that fails at the same place every
    // time would be retried for ever.
    this.dispatch({ type: 'event', commitMs: this.clock.commitMs });
    if (out !== undefined && this.attempt === attempt) this.subscriber.next(out);
    this.trim();
  }

  private onFailed(attempt: Attempt, err: unknown): void {
    if (this.attempt !== attempt) return;
    this.lastError = err;
    this.dispatch({
      type: 'failed',
      now: this.scheduler.now(),
      resumable: resumable(err) && this.layout !== undefined,
      commitMs: this.clock.commitMs,
      random: (this.options.random ?? Math.random)(),
    });
  }
}
