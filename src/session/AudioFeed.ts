// One subscription to a stream's audio, held once: every chunk read is checked, counted once
// (`bytesRead`) and appended to the stream's ChunkLog, which each session reads from its own
// position. The source is paused through one FlowControl that follows every reason to pause it.
import { Observable, Subscriber, Subscription } from 'rxjs';
import { connectFlow } from '../audio/sourceFlow.js';
import { ChunkLog } from '../audio/ChunkLog.js';
import { FlowControl } from '../audio/FlowControl.js';
import { audioMetaOf, liveWriterOf, withAudioMeta, type AudioChunk, type AudioSourceMeta, type LiveSink, type LiveWriter } from '../audio/meta.js';
import { InputError, type AudioAccount } from '../errors/index.js';
import { AudioCheck, type AudioWarningOptions } from './AudioCheck.js';
import type { AudioFormat } from '../schema/audio.js';
import { accountOf, type StatsCounters } from './stats.js';

/** The session reading the feed now (one at a time): told of each chunk and of the end. */
export interface FeedReader {
  /** Whether the reader sends a chunk of `len` bytes on at once, so the log need not hold it. */
  sendsAtOnce(len: number): boolean;
  /** A chunk the reader sends on at once (after {@link FeedReader.sendsAtOnce} said so). */
  sendNow(chunk: Uint8Array, len: number): void;
  /** Bytes were appended to the log. */
  appended(): void;
  /** The source completed: the log's end is the audio's end. */
  completed(): void;
  /** Stream position up to which the reader's frames were flushed: the feed never lets go of what lies after. */
  readonly flushedPosition: number;
}

/** What the feed's owner (one session, or the resilient layer) hears from it. */
export interface FeedOwner {
  /** The source errored, or gave something that is not audio bytes. */
  failed(error: unknown): void;
  /** Bytes were appended to the log (before the reader is told). */
  appended?(): void;
  /** The reader let go of the feed. */
  released?(): void;
  /** A frame was flushed to a socket (and counted). */
  flushed?(): void;
}

/** How a feed holds what it read. */
export interface FeedOptions extends AudioWarningOptions {
  readonly format?: AudioFormat | undefined;
  readonly flow?: FlowControl | undefined;
  /** Keep bytes once sent (a resume may send them again): then no chunk is sent on without the log holding it. */
  readonly keepSent: boolean;
}

/**
 * The audio of one stream: subscribed once, read into {@link AudioFeed.log}. The source is
 * paused while the gate is: while no reader is attached, and while any FlowControl it follows
 * (the reading session's, an outage's) is paused.
 */
export class AudioFeed {
  /** Its blocks are reused once trimmed: the log's only reader is the socket's sender, and ws copies each frame as it sends it. */
  readonly log: ChunkLog;
  /** The FlowControl the source follows (the caller's `flow`, or one of our own). */
  readonly gate: FlowControl;
  readonly meta: AudioSourceMeta | undefined;
  readonly keepSent: boolean;
  /** Whether the source's buffers may be kept without a copy (`freshBuffers` on its metadata). */
  private readonly fresh: boolean;
  private readonly check: AudioCheck;
  /** Paused while no reader is attached. */
  private readonly idle = new FlowControl();
  private reader: FeedReader | undefined;
  private subscription: Subscription | undefined;
  private readonly unfollowIdle: () => void;
  /** A live source that writes into the log itself (a call leg given as it is: see {@link AudioFeed.start}). */
  private readonly writer: LiveWriter | undefined;
  private stopped = false;
  /** Whether the source can be paused: a guess until subscribed, then what the subscription told. */
  pausable: boolean;
  /** The source completed. */
  completed = false;
  /** The stream position up to which some session flushed bytes (what lies before was sent at least once, or dropped). */
  sentHigh = 0;
  /** Bytes of this stream flushed at least once, and dropped: `log.end - sentOnce` is unsent. */
  private sentOnce = 0;
  private dropped = 0;
  private finished = false;
  /** Stream position before which the log's bytes were let go of (by {@link AudioFeed.keepFrom}). */
  keptFrom = 0;
  /** Stream position up to which a server read what its session sent, as far as it said ({@link AudioFeed.heard}). */
  heardPosition = 0;
  /** The reader whose unflushed bytes are held, from its attach until it ends ({@link AudioFeed.letGo}). */
  private holder: FeedReader | undefined;

