// Memory over a simulated 8-hour session: 8 h of 16 kHz s16le (921.6 MB) streamed as fast
// as possible through the library to a sink (in its own process, so only the client is
// measured) that answers with a realistic event stream: partials every second, a clip every
// 4 s of audio, updates, roles, type changes, topics, sentiments, summaries, behaviors. Every
// event is folded through splitSession's derived streams. Prints peak RSS, and the heap
// retained after a GC at each audio hour: first hour vs last hour (target: flat, apart from
// the clips the transcript must keep).
// Run: npx tsx bench/memory.ts   (re-runs itself with --expose-gc)
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { lastValueFrom } from 'rxjs';
import { analyzeConversation } from '../src/session/conversation.js';
import { createSessionStats } from '../src/session/stats.js';
import { splitSession } from '../src/state/splitSession.js';
import { fmt, FRAME_100MS, KEY, machine, MB, pullFrames, startSink } from './benchInternals.js';

const SCRIPT = fileURLToPath(import.meta.url);
const HOURS = 8;
const BYTES_PER_SECOND = 32_000;
const FRAMES_PER_HOUR = (3600 * BYTES_PER_SECOND) / FRAME_100MS;
const CLIP_SECONDS = 4;
const WORDS = ['so', 'the', 'refund', 'order', 'yes', 'I', 'can', 'help', 'with', 'that', 'today', 'account', 'billing', 'number'];

/** The events a live service might send once `after` bytes of audio have arrived. */
function eventsFor(before: number, after: number): string[] {
  const out: string[] = [];
  for (let s = Math.floor(before / BYTES_PER_SECOND) + 1; s <= Math.floor(after / BYTES_PER_SECOND); s++) {
    const clip = Math.floor((s - 1) / CLIP_SECONDS);
    const id = `clip-${clip}`;
    const speaker = String(1 + (clip % 2));
    const words = Array.from({ length: 4 * ((s - 1) % CLIP_SECONDS) + 4 }, (_, i) => WORDS[(clip * 7 + i) % WORDS.length]).join(' ');
    if (s % CLIP_SECONDS !== 0) {
      out.push(JSON.stringify({ type: 'partial_clip', partial_clip: { clip_uuid: id, text: words, start_ms: clip * 4000, end_ms: s * 1000, speaker_label: s % CLIP_SECONDS === 1 ? null : speaker, emotion: null, accent: null, deepfake_score: null } }));
      continue;
    }
    out.push(JSON.stringify({ type: 'clip', clip: { clip_uuid: id, text: words, start_ms: clip * 4000, duration_ms: 3600, speaker_label: speaker, language: 'en', emotion: 'Neutral', accent: null, deepfake_score: null } }));
    if (clip % 5 === 4) out.push(JSON.stringify({ type: 'clip_update', clip_update: { clip_uuid: `clip-${clip - 2}`, emotion: 'Happy' } }));
    if (clip % 25 === 0) out.push(JSON.stringify({ type: 'participant_role', pick: { speaker_label: speaker, participant_role_uuid: `role-${speaker}`, name: speaker === '1' ? 'Agent' : 'Customer', confidence: 0.8, selection_source: 'inferred', detail: null, reasoning: null } }));
    if (clip % 100 === 0) out.push(JSON.stringify({ type: 'conversation_type', pick: { conversation_type_uuid: `type-${(clip / 100) % 2}`, name: 'Support', confidence: 0.7, selection_source: 'inferred', detail: null, reasoning: null } }));
    if (clip % 20 === 0) out.push(JSON.stringify({ type: 'topics', topics: ['billing', 'refund', `topic-${clip % 7}`] }));
    if (clip % 10 === 0) out.push(JSON.stringify({ type: 'topic_sentiment', topic_sentiment: { topic: `topic-${clip % 7}`, speaker_label: speaker, sentiment_score: ((clip % 21) - 10) / 10, sentiment_label: 'neutral' } }));
    if (clip % 100 === 50) out.push(JSON.stringify({ type: 'summary', text: `The call so far, after ${clip} clips: ${words}.` }));
    if (clip % 37 === 0) out.push(JSON.stringify({ type: 'behavior_detection', detection: { behavior_uuid: `behavior-${clip % 20}`, behavior_name: 'Empathy', speaker_label: speaker, detected: true, confidence: 0.9, evidence_clip_uuids: [id], definitive_clip_uuid: id, reasoning: null } }));
  }
  return out;
}

