// What made a session's results, learnt from its own sockets: each upgrade's answer (the
// emulator's `x-svc-emulator` header, absent from the service) and, for a scenario that must
// first hear the audio, the emulator's ping before the session's first event. A connection
// writes what it was told and its label to its own counters; a stream of connections (the
// resilient layer) folds its connections' answers into its own label (src/schema/resultLabel.ts).
import type { IncomingMessage } from 'node:http';
import type WebSocket from 'ws';
import { EMULATOR_HEADER } from '../schema/emulatorHeader.js';
import { labelAfterAlignment, labelOfEmulatorHeader, readEmulatorPing, sameLabel, type EmulatorHeaderLabel, type ResultLabel } from '../schema/resultLabel.js';
import type { ConnectionAnswer, StatsCounters } from './stats.js';

/**
 * The label of a stream after one of its sessions' upgrades was answered with `answer`. Pure.
 * The first session's answer decides (undefined while the emulator must hear the audio first);
 * a session `resumed` after a failure keeps what the stream is (a reconnect does not change
 * what made its results; only what the emulator then finds can add a note).
 */
export function labelAfterUpgrade(current: ResultLabel | undefined, answer: EmulatorHeaderLabel, resumed: boolean): ResultLabel | undefined {
  if (resumed && current !== undefined) return current;
  return answer.label;
}

/**
 * The label of a stream after one of its connections was told `answer` (its upgrade's answer,
 * then what the emulator found of its audio), from the stream's label before that connection
 * (`current`); `resumed`: the connection resumed the stream after a failure. Pure.
 */
export function labelAfterAnswer(current: ResultLabel | undefined, answer: ConnectionAnswer, resumed: boolean): ResultLabel | undefined {
  const upgraded = labelAfterUpgrade(current, answer.header, resumed);
  const follows = answer.header.follows;
  return follows !== undefined && answer.found !== undefined ? labelAfterAlignment(upgraded, follows, answer.found, resumed) : upgraded;
}

/**
 * Follow `ws`'s answers into `counters` (one call per connection, when its socket is made):
 * what it was told (`answer`, read by a stream of connections) and the label it makes of the
 * connection's results on their own (`label`: a plain session's).
 */
export function watchSessionLabel(ws: WebSocket, counters: StatsCounters): void {
  const told = (answer: ConnectionAnswer): void => {
    counters.answer = answer;
    const next = labelAfterAnswer(undefined, answer, false);
    if (!sameLabel(counters.label, next)) counters.label = next;
  };
  ws.once('upgrade', (res: IncomingMessage) => {
    const raw = res.headers[EMULATOR_HEADER];
    told({ header: labelOfEmulatorHeader(Array.isArray(raw) ? raw[0] : raw) });
  });
  ws.on('ping', (data: Buffer) => {
    const header = counters.answer?.header;
    if (header?.follows === undefined) return;
    const found = readEmulatorPing(data.toString('utf8'));
    if (found !== undefined) told({ header, found });
  });
}
