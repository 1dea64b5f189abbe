// What the commands say of where their results come from: the library's label of each session
// (`stats.label`) or batch answer (`resultLabel`), in the one wording of `labelText`
// (src/schema/resultLabel.ts), as a `source:` line. The label is told by the answers themselves
// (the emulator's header and ping), so an emulator started elsewhere says so too.
import { labelOfEmulatorHeader, labelText, type ResultLabel } from '../schema/resultLabel.js';

/** `source: …`: the line a command prints for a label. */
export function sourceLine(label: ResultLabel): string {
  return `source: ${labelText(label)}`;
}

/** The label of the emulator's batch stand-ins, said once per command (each result line carries what was heard). */
export const STAND_IN_LABEL: ResultLabel = labelOfEmulatorHeader('stand-in').label!;

/**
 * What the command's own embedded emulator makes of every session, said before any call
 * (undefined when requests go elsewhere, and while a scenario that follows its audio has not
 * heard a call's). `onWorkers`: the line a primary whose calls run on workers says instead (it
 * sees no session of its own): for such a scenario, that it scripts only the calls whose audio
 * is its own.
 */
export async function embeddedLabel(emulator: boolean, scenario: unknown, onWorkers = false): Promise<ResultLabel | undefined> {
  if (!emulator) return undefined;
  // The emulator's code loads only when the command runs one.
  const { parseScenario, scenarioNote } = await import('../emulator/scenario.js');
  const answer = labelOfEmulatorHeader(scenarioNote(parseScenario(scenario ?? {})));
  if (answer.label !== undefined || !onWorkers) return answer.label;
  const follows = answer.follows!;
  return { source: 'scenario', ...(follows.file ? { file: follows.file } : {}), note: `for calls whose audio is ${follows.audio}; any other gets speech segments only` };
}
