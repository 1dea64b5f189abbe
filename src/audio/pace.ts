// Real-time pacing: releasing raw audio "as if live" against absolute deadlines derived from
// the audio's own duration, so an hour of audio ends an hour (divided by rate) after it began.
import { asyncScheduler, Observable, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import { InputError } from '../errors/index.js';
import { bytesPerSecond, bytesToMs, isRawFormat, type RawAudioFormat } from '../schema/audio.js';
import { FlowControl } from './FlowControl.js';
import { connectFlow } from './sourceFlow.js';
import { audioMetaOf, withAudioMeta, type AudioChunk } from './meta.js';
import { operatorSubscriber } from '../internal/operate.js';

/** Options of {@link pace}: playback rate, the raw format when upstream does not carry it, the scheduler, and how much audio to buffer before pausing upstream. */
export interface PaceOptions {
  /** Playback speed: 1 is real time, 2 twice as fast (default 1). */
  readonly rate?: number | undefined;
  /** The raw format of the input; read from upstream's metadata when not given. */
  readonly format?: RawAudioFormat | undefined;
  /** Where time comes from (default `asyncScheduler`); a `TestScheduler` gives virtual time. */
  readonly scheduler?: SchedulerLike | undefined;
  /**
   * Audio held back before a pull-capable upstream is paused, in milliseconds of audio
   * (default 2000). A push upstream cannot be paused and is queued whole.
   */
  readonly maxBufferedMs?: number | undefined;
}

/** A deadline this close to now counts as reached (float rounding of virtual time). */
const EPSILON_MS = 1e-3;

/**
 * Release raw audio chunks at the pace they would arrive from a live source.
 *
 * - The clock starts when the first chunk arrives: that chunk is emitted at once, and the
 *   chunk that starts at byte `n` is emitted at `start + bytesToMs(format, n) / rate`. Deadlines
 *   are absolute (computed from the cumulative byte count, never by adding delays), so timer
 *   lateness does not accumulate: an hour of audio does not drift.
 * - Completes when upstream has completed AND the audio's end time has been reached (the
 *   last sample "has been spoken"); an empty upstream completes at once.
 * - Errors pass through at once, dropping what was queued.
 * - Every delay goes through `scheduler`, so tests run on virtual time.
 * - Cold, like its upstream. A pull-capable upstream (a file, a Readable) is paused when
 *   more than `maxBufferedMs` of audio waits, so pacing a file does not read it into memory.
 * - Throws `InputError('invalid_argument')` for a rate that is not positive; errors with it on
 *   subscribe when no raw format is known.
 *
 * ## Example
 * ```ts
 * import { fileSource, pace } from 'svc-stream';
 *
 * fileSource('call.mp4') // raw s16le 16 kHz mono
 *   .pipe(pace({ rate: 1 }))
 *   .subscribe((chunk) => console.log(new Date().toISOString(), chunk.byteLength));
 * ```
 */
export function pace(options: PaceOptions = {}): OperatorFunction<Uint8Array, Uint8Array> {
  const rate = options.rate ?? 1;
  if (!Number.isFinite(rate) || rate <= 0) throw new InputError('invalid_argument', `pace rate must be a positive number, got ${rate}`, { path: 'rate' });
  const scheduler = options.scheduler ?? asyncScheduler;
  return (upstream) => {
    const upstreamFormat = audioMetaOf(upstream)?.format;
    const format = options.format ?? (isRawFormat(upstreamFormat) ? upstreamFormat : undefined);
    const paced = new Observable<AudioChunk>((subscriber) => {
      if (!format) {
        subscriber.error(new InputError('invalid_argument', 'pace() needs a raw audio format: pass { format } or use a source that carries one', { path: 'format' }));
        return;
      }
      const highWater = Math.max(1, Math.floor((bytesPerSecond(format) * (options.maxBufferedMs ?? 2000)) / 1000));
      let queue: Array<{ chunk: AudioChunk; deadline: number }> = [];
      let head = 0;
      let queuedBytes = 0;
      let start: number | undefined;
      let total = 0;
      let upstreamDone = false;
      let pending: Subscription | undefined;
      let draining = false;
      const deadlineOf = (bytes: number): number => (start ?? 0) + bytesToMs(format, bytes) / rate;

      const gate = new FlowControl();
      const upstreamSlot = audioMetaOf(upstream)?.flow;

      const drain = (): void => {
        if (draining || subscriber.closed) return;
        draining = true;
        try {
          const now = scheduler.now();
          while (head < queue.length && queue[head]!.deadline <= now + EPSILON_MS) {
            const item = queue[head]!;
            queue[head] = undefined as never;
            head++;
            queuedBytes -= item.chunk.byteLength;
            subscriber.next(item.chunk);
            if (subscriber.closed) return;
          }
          if (head > 1024 && head * 2 > queue.length) {
            queue = queue.slice(head);
            head = 0;
          }
          if (gate.paused && queuedBytes <= highWater / 2) gate.resume();
          let target: number;
          if (head < queue.length) target = queue[head]!.deadline;
          else if (upstreamDone) {
            target = deadlineOf(total);
            if (target <= now + EPSILON_MS) {
              subscriber.complete();
              return;
            }
          } else return;
          if (!pending) {
            pending = scheduler.schedule(() => {
              pending = undefined;
              drain();
            }, Math.max(0, target - now));
          }
        } finally {
          draining = false;
        }
      };

      const { subscription: sub } = connectFlow(upstreamSlot, gate, () => upstream.subscribe(operatorSubscriber<AudioChunk>(subscriber, {
        next: (chunk) => {
          if (start === undefined) start = scheduler.now();
          queue.push({ chunk, deadline: deadlineOf(total) });
          total += chunk.byteLength;
          queuedBytes += chunk.byteLength;
          if (queuedBytes > highWater) gate.pause();
          if (!pending) drain();
        },
        complete: () => {
          upstreamDone = true;
          if (start === undefined) subscriber.complete();
          else if (!pending) drain();
        },
      })));
      return () => {
        pending?.unsubscribe();
        sub.unsubscribe();
        gate.release();
        queue = [];
      };
    });
    return withAudioMeta(paced, format ? { format } : {});
  };
}