  constructor(
    private readonly audio$: Observable<AudioChunk>,
    options: FeedOptions,
    /** The stream's figures this feed writes: the bytes read, sent, replayed and dropped, the audio warnings. */
    private readonly stats: StatsCounters,
    private readonly owner: FeedOwner,
  ) {
    this.meta = audioMetaOf(audio$);
    this.gate = options.flow ?? new FlowControl();
    this.keepSent = options.keepSent;
    this.fresh = this.meta?.freshBuffers === true;
    this.check = new AudioCheck(this.meta, options, stats);
    this.writer = this.check.sniffing ? undefined : liveWriterOf(audio$);
    this.log = new ChunkLog({ recycle: true, blockBytes: this.writer?.blockBytes });
    this.pausable = this.meta?.flow !== undefined || options.flow !== undefined;
    this.idle.pause();
    this.unfollowIdle = this.gate.follow(this.idle);
  }

  /**
   * Subscribe to the audio. A pull-capable source takes the gate while it is subscribed
   * (through any lifted operator, or by joining a running shared read); one that does not is
   * a push source, and the audio check says so.
   */
  start(): void {
    this.check.begin();
    if (this.writer !== undefined && this.startWriter(this.writer)) return;
    const { subscription, connected } = connectFlow(this.meta?.flow, this.gate, () => this.audio$.subscribe(new FeedSubscriber(this)));
    this.subscription = subscription;
    if (this.stopped) subscription.unsubscribe();
    this.pausable = this.check.pausable(connected);
  }

  /**
   * A live call leg given as it is writes its packets into the log and commits them a frame at
   * a time (no emission, no second log): the reader is told per frame, as it is of a chunk.
   * False when the leg cannot (its audio was subscribed already): then the feed subscribes.
   */
  private startWriter(writer: LiveWriter): boolean {
    const sink: LiveSink = {
      log: this.log,
      committed: (n) => this.onCommitted(n),
      completed: () => {
        this.completed = true;
        this.reader?.completed();
      },
      failed: (err) => {
        if (!this.stopped) this.owner.failed(err);
      },
    };
    const detach = writer.attach(sink);
    if (detach === undefined) return false;
    this.subscription = new Subscription(detach);
    if (this.stopped) this.subscription.unsubscribe();
    this.pausable = this.check.pausable(false);
    return true;
  }

  /** Unsubscribe from the audio (for good); the log stays readable. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.reader = undefined;
    this.subscription?.unsubscribe();
    this.unfollowIdle();
  }

  /** The audio account of the stream: every byte read is sent (once) or unsent. */
  account(): AudioAccount {
    return accountOf(this.stats);
  }

  /**
   * The log from stream position `from` on, as audio of `format`: what a session of this stream
   * subscribes to (it reads the log itself: see {@link feedCursorOf}). Subscribed otherwise, it
   * emits copies of the bytes from `from`, then of each chunk as it comes, and completes with
   * the source.
   */
  from(from: number, format: AudioFormat | undefined): Observable<AudioChunk> {
    const audio$ = withAudioMeta(
      new Observable<AudioChunk>((subscriber) => {
        const flow = new FlowControl();
        let pos = from;
        const reader: FeedReader = {
          sendsAtOnce: () => false,
          sendNow: () => undefined,
          appended: () => {
            const log = this.log;
            while (pos < log.end) {
              const frame = log.frame(pos, 1 << 16);
              pos += frame.byteLength;
              subscriber.next(new Uint8Array(frame));
            }
          },
          completed: () => subscriber.complete(),
          get flushedPosition() {
            return pos;
          },
        };
        const release = this.attach(reader, flow);
        reader.appended();
        if (this.completed) subscriber.complete();
        return () => {
          release();
          this.letGo(reader);
        };
      }),
      { format },
    );
    CURSORS.set(audio$, { feed: this, from, format });
    return audio$;
  }

  /** `reader` reads the feed from now on; the source also follows `flow`. Returns the release. */
  attach(reader: FeedReader, flow: FlowControl): () => void {
    this.reader = reader;
    this.holder = reader;
    const unfollow = this.gate.follow(flow);
    this.idle.resume();
    let attached = true;
    return () => {
      if (!attached) return;
      attached = false;
      if (this.reader === reader) {
        this.reader = undefined;
        if (!this.stopped) this.idle.pause();
      }
      unfollow();
      this.owner.released?.();
    };
  }

  /** `reader` ended: what it did not flush is no longer held for it. */
  letGo(reader: FeedReader): void {
    if (this.holder === reader) this.holder = undefined;
  }

  /**
   * Let go of the log before `pos` (no resume will need it), but never of what the reader still
   * holds unflushed; `align` moves the cut down (to a frame boundary). Bytes let go of that no
   * session was sent are dropped, and counted. The one place the log is cut while it is kept for
   * a resume (see {@link AudioFeed.sentUpTo} for a feed that keeps nothing sent).
   */
  keepFrom(pos: number, align: (pos: number) => number = (p) => p): void {
    const log = this.log;
    let keep = Math.min(pos, log.end);
    const holder = this.holder;
    if (holder !== undefined) keep = Math.min(keep, holder.flushedPosition);
    keep = align(keep);
    if (keep <= this.keptFrom) return;
    const unsentFrom = Math.max(this.keptFrom, this.sentHigh);
    if (keep > unsentFrom) this.drop(keep - unsentFrom);
    this.keptFrom = keep;
    log.trim(keep);
  }

