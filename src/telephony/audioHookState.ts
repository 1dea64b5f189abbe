// The AudioHook protocol's rules as a pure reducer: where a session is (waiting for `open`,
// active, paused, closing), the sequence numbers both ways, which message is taken when, and
// what each step sends and does. No I/O and no timers: the connection applies the actions.
import {
  AUDIOHOOK_CLIENT_PARAMETERS,
  AUDIOHOOK_VERSION,
  AudioHookClientBaseSchema,
  durationSeconds,
  isClientType,
  NULL_UUID,
  type AudioHookChannel,
  type AudioHookMedia,
  type AudioHookOpenParameters,
  type AudioHookServerMessage,
  type AudioHookServerType,
} from '../schema/audioHook.js';

/** The audio formats AudioHook offers, as a server takes them. */
export type AudioHookFormat = 'PCMU' | 'L16';

/** What the connection's settings tell the reducer. */
export interface AudioHookRules {
  /** Formats taken, in no order (the client's order of preference wins). */
  readonly formats: readonly AudioHookFormat[];
  /** The channels wanted: a two-channel offer of both is taken first, else one of them alone. */
  readonly channels: readonly AudioHookChannel[];
  /** Longest gap (a pause, audio the client discarded) filled with silence, in samples; longer ones are counted, not filled. */
  readonly maxFillSamples: number;
}

/** The largest text message the protocol allows, bytes. */
export const AUDIOHOOK_MAX_TEXT_BYTES = 65_535;
/** The sample rate every AudioHook format has. */
export const AUDIOHOOK_RATE = 8000;

/**
 * Where a session is:
 * - `awaiting-open`: connected, no `open` yet;
 * - `active`: opened, audio flows;
 * - `paused`: the client said `paused` (no audio may come until `resumed`);
 * - `disconnecting`: this server sent `disconnect` and waits for the client's `close`;
 * - `closed`: `closed` was sent, the client is to close the socket;
 * - `ended`: the socket is gone.
 */
export type AudioHookPhase = 'awaiting-open' | 'active' | 'paused' | 'disconnecting' | 'closed' | 'ended';

/** How a session's call ended. */
export type AudioHookEnd =
  /** The close transaction: the client sent `close` (its `reason`: `end`, `error`, `disconnect`, `reconnect`) and was answered `closed`. */
  | { readonly how: 'closed'; readonly reason: string }
  /** This server sent `disconnect` (a protocol error, a refusal, a shutdown). */
  | { readonly how: 'disconnected'; readonly reason: 'completed' | 'unauthorized' | 'error'; readonly info: string }
  /** The socket closed before a close transaction. */
  | { readonly how: 'lost' };

/** A gap in the call's audio: a pause, or audio the client discarded. */
export interface AudioHookGap {
  readonly cause: 'paused' | 'discarded';
  /** Where it is in the session's audio, ms. */
  readonly atMs: number;
  readonly durationMs: number;
  /** Filled with silence (the session's time stays the call's), or not (longer than `maxGapFillMs`, or at the end). */
  readonly filled: boolean;
}

/** What the protocol says along the way, beside the audio. */
export type AudioHookNotice =
  | { readonly type: 'paused'; readonly atMs: number }
  | { readonly type: 'resumed'; readonly gap: AudioHookGap }
  | { readonly type: 'discarded'; readonly gap: AudioHookGap }
  | { readonly type: 'update'; readonly language: string | undefined }
  | { readonly type: 'client-error'; readonly code: number; readonly message: string }
  | { readonly type: 'ended'; readonly end: AudioHookEnd };

/** What a step makes the connection do. */
export type AudioHookAction =
  | { readonly kind: 'send'; readonly message: AudioHookServerMessage }
  /** `opened` was sent: the call starts (not for a connection probe). */
  | { readonly kind: 'start'; readonly open: AudioHookOpenParameters; readonly media: AudioHookMedia }
  /** Take the binary frame's bytes as the call's audio. */
  | { readonly kind: 'audio' }
  /** Add `samples` (per channel) of silence to the call's audio. */
  | { readonly kind: 'fill'; readonly samples: number }
  | { readonly kind: 'notice'; readonly notice: AudioHookNotice }
  /** A message of no use here, let go (counted). */
  | { readonly kind: 'ignored'; readonly reason: string }
  /** The session's end is known (said once): the call's audio ends, if it has a call. */
  | { readonly kind: 'end'; readonly end: AudioHookEnd }
  /** Wait a while for the client (its `close`, its socket's close), then close the socket. */
  | { readonly kind: 'await-client' }
  | { readonly kind: 'close-socket' };

