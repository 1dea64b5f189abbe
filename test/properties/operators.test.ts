// Every public operator routes exceptions as RxJS's own do: a throw from a user callback of
// the pipeline (where it takes one) or from a downstream operator ends the stream with exactly
// that one error, nothing reported as unhandled, nothing emitted after it, and no upstream
// subscription left. A session's observer callbacks (onStateChange) follow the one
// user-callback policy instead: reported once as unhandled, nothing else changes.
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { config, EMPTY, from, map, Observable, VirtualTimeScheduler, type OperatorFunction } from 'rxjs';
import { rechunk, fromG711, pace, splitSession, toG711, type ServerEvent } from 'svc-stream';
import { withAudioMeta } from '../../src/audio/meta.js';
import { type FilesOptions } from 'svc-stream/batch';
import { poll, type PollSpec } from 'svc-stream/platform';
import { analyzeCalls } from 'svc-stream/telephony';
import { analyzeConversation, audioDuration, behaviorDetections, clipsWithUpdates, conversationSnapshot, conversationType, currentRoles, latestSummary, latestTopics, liveTranscript, streamJson, topicSentiments } from 'svc-stream';
import { batchFiles, emotionFiles, tagFiles } from 'svc-stream/batch';
import { startEmulator, type RunningEmulator } from 'svc-stream/emulator';
import { selectChanged } from '../../src/internal/fold.js';
import { sessionArb } from './sessionArbitraries.js';

const RUNS = { numRuns: 40 };
const RAW = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } as const;
const MULAW = { audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 } as const;

let unhandled: unknown[] = [];
beforeEach(() => {
  unhandled = [];
  config.onUnhandledError = (err) => unhandled.push(err);
});
afterEach(() => {
  config.onUnhandledError = null;
});

/** A cold source that counts its live subscriptions and stops emitting once closed. */
function counted<T>(values: readonly T[]): { source$: Observable<T>; live: () => number } {
  let live = 0;
  const source$ = new Observable<T>((s) => {
    live++;
    for (const v of values) {
      if (s.closed) break;
      s.next(v);
    }
    if (!s.closed) s.complete();
    return () => {
      live--;
    };
  });
  return { source$, live: () => live };
}

interface Seen {
  nexts: number;
  nextsAfterEnd: number;
  errors: unknown[];
  completes: number;
}

function watch<T>(obs$: Observable<T>): Seen {
  const seen: Seen = { nexts: 0, nextsAfterEnd: 0, errors: [], completes: 0 };
  obs$.subscribe({
    next: () => {
      if (seen.errors.length + seen.completes > 0) seen.nextsAfterEnd++;
      seen.nexts++;
    },
    error: (err: unknown) => seen.errors.push(err),
    complete: () => seen.completes++,
  });
  return seen;
}

/** RxJS reports unhandled errors on a later macrotask. */
const macrotask = (): Promise<void> => new Promise((r) => setTimeout(r, 1));

/** A downstream operator that throws on its `k`-th value. */
function throwAt<T>(k: number, boom: Error): OperatorFunction<T, T> {
  return map((v: T, i: number) => {
    if (i === k) throw boom;
    return v;
  });
}

/** The one rule: ended by `boom` alone (or, when it never threw, completed), nothing leaked. */
function expectRouted(seen: Seen, threw: boolean, boom: Error, live: number): void {
  if (threw) {
    expect(seen.errors).toEqual([boom]);
    expect(seen.completes).toBe(0);
  } else {
    expect(seen.errors).toEqual([]);
  }
  expect(seen.nextsAfterEnd).toBe(0);
  expect(live).toBe(0);
  expect(unhandled).toEqual([]);
}

const FOLDS: ReadonlyArray<[string, () => OperatorFunction<ServerEvent, unknown>]> = [
  ['clipsWithUpdates', clipsWithUpdates],
  ['liveTranscript', liveTranscript],
  ['currentRoles', currentRoles],
  ['conversationType', conversationType],
  ['behaviorDetections', behaviorDetections],
  ['latestTopics', latestTopics],
  ['topicSentiments', topicSentiments],
  ['latestSummary', latestSummary],
  ['audioDuration', audioDuration],
  ['conversationSnapshot', conversationSnapshot],
];

