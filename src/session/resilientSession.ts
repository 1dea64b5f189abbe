// A stream that outlives its connections: one feed of the audio (read once, held once in its
// log), and over it a sequence of plain sessions (segments), each subscribed as any user would
// (the log from the commit point as its audio, stats of its own whose state$ the layer reads),
// so one call stays one conversation on one time axis. The layer's state is resilienceState.ts's
// union; each phase holds what it owns (the segment, the uptime timer, the backoff), and the one
// transition releases what the old phase held and the new one does not.
import { filter, Observable, of, Subject, Subscription, switchAll, timer, type Subscriber } from 'rxjs';
import { FlowControl } from '../audio/FlowControl.js';
import type { AudioChunk } from '../audio/meta.js';
import { parseWavHeader } from '../audio/wavHeader.js';
import { bytesPerFrame, bytesPerSecond, isRawFormat, type AudioFormat, type RawAudioFormat } from '../schema/audio.js';
import type { SessionState } from '../schema/sessionState.js';
import type { ServerEvent } from '../schema/events.js';
import { sameLabel, type ResultLabel } from '../schema/resultLabel.js';
import { AudioFeed } from './AudioFeed.js';
import { reportAudioWarning } from './AudioCheck.js';
import { resumable } from './closeErrors.js';
import type { ReconnectPolicy } from './reconnect.js';
import { initialResilienceState, resilienceReducer, type ResilienceEvent, type ResilienceState } from './resilienceState.js';
import { SegmentClock, type SessionEvent } from './SegmentClock.js';
import type { SessionSettings } from './sessionSettings.js';
import { labelAfterAnswer } from './sessionLabel.js';
import { answerOf, countersOver, createSessionStats, foldConnection, stateStoreOf, type ConnectionFigures, type SessionStats, type StatsCounters } from './stats.js';
import type { StateStore } from './StateStore.js';
import { settingsForFeed, streamingSession, type Decode } from './streamingSession.js';

/**
 * Stream `audio$` through a sequence of plain sessions decoding with `decode`, reconnecting
 * after a failure the error table says a new session can cure (`resume`) and resuming from the
 * commit point (docs/resilience.md), under `settings.reconnect`.
 *
 * - Cold: each subscription subscribes to `audio$` once, however many sessions it takes.
 * - Emits every event of every segment on one time axis ({@link SessionEvent}); a reconnected
 *   segment's events carry `segment`. Completes with the last segment's `done`.
 * - Errors with the failure when no new session can cure it (the table says so, the first
 *   session never opened, a format whose byte position has no time, attempts or the outage
 *   deadline exhausted), after emitting that session's `error` event if it sent one.
 * - Its state goes to `stats.state$`: each session's states, `reconnecting` between sessions,
 *   then `done`, `failed` or `closed`; its figures add up its sessions' own.
 * - A stream that cannot resume (a compressed format, or none known) is one plain session.
 */
export function resilientSession(audio$: Observable<AudioChunk>, decode: Decode<ServerEvent>, settings: SessionSettings, stats: SessionStats): Observable<SessionEvent> {
  const declared = settings.format;
  const policy = settings.reconnect;
  if (policy === undefined || (!isRawFormat(declared) && declared?.audio_format !== 'wav')) return streamingSession(audio$, decode, settings, stats);
  return new Observable<SessionEvent>((subscriber) => {
    const s = new ResilientSession(audio$, decode, settings, policy, stats, subscriber);
    s.start();
    return () => s.stop();
  });
}

/** The raw layout of the stream: which byte is which millisecond. */
interface Layout {
  readonly format: RawAudioFormat;
  readonly dataOffset: number;
  readonly frame: number;
  readonly perMs: number;
}

/** One plain session over the feed, subscribed while it is the current one. */
interface Segment {
  /** Where its audio starts in the stream. */
  readonly from: number;
  /** Its own stats: the layer reads its state$ and its figures, as any user could. */
  readonly stats: SessionStats;
  /** Our subscriptions to its events and its states. */
  readonly subscription: Subscription;
  /** It resumed the stream after a failure (the first session did not). */
  readonly resumed: boolean;
  /** The stream's label when it was launched: what it was told is folded into that (sessionLabel.ts). */
  readonly labelBefore: ResultLabel | undefined;
}