export interface AudioHookState {
  readonly phase: AudioHookPhase;
  /** The session's id: the `Audiohook-Session-Id` header, or the first message's id. */
  readonly id: string | undefined;
  /** The last `seq` this server sent. */
  readonly seq: number;
  /** The last `seq` the client sent. */
  readonly clientseq: number;
  /** The media chosen in `opened`. */
  readonly media: AudioHookMedia | undefined;
  /** Bytes per sample frame of the chosen media (every channel). */
  readonly frameBytes: number;
  /** A connection probe: opened, but no call. */
  readonly probe: boolean;
  /** Samples per channel in the call's audio: received and filled. */
  readonly samples: number;
  /** Of which filled with silence. */
  readonly filled: number;
  /** Samples of the client's position where its pause began. */
  readonly pausedAt: number | undefined;
  /** A `pause` this server sent is not yet answered. */
  readonly pauseAsked: boolean;
}

/** A step's result: the next state and what to do. */
export interface AudioHookStep {
  readonly state: AudioHookState;
  readonly actions: readonly AudioHookAction[];
}

/** What happens to a session. */
export type AudioHookInput =
  /** A text message: its parsed JSON (undefined when it is not JSON) and its length in bytes. */
  | { readonly type: 'text'; readonly json: unknown; readonly bytes: number }
  /** A binary message (audio) of `bytes` bytes. */
  | { readonly type: 'binary'; readonly bytes: number }
  /** This server asks the client to pause, or to resume. */
  | { readonly type: 'pause' }
  | { readonly type: 'resume' }
  /** This server asks the client to reconnect (a drain: another server takes the session over). */
  | { readonly type: 'reconnect'; readonly info: string }
  /** This server ends the session. */
  | { readonly type: 'disconnect'; readonly reason: 'completed' | 'unauthorized' | 'error'; readonly info: string }
  /** The client did not do in time what it was waited for (`await-client`). */
  | { readonly type: 'timeout' }
  | { readonly type: 'socket-closed' };

/** A session just connected: `id` from the `Audiohook-Session-Id` header, when it has one. */
export function initialAudioHookState(id: string | undefined): AudioHookState {
  return { phase: 'awaiting-open', id, seq: 0, clientseq: 0, media: undefined, frameBytes: 0, probe: false, samples: 0, filled: 0, pausedAt: undefined, pauseAsked: false };
}

const NONE: readonly AudioHookAction[] = [];

function msOf(samples: number): number {
  return Math.round((samples * 1000) / AUDIOHOOK_RATE);
}

function samplesOf(duration: string): number {
  return Math.round(durationSeconds(duration) * AUDIOHOOK_RATE);
}

/**
 * The next state of a session after `input`, and what to do. An input that does not apply to
 * the phase changes nothing (a message after the end, audio after a disconnect).
 */
export function audioHookReducer(state: AudioHookState, input: AudioHookInput, rules: AudioHookRules): AudioHookStep {
  if (state.phase === 'ended') return { state, actions: NONE };
  switch (input.type) {
    case 'text':
      return onText(state, input.json, input.bytes, rules);
    case 'binary':
      return onAudio(state, input.bytes);
    case 'pause':
    case 'resume':
      if (state.phase !== 'active' && state.phase !== 'paused') return { state, actions: NONE };
      return send({ ...state, pauseAsked: input.type === 'pause' }, input.type, {});
    case 'reconnect':
      if (state.phase !== 'active' && state.phase !== 'paused') return { state, actions: NONE };
      return send(state, 'reconnect', { info: input.info });
    case 'disconnect':
      return disconnect(state, input.reason, input.info);
    case 'timeout':
      if (state.phase === 'awaiting-open') return disconnect(state, 'error', 'no open message in time');
      // Opened meanwhile: nothing was being waited for.
      if (state.phase === 'active' || state.phase === 'paused') return { state, actions: NONE };
      // The client did not close: the socket goes (the call ended when the wait began).
      return { state: { ...state, phase: 'ended' }, actions: [{ kind: 'close-socket' }] };
    case 'socket-closed': {
      const ended: AudioHookState = { ...state, phase: 'ended' };
      // After a disconnect or a close transaction, the end was said already.
      if (state.phase === 'disconnecting' || state.phase === 'closed') return { state: ended, actions: NONE };
      return { state: ended, actions: [{ kind: 'end', end: { how: 'lost' } }] };
    }
  }
}

/** Send a server message: the next seq, the last clientseq. */
function send(state: AudioHookState, type: AudioHookServerType, parameters: Record<string, unknown>, more: readonly AudioHookAction[] = NONE): AudioHookStep {
  const seq = state.seq + 1;
  const message: AudioHookServerMessage = { version: AUDIOHOOK_VERSION, id: state.id ?? NULL_UUID, type, seq, clientseq: state.clientseq, parameters };
  return { state: { ...state, seq }, actions: [{ kind: 'send', message }, ...more] };
}

