// Where each cloud telephony provider puts the fields of its media-stream messages. Both
// speak `connected` / `start` / `media` / `stop` JSON with base64 G.711 and string numbers;
// they differ in names. A preset is data: dotted paths tried in order.

/** The providers we know by name. */
export type MediaStreamPresetName = 'twilio' | 'telnyx';

/** Dotted paths into one message for each field the server reads. */
export interface MediaStreamPreset {
  readonly name: MediaStreamPresetName;
  /** On every message: the message kind (`connected`, `start`, `media`, `stop`, …). */
  readonly event: readonly string[];
  /** The stream's identifier (on start, and on media/stop where the provider repeats it). */
  readonly streamId: readonly string[];
  /** On start: the call's identifier. */
  readonly callId: readonly string[];
  /** Message counter (a string). */
  readonly sequence: readonly string[];
  /** On start: `encoding`, sample rate and channel count of the payloads. */
  readonly encoding: readonly string[];
  readonly sampleRate: readonly string[];
  readonly channels: readonly string[];
  /** On start: the tracks to expect, where the provider says. */
  readonly tracks: readonly string[];
  /** On start: caller-defined parameters. */
  readonly customParameters: readonly string[];
  /** On media: base64 audio, track, chunk counter and timestamp in ms (both strings). */
  readonly payload: readonly string[];
  readonly track: readonly string[];
  readonly chunk: readonly string[];
  readonly timestamp: readonly string[];
}

/** Twilio Media Streams (`<Stream>`): audio/x-mulaw 8000 Hz mono; `streamSid` on every message but `connected`. */
export const TWILIO_PRESET: MediaStreamPreset = {
  name: 'twilio',
  event: ['event'],
  streamId: ['streamSid', 'start.streamSid'],
  callId: ['start.callSid'],
  sequence: ['sequenceNumber'],
  encoding: ['start.mediaFormat.encoding'],
  sampleRate: ['start.mediaFormat.sampleRate'],
  channels: ['start.mediaFormat.channels'],
  tracks: ['start.tracks'],
  customParameters: ['start.customParameters'],
  payload: ['media.payload'],
  track: ['media.track'],
  chunk: ['media.chunk'],
  timestamp: ['media.timestamp'],
};

/** Telnyx Media Streaming: `stream_id` at the top level, `start.call_control_id`, `start.media_format` (PCMU/PCMA). */
export const TELNYX_PRESET: MediaStreamPreset = {
  name: 'telnyx',
  event: ['event'],
  streamId: ['stream_id'],
  callId: ['start.call_control_id', 'start.call_session_id'],
  sequence: ['sequence_number'],
  encoding: ['start.media_format.encoding'],
  sampleRate: ['start.media_format.sample_rate'],
  channels: ['start.media_format.channels'],
  tracks: [],
  customParameters: ['start.custom_parameters'],
  payload: ['media.payload'],
  track: ['media.track'],
  chunk: ['media.chunk'],
  timestamp: ['media.timestamp'],
};

/** The built-in media-stream field-name presets by name: `twilio` ({@link TWILIO_PRESET}) and `telnyx` ({@link TELNYX_PRESET}). */
export const MEDIA_STREAM_PRESETS: Readonly<Record<MediaStreamPresetName, MediaStreamPreset>> = { twilio: TWILIO_PRESET, telnyx: TELNYX_PRESET };

// Paths are a preset's few constants: split once, not on every message.
const splitPaths = new Map<string, readonly string[]>();
function keysOf(path: string): readonly string[] {
  let keys = splitPaths.get(path);
  if (keys === undefined) {
    keys = path.split('.');
    if (splitPaths.size < 1024) splitPaths.set(path, keys);
  }
  return keys;
}

/** The value at the first path that holds one. */
export function readField(message: unknown, paths: readonly string[]): unknown {
  for (const path of paths) {
    let v: unknown = message;
    for (const key of keysOf(path)) {
      if (v === null || typeof v !== 'object') {
        v = undefined;
        break;
      }
      v = (v as Record<string, unknown>)[key];
    }
    if (v !== undefined && v !== null) return v;
  }
  return undefined;
}

/** A provider's number field: a string of digits (or a number). Undefined when absent or not a number. */
export function readNumber(message: unknown, paths: readonly string[]): number | undefined {
  const v = readField(message, paths);
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : typeof v === 'number' ? v : NaN;
  return Number.isFinite(n) ? n : undefined;
}

/** Which preset a `start` message speaks: Twilio's camelCase `streamSid` or Telnyx's `stream_id`. */
export function detectPreset(message: unknown): MediaStreamPreset | undefined {
  if (readField(message, TWILIO_PRESET.streamId) !== undefined) return TWILIO_PRESET;
  if (readField(message, TELNYX_PRESET.streamId) !== undefined) return TELNYX_PRESET;
  return undefined;
}

/** `inbound` / `inbound_track` → `inbound`, same for outbound; undefined for anything else. */
export function normalizeTrack(track: unknown): 'inbound' | 'outbound' | undefined {
  if (track === undefined) return 'inbound';
  if (track === 'inbound' || track === 'inbound_track') return 'inbound';
  if (track === 'outbound' || track === 'outbound_track') return 'outbound';
  return undefined;
}

/** The G.711 law of a provider's encoding name (`audio/x-mulaw`, `PCMU`, `audio/x-alaw`, `PCMA`). */
export function encodingLaw(encoding: unknown): 'mulaw' | 'alaw' | undefined {
  if (encoding === undefined) return 'mulaw';
  const e = String(encoding).toLowerCase();
  if (e === 'audio/x-mulaw' || e === 'pcmu' || e === 'mulaw' || e === 'ulaw' || e === 'audio/pcmu') return 'mulaw';
  if (e === 'audio/x-alaw' || e === 'pcma' || e === 'alaw' || e === 'audio/pcma') return 'alaw';
  return undefined;
}
