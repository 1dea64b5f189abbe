// Folds sessions of 10k, 100k and 1M generated events through every derived stream (a million
// events per sample: 100 sessions of 10k, 10 of 100k, one of 1M) and prints the CPU cost per
// event per session size, plus the per-event cost at 1M relative to 10k (must stay under 1.5,
// goal 1.2), for three workloads: `clip_update`s hitting recent clips, hitting random earlier
// clips, and arriving before their clip (orphans: 1% of events).
// Run: npx tsx bench/fold.ts [recent|random|orphan ...] [--rounds N]   (default: all three, 5 rounds)
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import { Subject, type Observable, type OperatorFunction } from 'rxjs';
import { audioDuration } from '../src/operators/audioDuration.js';
import { behaviorDetections } from '../src/operators/behaviorDetections.js';
import { clipsWithUpdates } from '../src/operators/clipsWithUpdates.js';
import { conversationSnapshot } from '../src/operators/conversationSnapshot.js';
import { conversationType } from '../src/operators/conversationType.js';
import { currentRoles } from '../src/operators/currentRoles.js';
import { latestSummary } from '../src/operators/latestSummary.js';
import { latestTopics } from '../src/operators/latestTopics.js';
import { liveTranscript } from '../src/operators/liveTranscript.js';
import { topicSentiments } from '../src/operators/topicSentiments.js';
import type { ServerEvent } from '../src/schema/events.js';
import { splitSession } from '../src/state/splitSession.js';

const SIZES = [10_000, 100_000, 1_000_000] as const;
// Rounds interleave the sizes, so background load and leftover garbage hit every size alike.
const roundsAt = process.argv.indexOf('--rounds');
const ROUNDS = roundsAt >= 0 ? Number(process.argv[roundsAt + 1]) : 5;
/**
 * Events each sample folds, whatever the session size: 100 sessions of 10k, 10 of 100k or one
 * of 1M. The collector's cost is lumpy (a 10k fold takes 60 ms, and one scavenge more or less
 * moves it by half: single 10k folds measured 4 to 8 µs per event in the same process), so
 * each sample spreads it over the same million events.
 */
const EVENTS_PER_SAMPLE = 1_000_000;
const MAX_RATIO = 1.5;
const GOAL_RATIO = 1.2;

const WORKLOADS = {
  recent: 'updates hit a clip a few clips back',
  random: 'updates hit a uniformly random earlier clip',
  orphan: '1% of events are updates that arrive before their clip (some never come)',
} as const;
type Workload = keyof typeof WORKLOADS;

/**
 * Deterministic generator of a plausible session: partials, clips, updates, picks,
 * aggregates; `workload` decides which clips the `clip_update`s hit.
 */
