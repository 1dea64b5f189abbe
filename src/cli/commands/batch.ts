// `svc-stream events|emotion|presets`: batch calls from the command line.
import type { Command } from '../command.js';

export const batchCommands: readonly Command[] = [];