/**
 * The layer's phase as it runs, keyed by `status` as resilienceState.ts's is, with what it owns:
 * the segment (`connecting`, `open`), the uptime timer (`open` while proving), the backoff
 * (`waiting`). A resource is set on the phase that made it, after it was entered.
 */
type Held =
  | { readonly status: 'connecting'; segment?: Segment | undefined }
  | { readonly status: 'open'; readonly segment: Segment | undefined; uptime?: Subscription | undefined }
  | { readonly status: 'waiting'; backoff?: Subscription | undefined }
  | { readonly status: 'ended' };

const CONNECTING: SessionState = { status: 'connecting' };
/** A segment's states the stream shows (its `connecting` is the layer's; its end, the layer's to judge). */
const SHOWN = new Set(['streaming', 'paused', 'finishing', 'closing']);

/** The WAV header must be complete within this many bytes, or the stream is not resumed. */
const MAX_HEADER_BYTES = 1 << 20;

/**
 * Audio this close before what the server acknowledged is not taken as heard: an utterance
 * that began there may have no partial yet.
 */
const HEARD_MARGIN_MS = 2_000;

class ResilientSession {
  private readonly clock = new SegmentClock();
  private readonly feed: AudioFeed;
  /** Paused from a failure until a new session opens: no pull source reads during an outage. */
  private readonly outage = new FlowControl();
  private state: ResilienceState = initialResilienceState;
  private held: Held = { status: 'connecting' };
  /** The stream's own figures (its feed's bytes, its reconnects), and its sessions' added up. */
  private readonly own: StatsCounters;
  private readonly figures: ConnectionFigures;
  /** What the stream shows as its state: the current phase's view (switched at each transition). */
  private readonly store: StateStore;
  private readonly shown = new Subject<Observable<SessionState>>();
  private showing: Subscription | undefined;
  /** The failure being judged, for the `reconnecting` and `failed` states. */
  private lastError: unknown;
  private layout: Layout | undefined;
  private layoutPending: boolean;
  /** The replay window in bytes, once the layout is known. */
  private replayBytes = 0;
  /** The log's end at the last trim, and where it was cut. */
  private trimmedAt = 0;
  private keptFrom = 0;
  /** Stream position up to which what was let go of was heard by the server with no utterance in progress in it: no clip lies there. */
  private heardUpTo = 0;
  private heldError: SessionEvent | undefined;
  /** A session was launched (the next ones resume the stream). */
  private launched = false;

  constructor(
    audio$: Observable<AudioChunk>,
    private readonly decode: Decode<ServerEvent>,
    private readonly settings: SessionSettings,
    private readonly policy: ReconnectPolicy,
    stats: SessionStats,
    private readonly subscriber: Subscriber<SessionEvent>,
  ) {
    this.store = stateStoreOf(stats);
    // A new subscription starts again from `connecting` (stats given to one before).
    if (this.store.value.status !== 'connecting') this.store.set(CONNECTING);
    const { own, over } = countersOver(stats, { current: undefined, segment: () => this.clock.segment });
    this.own = own;
    this.figures = over;
    this.feed = new AudioFeed(audio$, { ...settingsForFeed(settings), keepSent: true }, own, {
      failed: (err) => {
        this.lastError = err;
        this.dispatch({ type: 'stopped', how: 'failed' });
      },
      appended: () => this.onAppended(),
      flushed: () => this.onFlushed(),
    });
    this.feed.gate.follow(this.outage);
    const declared = settings.format;
    if (isRawFormat(declared)) this.setLayout(declared, 0);
    this.layoutPending = declared?.audio_format === 'wav';
  }

