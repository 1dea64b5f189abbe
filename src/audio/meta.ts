// What an audio observable can tell the session about itself: its format (so the query
// parameters need not be restated) and, for pull-capable sources, a flow-control slot.
// Audio sources are AudioSource instances, whose `lift` hands the metadata on, so every
// pipeable operator built with RxJS's `operate` (tap, map, filter, take, share, …) keeps it.
import { Observable, type Operator, type Subscriber, type TeardownLogic } from 'rxjs';
import type { AudioFormat } from '../schema/audio.js';
import type { ChunkLog } from './ChunkLog.js';
import type { FlowControl } from './FlowControl.js';

/** One chunk of audio bytes. Buffers are Uint8Arrays. */
export type AudioChunk = Uint8Array;

/** The key of the metadata on an audio observable (see {@link audioMetaOf}). */
export const AUDIO_META: unique symbol = Symbol.for('svc-stream.audio-meta');

/**
 * How a consumer hands its flow control to a pull-capable source: the consumer (a session)
 * sets `current` and subscribes synchronously (through any lifted operator); the source's
 * subscription takes the gate and empties the slot, and the consumer empties it too if no
 * subscription took it. `active` holds the gates of the source subscriptions running now, so
 * a consumer that joined a running subscription (after `share`) can gate it too.
 */
export interface FlowSlot {
  current: FlowControl | undefined;
  /** The gates of the running subscriptions of the source (kept by the source). */
  active?: Set<FlowControl> | undefined;
}

/** What an {@link AudioObservable} says about itself: its format (so the session need not be told again) and, on pull-capable sources, a flow-control slot. */
export interface AudioSourceMeta {
  /** The format of the bytes, when the source knows it. */
  readonly format?: AudioFormat | undefined;
  /** Present on sources that can pause (Node Readable, async iterable, file, ffmpeg). */
  readonly flow?: FlowSlot | undefined;
  /**
   * The source's promise that it never writes into a chunk's buffer once it emitted it (a
   * file's reads, ffmpeg's output: each a buffer of its own), so a consumer may keep chunks
   * without copying them. Kept through every lifted operator, like the format: an operator
   * that emits buffers it reuses restates the metadata without it (`withAudioFormat`).
   */
  readonly freshBuffers?: boolean | undefined;
}

/**
 * An Observable that carries audio metadata (format, flow slot) through operators: its
 * `lift` returns another AudioSource with the same metadata, and RxJS 7's pipeable operators
 * (`tap`, `map`, `filter`, `take`, `takeUntil`, `bufferCount`, `concatMap`, `share`,
 * `observeOn`, …) all lift. Every source of this library returns one.
 *
 * The metadata describes the bytes: an operator that changes them (a decoder, a resampler)
 * states the new format with `withAudioFormat`. An operator written as
 * `(source) => new Observable(…)` does not lift, and the metadata stops there.
 */
export class AudioSource<T = AudioChunk> extends Observable<T> {
  /** The source's format and flow slot. */
  readonly [AUDIO_META]: AudioSourceMeta;

  /** An AudioSource with `meta`, subscribing with `subscribe` (as `new Observable(subscribe)`). */
  constructor(meta: AudioSourceMeta, subscribe?: (this: Observable<T>, subscriber: Subscriber<T>) => TeardownLogic) {
    super(subscribe);
    this[AUDIO_META] = meta;
  }

  /** As `Observable.lift`, keeping the metadata (RxJS's `operate` calls it for every pipeable operator). */
  override lift<R>(operator?: Operator<T, R>): AudioSource<R> {
    const lifted = new AudioSource<R>(this[AUDIO_META]);
    // The documented way to extend `lift` (RxJS 7 marks these fields internal).
    lifted.source = this;
    lifted.operator = operator;
    return lifted;
  }

  // The two methods below only restate RxJS's: the comments RxJS gives them link to names
  // the API reference cannot resolve.

  /** As `Observable.forEach`: subscribes, calls `next` with each value, resolves on completion, rejects on error. */
  override forEach(next: (value: T) => void): Promise<void> {
    return super.forEach(next);
  }

  /** As `Observable.toPromise`, which RxJS deprecates: use `lastValueFrom` from 'rxjs' instead. */
  override toPromise(): Promise<T | undefined> {
    return super.toPromise();
  }
}

/** An observable of audio chunks that carries its format and, maybe, flow control. */
export type AudioObservable = Observable<AudioChunk> & { readonly [AUDIO_META]?: AudioSourceMeta };

/**
 * `source` as an {@link AudioSource} with `meta` (a new observable that subscribes to
 * `source`): the metadata then survives the operators piped after it.
 */
export function withAudioMeta<T = AudioChunk>(source: Observable<T>, meta: AudioSourceMeta): AudioSource<T> {
  const out = new AudioSource<T>(meta);
  out.source = source; // as asObservable() does
  return out;
}

/** The metadata of an audio observable, if it has any. */
export function audioMetaOf(source: Observable<unknown>): AudioSourceMeta | undefined {
  return (source as { [AUDIO_META]?: AudioSourceMeta })[AUDIO_META];
}

// ---- internal: a live source that writes straight into its consumer's log ----------------------
// Not exported from the package: a live call leg (LiveAudio) registers here, and a session's
// feed that is given that very observable (not one piped from it: an operator in between must
// see the chunks) takes its audio this way instead of subscribing.

/** Where a {@link LiveWriter} writes: a session's feed. */
export interface LiveSink {
  /** The log the writer copies its bytes into (past its end) and commits a frame at a time. */
  readonly log: ChunkLog;
  /** `n` more bytes were committed: a frame, up to the log's end. */
  committed(n: number): void;
  /** The source completed: the log's end is the audio's end. */
  completed(): void;
  /** The source failed. */
  failed(error: unknown): void;
}

/** A source that can write into a {@link LiveSink} instead of emitting. */
export interface LiveWriter {
  /** The block size the sink's log should have (frames per block of the writer's frames). */
  readonly blockBytes: number;
  /**
   * Write into `sink` from now on, when the writer can (nobody took its audio yet, and its log
   * is empty: the positions of both logs are then the same); returns how to stop, or undefined
   * when it cannot (then subscribe as usual).
   */
  attach(sink: LiveSink): (() => void) | undefined;
}

const liveWriters = new WeakMap<Observable<unknown>, LiveWriter>();

/** Register `writer` for the observable `source` itself (not for what is piped from it). */
export function setLiveWriter(source: Observable<unknown>, writer: LiveWriter): void {
  liveWriters.set(source, writer);
}

/** The live writer of exactly this observable, if it has one. */
export function liveWriterOf(source: Observable<unknown>): LiveWriter | undefined {
  return liveWriters.get(source);
}
