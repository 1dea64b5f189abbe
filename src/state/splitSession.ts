// One session's events as many named derived streams that share ONE subscription to the
// source and ONE fold of the whole-conversation snapshot.
import { defer, filter, map, ReplaySubject, scan, share, tap, type Observable } from 'rxjs';
import type { BehaviorDetection, Clip, ConversationTypePick, ParticipantRolePick, ServerEvent, TopicSentiment } from '../schema/events.js';
import type { TranscriptEntry } from './clips.js';
import { isSet, selectChanged } from '../internal/fold.js';
import type { OrderedMap } from './OrderedMap.js';
import { initialConversationSnapshot, snapshotReducer, type ConversationSnapshot } from './snapshot.js';

/** The named streams of one session; see {@link splitSession}. */
export interface SessionStreams {
  /** Every event, each delivered once per subscriber (no replay: events are not state). */
  readonly events$: Observable<ServerEvent>;
  readonly clipsWithUpdates$: Observable<OrderedMap<Clip>>;
  readonly liveTranscript$: Observable<OrderedMap<TranscriptEntry>>;
  readonly currentRoles$: Observable<OrderedMap<ParticipantRolePick>>;
  readonly conversationType$: Observable<ConversationTypePick>;
  readonly behaviorDetections$: Observable<OrderedMap<BehaviorDetection>>;
  readonly latestTopics$: Observable<readonly string[]>;
  readonly topicSentiments$: Observable<OrderedMap<TopicSentiment>>;
  readonly latestSummary$: Observable<string | null>;
  readonly audioDuration$: Observable<number>;
  readonly snapshot$: Observable<ConversationSnapshot>;
}

interface Step {
  readonly snapshot: ConversationSnapshot;
  readonly event: ServerEvent | null;
}

const FIRST_STEP: Step = { snapshot: initialConversationSnapshot, event: null };

/**
 * Split one session's event stream into named derived streams (the same values as the
 * state operators of the same names), all fed by a single subscription
 * to `source$` and a single fold of the conversation snapshot.
 *
 * - Lazy: nothing subscribes to `source$` until the first subscriber to any stream.
 * - Shared (hot among themselves): however many streams and subscribers, `source$` is
 *   subscribed exactly once; every stream sees the same fold.
 * - A late subscriber to a state stream gets the current value at once (the latest
 *   snapshot is replayed, a stream whose part is still initial emits nothing), then
 *   every change. `events$` does not replay: a late subscriber gets later events only.
 * - Each state stream emits only when its own part changes.
 * - Completion and errors of `source$` reach every stream and subscriber.
 * - When the last subscriber leaves before the source ends, `source$` is unsubscribed and
 *   the fold dropped; a later subscriber starts over with a new subscription to `source$`
 *   (for a cold session source, a new session).
 * - After `source$` completes, the final state is kept: later subscribers get it and
 *   completion at once, and `source$` is NOT subscribed again (so `repeat()` on a derived
 *   stream just replays the end; call `splitSession` again for a new run).
 * - After `source$` errors, the final state is kept too: every subscriber gets the error, and
 *   a later subscriber gets the last state and then the error at once, WITHOUT subscribing to
 *   `source$` again (a failed session opens no new connection behind your back). A state
 *   stream is still readable after a failure; call `splitSession` again for a new run.
 *
 * ## Example
 * ```ts
 * import { from } from 'rxjs';
 * import { splitSession, type ServerEvent } from 'svc-stream';
 *
 * const events: ServerEvent[] = [
 *   { type: 'participant_role', pick: { speaker_label: '1', name: 'Agent' } },
 *   { type: 'topics', topics: ['refund'] },
 *   { type: 'done', duration_ms: 4000 },
 * ];
 * const session = splitSession(from(events));
 * session.currentRoles$.subscribe((roles) => console.log('roles', roles.toArray().map((r) => r.name)));
 * session.latestTopics$.subscribe((topics) => console.log('topics', topics));
 * session.audioDuration$.subscribe((ms) => console.log('duration', ms));
 * // roles ['Agent']     (the first subscriber runs the whole synchronous source)
 * // topics ['refund']   (late: the final state, replayed)
 * // duration 4000
 * ```
 */
export function splitSession(source$: Observable<ServerEvent>): SessionStreams {
  // The newest step handed to the share; `events$` uses it to skip the replayed step.
  let newest: Step | undefined;
  const steps$ = source$.pipe(
    scan((step: Step, event: ServerEvent): Step => ({ snapshot: snapshotReducer(step.snapshot, event), event }), FIRST_STEP),
    tap((step) => (newest = step)),
    share({
      connector: () => new ReplaySubject<Step>(1),
      // State outlives a failure: a late subscriber reads the last state, then the error.
      resetOnError: false,
      resetOnComplete: false,
      resetOnRefCountZero: true,
    }),
  );
  const part = <T>(select: (s: ConversationSnapshot) => T): Observable<T> =>
    steps$.pipe(selectChanged((step: Step) => select(step.snapshot), FIRST_STEP));

  const events$ = defer(() => {
    const replayed = newest;
    return steps$.pipe(
      filter((step) => step !== replayed),
      map((step) => step.event as ServerEvent),
    );
  });

  return {
    events$,
    clipsWithUpdates$: part((s) => s.clips.clips),
    liveTranscript$: part((s) => s.clips.transcript),
    currentRoles$: part((s) => s.conversation.roles),
    conversationType$: part((s) => s.conversation.type).pipe(filter(isSet)),
    behaviorDetections$: part((s) => s.behaviors.detections),
    latestTopics$: part((s) => s.aggregates.topics).pipe(filter(isSet)),
    topicSentiments$: part((s) => s.aggregates.topicSentiments),
    latestSummary$: part((s) => s.aggregates.summary),
    audioDuration$: part((s) => s.aggregates.audioDurationMs).pipe(filter(isSet)),
    snapshot$: part((s) => s),
  };
}