describe('derived-stream operators: a throwing downstream operator', () => {
  it.each(FOLDS)('%s', async (_name, op) => {
    await fc.assert(
      fc.asyncProperty(sessionArb, fc.nat({ max: 20 }), async (events, k) => {
        unhandled = [];
        const boom = new Error('downstream broke');
        const all = watch(from(events).pipe(op()));
        const { source$, live } = counted(events);
        const seen = watch(source$.pipe(op(), throwAt(k, boom)));
        await macrotask();
        expectRouted(seen, all.nexts > k, boom, live());
      }),
      RUNS,
    );
  });

  it('splitSession: each named stream', async () => {
    await fc.assert(
      fc.asyncProperty(sessionArb, fc.nat({ max: 10 }), fc.constantFrom('clipsWithUpdates$', 'liveTranscript$', 'currentRoles$', 'latestTopics$', 'snapshot$', 'events$', 'audioDuration$'), async (events, k, name) => {
        unhandled = [];
        const boom = new Error('downstream broke');
        const all = watch(splitSession(from(events))[name] as Observable<unknown>);
        const { source$, live } = counted(events);
        const seen = watch((splitSession(source$)[name] as Observable<unknown>).pipe(throwAt(k, boom)));
        await macrotask();
        expectRouted(seen, all.nexts > k, boom, live());
      }),
      RUNS,
    );
  });
});

const chunksArb = fc.array(fc.uint8Array({ minLength: 0, maxLength: 1500 }), { maxLength: 12 });

describe('audio operators: a throwing downstream operator', () => {
  const ops: ReadonlyArray<[string, object, () => OperatorFunction<Uint8Array, Uint8Array>]> = [
    ['rechunk', RAW, () => rechunk({ ms: 20 })],
    ['toG711', RAW, () => toG711('mulaw')],
    ['fromG711', MULAW, () => fromG711('mulaw')],
  ];
  it.each(ops)('%s', async (_name, format, op) => {
    await fc.assert(
      fc.asyncProperty(chunksArb, fc.nat({ max: 15 }), async (chunks, k) => {
        unhandled = [];
        const boom = new Error('downstream broke');
        const all = watch(withAudioMeta(from(chunks), { format: format as never }).pipe(op()));
        const { source$, live } = counted(chunks);
        const seen = watch(withAudioMeta(source$, { format: format as never }).pipe(op(), throwAt(k, boom)));
        await macrotask();
        expectRouted(seen, all.nexts > k, boom, live());
      }),
      RUNS,
    );
  });

  it('pace, on virtual time', async () => {
    await fc.assert(
      fc.asyncProperty(chunksArb, fc.nat({ max: 15 }), async (chunks, k) => {
        unhandled = [];
        const boom = new Error('downstream broke');
        const count = new VirtualTimeScheduler();
        const all = watch(withAudioMeta(from(chunks), { format: RAW }).pipe(pace({ rate: 4, scheduler: count })));
        count.flush();
        const scheduler = new VirtualTimeScheduler();
        const { source$, live } = counted(chunks);
        const seen = watch(withAudioMeta(source$, { format: RAW }).pipe(pace({ rate: 4, scheduler }), throwAt(k, boom)));
        scheduler.flush();
        await macrotask();
        expectRouted(seen, all.nexts > k, boom, live());
        expect(scheduler.actions).toHaveLength(0);
      }),
      RUNS,
    );
  });
});

