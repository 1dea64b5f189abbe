// `svc-stream analyze [FILE|-]`: stream a file or stdin through conversation analysis and
// show the derived state live, as plain lines, or as NDJSON.
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { finalize, interval, lastValueFrom, Observable, scan, tap, type Subscription } from 'rxjs';
import { transcode } from '../../audio/transcode.js';
import { AUDIO_OPTIONS, checkAudioInput, fileAudio, formatFromFlags } from '../audioFlags.js';
import { checkFleetPackages } from '../optionalFlags.js';
import { fromReadable } from '../../audio/fromReadable.js';
import { audioMetaOf, type AudioObservable } from '../../audio/meta.js';
import { InputError, SvcError } from '../../errors/index.js';
import { isRawFormat, type AudioFormat } from '../../schema/audio.js';
import type { ServerEvent } from '../../schema/events.js';
import { conversationSession } from '../../session/conversation.js';
import { fleetLimits, REDIS_OPTION } from '../redisFlag.js';
import { commandPublisher, PUBLISH_OPTION } from '../publishFlag.js';
import { checkSessionId, sessionIdOf } from '../../schema/sessionId.js';
import { option, type OptionValues } from '../options.js';
import { BASE_URL_OPTION, CONFIG_OPTION, loadScenario, readConfig, scenarioOption, speedOption } from '../sharedOptions.js';
import { createSessionStats, type SessionStats } from '../../session/stats.js';
import type { SessionStatus } from '../../schema/sessionState.js';
import { initialConversationSnapshot, snapshotReducer, type ConversationSnapshot } from '../../state/snapshot.js';
import { defineCommand, printError, type CliIo, type Command } from '../command.js';
import { openEndpoint } from '../endpoint.js';
import { FILE_FORMATS } from '../../audio/fileFormats.js';
import { samplePath } from '../../samples.js';
import { recordSession } from '../../session/recordSession.js';
import { eventLine } from '../liveView.js';
import { mediaDurationMs } from '../mediaDuration.js';
import { colorEnabled, TerminalView } from '../terminalView.js';
import { sessionFigures, type SessionFigures } from '../../session/figures.js';
import { labelText, sameLabel, SERVICE_LABEL, type ResultLabel } from '../../schema/resultLabel.js';
import { stateJson } from '../../state/stateJson.js';

