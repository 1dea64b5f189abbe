// Where a command's results come from, said wherever they are shown: the real service, an
// emulator playing a scenario (scripted, not an analysis of this audio), an emulator without
// one (speech segments only: the emulator does not transcribe), or the emulator's batch
// stand-ins. Told by the answers themselves (the emulator's `x-svc-emulator` header, read off
// each WebSocket upgrade and each HTTP answer), so an emulator started elsewhere says so too.
import { basename } from 'node:path';
import WebSocket, { type ClientOptions } from 'ws';
import { EMULATOR_HEADER } from '../resultSource.js';
import type { WebSocketFactory } from '../session/streamingSession.js';

/** `service`, `scenario`, `speech-segments-only` or `emulator` (batch stand-ins): the `source` of `--json` output. */
export type CommandSource = 'service' | 'scenario' | 'speech-segments-only' | 'emulator';

/** What the command's own embedded emulator plays: undefined when requests go elsewhere (then the answers tell). */
export function embeddedSource(emulator: boolean, scenario: { readonly transcript?: unknown[]; readonly timeline?: unknown[]; readonly steps?: unknown[] } | undefined): CommandSource | undefined {
  if (!emulator) return undefined;
  const scripted = scenario !== undefined && [scenario.transcript, scenario.timeline, scenario.steps].some((l) => Array.isArray(l) && l.length > 0);
  return scripted ? 'scenario' : 'speech-segments-only';
}

/** The source an emulator header value names (absent: the service). */
export function sourceOfHeader(note: string | undefined): CommandSource {
  if (note === undefined) return 'service';
  const word = note.split(/[;,\s]/, 1)[0];
  return word === 'scenario' ? 'scenario' : word === 'speech-segments-only' ? 'speech-segments-only' : 'emulator';
}

/** One short line for people (it fits a terminal's summary row): what the results are, and which scenario. */
export function sourceNote(source: CommandSource, scenarioPath?: string): string {
  switch (source) {
    case 'service':
      return 'source: the service';
    case 'scenario':
      return `source: scenario${scenarioPath ? ` ${basename(scenarioPath)}` : ''} (scripted results, not an analysis of this audio)`;
    case 'speech-segments-only':
      return 'source: emulator, speech segments only (no transcription: clips have no text; try --scenario)';
    case 'emulator':
      return "source: emulator stand-ins (computed from the signal by the emulator, not the service's models)";
  }
}

/** What the streaming sessions of a command have been answered by, learnt from their upgrades. */
export interface SourceWatch {
  /** Pass as the sessions' `webSocketFactory`: it reads each upgrade's answer. */
  readonly webSocketFactory: WebSocketFactory;
  /** The source, once a session has been answered. */
  readonly source: CommandSource | undefined;
}

/**
 * Watch the upgrades of a command's sessions; `onFirst` is called once with the source, at
 * once when it is `known` (the command's own embedded emulator), else when the first session
 * is answered (before any event of it).
 */
export function watchSource(onFirst?: (source: CommandSource) => void, known?: CommandSource): SourceWatch {
  let source: CommandSource | undefined = known;
  if (known !== undefined) onFirst?.(known);
  return {
    webSocketFactory: (url: string, options: ClientOptions) => {
      const ws = new WebSocket(url, options);
      ws.once('upgrade', (res) => {
        const header = res.headers[EMULATOR_HEADER];
        const next = sourceOfHeader(Array.isArray(header) ? header[0] : header);
        const first = source === undefined;
        source = next;
        if (first) onFirst?.(next);
      });
      return ws;
    },
    get source() {
      return source;
    },
  };
}
