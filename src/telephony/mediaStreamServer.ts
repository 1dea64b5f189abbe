// A WebSocket server for the JSON media streams of cloud telephony providers: one call per
// stream (per track, or both tracks as two channels), each an audio stream of G.711 at 8 kHz.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { asyncScheduler, Observable, type SchedulerLike } from 'rxjs';
import { WebSocketServer, type WebSocket } from 'ws';
import { rawDataText } from '../internal/wsData.js';
import type { AudioObservable } from '../audio/meta.js';
import { AudioSourceError, InputError } from '../errors.js';
import { RAW_FORMAT_DESCRIPTORS, type RawAudioFormat } from '../schema/audio.js';
import { LiveAudio } from './liveAudio.js';
import { checkUpgrade, type MediaStreamAuth, type MediaStreamRefusal } from './mediaStreamAuth.js';
import {
  detectPreset,
  encodingLaw,
  MEDIA_STREAM_PRESETS,
  normalizeTrack,
  readField,
  readNumber,
  type MediaStreamPreset,
  type MediaStreamPresetName,
} from './mediaStreamPresets.js';
import { resolvePayloadType } from './payloadTypes.js';
import { PlayoutStream, type StreamStats } from './playoutStream.js';
import { FrameClock } from './frameClock.js';
import { TrackInterleaver } from './trackInterleaver.js';
import { hasFastMediaPath, matchMediaMessage } from './mediaMessage.js';
import { warnOnce } from './limitWarning.js';
import type { LimitWarning, WarningHandler } from '../warnings.js';

/** A media-stream track: the caller's audio (`inbound`) or the audio sent to the caller (`outbound`). */
export type MediaTrack = 'inbound' | 'outbound';

/** One call (or one track of it) from a media stream. */
export interface MediaStreamCall {
  /** `<streamId>` (interleaved) or `<streamId>:<track>`. */
  readonly id: string;
  readonly streamId: string;
  /** The provider's call identifier (`callSid`, `call_control_id`), when the start message has one. */
  readonly callId: string | undefined;
  readonly preset: MediaStreamPresetName;
  /** The track, or `both` when interleaved (channel 1 inbound, channel 2 outbound). */
  readonly track: MediaTrack | 'both';
  /** mulaw (or alaw) at 8000 Hz, 1 channel, or 2 when interleaved. */
  readonly format: RawAudioFormat;
  readonly audio$: AudioObservable;
  /** Counters per track (the jitter buffer's, on chunk numbers). */
  readonly stats: Readonly<Partial<Record<MediaTrack, StreamStats>>>;
  readonly customParameters: unknown;
  /** The start message as received. */
  readonly start: unknown;
}

/** Counters of the server, updated in place. */
export interface MediaStreamServerStats {
  connections: number;
  messages: number;
  /** Messages that could not be used: not JSON, binary, no event, media before start or without a valid payload, unknown encoding. */
  malformed: number;
  /** Well-formed messages the server has no use for (`connected`, `mark`, `dtmf`, unknown events, unwanted tracks). */
  ignored: number;
  /** Calls (streams or tracks) emitted. */
  calls: number;
  /** Upgrade requests refused by `authenticate` (answered 401, no WebSocket). */
  unauthorized: number;
  /** Connections over `maxConnections` (accepted, then closed with 1013). */
  overCapacity: number;
  /** Connections closed with 1009 for a message over `maxPayload`. */
  oversized: number;
}

/** Fresh {@link MediaStreamServerStats}, every counter at zero; pass it as `stats` and read it while the server runs. */
export function createMediaStreamServerStats(): MediaStreamServerStats {
  return { connections: 0, messages: 0, malformed: 0, ignored: 0, calls: 0, unauthorized: 0, overCapacity: 0, oversized: 0 };
}

/** Largest message by default: real media messages are under 2 KB. */
export const DEFAULT_MEDIA_STREAM_MAX_PAYLOAD = 64 * 1024;
/** Connections at once by default. */
export const DEFAULT_MEDIA_STREAM_MAX_CONNECTIONS = 100;
/** Close code of a connection over `maxConnections` (RFC 6455 registry: Try Again Later). */
export const MEDIA_STREAM_OVER_CAPACITY_CODE = 1013;