/** End the session from this side: `disconnect`, the call's audio ends, and the client's `close` is awaited. */
function disconnect(state: AudioHookState, reason: 'completed' | 'unauthorized' | 'error', info: string): AudioHookStep {
  if (state.phase === 'disconnecting' || state.phase === 'closed') return { state, actions: NONE };
  return send({ ...state, phase: 'disconnecting' }, 'disconnect', { reason, info }, [{ kind: 'end', end: { how: 'disconnected', reason, info } }, { kind: 'await-client' }]);
}

function onAudio(state: AudioHookState, bytes: number): AudioHookStep {
  // Audio in flight when this server disconnected or answered a close: let go.
  if (state.phase === 'disconnecting' || state.phase === 'closed') return { state, actions: [{ kind: 'ignored', reason: 'audio after the session ended' }] };
  if (state.phase !== 'active') return disconnect(state, 'error', `audio in state ${state.phase} (binary audio only while active)`);
  if (bytes % state.frameBytes !== 0) return disconnect(state, 'error', `an audio frame of ${bytes} bytes is not whole samples of ${state.media!.format} with ${state.media!.channels.length} channel(s)`);
  return { state: { ...state, samples: state.samples + bytes / state.frameBytes }, actions: [{ kind: 'audio' }] };
}

function onText(state: AudioHookState, json: unknown, bytes: number, rules: AudioHookRules): AudioHookStep {
  if (bytes > AUDIOHOOK_MAX_TEXT_BYTES) return disconnect(state, 'error', `a text message of ${bytes} bytes (at most ${AUDIOHOOK_MAX_TEXT_BYTES})`);
  if (json === undefined) return disconnect(state, 'error', 'a text message that is not JSON');
  const base = AudioHookClientBaseSchema.safeParse(json);
  if (!base.success) return disconnect(state, 'error', `not a well-formed client message (${base.error.issues[0]?.path.join('.') || 'message'}: ${base.error.issues[0]?.message ?? 'invalid'})`);
  const m = base.data;
  // After this server disconnected or closed, only the client's close matters, whatever its seq
  // (a session ended for a sequence gap is still closed cleanly).
  if (state.phase === 'disconnecting' || state.phase === 'closed') {
    if (m.type !== 'close') return { state, actions: [{ kind: 'ignored', reason: `'${m.type}' after the session ended` }] };
    return send({ ...state, phase: 'closed', clientseq: Math.max(state.clientseq, m.seq) }, 'closed', {}, [{ kind: 'await-client' }]);
  }
  // A sequence gap ends the session: nothing after it can be trusted to be in order.
  if (m.seq !== state.clientseq + 1) return disconnect(state, 'error', `seq ${m.seq} where ${state.clientseq + 1} was due`);
  if (m.serverseq > state.seq) return disconnect({ ...state, clientseq: m.seq }, 'error', `serverseq ${m.serverseq} is ahead of the last seq sent (${state.seq})`);
  let s: AudioHookState = { ...state, clientseq: m.seq };
  if (s.id === undefined || s.id === NULL_UUID) s = { ...s, id: m.id };
  else if (m.id.toLowerCase() !== s.id.toLowerCase()) return disconnect(s, 'error', `message id ${m.id} is not the session's (${s.id})`);
  if (!isClientType(m.type)) return disconnect(s, 'error', `'${m.type}' is not a client message`);
  const parsed = AUDIOHOOK_CLIENT_PARAMETERS[m.type].safeParse(m.parameters);
  if (!parsed.success) return disconnect(s, 'error', `'${m.type}' with bad parameters (${parsed.error.issues[0]?.path.join('.') || 'parameters'}: ${parsed.error.issues[0]?.message ?? 'invalid'})`);
  const position = samplesOf(m.position);
  switch (m.type) {
    case 'open':
      return onOpen(s, parsed.data as AudioHookOpenParameters, rules);
    case 'ping':
      return send(s, 'pong', {});
    case 'close': {
      const actions: AudioHookAction[] = [];
      // A pause that ran to the end: counted, not filled (nothing follows it).
      if (s.phase === 'paused' && s.pausedAt !== undefined && position > s.pausedAt) {
        actions.push({ kind: 'notice', notice: { type: 'resumed', gap: { cause: 'paused', atMs: msOf(s.samples), durationMs: msOf(position - s.pausedAt), filled: false } } });
      }
      actions.push({ kind: 'end', end: { how: 'closed', reason: (parsed.data as { reason: string }).reason } });
      return send({ ...s, phase: 'closed' }, 'closed', {}, [...actions, { kind: 'await-client' }]);
    }
    case 'paused':
      if (s.phase !== 'active') return { state: s, actions: [{ kind: 'ignored', reason: `'paused' in state ${s.phase}` }] };
      return { state: { ...s, phase: 'paused', pausedAt: position, pauseAsked: false }, actions: [{ kind: 'notice', notice: { type: 'paused', atMs: msOf(s.samples) } }] };
    case 'resumed': {
      if (s.phase !== 'paused') return { state: s, actions: [{ kind: 'ignored', reason: `'resumed' in state ${s.phase}` }] };
      const p = parsed.data as { discarded: string };
      return gap({ ...s, phase: 'active', pausedAt: undefined }, 'paused', samplesOf(p.discarded), rules);
    }
    case 'discarded': {
      if (s.phase !== 'active' && s.phase !== 'paused') return { state: s, actions: [{ kind: 'ignored', reason: `'discarded' in state ${s.phase}` }] };
      const p = parsed.data as { discarded: string };
      return gap(s, 'discarded', samplesOf(p.discarded), rules);
    }
    case 'update': {
      if (s.phase !== 'active' && s.phase !== 'paused') return { state: s, actions: [{ kind: 'ignored', reason: `'update' in state ${s.phase}` }] };
      const language = (parsed.data as { language?: string }).language;
      return send(s, 'updated', {}, [{ kind: 'notice', notice: { type: 'update', language } }]);
    }
    case 'error': {
      const p = parsed.data as { code: number; message: string };
      return { state: s, actions: [{ kind: 'notice', notice: { type: 'client-error', code: p.code, message: p.message } }] };
    }
  }
}