  private setLayout(format: RawAudioFormat, dataOffset: number): void {
    this.layout = { format, dataOffset, frame: bytesPerFrame(format), perMs: bytesPerSecond(format) / 1000 };
    this.replayBytes = this.policy.replayMs * this.layout.perMs;
  }

  start(): void {
    this.showing = this.shown.pipe(switchAll()).subscribe((s) => this.store.set(s));
    this.launch(this.held as Held & { status: 'connecting' }, 0, this.settings.format);
    if (this.held.status !== 'ended') this.feed.start();
  }

  stop(): void {
    this.dispatch({ type: 'stopped', how: 'closed' });
  }

  /** The current segment (the phase's, while connecting or open). */
  private get segment(): Segment | undefined {
    const h = this.held;
    return h.status === 'connecting' || h.status === 'open' ? h.segment : undefined;
  }

  // ---- the one transition ------------------------------------------------------------------

  /**
   * Move to the state `event` leads to (resilienceReducer), then enter it: the outage gate
   * first (paused unless a session is open or the first is opening), then the new phase takes
   * over what it keeps of the old one's and the rest is released, then the new phase's effects.
   * An effect that tells the user (a state they see) comes last: a user who unsubscribes from
   * there finds nothing half-acquired.
   */
  private dispatch(event: ResilienceEvent): void {
    const old = this.state;
    const next = resilienceReducer(old, event, this.policy);
    if (next === old) return;
    this.state = next;
    const n = next.phase;
    if (n.status === 'open' || (n.status === 'connecting' && n.first)) this.outage.resume();
    else if (n.status !== 'ended') this.outage.pause();
    const was = this.held;
    const keepsUptime = was.status === 'open' && n.status === 'open' && n.proving;
    const held: Held =
      n.status === 'open'
        ? { status: 'open', segment: this.segment, uptime: keepsUptime ? was.uptime : undefined }
        : n.status === 'connecting'
          ? { status: 'connecting' }
          : n.status === 'waiting'
            ? { status: 'waiting' }
            : { status: 'ended' };
    this.enter(held);
    switch (n.status) {
      case 'open':
        if (was.status === 'connecting') this.opened(held as Held & { status: 'open' }, old, !(old.phase.status === 'connecting' && old.phase.first), n.proving);
        return;
      case 'waiting': {
        const w = held as Held & { status: 'waiting' };
        this.heldError = undefined;
        // An outage runs from its first failure (attempts that fail on the way are in it).
        this.own.reconnectingSince ??= this.settings.scheduler.now();
        w.backoff = timer(n.delayMs, this.settings.scheduler).subscribe(() => this.dispatch({ type: 'retry' }));
        this.trim();
        this.show(of({ status: 'reconnecting', attempt: next.tries, error: this.lastError }));
        return;
      }
      case 'connecting':
        this.resume(held as Held & { status: 'connecting' });
        return;
      case 'ended':
        this.ended(n.how);
        return;
    }
  }

  /** `set state`, as @discordjs/voice has it: the new phase in, and what the old one held that the new one does not, released. */
  private enter(next: Held): void {
    const old = this.held;
    this.held = next;
    const oldSegment = old.status === 'connecting' || old.status === 'open' ? old.segment : undefined;
    const newSegment = next.status === 'connecting' || next.status === 'open' ? next.segment : undefined;
    if (oldSegment !== undefined && oldSegment !== newSegment) this.release(oldSegment);
    if (old.status === 'open' && old.uptime !== undefined && !(next.status === 'open' && next.uptime === old.uptime)) old.uptime.unsubscribe();
    if (old.status === 'waiting') old.backoff?.unsubscribe();
  }

  /** A segment ends: our subscriptions go, and its figures are added to the stream's. */
  private release(segment: Segment): void {
    this.readLabel(segment);
    segment.subscription.unsubscribe();
    if (this.figures.current === segment.stats) {
      foldConnection(this.figures.ended, segment.stats);
      this.figures.current = undefined;
    }
  }

  /** The state the stream shows from now on. */
  private show(state$: Observable<SessionState>): void {
    this.shown.next(state$);
  }