const OPTIONS = {
  sample: option.flag("analyse the sample call the package ships (samples/call.wav) with its\nconfig and scenario, wherever the package is installed"),
  ...AUDIO_OPTIONS,
  ...CONFIG_OPTION,
  realtime: option.flag('send at live pace (1x)'),
  ...speedOption('send at X times live pace (implies --realtime)'),
  json: option.flag('NDJSON: a {"type":"label",…} line (what made the results: service,\nemulator, scenario or recording), one line per event, then one\n{"type":"state","source":…,"label":…} line'),
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

async function run({ values, positionals }: { readonly values: OptionValues<typeof OPTIONS>; readonly positionals: string[] }, io: CliIo): Promise<number> {
  if (positionals.length > 1) throw new InputError('invalid_argument', `analyze takes one FILE, got ${positionals.length}`);
  if (values.sample && positionals.length > 0) throw new InputError('invalid_argument', `--sample analyses the shipped call: give it or FILE, not both`, { path: 'sample' });
  const file = values.sample ? samplePath('call.wav') : positionals[0];

  const format: AudioFormat | undefined = formatFromFlags(values);
  // Every input is checked before anything starts: the file (exists, not empty, audio ffmpeg decodes), the config, the scenario.
  // Transcoded (asked, paced, or a format the service does not take as it is): the transcoder
  // reports the duration and is the source's own decode check, so the source keeps its probe.
  const transcoding = file !== undefined && file !== '-' && (values.transcode || rate(values) !== undefined || FILE_FORMATS[extname(file).toLowerCase()]?.mode !== 'passthrough');
  if (file !== undefined && file !== '-') await checkAudioInput(file, values, transcoding);
  await checkFleetPackages({ redis: values.redis, publish: values.publish }, io.env);
  const config = values.config ?? (values.sample ? readConfig(samplePath('call.config.json')) : undefined) ?? 'default';
  const scenarioPath = values.scenario ?? scenarioFor(file);
  // A scenario file, or a recorded session (--record) replayed in step with the audio.
  const scenario = scenarioPath ? await loadScenario(scenarioPath) : undefined;
  const pace = rate(values);

  let audio: AudioObservable;
  let transcodedDurationMs: number | undefined;
  if (file === undefined || file === '-') {
    if (!format) throw new InputError('invalid_argument', 'reading stdin needs --format (and --rate/--channels for raw audio)', { path: 'format' });
    audio = fromReadable(io.stdin, { format });
    if (values.transcode) audio = audio.pipe(transcode()) as AudioObservable;
  } else {
    // A transcoded file's duration comes from the transcoding ffmpeg's own header.
    audio = fileAudio(file, values, pace, (header) => (transcodedDurationMs = header.durationMs), transcoding);
  }

  // What the embedded emulator says of its scenario (a resumed segment found in the scenario's
  // audio, or not), on stderr; what it means for the results is the session's label.
  const emulatorLog = (line: string): void => {
    if (line.startsWith('scenario: ')) io.stderr.write(`svc-stream: emulator ${line}\n`);
  };
  const endpoint = await openEndpoint({ baseUrl: values['base-url'] }, io, scenario !== undefined ? { scenario: scenario as never, log: emulatorLog } : {});
  if (endpoint.emulator && scenarioPath) io.stderr.write(`svc-stream: the emulator plays ${scenarioPath}\n`);
  const fleet = await fleetLimits(values.redis, io.env);
  const stem = file === undefined || file === '-' ? 'stdin' : basename(file, extname(file));
  if (values.id !== undefined) checkSessionId(values.id);
  const published = await commandPublisher(values.publish, io);
  const stats = createSessionStats();
  const live = !values.json && io.stdout.isTTY === true;
  const view = live ? new TerminalView(io.stdout, colorEnabled(io.stdout, io.env)) : undefined;
  // What made the results, as the session learnt it from its answers (stats.label): on a terminal
  // in the status area and the summary; piped, a `source:` line before the first event it
  // labels (and again if a resume changes it); with --json, a `label` line the same way and the
  // state line's `source` and `label`.
  let labelSaid: ResultLabel | undefined;
  const sayLabel = (): void => {
    const label = stats.label;
    if (label === undefined || sameLabel(label, labelSaid)) return;
    labelSaid = label;
    if (values.json) io.stdout.write(`${JSON.stringify({ type: 'label', ...label, text: labelText(label) })}\n`);
    else if (!view && label.source !== 'service') io.stdout.write(`source: ${labelText(label)}\n`);
  };
  // Progress on a terminal: the duration from the file, the position from the bytes sent. A
  // file that is transcoded (raw PCM sent from something that was not) needs no probe of its
  // own: the transcoder reports the duration when it opens the file.
  const sentFormat = audioMetaOf(audio)?.format ?? format;
  const transcoded = sentFormat !== undefined && isRawFormat(sentFormat) && !(format !== undefined && isRawFormat(format));
  const isFile = file !== undefined && file !== '-';
  const probedDurationMs = (live || values.json) && isFile && !transcoded ? await mediaDurationMs(file, format) : undefined;
  const fileSize = isFile ? await stat(file).then((st) => st.size, () => undefined) : undefined;
  const durationMs = (): number | undefined => probedDurationMs ?? transcodedDurationMs;
  // Every figure shown (live view, summary, state line) is the library's, computed from the stats now.
  let startedAt = Date.now();
  const progress = (): SessionFigures => sessionFigures({ stats, format: sentFormat, durationMs: durationMs(), fileSize, startedAt, now: Date.now() });
  // The --json state line's account of the session: reconnects, the time they took, the audio sent, replayed and dropped.
  const sessionJson = (): Record<string, unknown> => {
    const f = progress();
    const ms = (v: number | undefined): number | null => (v === undefined ? null : Math.round(v));
    return {
      status: stats.status,
      reconnects: f.reconnects,
      reconnecting_ms: Math.round(f.reconnectingMs),
      wall_ms: Math.round(f.wallMs),
      audio_read_ms: ms(f.audioMs.read),
      audio_sent_ms: ms(f.audioMs.sent),
      audio_replayed_ms: ms(f.audioMs.replayed),
      audio_dropped_ms: ms(f.audioMs.dropped),
      bytes_read: f.bytes.read,
      bytes_sent: stats.bytesSent,
      bytes_replayed: f.bytes.replayed,
      bytes_dropped: f.bytes.dropped,
    };
  };
  const stateLine = (snapshot: ConversationSnapshot): void => {
    sayLabel();
    const { type, ...state } = stateJson(snapshot);
    const label = stats.label ?? SERVICE_LABEL;
    io.stdout.write(`${JSON.stringify({ type, source: label.source, label, ...state, session: sessionJson() })}\n`);
  };

  let latest = initialConversationSnapshot;
  let reconnects: Subscription | undefined;
  // The terminal's status follows each change of the session at once (reconnecting has no events of its own).
  const redraws = view ? stats.state$.subscribe(() => view.refresh(latest, stats, progress())) : undefined;
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
            ...(pace !== undefined ? { positionMs: () => progress().positionMs } : {}),
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
    // The clock moves between events too: the position, rate and ETA are redrawn every 250 ms.
    const ticks = view ? interval(250).subscribe(() => view.refresh(latest, stats, progress())) : undefined;
    startedAt = Date.now();
    const final = await lastValueFrom(
      guarded$.pipe(
        finalize(() => ticks?.unsubscribe()),
        scan((s: ConversationSnapshot, e: ServerEvent) => {
          const next = snapshotReducer(s, e);
          sayLabel();
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
    if (values.json) stateLine(final);
    else if (view) view.finish(final, stats, progress());
    else sayLabel();
    return 0;
  } catch (err) {
    // What was analysed before the failure, and the session's account, then the error.
    if (values.json) stateLine(latest);
    printError(io, err);
    return 1;
  } finally {
    reconnects?.unsubscribe();
    redraws?.unsubscribe();
    await published.close();
    await fleet.close();
    await endpoint.close();
  }
}

/** `--speed`, or 1 with `--realtime`; undefined: as fast as the session takes it. */
function rate(values: { readonly speed: number | undefined; readonly realtime: boolean }): number | undefined {
  return values.speed ?? (values.realtime ? 1 : undefined);
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