/** Options of {@link mediaStreamServer}: listen address and path, provider preset, track mode, jitter and skew bounds, callbacks and counters. */
export interface MediaStreamServerOptions {
  /** Interface (default 127.0.0.1). */
  readonly host?: string | undefined;
  /** Port (default 0: any free port; see `onListening`). */
  readonly port?: number | undefined;
  /** Only accept upgrades on this path (default: any). */
  readonly path?: string | undefined;
  /** Field names: a provider, or `auto` to tell from each `start` message (default). */
  readonly preset?: MediaStreamPresetName | MediaStreamPreset | 'auto' | undefined;
  /** `separate`: one call per track (default); `interleaved`: one two-channel call per stream. */
  readonly trackMode?: 'separate' | 'interleaved' | undefined;
  /** Tracks to take (default both). */
  readonly tracks?: readonly MediaTrack[] | undefined;
  /** Longest wait for a missing chunk, ms (default 60). */
  readonly playoutDelayMs?: number | undefined;
  /** In interleaved mode, how far (ms) one track may run ahead before the other is padded (default 500). */
  readonly maxSkewMs?: number | undefined;
  /** Called with the bound address once listening (the port, when port 0 was asked). */
  readonly onListening?: ((address: AddressInfo) => void) | undefined;
  /** Told about every malformed message (they are also counted). */
  readonly onMalformed?: ((reason: string, raw: string) => void) | undefined;
  readonly stats?: MediaStreamServerStats | undefined;
  readonly scheduler?: SchedulerLike | undefined;
  /**
   * Largest WebSocket message, bytes (default 64 KiB). A larger one is refused at its frame
   * header, never buffered, and closes the connection with 1009 (its calls' audio completes).
   */
  readonly maxPayload?: number | undefined;
  /**
   * Connections at once (default 100). One more completes its upgrade and is closed at once
   * with 1013 (try again later), reason `too many connections`. The first refusal is reported
   * once through `onWarning`.
   */
  readonly maxConnections?: number | undefined;
  /**
   * Told once per subscription, the first time `maxConnections` refuses a connection (code
   * `max_connections`, with the option to raise). Default: `process.emitWarning` (printed once
   * to stderr, code `SVC_STREAM_MAX_CONNECTIONS`). Later refusals are only counted in
   * `stats.overCapacity`.
   */
  readonly onWarning?: WarningHandler<LimitWarning> | undefined;
  /**
   * Who may connect (default: anyone who can reach `host`). Checked on the upgrade request; a
   * refusal is HTTP 401 and no WebSocket. Set it whenever the server listens beyond loopback.
   */
  readonly authenticate?: MediaStreamAuth | undefined;
  /** Told about every refused upgrade (they are also counted in `stats.unauthorized`). */
  readonly onRefused?: ((reason: MediaStreamRefusal, req: IncomingMessage) => void) | undefined;
  /**
   * A latency budget, ms (default 0: each media message's audio goes on as it is released).
   * Above 0, a call's 20 ms chunks are joined into frames of up to `frameMs` of audio before the
   * session sends them: five times fewer frames (sends, masks, syscalls) at 100 ms, for up to
   * `frameMs − 20` ms more latency per chunk (a frame that is not full goes once its oldest
   * chunk has waited `frameMs`, from one clock per server).
   */
  readonly frameMs?: number | undefined;
}

