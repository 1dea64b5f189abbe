// Internals shared by the audio sources and operators: taking the flow-control slot,
// forwarding it through synchronous operators, and the lazy pull loop over async iterators.
import type { Observable, Subscriber } from 'rxjs';
import { AudioSourceError, SvcError } from '../errors.js';
import type { FlowControl } from './flow.js';
import { audioMetaOf, type AudioChunk, type FlowSlot } from './meta.js';

/**
 * Take the flow control for one subscription: the session's (left in the slot just before
 * it subscribed) first, the explicit option otherwise. The slot is emptied so the next
 * subscription does not inherit this one's gate.
 */
export function takeFlow(slot: FlowSlot, explicit: FlowControl | undefined): FlowControl | undefined {
  const flow = slot.current ?? explicit;
  slot.current = undefined;
  return flow;
}

/**
 * For an operator that transforms chunks synchronously: hand the flow control left in our
 * slot to the upstream source's slot, so pausing downstream pauses the source itself.
 * Call it inside subscribe, immediately before subscribing upstream.
 */
export function forwardFlow(upstream: Observable<unknown>, slot: FlowSlot): void {
  const flow = slot.current;
  slot.current = undefined;
  const up = audioMetaOf(upstream)?.flow;
  if (up && flow) up.current = flow;
}

/** The chunk as bytes, or a typed error: a string or object in an audio stream is a bug upstream. */
export function asChunk(value: unknown): AudioChunk {
  if (value instanceof Uint8Array) return value;
  throw new AudioSourceError('source_error', `audio sources must yield Uint8Array (or Buffer) chunks, got ${describeValue(value)}`);
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return 'a string (was an encoding set on the stream?)';
  if (typeof value === 'object') return (value as object).constructor?.name ?? 'an object';
  return typeof value;
}

/** Wrap anything a source threw into the one error hierarchy, keeping our own errors as they are. */
export function sourceError(err: unknown, what: string): Error {
  if (err instanceof SvcError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new AudioSourceError('source_error', `${what} failed: ${message}`, { cause: err });
}

/**
 * Pull an async iterator lazily into a subscriber: one `next()` at a time, and never while
 * the flow control is paused. That is the backpressure: nothing is read that was not asked for.
 * When the iterator is done, `finish` (if given) is awaited before completing: it may throw to
 * turn the end into an error (ffmpeg's exit status). Returns the teardown, which stops the loop
 * and calls `stop` once so the caller can release the underlying resource.
 */
export function pullIterator(
  iterator: AsyncIterator<unknown>,
  subscriber: Subscriber<AudioChunk>,
  flow: FlowControl | undefined,
  what: string,
  stop: () => void,
  finish?: () => Promise<void>,
): () => void {
  let closed = false;
  let wake: (() => void) | undefined;
  const stopped = new Promise<void>((resolve) => (wake = resolve));
  const close = (): void => {
    if (closed) return;
    closed = true;
    wake?.();
    stop();
  };
  void (async () => {
    try {
      for (;;) {
        // Race the gate with teardown, so an unsubscribed source never waits on a session that is gone.
        if (flow?.paused) await Promise.race([flow.ready(), stopped]);
        if (closed) return;
        const r = await iterator.next();
        if (closed) return;
        if (r.done) break;
        subscriber.next(asChunk(r.value));
      }
      if (finish) await finish();
      if (closed) return;
      closed = true;
      subscriber.complete();
    } catch (err) {
      if (closed) return;
      closed = true;
      subscriber.error(sourceError(err, what));
      stop();
    }
  })();
  return close;
}