function generate(count: number, workload: Workload): ServerEvent[] {
  let seed = 12345;
  const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
  const words = ['so', 'the', 'refund', 'order', 'yes', 'I', 'can', 'help', 'with', 'that', 'today', 'account', 'billing'];
  const topicPool = Array.from({ length: 30 }, (_, i) => `topic-${i}`);
  const speakers = ['1', '2', '3', '4'];
  const emotions = ['Neutral', 'Happy', 'Angry', 'Sad', 'Frustrated'];
  const out: ServerEvent[] = [];
  const lateUpdates: ServerEvent[] = [];
  let clipNo = 0;
  let typeNo = 0;
  let behaviorNo = 0;
  while (out.length < count - 1) {
    const id = `clip-${clipNo++}`;
    const speaker = speakers[rand(speakers.length)]!;
    const start = clipNo * 1800;
    let text = '';
    const partials = 2 + rand(5);
    for (let p = 0; p < partials; p++) {
      text += (text ? ' ' : '') + words[rand(words.length)];
      out.push({ type: 'partial_clip', partial_clip: { clip_uuid: id, text, start_ms: start, end_ms: start + 300 * (p + 1), speaker_label: p === 0 ? null : speaker, emotion: null, accent: null, deepfake_score: null } });
    }
    out.push({ type: 'clip', clip: { clip_uuid: id, text, start_ms: start, duration_ms: 300 * partials, speaker_label: speaker, language: 'en', emotion: emotions[rand(emotions.length)]!, accent: null, deepfake_score: null } });
    // Updates land a few clips later, interleaved with other clips' events; in `random`
    // they refine any earlier clip instead of this one.
    const target = () => (workload === 'random' ? `clip-${rand(clipNo)}` : id);
    if (rand(3) === 0) lateUpdates.push({ type: 'clip_update', clip_update: { clip_uuid: target(), emotion: emotions[rand(emotions.length)]! } });
    if (rand(5) === 0) lateUpdates.push({ type: 'clip_update', clip_update: { clip_uuid: target(), accent: 'Irish' } });
    while (lateUpdates.length > 4) out.push(lateUpdates.shift()!);
    // Orphans: about one event in a hundred updates a clip 50 clips ahead, or (one in ten
    // of those) a clip that never comes.
    if (workload === 'orphan' && rand(10) < 1) {
      const ahead = rand(10) === 0 ? `never-${clipNo}` : `clip-${clipNo + 50}`;
      out.push({ type: 'clip_update', clip_update: { clip_uuid: ahead, accent: 'Scottish' } });
    }
    if (clipNo % 25 === 0) out.push({ type: 'participant_role', pick: { speaker_label: speaker, participant_role_uuid: `role-${rand(3)}`, name: 'Agent', confidence: 0.8 } });
    if (clipNo % 400 === 0) out.push({ type: 'conversation_type', pick: { conversation_type_uuid: `type-${(typeNo++ >> 1) % 3}`, selection_source: 'inferred', confidence: 0.7 } });
    if (clipNo % 11 === 0) out.push({ type: 'behavior_detection', detection: { behavior_uuid: `behavior-${behaviorNo++ % 300}`, speaker_label: speaker, detected: true, confidence: 0.9, evidence_clip_uuids: [id] } });
    if (clipNo % 7 === 0) out.push({ type: 'topics', topics: Array.from({ length: 3 + rand(6) }, () => topicPool[rand(topicPool.length)]!) });
    if (clipNo % 3 === 0) out.push({ type: 'topic_sentiment', topic_sentiment: { topic: topicPool[rand(topicPool.length)]!, speaker_label: speaker, sentiment_score: rand(200) / 100 - 1 } });
    if (clipNo % 40 === 0) out.push({ type: 'summary', text: `Summary after ${clipNo} clips.` });
  }
  out.length = count - 1;
  out.push({ type: 'done', duration_ms: clipNo * 1800 });
  return out;
}

interface Timing {
  /** Wall-clock ms. */
  readonly wall: number;
  /** CPU ms of this process (user + system, GC threads included): steadier than wall time
   *  on a machine shared with other work, which is why the ratio is taken from it. */
  readonly cpu: number;
}

/** Time one fold of `events` through the streams `attach` subscribes to. */
function timeFold(events: readonly ServerEvent[], attach: (source$: Observable<ServerEvent>) => Array<{ unsubscribe(): void }>): Timing {
  const source = new Subject<ServerEvent>();
  const subs = attach(source);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < events.length; i++) source.next(events[i]!);
  source.complete();
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  for (const s of subs) s.unsubscribe();
  return { wall, cpu: (c.user + c.system) / 1000 };
}

const noop = () => {};
const viaSplit = (source$: Observable<ServerEvent>) =>
  Object.values(splitSession(source$)).map((stream$: Observable<unknown>) => stream$.subscribe(noop));
const operators: Array<() => OperatorFunction<ServerEvent, unknown>> = [
  clipsWithUpdates, liveTranscript, currentRoles, conversationType, behaviorDetections,
  latestTopics, topicSentiments, latestSummary, audioDuration, conversationSnapshot,
];
const viaOperators = (source$: Observable<ServerEvent>) => operators.map((op) => source$.pipe(op()).subscribe(noop));

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/**
 * One child process per (round, size): a fold never runs in a heap that an earlier fold of
 * another size left behind. Interleaved in one process, a 10k fold that followed a 1M fold
 * paid for collecting the 1M fold's garbage (the collector's background threads count in the
 * process CPU time) and the ratio read anything from 0.9 to 1.3 for the same code.
 */
function runChild(workload: Workload, mode: Mode, size: number): Timing[] {
  const child = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--child', workload, mode, String(size)], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  if (child.status !== 0) throw new Error(`fold child (${workload} ${mode} ${size}) failed: ${child.stderr}`);
  return JSON.parse(child.stdout.trim().split('\n').at(-1)!) as Timing[];
}