  /** Subscribe to one plain session reading the log from `from`, and watch its state; the phase `connecting` owns it. */
  private launch(held: Held & { status: 'connecting' }, from: number, format: AudioFormat | undefined): void {
    const stats = createSessionStats();
    const segment: Segment = { from, stats, subscription: new Subscription(), resumed: this.launched, labelBefore: this.own.label };
    this.launched = true;
    held.segment = segment;
    this.figures.current = stats;
    // Its states are ours to read (its `failed` or `closed` is ours to judge, not the user's to see).
    segment.subscription.add(stats.state$.subscribe((s) => this.onSessionState(segment, s)));
    this.show(stats.state$.pipe(filter((s) => SHOWN.has(s.status))));
    const events = streamingSession(this.feed.from(from, format), this.decode, this.settings, stats).subscribe({
      next: (e) => this.onEvent(segment, e),
      error: (err: unknown) => this.onFailed(segment, err),
      complete: () => {
        if (this.segment === segment) this.dispatch({ type: 'done' });
      },
    });
    segment.subscription.add(events);
  }

  /** A state of the current session: its opening opens the stream. */
  private onSessionState(segment: Segment, s: SessionState): void {
    if (this.segment !== segment) return;
    // Open means its upgrade was answered: the stream's label is known from here.
    this.readLabel(segment);
    if (s.status === 'streaming' || s.status === 'paused') this.dispatch({ type: 'opened', now: this.settings.scheduler.now() });
  }

  private opened(held: Held & { status: 'open' }, old: ResilienceState, reconnected: boolean, proving: boolean): void {
    // The outage's time runs on to the first frame this session flushes (onFlushed).
    if (old.downSince !== undefined) this.own.reconnects++;
    // A session that opened is a segment; the attempts that never connected are not.
    if (reconnected) {
      const from = held.segment!.from;
      // Where the audio no session will analyse starts: the commit point, or past it what the
      // server heard with nothing in progress (it had nothing to say of that).
      const lostFrom = Math.max(this.posOf(this.clock.commitMs), this.heardUpTo);
      const unfinished = this.clock.nextSegment((from - this.layout!.dataOffset) / this.layout!.perMs);
      if (from > lostFrom || unfinished.length > 0) this.replayGap(lostFrom, from, unfinished);
    }
    // Progress only once it had an event or stayed up a while: a server that drops every
    // session young does not restart the outage's deadline.
    if (proving) held.uptime = timer(this.policy.minUptimeMs, this.settings.scheduler).subscribe(() => this.dispatch({ type: 'uptime' }));
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
    reportAudioWarning(this.own, this.settings, {
      code: 'replay_gap',
      segment,
      fromMs,
      toMs,
      clipUuids,
      message: clipUuids.length > 0 ? `${gap}; ${begun}` : gap,
    });
  }

  /** Start the next session from the commit point (or as far back as the bounds kept). */
  private resume(held: Held & { status: 'connecting' }): void {
    this.trim();
    const from = Math.max(this.posOf(this.clock.commitMs), this.keptFrom);
    this.show(of(CONNECTING));
    if (this.held === held) this.launch(held, from, this.layout!.format);
  }

  /**
   * A frame was flushed (the feed says so, as the reading session counts it): the first a
   * session flushed after a failure ends the outage, whose time is reconnecting time.
   */
  private onFlushed(): void {
    const since = this.own.reconnectingSince;
    if (since === undefined || this.held.status !== 'open') return;
    this.own.reconnectingMs += this.settings.scheduler.now() - since;
    this.own.reconnectingSince = undefined;
  }

