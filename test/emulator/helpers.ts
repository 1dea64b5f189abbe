// Shared helpers of the emulator tests: a plain `ws` client (a client we did not write) that
// runs one session and records every frame and the close.
import { expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { parseServerEvent } from 'svc-stream/schema';
import { startEmulator, type EmulatorOptions, type RunningEmulator } from 'svc-stream/emulator';

export const SAMPLES = fileURLToPath(new URL('../../samples/', import.meta.url));
export const sample = (name: string): Buffer => readFileSync(SAMPLES + name);
export const TRANSCRIPT: Array<{ speaker_label: string; text: string; start_ms: number; end_ms: number }> = JSON.parse(
  readFileSync(SAMPLES + 'call.transcript.json', 'utf8'),
);
export const CALL_SCENARIO: unknown = JSON.parse(readFileSync(SAMPLES + 'call.scenario.json', 'utf8'));

/** The PCM body of a canonical 44-byte-header WAV. */
export function wavBody(wav: Buffer): Buffer {
  return wav.subarray(44);
}

export type Frame = Record<string, unknown> & { type: string };

export interface SessionResult {
  readonly frames: Frame[];
  /** Text frames that were not JSON. */
  readonly rawFrames: string[];
  readonly closeCode: number;
  readonly opened: boolean;
}

export interface SessionPlan {
  /** First text frame; omitted: none. */
  readonly config?: string;
  /** Audio, sent in `chunkBytes` frames. */
  readonly audio?: Buffer;
  readonly chunkBytes?: number;
  /** Send the empty end-of-audio frame (default true). */
  readonly end?: boolean;
  /** Give up (terminate) after this long without a close. Default 8000 ms. */
  readonly timeoutMs?: number;
}

export function wsUrl(emu: RunningEmulator, path: string, query: Record<string, string | number> = {}, apiKey: string | null = emu.apiKey): string {
  const u = new URL(emu.baseUrl.replace(/^http/, 'ws') + path);
  if (apiKey !== null) u.searchParams.set('api_key', apiKey);
  for (const [k, v] of Object.entries(query)) u.searchParams.set(k, String(v));
  return u.toString();
}

/** Open a socket, play the plan, collect every frame until the close (or the timeout). */
export function runSession(url: string, plan: SessionPlan = {}): Promise<SessionResult> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url);
    const frames: Frame[] = [];
    const rawFrames: string[] = [];
    let opened = false;
    const timer = setTimeout(() => ws.terminate(), plan.timeoutMs ?? 8_000);
    ws.on('open', () => {
      opened = true;
      if (plan.config !== undefined) ws.send(plan.config);
      const audio = plan.audio;
      const n = plan.chunkBytes ?? 256 * 1024;
      if (audio) for (let i = 0; i < audio.length; i += n) ws.send(audio.subarray(i, i + n), { binary: true });
      if (plan.end !== false) ws.send('');
    });
    ws.on('message', (data, isBinary) => {
      const text = String(data);
      if (isBinary) return void rawFrames.push(text);
      try {
        frames.push(JSON.parse(text) as Frame);
      } catch {
        rawFrames.push(text);
      }
    });
    ws.on('error', () => undefined);
    ws.on('close', (code) => {
      clearTimeout(timer);
      resolve({ frames, rawFrames, closeCode: code, opened });
    });
  });
}

/** Start an emulator for one test and always close it. */
export async function withEmulator<T>(options: EmulatorOptions, fn: (emu: RunningEmulator) => Promise<T>): Promise<T> {
  const emu = await startEmulator({ port: 0, ...options });
  try {
    return await fn(emu);
  } finally {
    await emu.close();
  }
}

/** Wait until the emulator has recorded `n` finished connections. */
export async function connectionsEnded(emu: RunningEmulator, n: number, timeoutMs = 3_000): Promise<void> {
  await expect.poll(() => emu.connections.length, { timeout: timeoutMs, interval: 10, message: 'connections ended' }).toBeGreaterThanOrEqual(n);
}

/** The fields the wire reference lists for each event payload: all must be present. */
export const WIRE_FIELDS: Record<string, { key?: string; fields: string[] }> = {
  clip: { key: 'clip', fields: ['clip_uuid', 'text', 'start_ms', 'duration_ms', 'speaker_label', 'language', 'emotion', 'accent', 'deepfake_score'] },
  partial_clip: { key: 'partial_clip', fields: ['clip_uuid', 'text', 'start_ms', 'end_ms', 'speaker_label', 'emotion', 'accent', 'deepfake_score'] },
  clip_update: { key: 'clip_update', fields: ['clip_uuid'] },
  conversation_type: { key: 'pick', fields: ['conversation_type_uuid', 'name', 'confidence', 'selection_source', 'detail', 'reasoning'] },
  participant_role: { key: 'pick', fields: ['speaker_label', 'participant_role_uuid', 'name', 'confidence', 'selection_source', 'detail', 'reasoning'] },
  behavior_detection: { key: 'detection', fields: ['behavior_uuid', 'behavior_name', 'speaker_label', 'detected', 'confidence', 'evidence_clip_uuids', 'definitive_clip_uuid', 'reasoning'] },
  topics: { fields: ['topics'] },
  topic_sentiment: { key: 'topic_sentiment', fields: ['topic', 'speaker_label', 'sentiment_score', 'sentiment_label'] },
  summary: { fields: ['text'] },
  done: { fields: ['duration_ms'] },
  error: { fields: ['error'] },
};

/** Problems with a conversation frame: schema failures, unknown types, missing wire fields. */
export function wireProblems(frame: Frame): string[] {
  const problems: string[] = [];
  const parsed = parseServerEvent(JSON.stringify(frame));
  if (!parsed.ok) problems.push(parsed.reason);
  else if (parsed.event.type === 'unknown') problems.push(`unknown type ${frame.type}`);
  const spec = WIRE_FIELDS[frame.type];
  if (spec) {
    const payload = (spec.key ? frame[spec.key] : frame) as Record<string, unknown> | undefined;
    for (const f of spec.fields) if (!payload || !(f in payload)) problems.push(`${frame.type}.${f} missing`);
  }
  return problems;
}

export const ALL_PRESETS_CONFIG = JSON.stringify({
  stt: { emotion_signal: true },
  behaviors: ['preset:greeting', 'preset:identity-verification', 'preset:frustration', 'preset:empathy', 'preset:resolution-offered'],
});

export const ofType = (frames: Frame[], type: string) => frames.filter((f) => f.type === type);
