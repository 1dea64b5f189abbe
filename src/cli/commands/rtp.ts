// `svc-stream rtp`: receive RTP calls and analyse each one live.
import type { Command } from '../command.js';

export const rtpCommands: readonly Command[] = [];