/** In the child: the same warm-up for every size (20 folds of 10k events), then one sample. */
function child(workload: Workload, mode: Mode, size: number): void {
  const attach = mode === 'split' ? viaSplit : viaOperators;
  const warm = generate(10_000, workload);
  for (let i = 0; i < 20; i++) timeFold(warm, attach);
  const events = generate(size, workload);
  let wall = 0;
  let cpu = 0;
  for (let r = 0; r < EVENTS_PER_SAMPLE / size; r++) {
    const t = timeFold(events, attach);
    wall += t.wall;
    cpu += t.cpu;
  }
  console.log(JSON.stringify([{ wall, cpu }]));
}

function bench(name: string, workload: Workload, mode: Mode): number {
  console.log(`\n${name}`);
  const times = new Map<number, Timing[]>(SIZES.map((size) => [size, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const size of SIZES) times.get(size)!.push(...runChild(workload, mode, size));
  }
  const perEvent: Record<number, number> = {};
  for (const size of SIZES) {
    const samples = times.get(size)!;
    const cpu = median(samples.map((t) => t.cpu));
    const wall = median(samples.map((t) => t.wall));
    perEvent[size] = cpu / EVENTS_PER_SAMPLE;
    const sessions = `${EVENTS_PER_SAMPLE / size} × ${size.toLocaleString('en')}`.padStart(13);
    const each = samples.map((t) => ((t.cpu / EVENTS_PER_SAMPLE) * 1e6).toFixed(0)).join(' ');
    console.log(`  ${sessions} events  cpu ${cpu.toFixed(0).padStart(6)} ms (wall ${wall.toFixed(0).padStart(6)} ms)  ${((cpu / EVENTS_PER_SAMPLE) * 1e6).toFixed(0).padStart(5)} ns/event  (samples: ${each})`);
  }
  const ratio = perEvent[1_000_000]! / perEvent[10_000]!;
  // Per round too: the two samples of a round ran back to back, so load and host noise hit
  // them alike; the spread of these says how far to trust the median.
  const paired = Array.from({ length: ROUNDS }, (_, r) => times.get(1_000_000)![r]!.cpu / times.get(10_000)![r]!.cpu);
  console.log(`  per-event CPU cost 1M / 10k: ${ratio.toFixed(2)} (limit ${MAX_RATIO}, goal ${GOAL_RATIO}); per round ${paired.map((p) => p.toFixed(2)).join(' ')}; 1M / 100k: ${(perEvent[1_000_000]! / perEvent[100_000]!).toFixed(2)}`);
  return ratio;
}

type Mode = 'split' | 'operators';

const childAt = process.argv.indexOf('--child');
if (childAt >= 0) {
  const [workload, mode, size] = process.argv.slice(childAt + 1);
  child(workload as Workload, mode as Mode, Number(size));
  process.exit(0);
}

const chosen = process.argv.slice(2).filter((w): w is Workload => w in WORKLOADS);
const workloads: Workload[] = chosen.length > 0 ? chosen : (Object.keys(WORKLOADS) as Workload[]);

console.log(`node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown cpu'}), median of ${ROUNDS} interleaved rounds; a sample folds ${EVENTS_PER_SAMPLE.toLocaleString('en')} events as sessions of one size, in a fresh process after the same warm-up`);
console.log(`load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
const ratios: Array<[Workload, number]> = [];
for (const workload of workloads) {
  console.log(`\n=== workload ${workload}: ${WORKLOADS[workload]}`);
  ratios.push([workload, bench('splitSession: all 11 streams over one shared fold', workload, 'split')]);
  if (workload === 'recent') bench('10 operators, each folding on its own (informative)', workload, 'operators');
}
console.log(`\nsummary (splitSession, per-event cost 1M / 10k): ${ratios.map(([w, r]) => `${w} ${r.toFixed(2)}`).join(', ')}; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
for (const [workload, ratio] of ratios) {
  if (ratio >= MAX_RATIO) {
    console.error(`FAIL: ${workload}: per-event cost grows ${ratio.toFixed(2)}x from 10k to 1M events`);
    process.exitCode = 1;
  }
}
