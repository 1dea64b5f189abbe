// Builds streaming URLs. The key goes in the query (the contract requires it at the
// handshake) and nowhere else: what a user sees is always the redacted form.
import { InputError } from '../errors/index.js';
import { AudioParamsSchema, type AudioFormat } from '../schema/audio.js';
import { ENDPOINTS } from '../schema/endpoints.js';

/** The conversation-analysis streaming path (wire reference). */
export const CONVERSATION_STREAMING_PATH: string = ENDPOINTS.conversationStreaming.path;

/** Check the audio query parameters locally (§4.3); throws InputError naming the parameter. */
export function checkAudioParams(format: AudioFormat | undefined): Record<string, string> {
  const params = {
    audio_format: format?.audio_format,
    sample_rate: format && 'sample_rate' in format ? format.sample_rate : undefined,
    num_channels: format && 'num_channels' in format ? format.num_channels : undefined,
  };
  const parsed = AudioParamsSchema.safeParse(params);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.join('.');
    throw new InputError('invalid_audio_params', issue.message, { path });
  }
  const out: Record<string, string> = {};
  if (params.audio_format !== undefined) out['audio_format'] = params.audio_format;
  if (params.sample_rate !== undefined) out['sample_rate'] = String(params.sample_rate);
  if (params.num_channels !== undefined) out['num_channels'] = String(params.num_channels);
  return out;
}

/** The models API base as a WebSocket base: https→wss, http→ws. */
export function toWebSocketBase(baseUrl: string): URL {
  let u: URL;
  try {
    u = new URL(baseUrl);
  } catch {
    throw new InputError('invalid_argument', `baseUrl is not a valid URL: ${JSON.stringify(baseUrl)}`, { path: 'baseUrl' });
  }
  if (u.protocol === 'https:') u.protocol = 'wss:';
  else if (u.protocol === 'http:') u.protocol = 'ws:';
  else if (u.protocol !== 'ws:' && u.protocol !== 'wss:') {
    throw new InputError('invalid_argument', `baseUrl must be http(s) or ws(s), got ${u.protocol}`, { path: 'baseUrl' });
  }
  return u;
}

/** The full streaming URL, with `api_key` and the audio parameters. */
export function streamingUrl(baseUrl: string, path: string, apiKey: string, query: Record<string, string>): URL {
  const u = toWebSocketBase(baseUrl);
  u.pathname = u.pathname.replace(/\/+$/, '') + path;
  u.search = '';
  u.searchParams.set('api_key', apiKey);
  for (const [k, v] of Object.entries(query)) u.searchParams.set(k, v);
  return u;
}