  /** The stream ends: its last state told, the feed let go of, the subscriber told. */
  private ended(how: 'done' | 'failed' | 'closed'): void {
    const since = this.own.reconnectingSince;
    if (since !== undefined) {
      // Ended while reconnecting: the outage lasted until now.
      this.own.reconnectingMs += this.settings.scheduler.now() - since;
      this.own.reconnectingSince = undefined;
    }
    const held = this.heldError;
    this.heldError = undefined;
    if (how === 'failed' && held) this.subscriber.next(held);
    const now = this.store.value.status;
    if (how === 'failed') this.show(of({ status: 'failed', error: this.lastError }));
    else if (how === 'done') this.show(of({ status: 'done' }));
    else if (now !== 'done' && now !== 'failed') this.show(of({ status: 'closed' }));
    this.showing?.unsubscribe();
    this.outage.resume();
    this.feed.stop();
    this.feed.finish();
    if (how === 'failed') this.subscriber.error(this.lastError);
    else if (how === 'done') this.subscriber.complete();
  }

  /**
   * The stream's label, from what `segment`'s socket was told (read from its stats, as any user
   * could read a session's): the first session's answer decides; a resumed one keeps the label,
   * or adds a note when the emulator could not find its audio (sessionLabel.ts). The layer is
   * the one writer of the stream's label.
   */
  private readLabel(segment: Segment): void {
    const answer = answerOf(segment.stats);
    if (answer === undefined) return;
    const next = labelAfterAnswer(segment.labelBefore, answer, segment.resumed);
    if (!sameLabel(this.own.label, next)) this.own.label = next;
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
  private readonly alignDown = (pos: number): number => {
    const l = this.layout!;
    return pos <= l.dataOffset ? pos : l.dataOffset + Math.floor((pos - l.dataOffset) / l.frame) * l.frame;
  };

  /**
   * Tell the feed what no resume will need: what lies before the commit point; beyond the
   * replay bound, what the server has heard with no utterance in progress in it (in an outage,
   * the replay and outage bounds); beyond the replay and outage bounds, whatever it is. The
   * feed cuts its log there (never what the current session has not flushed) and counts what
   * it drops.
   */
  private trim(): void {
    if (this.layoutPending) return;
    const log = this.feed.log;
    this.trimmedAt = log.end;
    if (this.layout === undefined) {
      // Not resumable (a compressed WAV): nothing is kept once flushed.
      this.feed.keepFrom(log.end);
    } else {
      const l = this.layout;
      const commit = this.posOf(this.clock.commitMs);
      const cap = (this.policy.replayMs + (this.state.outageSince !== undefined ? this.policy.outageMs : 0)) * l.perMs;
      const hardCap = (this.policy.replayMs + this.policy.outageMs) * l.perMs;
      // Past the commit point, the replay bound lets go only of audio the server has heard (it
      // answered a ping sent after it, so what it had to say of it has come) with no utterance
      // in progress in it. What it has not answered is what a resume needs: a stall longer
      // than replayMs of audio, or a reconnected session with a long backlog, then a failure
      // before the results came, lost the clips in between (issue 45). That waits for the
      // outage bound, as audio no session takes.
      const heard = this.clock.inProgress ? commit : Math.max(commit, this.feed.heardPosition - HEARD_MARGIN_MS * l.perMs);
      const safe = Math.max(commit, Math.min(log.end - cap, heard));
      const before = this.feed.keptFrom;
      this.feed.keepFrom(Math.max(safe, log.end - hardCap), this.alignDown);
      if (this.feed.keptFrom > before) this.heardUpTo = Math.max(this.heardUpTo, Math.min(this.feed.keptFrom, this.alignDown(safe)));
    }
    this.keptFrom = this.feed.keptFrom;
  }

  // ---- events ------------------------------------------------------------------------------

  private onEvent(segment: Segment, e: ServerEvent): void {
    if (this.segment !== segment) return;
    // What the emulator said before this event (its ping) labels it.
    this.readLabel(segment);
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
    if (out !== undefined && this.segment === segment) this.subscriber.next(out);
    this.trim();
  }

  private onFailed(segment: Segment, err: unknown): void {
    if (this.segment !== segment) return;
    this.lastError = err;
    this.dispatch({
      type: 'failed',
      now: this.settings.scheduler.now(),
      resumable: resumable(err) && this.layout !== undefined,
      commitMs: this.clock.commitMs,
      random: this.settings.random(),
    });
  }
}
