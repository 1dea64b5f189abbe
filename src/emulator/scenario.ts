// Scenario files: what the signal cannot supply (transcripts, picks, topics, faults) and
// exactly when to emit it, timed against audio received, not wall clock.
import { z } from 'zod';

const Json = z.record(z.string(), z.unknown());

/** One scripted server event. */
export const ScenarioStepSchema = z.strictObject({
  /** Emit once this much audio (ms) has been received. Default 0. */
  at_ms: z.number().min(0).optional(),
  /** Emit after the end-of-audio frame, before `done` (overrides at_ms). */
  after_end: z.boolean().optional(),
  /** The event, as sent on the wire (nested or flat form). */
  event: Json.optional(),
  /** A raw text frame, sent as is (for malformed-frame tests). */
  raw: z.string().optional(),
});
export type ScenarioStep = z.infer<typeof ScenarioStepSchema>;

/** Where in a session a fault strikes. */
export const FAULT_POINTS = ['handshake', 'config', 'audio', 'end', 'done'] as const;

export const FaultSchema = z.strictObject({
  /** handshake: right after the upgrade; config: after the config frame; audio: once `at_ms` of audio arrived; end: after end of audio; done: after `done`. */
  at: z.enum(FAULT_POINTS),
  at_ms: z.number().min(0).optional(),
  /** close: error event (unless `error` is null) then close with `code`; drop: destroy TCP; stall: never answer again; malformed: send `frame`; oversized: send a frame of `bytes` bytes; http: refuse the upgrade with `status` and `detail`. */
  action: z.enum(['close', 'drop', 'stall', 'malformed', 'oversized', 'http', 'stop_reading']),
  code: z.number().int().optional(),
  reason: z.string().optional(),
  error: z.string().nullable().optional(),
  frame: z.string().optional(),
  bytes: z.number().int().positive().optional(),
  status: z.number().int().optional(),
  detail: z.string().optional(),
});
export type Fault = z.infer<typeof FaultSchema>;

export const ScenarioSchema = z.strictObject({
  /** Free text: what this scenario is for. */
  description: z.string().optional(),
  steps: z.array(ScenarioStepSchema).default([]),
  faults: z.array(FaultSchema).default([]),
  /** Send `done` after the end of audio (default true). */
  done: z.boolean().default(true),
});
export type Scenario = z.infer<typeof ScenarioSchema>;
export type ScenarioInput = z.input<typeof ScenarioSchema>;

export function parseScenario(input: unknown): Scenario {
  return ScenarioSchema.parse(input);
}