describe('user callbacks that throw', () => {
  it('selectChanged (under every derived stream): a throwing selector errors instead of dropping the value', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer(), { maxLength: 20 }), fc.nat({ max: 20 }), async (values, k) => {
        unhandled = [];
        const boom = new Error('selector broke');
        let calls = 0;
        const { source$, live } = counted(values);
        // Call 0 selects the initial state, at subscription.
        const seen = watch(
          source$.pipe(
            selectChanged((n: number) => {
              if (calls++ === k) throw boom;
              return n;
            }, Number.NaN),
          ),
        );
        await macrotask();
        expectRouted(seen, values.length >= k, boom, live());
      }),
      RUNS,
    );
  });

  /** Run a poll on virtual time until it ends: promises settle between timer flushes. */
  async function runPoll<T>(spec: PollSpec<T>, scheduler: VirtualTimeScheduler): Promise<Seen> {
    const seen = watch(poll(spec, { scheduler, intervalMs: 10, deadlineMs: 60_000 }));
    for (let i = 0; i < 200 && seen.errors.length + seen.completes === 0; i++) {
      await macrotask();
      scheduler.maxFrames = scheduler.frame + 1_000;
      scheduler.flush();
    }
    await macrotask();
    return seen;
  }

  const transient = new Error('transient');
  const specOf = (over: Partial<PollSpec<number>>, signals: AbortSignal[]): PollSpec<number> => {
    let n = 0;
    return {
      check: (signal) => {
        signals.push(signal);
        return Promise.resolve(n++);
      },
      classify: (v) => (v >= 50 ? { kind: 'done' } : { kind: 'pending' }),
      isTransient: (err) => err === transient,
      deadlineError: () => new Error('deadline'),
      transientLimitError: () => new Error('too many'),
      abortedError: () => new Error('aborted'),
      ...over,
    };
  };

  it('poll: a throwing classify errors at once (not at the deadline) and stops polling', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: 8 }), async (k) => {
        unhandled = [];
        const boom = new Error('classify broke');
        const signals: AbortSignal[] = [];
        const scheduler = new VirtualTimeScheduler();
        const seen = await runPoll(
          specOf(
            {
              classify: (v) => {
                if (v === k) throw boom;
                return { kind: 'pending' };
              },
            },
            signals,
          ),
          scheduler,
        );
        expectRouted(seen, true, boom, 0);
        expect(seen.nexts).toBe(k);
        expect(signals).toHaveLength(k + 1);
        expect(signals.every((s) => s.aborted)).toBe(true);
        expect(scheduler.actions).toHaveLength(0);
      }),
      { numRuns: 10 },
    );
  });

  it('poll: a throwing isTransient errors once and stops polling', async () => {
    unhandled = [];
    const boom = new Error('isTransient broke');
    const signals: AbortSignal[] = [];
    const scheduler = new VirtualTimeScheduler();
    const seen = await runPoll(
      specOf(
        {
          check: (signal) => {
            signals.push(signal);
            return Promise.reject(transient);
          },
          isTransient: () => {
            throw boom;
          },
        },
        signals,
      ),
      scheduler,
    );
    expectRouted(seen, true, boom, 0);
    expect(scheduler.actions).toHaveLength(0);
  });

  it("analyzeCalls: a throwing sessionOptions errors the stream and unsubscribes the calls", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 6 }), fc.nat({ max: 5 }), async (n, k) => {
        unhandled = [];
        const boom = new Error('sessionOptions broke');
        // An invalid format fails each session locally, before any connection.
        const calls = Array.from({ length: n }, (_, i) => ({ id: `c${i}`, audio$: EMPTY, format: { audio_format: 'opus' } as never }));
        const { source$, live } = counted(calls);
        const seen = watch(
          analyzeCalls(source$, {
            apiKey: 'k',
            baseUrl: 'http://127.0.0.1:9',
            sessionOptions: (_call, i) => {
              if (i === k) throw boom;
              return {};
            },
          }),
        );
        await macrotask();
        expectRouted(seen, n > k, boom, live());
        expect(seen.nexts).toBe(Math.min(n, k));
      }),
      RUNS,
    );
  });

  it('batchFiles: a throwing call errors the stream and unsubscribes the paths', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 6 }), fc.nat({ max: 5 }), async (n, k) => {
        unhandled = [];
        const boom = new Error('call broke');
        const paths = Array.from({ length: n }, (_, i) => `file-${i}.wav`);
        const { source$, live } = counted(paths);
        let calls = 0;
        const seen = watch(
          source$.pipe(
            batchFiles((path) => {
              if (calls++ === k) throw boom;
              return from([path.length]);
            }, { concurrency: 1 }),
          ),
        );
        await macrotask();
        expectRouted(seen, n > k, boom, live());
      }),
      RUNS,
    );
  });
});

