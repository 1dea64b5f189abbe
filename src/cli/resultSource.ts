// Where a command's results come from, said wherever they are shown: the real service, an
// emulator playing a scenario (scripted, not an analysis of this audio), or an emulator
// without one (speech segments only: the emulator does not transcribe).
import { basename } from 'node:path';

/** `service`, `scenario` or `speech-segments-only`: the `source` of `--json`'s state line. */
export type ResultSource = 'service' | 'scenario' | 'speech-segments-only';

/** The source of a command's results: no emulator is the service; an emulator plays a scenario or finds speech segments only. */
export function resultSource(emulator: boolean, scenario: boolean): ResultSource {
  return !emulator ? 'service' : scenario ? 'scenario' : 'speech-segments-only';
}

/** One short line for people (it fits a terminal's summary row): what the results are, and which scenario. */
export function resultSourceNote(source: ResultSource, scenarioPath?: string): string {
  switch (source) {
    case 'service':
      return 'source: the service';
    case 'scenario':
      return `source: scenario${scenarioPath ? ` ${basename(scenarioPath)}` : ''} (scripted results, not an analysis of this audio)`;
    case 'speech-segments-only':
      return 'source: emulator, speech segments only (no transcription: clips have no text; try --scenario)';
  }
}
