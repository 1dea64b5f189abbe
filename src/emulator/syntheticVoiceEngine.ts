// The synthetic-voice detection engine: one window event per 2 s of audio, with the speech the
// detector measured in it and the scenario's score.
import { ClipTracker } from './ClipTracker.js';
import { TrackedEngine, type EngineOutput } from './engine.js';
import type { Scenario } from './scenario.js';

/** Synthetic voice detection windows (emulator shape): one score per fixed window of audio. */
export const SYNTHETIC_VOICE_WINDOW_MS = 2000;
/** The service needs at least 0.5 s to judge (wire reference); shorter tails get no window. */
export const SYNTHETIC_VOICE_MIN_MS = 500;

/**
 * Synthetic voice detection: a window event every 2 s of audio with the milliseconds of
 * speech the detector found in it and the scenario's score (null when the scenario gives
 * none, or the window holds no speech: the emulator does not pretend to detect synthesis).
 */
export class SyntheticVoiceEngine extends TrackedEngine {
  protected readonly tracker: ClipTracker;
  private windowStart = 0;
  private speechMs = 0;
  private lastT = 0;

  constructor(
    private readonly scenario: Scenario,
    private readonly out: EngineOutput,
  ) {
    super();
    this.tracker = new ClipTracker(scenario, {}, {
      partial: () => undefined,
      clip: () => undefined,
      frame: (t, voiced) => {
        if (voiced) this.speechMs += t - this.lastT;
        this.lastT = t;
        if (t - this.windowStart >= SYNTHETIC_VOICE_WINDOW_MS - 1e-6) this.emit(t);
      },
    });
  }

  flush(): void {
    this.tracker.flush();
    const end = this.tracker.audioMs;
    if (end - this.windowStart >= SYNTHETIC_VOICE_MIN_MS) this.emit(end);
  }

  finish(): void {}

  private emit(end: number): void {
    const speech = Math.round(this.speechMs);
    this.out.send({
      type: 'synthetic_voice',
      window: {
        start_ms: Math.round(this.windowStart),
        duration_ms: Math.round(end - this.windowStart),
        speech_ms: speech,
        score: speech > 0 ? this.scenario.synthetic_voice_score : null,
      },
    });
    this.windowStart = end;
    this.speechMs = 0;
  }
}
