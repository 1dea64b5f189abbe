// The emulator's streaming routes as data: for each streaming endpoint of the one table
// (src/schema/endpoints.ts, which gives its path and model), whether a config frame is
// required and the engine that produces its events; and, in one pure function, the close
// code each handshake refusal gets (§7.2, §7.3).
import type { BatchConfig } from '../schema/config.js';
import { pathAndModel } from '../schema/endpoints.js';
import type { LimitCause, Model } from './accounts.js';
import { ConversationEngine } from './ConversationEngine.js';
import type { Engine, EngineOutput } from './engine.js';
import type { Scenario } from './scenario.js';
import { SyntheticVoiceEngine } from './syntheticVoiceEngine.js';

/** Why a handshake is refused. */
export type RefusalCause = 'invalid_key' | 'no_access' | LimitCause;

export interface StreamingRoute {
  readonly path: string;
  readonly model: Model;
  /**
   * `required`: the first frame must be text (`default` or BatchConfig); audio before it is
   * closed with 1003 (§3). `optional`: a first text frame is taken as config, a first binary
   * frame starts the audio (the contract does not show a config frame for these paths).
   */
  readonly configFrame: 'required' | 'optional';
  /** Whether the analysis engine runs at all for this endpoint's scenario-less sessions. */
  engine(scenario: Scenario, config: 'default' | BatchConfig | undefined, out: EngineOutput): Engine;
}

export const STREAMING_ROUTES: readonly StreamingRoute[] = [
  {
    ...pathAndModel('conversationStreaming'),
    configFrame: 'required',
    engine: (s, c, o) => new ConversationEngine(s, c, o, 'conversation'),
  },
  {
    ...pathAndModel('sttStreaming'),
    configFrame: 'optional',
    engine: (s, c, o) => new ConversationEngine(s, c, o, 'stt'),
  },
  {
    ...pathAndModel('syntheticVoiceDetectionStreaming'),
    configFrame: 'optional',
    engine: (s, _c, o) => new SyntheticVoiceEngine(s, o),
  },
  {
    ...pathAndModel('piiPhiRedactionStreaming'),
    configFrame: 'optional',
    engine: (s, c, o) => new ConversationEngine(s, c, o, 'pii'),
  },
];

export function findStreamingRoute(path: string): StreamingRoute | undefined {
  return STREAMING_ROUTES.find((e) => e.path === path);
}

/**
 * The close code of a handshake refusal, per endpoint:
 * - conversation (and PII, whose codes are not shown): 4001 invalid key, 4003 no model
 *   access, 4030 concurrency, 4029 monthly usage, credit limit or credits;
 * - STT (multilingual transcription streaming, §7.2): 4001, 4003, and 4029 for every limit;
 * - synthetic voice detection (§7.2): 4003 for everything, authentication included.
 */
export function handshakeCloseCode(model: Model, cause: RefusalCause): number {
  if (model === 'synthetic-voice-detection') return 4003;
  if (cause === 'invalid_key') return 4001;
  if (cause === 'no_access') return 4003;
  if (cause === 'concurrency_limit') return model === 'stt' ? 4029 : 4030;
  return 4029;
}
