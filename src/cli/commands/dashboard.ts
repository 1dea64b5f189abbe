// `svc-stream dashboard [FILE]`: a live view of a session in the browser.
import type { Command } from '../command.js';

export const dashboardCommands: readonly Command[] = [];