interface TrackState {
  readonly stream: PlayoutStream;
  samples: number;
  chunks: number;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;


/**
 * Accept media-stream WebSocket connections and emit one {@link MediaStreamCall} per stream
 * and track (or per stream, tracks interleaved as two channels).
 *
 * - Cold: each subscription starts its own server (port 0 picks a free one, reported through
 *   `onListening`); unsubscribing closes it and ends every call's audio.
 * - Reads `connected`, `start`, `media`, `stop` in the field names of the preset (Twilio or
 *   Telnyx, or detected from `start`). Media payloads are base64 G.711 at 8 kHz; `chunk` and
 *   `timestamp` arrive as strings and drive a jitter buffer per track, so duplicates are
 *   dropped, reordering is undone and missing chunks become silence.
 * - A call's audio completes on `stop` or when the connection closes.
 * - Malformed messages are counted, reported to `onMalformed`, and never end the connection
 *   or the server. The observable errors only when the server cannot listen.
 * - Bounded: a message over `maxPayload` (64 KiB) closes its connection with 1009 without being
 *   buffered; past `maxConnections` (100) a connection is closed at once with 1013 (the first
 *   time reported once through `onWarning`); with
 *   `authenticate` (a token, Twilio's `X-Twilio-Signature`, your own check) an upgrade that
 *   fails is answered 401 and never becomes a WebSocket.
 *
 * ## Example
 * ```ts
 * import { mediaStreamServer } from 'svc-stream/telephony';
 *
 * mediaStreamServer({ port: 8080, preset: 'twilio', authenticate: { twilio: { authToken: process.env['TWILIO_AUTH_TOKEN']! } } }).subscribe((call) => {
 *   console.log('call', call.callId, call.track);
 *   call.audio$.subscribe({ complete: () => console.log(call.id, 'ended', call.stats) });
 * });
 * ```
 */
export function mediaStreamServer(options: MediaStreamServerOptions = {}): Observable<MediaStreamCall> {
  const fixedPreset = typeof options.preset === 'object' ? options.preset : options.preset && options.preset !== 'auto' ? MEDIA_STREAM_PRESETS[options.preset] : undefined;
  const wanted = new Set<MediaTrack>(options.tracks ?? ['inbound', 'outbound']);
  const interleaved = options.trackMode === 'interleaved';
  const frameMs = options.frameMs ?? 0;
  if (!(frameMs >= 0) || !Number.isFinite(frameMs)) throw new InputError('invalid_argument', `mediaStreamServer: frameMs must be 0 or more, got ${frameMs}`);
  return new Observable<MediaStreamCall>((subscriber) => {
    const stats = options.stats ?? createMediaStreamServerStats();
    const scheduler = options.scheduler ?? asyncScheduler;
    const frameClock = frameMs > 0 ? new FrameClock(frameMs, scheduler) : undefined;
    const grouping = frameClock ? { clock: frameClock, scheduler } : undefined;
    // Every payload is decoded here first (messages are handled one at a time).
    let scratch = Buffer.allocUnsafe(1024);
    const enders = new Set<() => void>();
    const maxConnections = options.maxConnections ?? DEFAULT_MEDIA_STREAM_MAX_CONNECTIONS;
    const warnOverCapacity = warnOnce(
      {
        code: 'max_connections',
        option: 'maxConnections',
        limit: maxConnections,
        message: `mediaStreamServer: a connection was closed with 1013 because ${maxConnections} are open (maxConnections); further refusals are counted in stats.overCapacity. Raise maxConnections to take more calls at once.`,
      },
      options.onWarning,
    );
    const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: options.maxPayload ?? DEFAULT_MEDIA_STREAM_MAX_PAYLOAD });
    const http = createServer((req, res) => {
      res.writeHead(426, { 'content-type': 'text/plain', connection: 'close' });
      res.end('WebSocket upgrade required\n');
    });
    const sockets = new Set<Socket>();
    http.on('connection', (s: Socket) => {
      sockets.add(s);
      s.once('close', () => sockets.delete(s));
    });
    let open = 0;
    let closing = false;
    const answer = (socket: Socket, status: string): void => {
      socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
      setTimeout(() => socket.destroy(), 1_000).unref();
    };
    http.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      socket.on('error', () => undefined);
      const pathname = new URL(req.url ?? '/', 'http://bridge').pathname;
      if (options.path && pathname !== options.path) return answer(socket, '404 Not Found');
      void (async () => {
        const refusal = options.authenticate ? await checkUpgrade(req, options.authenticate) : undefined;
        if (closing || socket.destroyed) return void socket.destroy();
        if (refusal) {
          stats.unauthorized++;
          try {
            options.onRefused?.(refusal, req);
          } catch {
            /* a failing reporter must not take the server down */
          }
          return answer(socket, '401 Unauthorized');
        }
        wss.handleUpgrade(req, socket, head, (ws) => {
          if (open >= maxConnections) {
            stats.overCapacity++;
            warnOverCapacity();
            ws.on('error', () => undefined);
            ws.close(MEDIA_STREAM_OVER_CAPACITY_CODE, 'too many connections');
            setTimeout(() => ws.terminate(), 2_000).unref();
            return;
          }
          open++;
          ws.once('close', () => open--);
          onConnection(ws);
        });
      })();
    });

    const malformed = (reason: string, raw: string): void => {
      stats.malformed++;
      try {
        options.onMalformed?.(reason, raw.slice(0, 500));
      } catch {
        /* a failing reporter must not take the server down */
      }
    };

    const onConnection = (ws: WebSocket): void => {
      stats.connections++;
      let preset = fixedPreset;
      let streamId: string | undefined;
      let law: 'mulaw' | 'alaw' = 'mulaw';
      let startMsg: unknown;
      const tracks = new Map<MediaTrack, TrackState>();
      let mixed: { live: LiveAudio; mixer: TrackInterleaver; ended: Set<MediaTrack> } | undefined;
      let ended = false;

      const format = (channels: number): RawAudioFormat => ({ audio_format: law, sample_rate: 8000, num_channels: channels });
      const emitCall = (track: MediaTrack | 'both', audio$: AudioObservable, trackStats: Partial<Record<MediaTrack, StreamStats>>, channels: number): void => {
        stats.calls++;
        subscriber.next({
          id: track === 'both' ? streamId! : `${streamId!}:${track}`,
          streamId: streamId!,
          callId: readField(startMsg, preset!.callId) as string | undefined,
          preset: preset!.name,
          track,
          format: format(channels),
          audio$,
          stats: trackStats,
          customParameters: readField(startMsg, preset!.customParameters),
          start: startMsg,
        });
      };

      const trackState = (track: MediaTrack): TrackState => {
        let t = tracks.get(track);
        if (t) return t;
        const stream = new PlayoutStream(resolvePayloadType(law === 'mulaw' ? 0 : 8)!, {
          scheduler,
          idleTimeoutMs: 0,
          ...(options.playoutDelayMs !== undefined ? { playoutDelayMs: options.playoutDelayMs } : {}),
          // Interleaved, the two-channel stream is grouped, not the tracks that feed it.
          ...(grouping && !mixed ? { grouping } : {}),
        });
        t = { stream, samples: 0, chunks: 0 };
        tracks.set(track, t);
        if (mixed) {
          const m = mixed;
          const index = track === 'inbound' ? 0 : 1;
          stream.live.audio$.subscribe({
            next: (bytes) => m.live.push(m.mixer.push(index, bytes)),
            complete: () => {
              m.ended.add(track);
              if (m.ended.size === tracks.size) {
                m.live.push(m.mixer.end());
                m.live.end();
              }
            },
          });
        } else {
          emitCall(track, stream.live.audio$, { [track]: stream.stats }, 1);
        }
        return t;
      };

      const endAll = (): void => {
        if (ended) return;
        ended = true;
        enders.delete(endAll);
        for (const t of tracks.values()) t.stream.end();
        if (mixed && tracks.size === 0) mixed.live.end();
      };
      enders.add(endAll);

      const onStart = (msg: unknown, raw: string): void => {
        preset = fixedPreset ?? detectPreset(msg);
        if (!preset) return malformed('start message names no stream (no streamSid / stream_id)', raw);
        const id = readField(msg, preset.streamId);
        if (typeof id !== 'string' || id === '') return malformed(`start message without ${preset.streamId.join(' or ')}`, raw);
        const l = encodingLaw(readField(msg, preset.encoding));
        const rate = readNumber(msg, preset.sampleRate);
        const channels = readNumber(msg, preset.channels);
        if (!l || (rate !== undefined && rate !== 8000) || (channels !== undefined && channels !== 1)) {
          return malformed(`unsupported media format ${JSON.stringify(readField(msg, preset.encoding))}/${String(rate)}/${String(channels)} (G.711 8000 Hz mono only)`, raw);
        }
        if (streamId !== undefined) return malformed('a second start message on one connection', raw);
        streamId = id;
        law = l;
        startMsg = msg;
        if (interleaved) {
          const live = new LiveAudio(format(2), grouping);
          const skew = Math.round(((options.maxSkewMs ?? 500) * 8000) / 1000);
          mixed = { live, mixer: new TrackInterleaver(RAW_FORMAT_DESCRIPTORS[law].silence[0]!, skew), ended: new Set() };
          const trackStats: Partial<Record<MediaTrack, StreamStats>> = {};
          emitCall('both', live.audio$, trackStats, 2);
          for (const t of wanted) trackStats[t] = trackState(t).stream.stats;
        }
      };

      const onMedia = (msg: unknown, raw: string): void => {
        if (!preset || streamId === undefined) return malformed('media before start', raw);
        takeMedia(readField(msg, preset.track), readField(msg, preset.payload), readNumber(msg, preset.chunk), readNumber(msg, preset.timestamp), raw);
      };

      /** One media message's fields, however they were read. */
      const takeMedia = (trackField: unknown, payload: unknown, chunk: number | undefined, ms: number | undefined, raw: string): void => {
        const track = normalizeTrack(trackField);
        if (!track) return malformed(`unknown track ${JSON.stringify(trackField)}`, raw);
        if (!wanted.has(track)) {
          stats.ignored++;
          return;
        }
        if (typeof payload !== 'string' || payload.length % 4 !== 0 || !BASE64.test(payload)) return malformed('media without a base64 payload', raw);
        // Decoded into the server's scratch buffer, then copied once into a buffer of its own
        // (Buffer.from would take a slice of a shared pool that the session then holds).
        const need = (payload.length / 4) * 3;
        if (need > scratch.length) scratch = Buffer.allocUnsafe(Math.max(need, scratch.length * 2));
        const n = scratch.write(payload, 'base64');
        if (n === 0) return malformed('media with an empty payload', raw);
        const bytes = new Uint8Array(n);
        bytes.set(scratch.subarray(0, n));
        const t = trackState(track);
        t.chunks++;
        t.stream.push({
          seq: chunk ?? t.chunks,
          timestamp: (ms !== undefined ? Math.round(ms * 8) : t.samples) >>> 0,
          payload: bytes,
          samples: bytes.byteLength,
        });
        t.samples += bytes.byteLength;
      };

      ws.on('message', (data, isBinary) => {
        stats.messages++;
        const raw = isBinary ? '' : rawDataText(data);
        try {
          if (isBinary) return malformed('binary frame', '(binary)');
          // The providers' media message in their exact layout: read without JSON.parse.
          if (streamId !== undefined && hasFastMediaPath(preset)) {
            const fast = matchMediaMessage(raw);
            if (fast) return takeMedia(fast.track, fast.payload, Number(fast.chunk), Number(fast.timestamp), raw);
          }
          let msg: unknown;
          try {
            msg = JSON.parse(raw);
          } catch {
            return malformed('not JSON', raw);
          }
          const event = readField(msg, (preset ?? MEDIA_STREAM_PRESETS.twilio).event);
          if (typeof event !== 'string') return malformed('no event field', raw);
          if (event === 'start') onStart(msg, raw);
          else if (event === 'media') onMedia(msg, raw);
          else if (event === 'stop') endAll();
          else stats.ignored++;
        } catch (err) {
          malformed(`could not handle the message: ${(err as Error).message}`, raw);
        }
      });
      ws.on('close', endAll);
      ws.on('error', (err: Error & { code?: string }) => {
        if (err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') stats.oversized++;
        endAll();
      });
    };

    http.on('error', (err) => subscriber.error(new AudioSourceError('source_error', `media-stream server failed: ${err.message}`, { cause: err })));
    http.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => options.onListening?.(http.address() as AddressInfo));

    return () => {
      closing = true;
      for (const end of [...enders]) end();
      frameClock?.stop();
      for (const client of wss.clients) client.terminate();
      wss.close();
      http.close();
      for (const s of sockets) s.destroy();
    };
  });
}
