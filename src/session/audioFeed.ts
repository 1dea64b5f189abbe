// One subscription to a stream's audio, held once: every chunk read is checked, counted once
// (`bytesRead`) and appended to the stream's ChunkLog, which each session reads from its own
// position. The source is paused through one FlowControl that follows every reason to pause it.
import { Subscription, type Observable } from 'rxjs';
import { connectFlow } from '../internal/audioSources.js';
import { ChunkLog } from '../audio/chunkLog.js';
import { FlowControl } from '../audio/flow.js';
import { audioMetaOf, liveWriterOf, type AudioChunk, type AudioSourceMeta, type LiveSink, type LiveWriter } from '../audio/meta.js';
import { InputError } from '../errors.js';
import { AudioCheck, type AudioWarningOptions } from './audioCheck.js';
import type { AudioFormat } from '../schema/audio.js';
import type { SessionStats } from './stats.js';

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

  constructor(
    private readonly audio$: Observable<AudioChunk>,
    options: FeedOptions,
    private readonly stats: SessionStats,
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
    const { subscription, connected } = connectFlow(this.meta?.flow, this.gate, () =>
      this.audio$.subscribe({
        next: (chunk) => this.onChunk(chunk),
        error: (err: unknown) => {
          if (!this.stopped) this.owner.failed(err);
        },
        complete: () => {
          this.completed = true;
          this.reader?.completed();
        },
      }),
    );
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

  /** `reader` reads the feed from now on; the source also follows `flow`. Returns the release. */
  attach(reader: FeedReader, flow: FlowControl): () => void {
    this.reader = reader;
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

  private onChunk(chunk: AudioChunk): void {
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