async function sinkProcess(): Promise<void> {
  const sink = await startSink({ eventsFor });
  process.stdout.write(`${sink.port}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => void sink.close().then(() => process.exit(0)));
}

interface HourMark {
  readonly hour: number;
  readonly heapMB: number;
  readonly rssMB: number;
  readonly clips: number;
}

async function measure(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc!;
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, '--sink'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
  const baseUrl = `http://127.0.0.1:${port}`;

  gc();
  const startHeap = process.memoryUsage().heapUsed / MB;
  let peakRss = 0;
  let peakHeap = 0;
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss / MB);
    peakHeap = Math.max(peakHeap, m.heapUsed / MB);
  }, 10);

  const marks: HourMark[] = [];
  let clips = 0;
  const frames = HOURS * FRAMES_PER_HOUR;
  const stats = createSessionStats();
  const audio$ = pullFrames(frames, FRAME_100MS, {
    fresh: true,
    onEmit: (i) => {
      if (i === 0 || i % FRAMES_PER_HOUR !== 0) return;
      gc();
      const m = process.memoryUsage();
      marks.push({ hour: i / FRAMES_PER_HOUR, heapMB: m.heapUsed / MB, rssMB: m.rss / MB, clips });
    },
  });
  const session = splitSession(audio$.pipe(analyzeConversation({ apiKey: KEY, baseUrl, stats })));
  let emissions = 0;
  const count = () => void emissions++;
  const t0 = performance.now();
  const subs = [
    session.liveTranscript$.subscribe(count),
    session.clipsWithUpdates$.subscribe((c) => {
      clips = c.size;
      emissions++;
    }),
    session.currentRoles$.subscribe(count),
    session.conversationType$.subscribe(count),
    session.behaviorDetections$.subscribe(count),
    session.latestTopics$.subscribe(count),
    session.topicSentiments$.subscribe(count),
    session.latestSummary$.subscribe(count),
    session.events$.subscribe(count),
  ];
  const final = await lastValueFrom(session.snapshot$);
  const secs = (performance.now() - t0) / 1000;
  gc();
  const end = process.memoryUsage();
  marks.push({ hour: HOURS, heapMB: end.heapUsed / MB, rssMB: end.rss / MB, clips });
  clearInterval(sampler);
  for (const s of subs) s.unsubscribe();
  child.stdin.end();
  peakRss = Math.max(peakRss, (process.resourceUsage().maxRSS * 1024) / MB); // maxRSS is in KiB

  if (stats.bytesSent !== frames * FRAME_100MS) throw new Error(`lost audio: sent ${stats.bytesSent} of ${frames * FRAME_100MS}`);
  const first = marks[0]!;
  const last = marks.at(-1)!;
  const perClipKB = ((last.heapMB - first.heapMB) * 1000) / Math.max(1, last.clips - first.clips);
  console.log(`memory: ${HOURS} h of s16le 16 kHz (${fmt((frames * FRAME_100MS) / MB)} MB) through analyzeConversation + splitSession, as fast as possible`);
  console.log(machine());
  console.log(`streamed in ${fmt(secs)} s (${fmt((frames * FRAME_100MS) / MB / secs)} MB/s), ${stats.eventsReceived} events, ${emissions} derived emissions, ${final.clips.clips.size} clips`);
  console.log('audio hour   heap after GC (MB)   RSS (MB)   clips held');
  for (const m of marks) console.log(`${String(m.hour).padStart(10)}   ${fmt(m.heapMB).padStart(18)}   ${fmt(m.rssMB).padStart(8)}   ${String(m.clips).padStart(10)}`);
  console.log(`heap at start ${fmt(startHeap)} MB; peak heap ${fmt(peakHeap)} MB; peak RSS ${fmt(peakRss)} MB`);
  console.log(`heap growth hour 1 -> hour ${HOURS}: ${fmt(last.heapMB - first.heapMB)} MB for ${last.clips - first.clips} more clips held (${fmt(perClipKB, 2)} kB per clip); RSS hour 1 -> ${HOURS}: ${fmt(first.rssMB)} -> ${fmt(last.rssMB)} MB`);
}

const mode = process.argv[2];
if (mode === '--sink') void sinkProcess();
else if (typeof (globalThis as { gc?: unknown }).gc !== 'function') {
  // Forced GCs make the hourly heap figures comparable: re-run with --expose-gc.
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', SCRIPT], { stdio: 'inherit' });
  child.on('close', (code) => process.exit(code ?? 1));
} else {
  void measure().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