describe('batch file operators: a throwing downstream operator', () => {
  const ops: ReadonlyArray<[string, (o: FilesOptions) => OperatorFunction<string, unknown>]> = [
    ['tagFiles', tagFiles],
    ['emotionFiles', emotionFiles],
  ];
  it.each(ops)('%s', async (_name, op) => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 4 }), fc.nat({ max: 4 }), async (n, k) => {
        unhandled = [];
        const boom = new Error('downstream broke');
        const paths = Array.from({ length: n }, () => 'samples/call.wav');
        const { source$, live } = counted(paths);
        // Nothing listens on port 9: each file is an error outcome, emitted like a result.
        const seen = watch(source$.pipe(op({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9', retry: false }), throwAt(k, boom)));
        for (let i = 0; i < 100 && seen.errors.length + seen.completes === 0; i++) await macrotask();
        expectRouted(seen, n > k, boom, live());
      }),
      { numRuns: 10 },
    );
  });
});

describe('session operators (against the emulator)', () => {
  const KEY = 'sk-operators-property-01';
  let emu: RunningEmulator;
  beforeEach(async () => {
    const steps = Array.from({ length: 6 }, (_, i) => ({ at_ms: i * 50, event: { type: 'topics', topics: [`t${i}`] } }));
    emu = await startEmulator({ apiKey: KEY, scenario: { steps } });
  });
  afterEach(async () => {
    await emu.close();
  });

  async function settle(seen: Seen): Promise<void> {
    for (let i = 0; i < 300 && seen.errors.length + seen.completes === 0; i++) await macrotask();
    await macrotask();
  }

  it.each([
    ['analyzeConversation', () => analyzeConversation({ apiKey: KEY, baseUrl: emu.baseUrl, format: RAW })],
    ['streamJson', () => streamJson({ endpoint: 'sttStreaming', apiKey: KEY, baseUrl: emu.baseUrl, format: RAW })],
  ] as const)('%s: a throwing downstream operator', async (_name, op) => {
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: 8 }), async (k) => {
        unhandled = [];
        const boom = new Error('downstream broke');
        const { source$, live } = counted(Array.from({ length: 10 }, () => new Uint8Array(3200)));
        const seen = watch(source$.pipe(op() as OperatorFunction<Uint8Array, unknown>, throwAt(k, boom)));
        await settle(seen);
        expect(seen.errors.length + seen.completes).toBe(1);
        expectRouted(seen, seen.errors.length > 0, boom, live());
      }),
      { numRuns: 5 },
    );
  });

  it('analyzeConversation: a throwing onStateChange is reported once and changes nothing (the one user-callback policy)', async () => {
    await fc.assert(
      // Changes 0..3: → streaming, → finishing, → closing, → done.
      fc.asyncProperty(fc.nat({ max: 3 }), async (k) => {
        unhandled = [];
        const boom = new Error('onStateChange broke');
        let changes = 0;
        const { source$, live } = counted(Array.from({ length: 10 }, () => new Uint8Array(3200)));
        const seen = watch(
          source$.pipe(
            analyzeConversation({
              apiKey: KEY,
              baseUrl: emu.baseUrl,
              format: RAW,
              onStateChange: () => {
                if (changes++ === k) throw boom;
              },
            }),
          ),
        );
        await settle(seen);
        await macrotask();
        expect(seen.errors).toEqual([]);
        expect(seen.completes).toBe(1);
        expect(seen.nextsAfterEnd).toBe(0);
        expect(live()).toBe(0);
        expect(unhandled).toEqual([boom]);
      }),
      { numRuns: 5 },
    );
  });
});