/**
 * A gap of `samples` per channel in the call, said either way: filled with silence when it is at
 * most `maxFillSamples`, and when the call's silence stays within its received audio plus that
 * bound (a message of a hundred bytes cannot make a client's call hours of silence: it must send
 * audio to earn it).
 */
function gap(state: AudioHookState, cause: 'paused' | 'discarded', samples: number, rules: AudioHookRules): AudioHookStep {
  const received = state.samples - state.filled;
  const filled = samples > 0 && samples <= rules.maxFillSamples && state.filled + samples <= received + rules.maxFillSamples;
  const g: AudioHookGap = { cause, atMs: msOf(state.samples), durationMs: msOf(samples), filled };
  const notice: AudioHookAction = { kind: 'notice', notice: cause === 'paused' ? { type: 'resumed', gap: g } : { type: 'discarded', gap: g } };
  if (!filled) return { state, actions: [notice] };
  return { state: { ...state, samples: state.samples + samples, filled: state.filled + samples }, actions: [{ kind: 'fill', samples }, notice] };
}

function onOpen(state: AudioHookState, open: AudioHookOpenParameters, rules: AudioHookRules): AudioHookStep {
  if (state.phase !== 'awaiting-open') return { state, actions: [{ kind: 'ignored', reason: `'open' in state ${state.phase}` }] };
  const probe = open.conversationId === NULL_UUID;
  const media = chooseMedia(open.media, rules);
  if (media === undefined && !probe) {
    const offered = open.media.map((m) => `${m.format}/${m.rate} ${m.channels.join('+')}`).join(', ') || 'none';
    return disconnect(state, 'error', `none of the media offered (${offered}) is taken: ${rules.formats.join(' or ')} at ${AUDIOHOOK_RATE} Hz, channels ${rules.channels.join(' and/or ')}`);
  }
  const frameBytes = media ? media.channels.length * (media.format === 'L16' ? 2 : 1) : 0;
  const next: AudioHookState = { ...state, phase: 'active', media, frameBytes, probe };
  // The chosen offer goes back exactly as offered (the client checks it is one of its own).
  const start: readonly AudioHookAction[] = probe || media === undefined ? NONE : [{ kind: 'start', open, media }];
  return send(next, 'opened', { media: media ? [media] : [], startPaused: false }, start);
}

/**
 * The offer taken: an audio offer at 8 kHz in a format of `rules.formats` whose channels are
 * exactly the wanted ones (in either order) first, in the client's order of preference; else
 * one carrying a subset of them (one side alone).
 */
export function chooseMedia(offers: readonly AudioHookMedia[], rules: AudioHookRules): AudioHookMedia | undefined {
  const valid = offers.filter(
    (m) =>
      m.type === 'audio' &&
      m.rate === AUDIOHOOK_RATE &&
      (rules.formats as readonly string[]).includes(m.format) &&
      m.channels.length >= 1 &&
      m.channels.length <= 2 &&
      new Set(m.channels).size === m.channels.length &&
      m.channels.every((c) => (rules.channels as readonly string[]).includes(c)),
  );
  return valid.find((m) => m.channels.length === rules.channels.length) ?? valid[0];
}
