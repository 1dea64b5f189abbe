import { describe, expect, it } from 'vitest';
import { NULL_UUID, type AudioHookMedia } from '../../src/schema/audioHook.js';
import { audioHookReducer, chooseMedia, initialAudioHookState, type AudioHookAction, type AudioHookInput, type AudioHookRules, type AudioHookState } from '../../src/telephony/audioHookState.js';

const ID = '30b0e395-84d3-4570-ac13-9a62d8f514c0';
const RULES: AudioHookRules = { formats: ['PCMU', 'L16'], channels: ['external', 'internal'], maxFillSamples: 60 * 8000 };
const STEREO: AudioHookMedia = { type: 'audio', format: 'PCMU', channels: ['external', 'internal'], rate: 8000 };
const OPEN = {
  organizationId: 'd7934305-0972-4844-938e-9060eef73d05',
  conversationId: '090eaa2f-72fa-480a-83e0-8667ff89c0ec',
  participant: { id: '883efee8-3d6c-4537-b500-6d7ca4b92fa0', ani: '+1-555-555-1234', aniName: 'John Doe', dnis: '+1-800-555-6789' },
  media: [STEREO, { ...STEREO, channels: ['external'] }, { ...STEREO, channels: ['internal'] }],
  language: 'en-US',
};

/** A client message as the reference client builds it. */
function msg(seq: number, type: string, parameters: object, extra: { serverseq?: number; position?: string; id?: string } = {}): AudioHookInput {
  const json = { version: '2', id: extra.id ?? ID, type, seq, serverseq: extra.serverseq ?? 0, position: extra.position ?? 'PT0S', parameters };
  return { type: 'text', json, bytes: JSON.stringify(json).length };
}

/** Step `inputs` from `state`, returning each step's actions and the last state. */
function run(inputs: readonly AudioHookInput[], state: AudioHookState = initialAudioHookState(ID), rules: AudioHookRules = RULES) {
  const steps: AudioHookAction[][] = [];
  for (const input of inputs) {
    const step = audioHookReducer(state, input, rules);
    state = step.state;
    steps.push([...step.actions]);
  }
  return { state, steps, last: steps[steps.length - 1]! };
}

/** The messages sent in `actions`, as `type seq/clientseq`. */
const sent = (actions: readonly AudioHookAction[]) => actions.flatMap((a) => (a.kind === 'send' ? [`${a.message.type} ${a.message.seq}/${a.message.clientseq}`] : []));
const disconnectInfo = (actions: readonly AudioHookAction[]) => actions.flatMap((a) => (a.kind === 'send' && a.message.type === 'disconnect' ? [a.message.parameters] : []))[0];
const opened = [msg(1, 'open', OPEN)];

