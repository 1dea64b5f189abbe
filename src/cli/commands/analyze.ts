// `svc-stream analyze [FILE|-]`: stream a file or stdin through conversation analysis and
// show the derived state live, as plain lines, or as NDJSON.
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { lastValueFrom, Observable, scan, tap, type Subscription } from 'rxjs';
import { transcode } from '../../audio/transcode.js';
import { AUDIO_OPTIONS, fileAudio, formatFromFlags } from '../audioFlags.js';
import { fromReadable } from '../../audio/fromReadable.js';
import { audioMetaOf, type AudioObservable } from '../../audio/meta.js';
import { InputError, SvcError } from '../../errors.js';
import { bytesToMs, isRawFormat, type AudioFormat } from '../../schema/audio.js';
import type { ServerEvent } from '../../schema/events.js';
import { conversationSession } from '../../session/conversation.js';
import { fleetLimits, REDIS_OPTION } from '../redisFlag.js';
import { commandPublisher, PUBLISH_OPTION } from '../publishFlag.js';
import { checkSessionId } from '../../relay/relaySession.js';
import { sessionIdOf } from '../../relay/protocol.js';
import { option, type OptionValues } from '../options.js';
import { BASE_URL_OPTION, CONFIG_OPTION, scenarioOption, speedOption } from '../sharedOptions.js';
import { createSessionStats, type SessionStats } from '../../session/stats.js';
import type { SessionStatus } from '../../schema/sessionState.js';
import { initialConversationSnapshot, snapshotReducer, type ConversationSnapshot } from '../../state/snapshot.js';
import { defineCommand, printError, readJsonFile, type CliIo, type Command } from '../command.js';
import { openEndpoint } from '../endpoint.js';
import { resultSource, resultSourceNote } from '../resultSource.js';
import { recordSession } from '../../session/recordSession.js';
import { eventLine } from '../liveView.js';
import { mediaDurationMs } from '../mediaDuration.js';
import { colorEnabled, TerminalView, type AudioProgress } from '../terminalView.js';
import { stateJson } from '../../state/stateJson.js';

const OPTIONS = {
  ...AUDIO_OPTIONS,
  ...CONFIG_OPTION,
  realtime: option.flag('send at live pace (1x)'),
  ...speedOption('send at X times live pace (implies --realtime)'),
  json: option.flag('one NDJSON line per event, then one {"type":"state","source":…} line\n(source: service, scenario, or speech-segments-only for an emulator\nwithout a scenario, which does not transcribe)'),
  ...scenarioOption("what the embedded emulator plays (default: FILE's stem + .scenario.json;\n`sample`: the shipped call's); a recording (--record) replays its events\nin step with the audio"),
  record: option.text('FILE', "write the session's events with their audio positions to FILE (NDJSON,\nno key or URL in it); replay it with svc-stream emulator --scenario FILE"),
  ...BASE_URL_OPTION,
  'done-timeout': option.integer('MS', 'how long to wait for done after the end of audio (default 120000)', { min: 1 }),
  ...REDIS_OPTION,
  ...PUBLISH_OPTION,
  id: option.text('ID', "the session's id when published (default FILE's stem, or stdin)"),
} as const;

