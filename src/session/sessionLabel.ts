// What made a session's results, learnt from its own sockets: each upgrade's answer (the
// emulator's `x-svc-emulator` header, absent from the service) and, for a scenario that must
// first hear the audio, the emulator's ping before the session's first event. Written to the
// session's `stats.label`, which views, the relay and the fleet read (src/schema/resultLabel.ts).
import type { IncomingMessage } from 'node:http';
import type WebSocket from 'ws';
import { EMULATOR_HEADER } from '../schema/emulatorHeader.js';
import { labelAfterAlignment, labelOfEmulatorHeader, readEmulatorPing, sameLabel, type EmulatorHeaderLabel, type ResultLabel } from '../schema/resultLabel.js';
import type { SessionStats } from './stats.js';

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
 * Follow `ws`'s answers into `stats.label`: one call per session, when its socket is made (a
 * session made while its stream reconnects, `stats.reconnectingSince` set, is a resume).
 */
export function watchSessionLabel(ws: WebSocket, stats: SessionStats): void {
  const resumed = stats.reconnectingSince !== undefined;
  let answer: EmulatorHeaderLabel | undefined;
  const set = (next: ResultLabel | undefined): void => {
    if (!sameLabel(stats.label, next)) stats.label = next;
  };
  ws.once('upgrade', (res: IncomingMessage) => {
    const raw = res.headers[EMULATOR_HEADER];
    answer = labelOfEmulatorHeader(Array.isArray(raw) ? raw[0] : raw);
    set(labelAfterUpgrade(stats.label, answer, resumed));
  });
  ws.on('ping', (data: Buffer) => {
    const follows = answer?.follows;
    if (follows === undefined) return;
    const found = readEmulatorPing(data.toString('utf8'));
    if (found !== undefined) set(labelAfterAlignment(stats.label, follows, found, resumed));
  });
}