describe('audioHookReducer: the protocol step by step', () => {
  it('open → opened with the two-channel offer returned as offered, and the call starts', () => {
    const { state, last } = run(opened);
    expect(sent(last)).toEqual(['opened 1/1']);
    expect(last[0]).toMatchObject({ kind: 'send', message: { version: '2', id: ID, parameters: { media: [STEREO], startPaused: false } } });
    expect(last[1]).toMatchObject({ kind: 'start', media: STEREO });
    expect(state).toMatchObject({ phase: 'active', frameBytes: 2, probe: false });
  });

  it.each([
    ['ping → pong, its clientseq the ping’s seq', [msg(2, 'ping', {}, { serverseq: 1 })], ['pong 2/2'], 'active'],
    ['update → updated, and the language said', [msg(2, 'update', { language: 'fr-FR' }, { serverseq: 1 })], ['updated 2/2'], 'active'],
    ['close → closed, the call ends', [msg(2, 'close', { reason: 'end' }, { serverseq: 1 })], ['closed 2/2'], 'closed'],
    ['paused: nothing sent, the phase is paused', [msg(2, 'paused', {}, { serverseq: 1 })], [], 'paused'],
    ['a client error: said, nothing sent', [msg(2, 'error', { code: 500, message: 'tough stuff' }, { serverseq: 1 })], [], 'active'],
  ] as const)('%s', (_name, inputs, expected, phase) => {
    const { state, last } = run([...opened, ...inputs]);
    expect(sent(last)).toEqual(expected);
    expect(state.phase).toBe(phase);
  });

  it('update says the new language; close says how the call ended', () => {
    const { steps } = run([...opened, msg(2, 'update', { language: 'fr-FR' }, { serverseq: 1 }), msg(3, 'close', { reason: 'end' }, { serverseq: 2 })]);
    expect(steps[1]).toContainEqual({ kind: 'notice', notice: { type: 'update', language: 'fr-FR' } });
    expect(steps[2]).toContainEqual({ kind: 'end', end: { how: 'closed', reason: 'end' } });
    expect(steps[2]).toContainEqual({ kind: 'await-client' });
  });

  it('audio while active is taken, in whole sample frames', () => {
    const { state, last } = run([...opened, { type: 'binary', bytes: 3200 }]);
    expect(last).toEqual([{ kind: 'audio' }]);
    expect(state.samples).toBe(1600);
  });

  it('a pause and its resume: the discarded span is filled with silence and said', () => {
    const { state, steps } = run([
      ...opened,
      { type: 'binary', bytes: 16_000 }, // 1 s
      msg(2, 'paused', {}, { serverseq: 1, position: 'PT1S' }),
      msg(3, 'resumed', { start: 'PT1S', discarded: 'PT2.5S' }, { serverseq: 1, position: 'PT3.5S' }),
      { type: 'binary', bytes: 1600 },
    ]);
    expect(steps[2]).toEqual([{ kind: 'notice', notice: { type: 'paused', atMs: 1000 } }]);
    expect(steps[3]).toEqual([
      { kind: 'fill', samples: 20_000 },
      { kind: 'notice', notice: { type: 'resumed', gap: { cause: 'paused', atMs: 1000, durationMs: 2500, filled: true } } },
    ]);
    expect(steps[4]).toEqual([{ kind: 'audio' }]);
    // The session's time is the call's: 1 s + 2.5 s paused + 0.1 s.
    expect(state.samples).toBe(8000 + 20_000 + 800);
  });

  it('a gap longer than maxFillSamples is counted and said, not filled', () => {
    const { last, state } = run([...opened, msg(2, 'discarded', { start: 'PT0S', discarded: 'PT90S' }, { serverseq: 1 })]);
    expect(last).toEqual([{ kind: 'notice', notice: { type: 'discarded', gap: { cause: 'discarded', atMs: 0, durationMs: 90_000, filled: false } } }]);
    expect(state.samples).toBe(0);
  });

  it('silence is earned: gaps are filled only while they stay within the audio received plus one bound', () => {
    const rules = { ...RULES, maxFillSamples: 8000 };
    const { steps, state } = run(
      [
        ...opened,
        { type: 'binary', bytes: 8000 }, // 0.5 s
        msg(2, 'discarded', { start: 'PT0.5S', discarded: 'PT1S' }, { serverseq: 1 }), // 1 s ≤ 0.5 s + 1 s: filled
        msg(3, 'discarded', { start: 'PT1.5S', discarded: 'PT1S' }, { serverseq: 1 }), // 2 s > 0.5 s + 1 s: not filled
      ],
      undefined,
      rules,
    );
    expect(steps[2]![0]).toEqual({ kind: 'fill', samples: 8000 });
    expect(steps[3]).toEqual([{ kind: 'notice', notice: { type: 'discarded', gap: { cause: 'discarded', atMs: 1500, durationMs: 1000, filled: false } } }]);
    expect(state).toMatchObject({ samples: 4000 + 8000, filled: 8000 });
  });

  it('a close while paused: the pause to the end is counted, not filled', () => {
    const { last } = run([...opened, msg(2, 'paused', {}, { serverseq: 1, position: 'PT0S' }), msg(3, 'close', { reason: 'end' }, { serverseq: 1, position: 'PT4S' })]);
    expect(last).toContainEqual({ kind: 'notice', notice: { type: 'resumed', gap: { cause: 'paused', atMs: 0, durationMs: 4000, filled: false } } });
    expect(last).toContainEqual({ kind: 'end', end: { how: 'closed', reason: 'end' } });
  });

  it.each([
    ['a sequence gap', [msg(3, 'ping', {}, { serverseq: 1 })], /seq 3 where 2 was due/],
    ['a serverseq ahead of what was sent', [msg(2, 'ping', {}, { serverseq: 5 })], /serverseq 5 is ahead/],
    ['another session’s id', [msg(2, 'ping', {}, { serverseq: 1, id: '11111111-2222-4333-8444-555555555555' })], /is not the session's/],
    ['an unknown message type', [msg(2, 'dance', {}, { serverseq: 1 })], /'dance' is not a client message/],
    ['bad parameters', [msg(2, 'resumed', { start: 'soon' }, { serverseq: 1 })], /'resumed' with bad parameters/],
    ['not JSON', [{ type: 'text', json: undefined, bytes: 5 }], /not JSON/],
    ['not a client message', [{ type: 'text', json: { hello: 1 }, bytes: 11 }], /not a well-formed client message/],
    ['a text message over 64 KiB', [{ type: 'text', json: {}, bytes: 65_536 }], /65536 bytes \(at most 65535\)/],
    ['audio while paused', [msg(2, 'paused', {}, { serverseq: 1 }), { type: 'binary', bytes: 320 }], /audio in state paused/],
    ['audio that is not whole sample frames', [{ type: 'binary', bytes: 321 }], /321 bytes is not whole samples/],
  ] as const)('%s ends the session with disconnect (reason error) and ends the call', (_name, inputs, info) => {
    const { state, last } = run([...opened, ...inputs]);
    expect(disconnectInfo(last)).toEqual({ reason: 'error', info: expect.stringMatching(info) });
    expect(last).toContainEqual({ kind: 'end', end: { how: 'disconnected', reason: 'error', info: expect.stringMatching(info) } });
    expect(last).toContainEqual({ kind: 'await-client' });
    expect(state.phase).toBe('disconnecting');
  });

  it('audio before open ends the session: binary audio only while active', () => {
    const { last } = run([{ type: 'binary', bytes: 320 }]);
    expect(disconnectInfo(last)).toEqual({ reason: 'error', info: 'audio in state awaiting-open (binary audio only while active)' });
  });

  it('after a disconnect only the close matters: answered closed, the end not said twice', () => {
    const { steps, state } = run([...opened, msg(3, 'ping', {}, { serverseq: 1 }), msg(2, 'ping', {}, { serverseq: 2 }), { type: 'binary', bytes: 320 }, msg(3, 'close', { reason: 'disconnect' }, { serverseq: 2 })]);
    expect(steps[2]).toEqual([{ kind: 'ignored', reason: "'ping' after the session ended" }]);
    expect(steps[3]).toEqual([{ kind: 'ignored', reason: 'audio after the session ended' }]);
    expect(sent(steps[4]!)).toEqual(['closed 3/3']);
    expect(steps[4]!.some((a) => a.kind === 'end')).toBe(false);
    expect(state.phase).toBe('closed');
  });

  it('the socket closing before a close transaction: the call ends lost; after one, nothing more', () => {
    expect(run([...opened, { type: 'socket-closed' }]).last).toEqual([{ kind: 'end', end: { how: 'lost' } }]);
    expect(run([...opened, msg(2, 'close', { reason: 'end' }, { serverseq: 1 }), { type: 'socket-closed' }]).last).toEqual([]);
  });

  it('a timeout once opened (a probe kept open) changes nothing', () => {
    expect(run([...opened, { type: 'timeout' }]).last).toEqual([]);
  });

  it('no open in time: disconnect; a client that does not close when asked: the socket goes', () => {
    const { steps } = run([{ type: 'timeout' }, { type: 'timeout' }]);
    expect(disconnectInfo(steps[0]!)).toEqual({ reason: 'error', info: 'no open message in time' });
    expect(steps[1]).toEqual([{ kind: 'close-socket' }]);
  });

  it('this server asks: pause, resume, reconnect (a drain), disconnect (a shutdown)', () => {
    const { steps } = run([...opened, { type: 'pause' }, { type: 'resume' }, { type: 'reconnect', info: 'draining' }, { type: 'disconnect', reason: 'error', info: 'the server is shutting down' }]);
    expect(steps.slice(1).map(sent)).toEqual([['pause 2/1'], ['resume 3/1'], ['reconnect 4/1'], ['disconnect 5/1']]);
  });

  it('a connection probe (the null conversation) is opened and makes no call', () => {
    const { last, state } = run([msg(1, 'open', { ...OPEN, conversationId: NULL_UUID })]);
    expect(sent(last)).toEqual(['opened 1/1']);
    expect(last.some((a) => a.kind === 'start')).toBe(false);
    expect(state.probe).toBe(true);
  });

  it('media none of which is taken: disconnect naming what was offered', () => {
    const { last } = run([msg(1, 'open', { ...OPEN, media: [{ type: 'audio', format: 'opus', channels: ['external'], rate: 48000 }] })]);
    expect(disconnectInfo(last)).toEqual({ reason: 'error', info: 'none of the media offered (opus/48000 external) is taken: PCMU or L16 at 8000 Hz, channels external and/or internal' });
  });

  it('without a session id header, the first message names the session', () => {
    const { state, last } = run(opened, initialAudioHookState(undefined));
    expect(state.id).toBe(ID);
    expect(last[0]).toMatchObject({ message: { id: ID } });
  });
});

describe('chooseMedia', () => {
  const m = (format: string, channels: string[], rate = 8000): AudioHookMedia => ({ type: 'audio', format, channels, rate });
  it.each([
    ['both sides first, in the client’s order', [m('PCMU', ['external']), m('PCMU', ['external', 'internal'])], RULES, m('PCMU', ['external', 'internal'])],
    ['both sides in the other order (returned as offered)', [m('PCMU', ['internal', 'external']), m('PCMU', ['internal'])], RULES, m('PCMU', ['internal', 'external'])],
    ['L16 when offered first', [m('L16', ['external', 'internal']), m('PCMU', ['external', 'internal'])], RULES, m('L16', ['external', 'internal'])],
    ['PCMU only when L16 is not taken', [m('L16', ['external', 'internal']), m('PCMU', ['external', 'internal'])], { ...RULES, formats: ['PCMU'] }, m('PCMU', ['external', 'internal'])],
    ['one side when both are not offered', [m('PCMU', ['internal'])], RULES, m('PCMU', ['internal'])],
    ['only the side wanted', [m('PCMU', ['external', 'internal']), m('PCMU', ['external'])], { ...RULES, channels: ['external'] }, m('PCMU', ['external'])],
    ['nothing at another rate or format', [m('PCMU', ['external'], 16000), m('opus', ['external'])], RULES, undefined],
  ] as const)('%s', (_name, offers, rules, expected) => {
    expect(chooseMedia(offers, rules as AudioHookRules)).toEqual(expected);
  });
});