/** The scenario the embedded emulator plays for `file`: `<stem>.scenario.json`, or up to the first `-`. */
export function scenarioFor(file: string | undefined): string | undefined {
  if (!file || file === '-') return undefined;
  const stem = basename(file, extname(file));
  for (const s of [stem, stem.split('-')[0]!]) {
    const candidate = join(dirname(file), `${s}.scenario.json`);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

async function scenarioArg(path: string): Promise<unknown> {
  const text = await readFile(path, 'utf8').catch((err: Error) => {
    throw new InputError('invalid_argument', `cannot read scenario ${path}: ${err.message}`, { path });
  });
  // The emulator's modules load only with the emulator.
  const { isRecording, recordingScenario } = await import('../../emulator/recording.js');
  if (!isRecording(text)) return readJsonFile(path, 'scenario');
  try {
    return recordingScenario(text, path);
  } catch (err) {
    throw new InputError('invalid_argument', (err as Error).message, { path });
  }
}

async function run({ values, positionals }: { readonly values: OptionValues<typeof OPTIONS>; readonly positionals: string[] }, io: CliIo): Promise<number> {
  if (positionals.length > 1) throw new InputError('invalid_argument', `analyze takes one FILE, got ${positionals.length}`);
  const file = positionals[0];

  const format: AudioFormat | undefined = formatFromFlags(values);
  const config = values.config ?? 'default';
  const scenarioPath = values.scenario ?? scenarioFor(file);
  // A scenario file, or a recorded session (--record) replayed in step with the audio.
  const scenario = scenarioPath ? await scenarioArg(scenarioPath) : undefined;
  const rate = values.speed ?? (values.realtime ? 1 : undefined);

  let audio: AudioObservable;
  let transcodedDurationMs: number | undefined;
  if (file === undefined || file === '-') {
    if (!format) throw new InputError('invalid_argument', 'reading stdin needs --format (and --rate/--channels for raw audio)', { path: 'format' });
    audio = fromReadable(io.stdin, { format });
    if (values.transcode) audio = audio.pipe(transcode()) as AudioObservable;
  } else {
    // A transcoded file's duration comes from the transcoding ffmpeg's own header.
    audio = fileAudio(file, values, rate, (header) => (transcodedDurationMs = header.durationMs));
  }

  const endpoint = await openEndpoint({ baseUrl: values['base-url'] }, io, scenario !== undefined ? { scenario: scenario as never } : {});
  const source = resultSource(endpoint.emulator !== undefined, scenario !== undefined);
  if (endpoint.emulator && scenarioPath) io.stderr.write(`svc-stream: the emulator plays ${scenarioPath}\n`);
  const fleet = await fleetLimits(values.redis, io.env);
  const stem = file === undefined || file === '-' ? 'stdin' : basename(file, extname(file));
  if (values.id !== undefined) checkSessionId(values.id);
  const published = await commandPublisher(values.publish, io);
  const stats = createSessionStats();
  const live = !values.json && io.stdout.isTTY === true;
  const view = live ? new TerminalView(io.stdout, colorEnabled(io.stdout, io.env), undefined, source === 'service' ? undefined : resultSourceNote(source, scenarioPath)) : undefined;
  // Piped, the first line says where the results come from (the state line of --json has `source`).
  if (!values.json && !live && source !== 'service') io.stdout.write(`${resultSourceNote(source, scenarioPath)}\n`);
  // Progress on a terminal: the duration from the file, the position from the bytes sent. A
  // file that is transcoded (raw PCM sent from something that was not) needs no probe of its
  // own: the transcoder reports the duration when it opens the file.
  const sentFormat = audioMetaOf(audio)?.format ?? format;
  const transcoded = sentFormat !== undefined && isRawFormat(sentFormat) && !(format !== undefined && isRawFormat(format));
  const probedDurationMs = live && file !== undefined && file !== '-' && !transcoded ? await mediaDurationMs(file, format) : undefined;
  const fileSize = live && file !== undefined && file !== '-' ? await stat(file).then((st) => st.size, () => undefined) : undefined;
  const startedAt = Date.now();
  const progress = (): AudioProgress => {
    const durationMs = probedDurationMs ?? transcodedDurationMs;
    return {
      positionMs:
        // The audio sent once: what a reconnect sent again is not further into the file.
        sentFormat && isRawFormat(sentFormat)
          ? bytesToMs(sentFormat, stats.bytesSent - stats.bytesReplayed)
          : durationMs !== undefined && fileSize ? (durationMs * (stats.bytesSent - stats.bytesReplayed)) / fileSize : undefined,
      durationMs,
      elapsedMs: Date.now() - startedAt,
    };
  };

  let reconnects: Subscription | undefined;
  try {
    const session$ = published.session(
      values.id ?? sessionIdOf(stem),
      stem === 'stdin' ? 'stdin' : basename(file!),
      conversationSession(audio, {
        apiKey: endpoint.apiKey,
        baseUrl: endpoint.baseUrl,
        config,
        stats,
        limiter: fleet.limiter,
        ...(values['done-timeout'] !== undefined ? { doneTimeoutMs: values['done-timeout'] } : {}),
      }),
      stats.state$,
    );
    // One line per reconnect, from the session's life cycle; the transcript stays one (the
    // session resumes on one time axis).
    reconnects = reconnectLines(stats, io);
    // Paced, the bytes sent are the audio position; sent at full speed they run ahead of it,
    // and the position is the audio time the events name.
    const events$ = values.record
      ? session$.pipe(
          recordSession(values.record, {
            ...(rate !== undefined ? { positionMs: () => progress().positionMs } : {}),
            audioEnded: () => stats.status === 'finishing' || stats.status === 'closing' || stats.status === 'done',
            secrets: [endpoint.apiKey, endpoint.baseUrl],
          }),
        )
      : session$;
    // Ctrl-C ends the session (closing its socket) with code `aborted`; completion passes through.
    const guarded$ = new Observable<ServerEvent>((subscriber) => {
      const onAbort = (): void => subscriber.error(new SvcError('aborted', 'interrupted'));
      if (io.signal?.aborted) onAbort();
      io.signal?.addEventListener('abort', onAbort, { once: true });
      const sub = events$.subscribe(subscriber);
      return () => {
        io.signal?.removeEventListener('abort', onAbort);
        sub.unsubscribe();
      };
    });
    let latest = initialConversationSnapshot;
    const final = await lastValueFrom(
      guarded$.pipe(
        scan((s: ConversationSnapshot, e: ServerEvent) => {
          const next = snapshotReducer(s, e);
          if (values.json) io.stdout.write(`${JSON.stringify(e)}\n`);
          else if (view) view.update(e, next, stats, progress());
          else {
            const line = eventLine(e, next);
            if (line !== undefined) io.stdout.write(`${line}\n`);
          }
          latest = next;
          return next;
        }, initialConversationSnapshot),
        tap({ error: () => view?.finish(latest, stats, progress()) }),
      ),
      { defaultValue: initialConversationSnapshot },
    );
    if (values.json) {
      const { type, ...state } = stateJson(final);
      io.stdout.write(`${JSON.stringify({ type, source, ...state })}\n`);
    }
    else view?.finish(final, stats, progress());
    return 0;
  } catch (err) {
    printError(io, err);
    return 1;
  } finally {
    reconnects?.unsubscribe();
    await published.close();
    await fleet.close();
    await endpoint.close();
  }
}

/** Follow a session's life cycle (`stats.state$`) on stderr: a line per reconnect, and one when a reconnected session opens. */
export function reconnectLines(stats: SessionStats, io: Pick<CliIo, 'stderr'>): Subscription {
  let previous: SessionStatus | undefined;
  return stats.state$.subscribe((next) => {
    if (next.status === 'reconnecting') io.stderr.write(`${reconnectLine(next.attempt, next.error)}\n`);
    else if ((next.status === 'streaming' || next.status === 'paused') && previous === 'connecting' && stats.segment > 0) {
      io.stderr.write(`svc-stream: reconnected (segment ${stats.segment}, ${stats.reconnects} reconnect${stats.reconnects === 1 ? '' : 's'} so far)\n`);
    }
    previous = next.status;
  });
}

/** The line `analyze` and `dashboard` print when a session reconnects: why, and which attempt. */
export function reconnectLine(attempt: number, error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  return `svc-stream: connection ${typeof code === 'string' ? `failed (${code})` : 'failed'}; reconnecting (attempt ${attempt})`;
}

export const analyzeCommand: Command = defineCommand({
  name: 'analyze',
  summary: 'stream a file or stdin through conversation analysis',
  synopsis: 'svc-stream analyze [FILE|-] [options]',
  description: `Stream audio through conversation analysis and show the results as they arrive.
FILE is any audio file: the contract's formats (.wav .mp3 .mp4 .ogg .flac .webm .aac .aiff
.mov .opus) as they are, anything else ffmpeg reads (.m4a .mkv …) transcoded, and headerless
raw audio (.raw .pcm .mulaw …) with --format/--rate/--channels. '-' (or no FILE) reads stdin,
which then needs --format (and --rate/--channels for raw audio).`,
  options: OPTIONS,
  footer: `Environment: SVC_API_KEY, SVC_BASE_URL. With neither set, an embedded emulator is started.
Exit status: 0 after done; 1 on failure, with one line "svc-stream: CODE: message" on stderr.`,
  positionals: true,
  run,
});
