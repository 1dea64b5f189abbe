// The emulator's batch stand-ins follow the audio (src/emulator/batchAnalysis.ts): `svc-stream
// events` and `emotion` on speech (espeak-ng, at 16 and 8 kHz and fast, fricative-rich), silence
// and broadband noise (sox), and speech then claps: speech is never an event (the issue's
// speech-as-Applause), noise and silence claim nothing, emotion is Neutral only where speech is
// heard and Unknown elsewhere, and each result's label says what was heard and what was not
// measured. Every answer stays within the contract's schemas.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AudioEventResultSchema, EmotionResultSchema } from 'svc-stream/schema';
import { loggedEmulator, type LoggedEmulator } from '../batch/fixtures.js';
import { runCli } from '../cli/runCli.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-stand-ins-'));
const file = (name: string): string => join(dir, name);
const sox = (...args: string[]): void => void execFileSync('sox', ['-R', '-V1', ...args], { timeout: 20_000 });
const TEXT = 'Hello, thank you for calling. I would like to ask about my bill from last month, which seems higher than usual. Could you check it for me, please?';
const FRICATIVES = 'Stop! Stop right there! Sister Suzie sitting on a thistle, she sells sea shells, six sick sheep, hissing snakes, fish and chips, catch the bus, yes yes yes.';

let emu: LoggedEmulator;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  execFileSync('espeak-ng', ['-w', file('speech-22k.wav'), TEXT], { timeout: 20_000 });
  execFileSync('espeak-ng', ['-s', '200', '-p', '70', '-a', '200', '-w', file('fricatives.wav'), FRICATIVES], { timeout: 20_000 });
  sox(file('speech-22k.wav'), '-r', '16000', file('speech.wav'));
  sox(file('speech-22k.wav'), '-r', '8000', file('speech-8k.wav'));
  sox('-n', '-r', '16000', '-c', '1', file('silence.wav'), 'trim', '0', '5');
  sox('-n', '-r', '16000', '-c', '1', file('white.wav'), 'synth', '5', 'whitenoise', 'vol', '0.3');
  sox('-n', '-r', '16000', '-c', '1', file('pink.wav'), 'synth', '5', 'pinknoise', 'vol', '0.5');
  // Claps: 40 ms bursts of noise, eight a second, for 4 s.
  sox('-n', '-r', '16000', '-c', '1', file('clap.wav'), 'synth', '0.04', 'whitenoise', 'vol', '0.8', 'pad', '0', '0.085');
  sox(...Array.from({ length: 32 }, () => file('clap.wav')), file('claps.wav'));
  sox(file('speech.wav'), file('claps.wav'), file('speech-then-claps.wav'));
  emu = await loggedEmulator({ organizations: [{ keys: ['stand-in-key'], concurrency: 4 }] });
  env = { SVC_BASE_URL: emu.baseUrl, SVC_API_KEY: 'stand-in-key' };
}, 60_000);

afterAll(async () => {
  await emu?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Line {
  readonly path: string;
  readonly source: string;
  readonly label: { readonly source: string; readonly note: string };
  readonly result: unknown;
}

/** One command over `names`, its result lines by file name. */
async function answers(command: 'events' | 'emotion', names: readonly string[]): Promise<Map<string, Line>> {
  const r = await runCli([command, ...names.map(file)], { env });
  expect(r.code, r.stderr).toBe(0);
  const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Line);
  return new Map(lines.map((l) => [l.path.slice(dir.length + 1), l]));
}

const SPEECH = ['speech.wav', 'speech-8k.wav', 'speech-22k.wav', 'fricatives.wav'];
const QUIET = ['silence.wav', 'white.wav', 'pink.wav'];

describe('events follow the audio', () => {
  it('speech is no event (never Applause, never an instrument); silence and broadband noise claim nothing', async () => {
    const got = await answers('events', [...SPEECH, ...QUIET]);
    for (const name of [...SPEECH, ...QUIET]) {
      const line = got.get(name)!;
      expect(AudioEventResultSchema.parse(line.result).probs, name).toEqual({});
      expect(line.source).toBe('emulator');
    }
    // The label says what was heard, and what the answer cannot say.
    for (const name of SPEECH) expect(got.get(name)!.label.note, name).toMatch(/heard: speech \d+\.\ds.*not measured: sound events under speech/);
    expect(got.get('silence.wav')!.label.note).toMatch(/heard: silence 5\.0s\)/);
    expect(got.get('white.wav')!.label.note).toMatch(/heard: noise 5\.0s\)/);
  }, 60_000);

  it('claps after speech: Applause, from the claps alone', async () => {
    const got = await answers('events', ['claps.wav', 'speech-then-claps.wav']);
    for (const name of ['claps.wav', 'speech-then-claps.wav']) {
      const probs = AudioEventResultSchema.parse(got.get(name)!.result).probs;
      expect(Object.keys(probs), name).toEqual(['Applause']);
      expect(probs.Applause, name).toBeGreaterThan(0.5);
    }
    expect(got.get('speech-then-claps.wav')!.label.note).toMatch(/heard: speech \d+\.\ds, bursts \d+\.\ds|heard: bursts \d+\.\ds, speech \d+\.\ds/);
  }, 60_000);
});

describe('emotion follows the audio', () => {
  it('Neutral where speech is heard, Unknown for silence and noise; the label says emotion is not measured', async () => {
    const got = await answers('emotion', [...SPEECH, ...QUIET]);
    for (const name of SPEECH) expect(EmotionResultSchema.parse(got.get(name)!.result).emotion, name).toBe('Neutral');
    for (const name of QUIET) expect(EmotionResultSchema.parse(got.get(name)!.result).emotion, name).toBe('Unknown');
    for (const line of got.values()) expect(line.label.note).toContain('not measured: emotion');
  }, 60_000);

  it('each 15 s window says what it heard: speech, then claps and silence', async () => {
    // 8.5 s of speech and 4 s of claps, then 20 s of silence: two whole windows.
    sox(file('speech.wav'), file('claps.wav'), file('silence.wav'), file('silence.wav'), file('silence.wav'), file('silence.wav'), file('long.wav'));
    const got = await answers('emotion', ['long.wav']);
    const result = EmotionResultSchema.parse(got.get('long.wav')!.result);
    expect(result.time_series.map((w) => [w.start_ms, w.duration_ms, w.emotion])).toEqual([
      [0, 15_000, 'Neutral'],
      [15_000, 15_000, 'Unknown'],
    ]);
  }, 60_000);
});
