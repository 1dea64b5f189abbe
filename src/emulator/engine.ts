// What every streaming endpoint's engine is: the Engine and EngineOutput contracts, the base
// that feeds audio to a ClipTracker, and the config an engine reads.
import type { BatchConfig } from '../schema/config.js';
import type { ClipTracker } from './ClipTracker.js';
import type { EngineEvent } from './engineEvents.js';
import type { PcmBlock } from './pcm.js';

/** Where an engine's events go. */
export interface EngineOutput {
  send(event: EngineEvent): void;
  /** Called right after clip `index` (0-based, in emission order) was sent. */
  clipSent?(index: number): void;
  log?(line: string): void;
}

/** What every streaming endpoint's engine does with decoded audio. */
export interface Engine {
  push(block: PcmBlock): void;
  /** End of audio: close open segments and send what was waiting on audio. */
  flush(): void;
  /** Send the after-end events. Called after `flush`, before `done`. */
  finish(): void;
  /** Milliseconds of audio processed. */
  readonly audioMs: number;
}

export type EngineKind = 'conversation' | 'stt' | 'pii';

/** The config the engine reads: `default` is the empty BatchConfig (every default). */
export function effectiveConfig(config: 'default' | BatchConfig | undefined): BatchConfig {
  return config === undefined || config === 'default' ? {} : config;
}

/** What the engines share: audio goes to a ClipTracker, which also keeps the clock. */
export abstract class TrackedEngine implements Engine {
  protected abstract readonly tracker: ClipTracker;

  get audioMs(): number {
    return this.tracker.audioMs;
  }

  push(block: PcmBlock): void {
    this.tracker.push(block);
  }

  abstract flush(): void;
  abstract finish(): void;
}
