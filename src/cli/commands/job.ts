// `svc-stream job submit|status`: the orchestration API from the command line.
import type { Command } from '../command.js';

export const jobCommands: readonly Command[] = [];
