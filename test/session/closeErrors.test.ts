// What a refused handshake or a close before `done` means, as the pure functions of
// src/session/closeErrors.ts see it: one fact changed at a time. The same paths over real
// sockets are in streamingSession.test.ts and test/faults/matrix.test.ts.
import { describe, expect, it } from 'vitest';
import { ContractError, SessionError } from 'svc-stream';
import { closeError, errorWithoutCloseError, lostWithoutCloseError, refusalError, type CloseFacts } from '../../src/session/closeErrors.js';

const KEY = 'sk-close-errors-0001';
const AUDIO = { read: 3200, sent: 1600, unsent: 1600 };

function facts(over: Partial<CloseFacts> = {}): CloseFacts {
  return {
    code: 1006,
    reason: '',
    errorText: undefined,
    opened: true,
    audioEnded: false,
    socketError: undefined,
    refusal: undefined,
    audio: AUDIO,
    safeUrl: 'ws://127.0.0.1:1/api/svc-2-streaming?api_key=***',
    apiKey: KEY,
    ...over,
  };
}

function asSession(err: unknown): SessionError {
  expect(err).toBeInstanceOf(SessionError);
  return err as SessionError;
}

describe('closeError', () => {
  it('a refused handshake wins over the close code, with the HTTP status and the audio account', () => {
    const e = asSession(closeError(facts({ opened: false, refusal: { status: 403, body: { detail: 'nope' } } })));
    expect(e.status).toBe(403);
    expect(e.audio).toEqual(AUDIO);
    expect(e.message).toContain('the WebSocket handshake failed with HTTP 403');
  });

  it('a refusal the HTTP mapping leaves generic is handshake_rejected, and a key it echoes is masked', () => {
    const e = refusalError({ status: 418, body: `teapot for ${KEY}` }, AUDIO, KEY);
    expect(e.code).toBe('handshake_rejected');
    expect(e.message).not.toContain(KEY);
  });

  it('a close before the socket opened is connection_failed, retryable, naming the masked URL and the socket error', () => {
    const e = asSession(closeError(facts({ opened: false, socketError: new Error(`ECONNREFUSED ${KEY}`) })));
    expect(e.code).toBe('connection_failed');
    expect(e.retryable).toBe(true);
    expect(e.message).toContain('api_key=***');
    expect(e.message).not.toContain(KEY);
  });

  it('a WS_ERR_ socket error after open is malformed_frame, a ContractError as over HTTP; an oversized frame says so', () => {
    const err = Object.assign(new Error('Max payload size exceeded'), { code: 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' });
    const e = closeError(facts({ code: 1009, socketError: err }));
    expect(e).toBeInstanceOf(ContractError);
    expect(e).not.toBeInstanceOf(SessionError);
    expect(e.code).toBe('malformed_frame');
    expect(e.retryable).toBe(false);
    expect(e.closeCode).toBe(1009);
    expect(e.message).toContain('maxServerFrameBytes');
  });

  it('a normal close before done is missing_done, saying whether audio was still being sent', () => {
    const during = asSession(closeError(facts({ code: 1000 })));
    expect(during.code).toBe('missing_done');
    expect(during.message).toContain('audio was still being sent');
    const after = asSession(closeError(facts({ code: 1000, audioEnded: true })));
    expect(after.message).not.toContain('audio was still being sent');
  });

  it('any other close goes by the error event first, then the code', () => {
    expect(asSession(closeError(facts({ code: 4002 }))).code).toBe('invalid_audio');
    expect(asSession(closeError(facts({ code: 1006 }))).code).toBe('connection_lost');
    // After an error event a normal close is not missing_done: the event's text decides.
    const e = asSession(closeError(facts({ code: 1000, errorText: 'Monthly usage limit reached.' })));
    expect(e.code).toBe('monthly_usage_limit');
    expect(e.detail).toBe('Monthly usage limit reached.');
  });

  it('the close reason is masked', () => {
    const e = asSession(closeError(facts({ code: 4001, reason: `bad key ${KEY}` })));
    expect(e.code).toBe('invalid_api_key');
    expect(e.message).not.toContain(KEY);
  });
});

describe('closes that never came', () => {
  it('a lost connection is judged as 1006, an error event as 1011, both with the limit in the message', () => {
    const lost = lostWithoutCloseError(250, undefined, AUDIO);
    expect(lost.code).toBe('connection_lost');
    expect(lost.closeCode).toBe(1006);
    expect(lost.message).toContain('250 ms');
    const err = errorWithoutCloseError(250, 'engine crashed', AUDIO);
    expect(err.detail).toBe('engine crashed');
    expect(err.audio).toEqual(AUDIO);
  });
});

describe('resumable: which failures a new session can cure (the table decides)', () => {
  it('lost, failed or silent connections, 1011, the going-away closes and a 4030 refusal; never an account or input failure; always what retryable says too', async () => {
    const { resumable } = await import('../../src/session/closeErrors.js');
    const { SessionError, ContractError, errorFromClose } = await import('../../src/errors/index.js');
    const yes = [
      new SessionError('connection_lost', 'x', { closeCode: 1006 }),
      new SessionError('connection_failed', 'x'),
      new SessionError('connect_timeout', 'x'),
      new SessionError('heartbeat_timeout', 'x'),
      errorFromClose(1011, '', 'Internal server error'),
      errorFromClose(1011, '', undefined),
      errorFromClose(1012, '', 'Service restarting. Please reconnect.'),
      errorFromClose(1001, '', undefined),
      errorFromClose(4030, '', 'Concurrent request limit reached.'),
    ];
    for (const e of yes) {
      expect(resumable(e), `${e.code} ${e.closeCode}`).toBe(true);
      // The error says what the decision does: nothing that reconnects reads as not retryable.
      expect(e.retryable, `${e.code} ${e.closeCode}`).toBe(true);
    }
    const no = [
      errorFromClose(4001, '', 'Invalid API key.'),
      errorFromClose(4029, '', 'Insufficient credits.'),
      errorFromClose(4029, '', 'Monthly usage limit reached.'),
      errorFromClose(4002, '', 'Invalid input audio'),
      errorFromClose(1003, '', 'Invalid configuration.'),
      errorFromClose(1000, '', undefined),
      new SessionError('done_timeout', 'x'),
      new SessionError('backpressure_overflow', 'x'),
      new ContractError('malformed_frame', 'x'),
      new Error('not ours'),
    ];
    for (const e of no) expect(resumable(e), String((e as { code?: string }).code)).toBe(false);
  });
});
