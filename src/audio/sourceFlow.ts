// Internals shared by the audio sources and their consumers: taking the flow control a
// consumer left in the slot, connecting a consumer's flow control, and the lazy pull loop
// over async iterators.
import type { Subscriber, Subscription } from 'rxjs';
import { AudioSourceError, SvcError } from '../errors/index.js';
import { FlowControl } from './FlowControl.js';
import type { AudioChunk, FlowSlot } from './meta.js';

/**
 * The gate of one source subscription: it follows the consumer's gate left in the slot (a
 * session sets it just before subscribing; the slot is emptied, so the next subscription
 * does not inherit it) and the explicit option, and is registered in
 * the slot's `active` set while the subscription runs, so a consumer that joins it later
 * (after `share`) can gate it too. Call it inside subscribe, before anything asynchronous.
 */
export function takeFlow(slot: FlowSlot, explicit: FlowControl | undefined, subscriber: Subscriber<unknown>): FlowControl {
  const gate = new FlowControl();
  const given = slot.current;
  slot.current = undefined;
  if (given) subscriber.add(gate.follow(given));
  if (explicit && explicit !== given) subscriber.add(gate.follow(explicit));
  const active = (slot.active ??= new Set());
  active.add(gate);
  subscriber.add(() => active.delete(gate));
  return gate;
}

/**
 * Subscribe to an audio observable with `flow` as its gate: leave `flow` in the source's
 * slot while `subscribe` runs (the source subscription made meanwhile takes it), then
 * empty the slot. When no subscription took it (the consumer joined a running one, after
 * `share`), `flow` gates the running subscriptions of the source instead. Returns the
 * subscription, which detaches `flow` when unsubscribed, and whether `flow` reached a source.
 */
export function connectFlow(slot: FlowSlot | undefined, flow: FlowControl, subscribe: () => Subscription): { subscription: Subscription; connected: boolean } {
  if (slot === undefined) return { subscription: subscribe(), connected: false };
  slot.current = flow;
  let subscription: Subscription;
  let taken = false;
  try {
    subscription = subscribe();
  } finally {
    // A source of its own making may take the gate from the slot without following it.
    taken = slot.current !== flow;
    if (!taken) slot.current = undefined;
  }
  if (!taken && !flow.connected) for (const gate of slot.active ?? []) subscription.add(gate.follow(flow));
  // A subscription that already ended (an error on subscribe) needs no gate.
  const connected = taken || flow.connected || subscription.closed;
  subscription.add(() => flow.detach());
  return { subscription, connected };
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
 * Bytes an iterator may yield between two turns of the event loop: an iterator whose `next()`
 * resolves at once (audio already in memory) runs on microtasks alone, so the loop yields a
 * macrotask after this many bytes (well under a session's high-water mark, 1 MiB by default).
 */
export const YIELD_BYTES = 256 * 1024;

/**
 * Pull an async iterator lazily into a subscriber: one `next()` at a time, and never while
 * the flow control is paused. That is the backpressure: nothing is read that was not asked for.
 * Every {@link YIELD_BYTES} read without a wait on the gate it lets the event loop turn (timers,
 * sockets), whatever the iterator; a wait on a paused gate is such a turn (the consumer's I/O resumes it).
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
    let sinceTurn = 0;
    try {
      for (;;) {
        // Race the gate with teardown, so an unsubscribed source never waits on a session that is gone.
        if (flow?.paused) {
          await Promise.race([flow.ready(), stopped]);
          // A paused gate is resumed by its consumer's I/O (a socket that flushed): the loop
          // turned while we waited, so the count to the next forced turn starts again.
          sinceTurn = 0;
        }
        if (closed) return;
        const r = await iterator.next();
        if (closed) return;
        if (r.done) break;
        const chunk = asChunk(r.value);
        subscriber.next(chunk);
        sinceTurn += chunk.byteLength;
        if (sinceTurn >= YIELD_BYTES) {
          sinceTurn = 0;
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
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
