// What made a result, as pure rules (src/schema/resultLabel.ts, src/session/sessionLabel.ts):
// the emulator's header words read into a label, what its ping says of a session's audio, how a
// stream's label moves from its first session to a resume, and the one line people read.
import { describe, expect, it } from 'vitest';
import {
  emulatorPingText,
  labelAfterAlignment,
  labelOfEmulatorHeader,
  labelText,
  readEmulatorPing,
  sameLabel,
  SPEECH_SEGMENTS_NOTE,
  type EmulatorAlignment,
  type ResultLabel,
} from '../../src/schema/resultLabel.js';
import { labelAfterUpgrade } from '../../src/session/sessionLabel.js';

describe('the emulator header', () => {
  it.each<[string | undefined, ReturnType<typeof labelOfEmulatorHeader>]>([
    [undefined, { label: { source: 'service' } }],
    ['speech-segments-only', { label: { source: 'emulator', note: SPEECH_SEGMENTS_NOTE } }],
    ['scenario', { label: { source: 'scenario' } }],
    ['scenario; file=call.scenario.json', { label: { source: 'scenario', file: 'call.scenario.json' } }],
    ['scenario; file=my%3Bcall.json; audio=call.wav', { label: undefined, follows: { file: 'my;call.json', audio: 'call.wav' } }],
    ['recording; file=desk-7.ndjson', { label: { source: 'recording', file: 'desk-7.ndjson' } }],
    ['stand-in', { label: { source: 'emulator', note: "stand-ins computed from the signal, not the service's models" } }],
    ['stand-in; heard=speech%207.1s; not-measured=emotion', { label: { source: 'emulator', note: "stand-ins computed from the signal, not the service's models (heard: speech 7.1s; not measured: emotion)" } }],
    // A word from a newer emulator is still the emulator's.
    ['something-new', { label: { source: 'emulator', note: "stand-ins computed from the signal, not the service's models" } }],
  ])('%s', (header, expected) => {
    expect(labelOfEmulatorHeader(header)).toEqual(expected);
  });
});

describe('the ping that says what a session following its scenario\'s audio found', () => {
  it('round-trips, fits a control frame, and any other ping (a heartbeat) is none', () => {
    for (const a of [{ aligned: true, offsetMs: 0 }, { aligned: true, offsetMs: 14_300 }, { aligned: false }] as EmulatorAlignment[]) {
      const text = emulatorPingText(a);
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(125);
      expect(readEmulatorPing(text)).toEqual(a);
    }
    for (const other of ['', 'ping', 'svc-emulator:aligned=x', 'svc-emulator:']) expect(readEmulatorPing(other)).toBeUndefined();
  });
});

describe('a stream\'s label, session by session', () => {
  const follows = { file: 'call.scenario.json', audio: 'call.wav' };
  const scripted: ResultLabel = { source: 'scenario', file: 'call.scenario.json' };
  const own: ResultLabel = { source: 'emulator', note: 'speech segments only: this audio is not call.wav, which scenario call.scenario.json scripts' };
  const resumedNote = 'a resumed segment could not be found in call.wav: speech segments only from there';
  it.each<[string, ResultLabel | undefined, EmulatorAlignment, boolean, ResultLabel]>([
    ['the first session found at its top: scripted', undefined, { aligned: true, offsetMs: 0 }, false, scripted],
    ['the first session not found (own audio): speech segments only, saying why, no resume note', undefined, { aligned: false }, false, own],
    ['a resume found: nothing changes', scripted, { aligned: true, offsetMs: 14_300 }, true, scripted],
    ['a resume not found: the label stands, with a note that the script stops there', scripted, { aligned: false }, true, { ...scripted, note: resumedNote }],
    ['own audio resumed: still own audio', own, { aligned: false }, true, own],
  ])('%s', (_name, current, found, resumed, expected) => {
    expect(labelAfterAlignment(current, follows, found, resumed)).toEqual(expected);
  });

  it('an upgrade decides the first session\'s label; a resume keeps the stream\'s', () => {
    expect(labelAfterUpgrade(undefined, labelOfEmulatorHeader('scenario; file=a.json'), false)).toEqual({ source: 'scenario', file: 'a.json' });
    expect(labelAfterUpgrade({ source: 'scenario', file: 'a.json' }, labelOfEmulatorHeader('scenario; file=a.json; audio=a.wav'), false)).toBeUndefined();
    expect(labelAfterUpgrade({ source: 'scenario', file: 'a.json', note: 'n' }, labelOfEmulatorHeader('scenario; file=a.json'), true)).toEqual({ source: 'scenario', file: 'a.json', note: 'n' });
  });
});

describe('labelText, the one line every view shows', () => {
  it.each<[ResultLabel, string]>([
    [{ source: 'service' }, 'the service'],
    [{ source: 'emulator', note: SPEECH_SEGMENTS_NOTE }, `emulator: ${SPEECH_SEGMENTS_NOTE}`],
    [{ source: 'scenario', file: 'call.scenario.json' }, 'scenario call.scenario.json (scripted results, not an analysis of this audio)'],
    [{ source: 'scenario', file: 'call.scenario.json', note: 'x' }, 'scenario call.scenario.json (scripted results, not an analysis of this audio); x'],
    [{ source: 'recording', file: 'desk.ndjson' }, 'recording desk.ndjson (its events replayed, not an analysis of this audio)'],
  ])('%j', (label, text) => {
    expect(labelText(label)).toBe(text);
  });

  it('sameLabel compares what a label says', () => {
    expect(sameLabel({ source: 'scenario', file: 'a' }, { source: 'scenario', file: 'a' })).toBe(true);
    expect(sameLabel({ source: 'scenario', file: 'a' }, { source: 'scenario', file: 'a', note: 'n' })).toBe(false);
    expect(sameLabel(undefined, undefined)).toBe(true);
    expect(sameLabel({ source: 'service' }, undefined)).toBe(false);
  });
});