  /** A server acknowledged reading the stream up to `pos` (it answered a ping sent after it): what it had to say of that audio has come. */
  heard(pos: number): void {
    if (pos > this.heardPosition) this.heardPosition = pos;
  }

  /** A reader cut frames up to `pos`: a feed that keeps nothing sent lets go of them (ws copied each frame as it sent it). */
  sentUpTo(pos: number): void {
    if (!this.keepSent) this.log.trim(pos);
  }

  /** A frame of `len` bytes from `from` was flushed to a socket: counted, and counted as replayed where a session had flushed it before. */
  flushed(from: number, len: number): void {
    if (this.finished) return;
    const stats = this.stats;
    stats.bytesSent += len;
    const end = from + len;
    const again = from < this.sentHigh ? Math.min(end, this.sentHigh) - from : 0;
    stats.bytesReplayed += again;
    this.sentOnce += len - again;
    if (end > this.sentHigh) this.sentHigh = end;
    this.owner.flushed?.();
  }

  /** `bytes` read and never sent will never be: counted in `bytesDropped`. */
  drop(bytes: number): void {
    if (this.finished || bytes <= 0) return;
    this.stats.bytesDropped += bytes;
    this.dropped += bytes;
  }

  /** The stream ended: whatever it read and never sent is dropped, and nothing is counted after. */
  finish(): void {
    if (this.finished) return;
    this.drop(this.log.end - this.sentOnce - this.dropped);
    this.finished = true;
  }

  /** The writer committed `n` more bytes to the log (a frame): read, as a chunk is. */
  private onCommitted(n: number): void {
    // Counted even after a stop (the bytes are in the log: `finish` counts them dropped).
    this.stats.bytesRead += n;
    if (this.stopped) return;
    this.owner.appended?.();
    this.reader?.appended();
  }

  /** The source completed (its subscriber says so). */
  onSourceComplete(): void {
    this.completed = true;
    this.reader?.completed();
  }

  /** The source errored (its subscriber says so). */
  onSourceError(err: unknown): void {
    if (!this.stopped) this.owner.failed(err);
  }

  /** A chunk from the source (its subscriber hands it over as it comes). */
  onChunk(chunk: AudioChunk): void {
    if (this.stopped) return;
    if (!(chunk instanceof Uint8Array)) {
      this.owner.failed(new InputError('invalid_argument', `audio chunks must be Uint8Array or Buffer, got ${typeof chunk}`));
      return;
    }
    const len = chunk.byteLength;
    if (len === 0) return;
    if (this.check.sniffing) this.check.sniff(chunk);
    // The one place a byte is counted as read.
    this.stats.bytesRead += len;
    const reader = this.reader;
    if (!this.keepSent && reader !== undefined && reader.sendsAtOnce(len)) {
      this.log.skip(len);
      reader.sendNow(chunk, len);
      return;
    }
    this.log.append(chunk, this.fresh);
    this.owner.appended?.();
    this.reader?.appended();
  }
}

/**
 * The feed's subscriber to its audio: the source's `next` reaches {@link AudioFeed.onChunk} in
 * one call. Subscribing with a partial observer wraps it in a SafeSubscriber and a
 * ConsumerObserver (three calls and a try per chunk before the feed sees it); a Subscriber
 * given to `subscribe` is used as it is. A throw from the feed fails the stream, as the
 * partial observer's would have been reported, and unsubscribes from the source.
 */
class FeedSubscriber extends Subscriber<AudioChunk> {
  constructor(private readonly feed: AudioFeed) {
    super();
  }

  protected override _next(chunk: AudioChunk): void {
    try {
      this.feed.onChunk(chunk);
    } catch (err) {
      this.feed.onSourceError(err);
      this.unsubscribe();
    }
  }

  protected override _error(err: unknown): void {
    try {
      this.feed.onSourceError(err);
    } finally {
      this.unsubscribe();
    }
  }

  protected override _complete(): void {
    try {
      this.feed.onSourceComplete();
    } finally {
      this.unsubscribe();
    }
  }
}

/** Where a session's audio lies in a stream's feed (see {@link AudioFeed.from}). */
export interface FeedCursor {
  readonly feed: AudioFeed;
  readonly from: number;
  readonly format: AudioFormat | undefined;
}

const CURSORS = new WeakMap<Observable<unknown>, FeedCursor>();

/** The feed and position behind an observable made by {@link AudioFeed.from}: a session reads that log in place. */
export function feedCursorOf(audio$: Observable<unknown>): FeedCursor | undefined {
  return CURSORS.get(audio$);
}
