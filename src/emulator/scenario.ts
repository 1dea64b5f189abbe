// Scenario files: what the signal cannot supply (transcripts, picks, topics, faults) and
// exactly when to emit it, timed against audio received, not wall clock.
import { readFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { isRecording, recordingScenario } from './recording.js';

const Json = z.record(z.string(), z.unknown());
const Ms = z.number().min(0);

/**
 * One scripted server event, sent verbatim (the original, low-level form). Untyped on purpose,
 * like the faults' frames: steps script arbitrary, unknown or malformed frames for protocol
 * tests, so they are never checked against the client's schemas (the engine's events are:
 * see engineEvents.ts).
 */
export const ScenarioStepSchema = z.strictObject({
  /** Emit once this much audio (ms) has been received. Default 0. */
  at_ms: Ms.optional(),
  /** Emit after the end-of-audio frame, before `done` (overrides at_ms). */
  after_end: z.boolean().optional(),
  /** The event, as sent on the wire (nested or flat form). */
  event: Json.optional(),
  /** A raw text frame, sent as is (for malformed-frame tests). */
  raw: z.string().optional(),
});
/** One verbatim frame of a scenario's `steps` list, as {@link ScenarioStepSchema} accepts it. */
export type ScenarioStep = z.infer<typeof ScenarioStepSchema>;

/** Where in a session a fault strikes. */
export const FAULT_POINTS = ['handshake', 'config', 'audio', 'clip', 'end', 'done'] as const;

/**
 * Validates one entry of a scenario's `faults` list: where it strikes (`at`: handshake,
 * config, audio, clip, end, done) and what happens (`action`: a close code of §7.3, a TCP
 * drop, a stall, a malformed or oversized frame, an HTTP refusal, or backpressure).
 * Infers {@link Fault}.
 */
export const FaultSchema = z.strictObject({
  /** handshake: right after the upgrade; config: after the config frame; audio: once `at_ms` of audio arrived; clip: right after clip number `clip` (0-based) was sent; end: after end of audio (before any after-end event); done: after `done`. */
  at: z.enum(FAULT_POINTS),
  at_ms: Ms.optional(),
  /** For `at: "clip"`: which clip, 0-based. Default 0. */
  clip: z.number().int().min(0).optional(),
  /** close: error event (unless `error` is null) then close with `code`; drop: destroy TCP mid-session, no close frame; stall: never answer again; malformed: send `frame`; oversized: send a frame of `bytes` bytes; http: refuse the upgrade with `status` and `detail`; stop_reading: stop reading the socket (backpressure); silence: stop reading and writing, pings unanswered, no FIN (a dead peer); restart: the going-away close of a planned restart (`error` event, close 1012). */
  action: z.enum(['close', 'drop', 'stall', 'malformed', 'oversized', 'http', 'stop_reading', 'silence', 'restart']),
  code: z.number().int().optional(),
  reason: z.string().optional(),
  error: z.string().nullable().optional(),
  frame: z.string().optional(),
  bytes: z.number().int().positive().optional(),
  status: z.number().int().optional(),
  detail: z.string().optional(),
});
/** A scripted failure in an emulated streaming session, as {@link FaultSchema} accepts it. */
export type Fault = z.infer<typeof FaultSchema>;

/** One turn of the ground-truth transcript; matched to detected clips by time overlap. */
export const TranscriptTurnSchema = z.strictObject({
  speaker_label: z.string().min(1),
  text: z.string(),
  start_ms: Ms,
  end_ms: Ms,
  /** Informational (samples/call.transcript.json carries it); roles are picked by the timeline. */
  role: z.string().optional(),
  /** The clip's emotion, sent when `stt.emotion_signal` is on. */
  emotion: z.string().optional(),
  /** The clip's accent, sent when `stt.accent_signal` is on. */
  accent: z.string().optional(),
  /** The clip's deepfake score, sent when `stt.deepfake_signal` is on. */
  deepfake_score: z.number().min(0).max(1).optional(),
  language: z.string().optional(),
});
/** One ground-truth turn of a scenario transcript: speaker, text, time span and clip signals. */
export type TranscriptTurn = z.infer<typeof TranscriptTurnSchema>;

/**
 * One analysis event of the timeline. `event` is the nested wire form; the engine fills in
 * what is missing (UUIDs from names, confidence, null detail/reasoning), replaces every
 * string `"$clip:N"` by the UUID of detected clip N (0-based), and drops what the config
 * turns off. Entries fire in list order, each once its trigger holds and every clip it
 * names has been sent. Known types come out as the client's typed events (a field of the
 * wrong type drops the entry, with a log line); other types are sent as written.
 */
export const TimelineEntrySchema = z
  .strictObject({
    /** Fire once this much audio (ms) has been received. */
    at_ms: Ms.optional(),
    /** Fire right after clip N's `clip` event (0-based). */
    after_clip: z.number().int().min(0).optional(),
    /** Fire after the end of audio (once every clip is out), before `done`. */
    after_end: z.boolean().optional(),
    event: Json.and(z.object({ type: z.string() })),
  })
  .refine((e) => [e.at_ms !== undefined, e.after_clip !== undefined, e.after_end === true].filter(Boolean).length <= 1, {
    message: 'a timeline entry has at most one of at_ms, after_clip, after_end',
  });
/** One analysis event of a scenario timeline and its trigger (`at_ms`, `after_clip` or `after_end`). */
export type TimelineEntry = z.infer<typeof TimelineEntrySchema>;

export const VadSettingsSchema = z.strictObject({
  threshold_db: z.number().max(0).optional(),
  min_silence_ms: Ms.optional(),
  min_speech_ms: Ms.optional(),
  first_partial_ms: Ms.optional(),
  partial_interval_ms: z.number().min(10).optional(),
});

/**
 * Validates a scenario, what an emulated streaming session plays: the ground-truth
 * `transcript`, the `timeline` of analysis events, verbatim `steps`, `faults`, and VAD
 * settings. Unknown keys are refused; defaults are filled in. Infers {@link Scenario}
 * (output) and {@link ScenarioInput} (input).
 */
export const ScenarioSchema = z.strictObject({
  /** Free text: what this scenario is for. */
  description: z.string().optional(),
  /**
   * The name results played from it are labelled with (`scenario call.scenario.json …`): the
   * file's name, set when it is read from a file (a name given here wins).
   */
  file: z.string().min(1).optional(),
  /** A recorded session replayed (set by the loader of recordings): its results are labelled `recording`. */
  recording: z.boolean().optional(),
  /**
   * The audio this scenario scripts (a PCM or G.711 WAV; in a file, relative to the file's
   * folder). A session whose audio starts elsewhere in it (a client resuming mid-stream) is
   * found in it by content and the script goes on from there; a session that cannot be found
   * gets speech segments only, and says so (docs/emulator.md, "Scenarios that follow a resume").
   */
  audio: z.string().min(1).optional(),
  /** Verbatim frames, for protocol tests. */
  steps: z.array(ScenarioStepSchema).default([]),
  faults: z.array(FaultSchema).default([]),
  /** Send `done` after the end of audio (default true). */
  done: z.boolean().default(true),
  /** Run the analysis engine (clips from the signal, the timeline). Default: true unless `steps` is non-empty, so step-scripted sessions stay exact. */
  analysis: z.boolean().optional(),
  /** Speaker labels of mono audio not covered by the transcript: all "1" (default) or alternating "1"/"2" clip by clip. */
  mono_speakers: z.enum(['single', 'alternate']).default('single'),
  /** Voice-activity settings (defaults: -55 dBFS, 350 ms silence, 120 ms speech, partials at 300 ms then every 1000 ms). */
  vad: VadSettingsSchema.optional(),
  /** Clip language when the config gives no `stt.language` hint. Default "en". */
  language: z.string().default('en'),
  /** Ground truth: text, speaker and clip signals per turn. */
  transcript: z.array(TranscriptTurnSchema).default([]),
  /** Analysis events and when they come. */
  timeline: z.array(TimelineEntrySchema).default([]),
  /** Synthetic voice detection streaming: the score of every window that holds speech. Default null (not claimed). */
  synthetic_voice_score: z.number().min(0).max(1).nullable().default(null),
});
/** A validated scenario with every default filled in (the output of {@link ScenarioSchema}). */
export type Scenario = z.infer<typeof ScenarioSchema>;
/** A scenario as written in JSON or passed to `startEmulator`: defaults may be omitted (the input of {@link ScenarioSchema}). */
export type ScenarioInput = z.input<typeof ScenarioSchema>;

/** Validate a scenario value and fill in its defaults; throws a `ZodError` naming the path when it is invalid. */
export function parseScenario(input: unknown): Scenario {
  return ScenarioSchema.parse(input);
}

/**
 * What a session playing `s` is, as the emulator's `x-svc-emulator` header says it
 * (src/schema/resultLabel.ts reads it): `speech-segments-only` when only the signal speaks
 * (clips without text); `recording; file=NAME` for a recorded session replayed;
 * `scenario; file=NAME` when it scripts text or events, with `; audio=AUDIO` when the script
 * plays only if the session's audio is found in the audio it names (the session's first audio
 * decides, and a ping before its first event says what was found: StreamingConnection.ts).
 */
export function scenarioNote(s: Scenario): string {
  if (s.transcript.length === 0 && s.timeline.length === 0 && s.steps.length === 0) return 'speech-segments-only';
  const file = s.file !== undefined ? `; file=${encodeURIComponent(s.file)}` : '';
  if (s.recording) return `recording${file}`;
  const audio = s.audio !== undefined && analysisEnabled(s) ? `; audio=${encodeURIComponent(basename(s.audio))}` : '';
  return `scenario${file}${audio}`;
}

/** A scenario as read from the file at `path`: its `audio`, when relative, is the file's folder's. */
export function scenarioFromFile(value: unknown, path: string): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const { audio, file } = value as { audio?: unknown; file?: unknown };
  const named = file === undefined ? { ...value, file: basename(path) } : value;
  return typeof audio === 'string' && audio !== '' && !isAbsolute(audio) ? { ...named, audio: resolve(dirname(path), audio) } : named;
}

/** Whether the analysis engine runs for this scenario. */
export function analysisEnabled(s: Scenario): boolean {
  return s.analysis ?? s.steps.length === 0;
}

/**
 * Read and validate a scenario JSON file, or a recorded session (NDJSON from `recordSession` or
 * `svc-stream analyze --record`), which replays its events in step with the audio.
 */
export async function loadScenarioFile(path: string): Promise<Scenario> {
  const text = await readFile(path, 'utf8');
  if (isRecording(text)) return ScenarioSchema.parse(recordingScenario(text, path));
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`${path}: not JSON: ${(err as Error).message}`);
  }
  const parsed = ScenarioSchema.safeParse(scenarioFromFile(value, path));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`${path}: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  return parsed.data;
}
