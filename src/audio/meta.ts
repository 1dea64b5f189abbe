// What an audio observable can tell the session about itself: its format (so the query
// parameters need not be restated) and, for pull-capable sources, a flow-control slot.
import type { Observable } from 'rxjs';
import type { AudioFormat } from '../schema/audio.js';
import type { FlowControl } from './flow.js';

/** One chunk of audio bytes. Buffers are Uint8Arrays. */
export type AudioChunk = Uint8Array;

export const AUDIO_META: unique symbol = Symbol.for('svc-stream.audio-meta');

/**
 * Set by the session on subscribe, read by a pull-capable source when it is subscribed:
 * the session subscribes synchronously after setting it, so one slot serves each subscription.
 */
export interface FlowSlot {
  current: FlowControl | undefined;
}

/** What an {@link AudioObservable} says about itself: its format (so the session need not be told again) and, on pull-capable sources, a flow-control slot. */
export interface AudioSourceMeta {
  /** The format of the bytes, when the source knows it. */
  readonly format?: AudioFormat | undefined;
  /** Present on sources that can pause (Node Readable, async iterable). */
  readonly flow?: FlowSlot | undefined;
}

/** An observable of audio chunks that carries its format and, maybe, flow control. */
export type AudioObservable = Observable<AudioChunk> & { readonly [AUDIO_META]?: AudioSourceMeta };

/** Attach metadata to an audio observable (returns the same object). */
export function withAudioMeta<T extends Observable<AudioChunk>>(source: T, meta: AudioSourceMeta): T & { readonly [AUDIO_META]: AudioSourceMeta } {
  return Object.assign(source, { [AUDIO_META]: meta });
}

/** The metadata of an audio observable, if it has any. */
export function audioMetaOf(source: Observable<unknown>): AudioSourceMeta | undefined {
  return (source as { [AUDIO_META]?: AudioSourceMeta })[AUDIO_META];
}
