// The media message as Twilio and Telnyx send it, fifty times a second per call, read with one
// anchored pattern instead of JSON.parse. Only an exact match is read this way; anything else
// (other key order, escapes, extra fields) takes the full JSON path, so results are the same.
import { TELNYX_PRESET, TWILIO_PRESET, type MediaStreamPreset } from './mediaStreamPresets.js';

/** The fields of a media message the server uses, as strings (as the provider sent them). */
export interface MediaFields {
  readonly track: string;
  readonly chunk: string;
  readonly timestamp: string;
  /** Base64 with a valid alphabet and padding (length still to be checked). */
  readonly payload: string;
}

// Every capture is bounded and excludes `"` and `\`, so a match holds no escape: the strings are
// the values JSON.parse would give. Linear in the message: no nested quantifiers.
const MEDIA =
  /^\{"event":"media","(?:sequenceNumber|sequence_number)":"\d{1,15}","media":\{"track":"([a-z_]{1,20})","chunk":"(\d{1,15})","timestamp":"(\d{1,15})","payload":"([A-Za-z0-9+/]*={0,2})"\},"(?:streamSid|stream_id)":"[^"\\]{0,256}"\}$/;

/** Whether `preset` reads its media fields where the pattern finds them (the built-in presets). */
export function hasFastMediaPath(preset: MediaStreamPreset | undefined): boolean {
  return preset === TWILIO_PRESET || preset === TELNYX_PRESET;
}

/** The media fields of `raw` when it is a media message in the providers' exact layout, else undefined. */
export function matchMediaMessage(raw: string): MediaFields | undefined {
  if (!raw.startsWith('{"event":"media"')) return undefined;
  const m = MEDIA.exec(raw);
  return m ? { track: m[1]!, chunk: m[2]!, timestamp: m[3]!, payload: m[4]! } : undefined;
}
