// What parsing one server event costs (parseServerEvent: JSON text to a validated, normalised
// event), per event, for a session-like mix: partials and clips (nested and flat), updates,
// picks, topics, sentiments, behaviors, done; and the same mix with out-of-contract values that
// the tolerant parser repairs. Median of several rounds, each parsing every frame many times.
// Run: npx tsx bench/parse.ts [--rounds N] [--against path/to/other/parseServerEvent.ts]
//   --against: also time another copy of the parser module, interleaved round by round (to
//   compare a change of src/schema/parseServerEvent.ts with the version before it).
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { machine, median } from './benchInternals.js';
import * as current from '../src/schema/parseServerEvent.js';

type Parse = typeof current.parseServerEvent;

const roundsAt = process.argv.indexOf('--rounds');
const ROUNDS = roundsAt >= 0 ? Number(process.argv[roundsAt + 1]) : 7;
const againstAt = process.argv.indexOf('--against');
const AGAINST = againstAt >= 0 ? process.argv[againstAt + 1] : undefined;
const PASSES = 200;

/** About one minute of a session: 40 clips, each preceded by 4 growing partials, plus the rest. */
function sessionFrames(tolerant: boolean): string[] {
  const frames: unknown[] = [];
  for (let c = 0; c < 40; c++) {
    const id = `clip-${c}`;
    const speaker = tolerant && c % 4 === 0 ? (c % 8 === 0 ? 2 : null) : String(1 + (c % 2));
    for (let p = 1; p <= 4; p++) {
      frames.push({ type: 'partial_clip', partial_clip: { clip_uuid: id, text: 'hello there '.repeat(p), start_ms: c * 3000, end_ms: c * 3000 + p * 500, speaker_label: null, emotion: null, accent: null, deepfake_score: null } });
    }
    const clip = { clip_uuid: id, text: 'hello there, how can I help you today', start_ms: c * 3000, duration_ms: 2800, speaker_label: speaker, language: 'en', emotion: null, accent: null, deepfake_score: null };
    frames.push(c % 3 === 0 ? { type: 'clip', ...clip } : { type: 'clip', clip });
    if (c % 5 === 0) frames.push({ type: 'clip_update', clip_update: { clip_uuid: id, emotion: tolerant ? 7 : 'Neutral', accent: 'en-US' } });
    if (c % 10 === 0) {
      frames.push({ type: 'participant_role', pick: { speaker_label: '1', participant_role_uuid: tolerant ? null : 'r-1', name: 'Agent', confidence: 0.9, selection_source: 'inferred', detail: null, reasoning: 'greets' } });
      frames.push({ type: 'conversation_type', pick: { conversation_type_uuid: 't-1', name: 'Support', confidence: tolerant ? 2 : 0.8, selection_source: 'inferred', detail: null, reasoning: null } });
      frames.push({ type: 'topics', topics: ['billing', 'refund'] });
      frames.push({ type: 'topic_sentiment', topic_sentiment: { topic: 'billing', speaker_label: '2', sentiment_score: -0.4, sentiment_label: 'negative' } });
      frames.push({ type: 'behavior_detection', detection: { behavior_uuid: 'b-1', behavior_name: 'Greeting', speaker_label: '1', detected: true, confidence: 0.7, evidence_clip_uuids: [id], definitive_clip_uuid: id, reasoning: null } });
    }
  }
  frames.push({ type: 'summary', text: 'A customer asks for a refund.' });
  frames.push({ type: 'done', duration_ms: 120_000 });
  return frames.map((f) => JSON.stringify(f));
}

/** ns per event for one pass set; every result is checked so the work cannot be skipped. */
function time(parse: Parse, frames: readonly string[]): number {
  let ok = 0;
  const t0 = performance.now();
  for (let p = 0; p < PASSES; p++) for (const f of frames) if (parse(f).ok) ok++;
  const ns = ((performance.now() - t0) * 1e6) / (PASSES * frames.length);
  if (ok !== PASSES * frames.length) throw new Error(`only ${ok} of ${PASSES * frames.length} frames parsed`);
  return ns;
}

const variants: Array<[string, Parse]> = [['src/schema/parseServerEvent.ts', current.parseServerEvent]];
if (AGAINST !== undefined) {
  const other = (await import(pathToFileURL(AGAINST).href)) as typeof current;
  variants.push([AGAINST, other.parseServerEvent]);
}

console.log(`parseServerEvent, ${ROUNDS} rounds of ${PASSES} passes; ${machine()}`);
for (const tolerant of [false, true]) {
  const frames = sessionFrames(tolerant);
  for (const [, parse] of variants) time(parse, frames); // warm-up
  const samples = variants.map(() => [] as number[]);
  for (let r = 0; r < ROUNDS; r++) variants.forEach(([, parse], i) => samples[i]!.push(time(parse, frames)));
  variants.forEach(([name], i) => {
    const s = samples[i]!;
    console.log(`${tolerant ? 'with out-of-contract values' : 'in-contract session       '} ${name.padEnd(28)} ${frames.length} frames  median ${median(s).toFixed(0)} ns/event  (min ${Math.min(...s).toFixed(0)}, max ${Math.max(...s).toFixed(0)})`);
  });
}
